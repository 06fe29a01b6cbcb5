// JSON for log lines, HTTP bodies, the executor's log lines and the modules' providers and DevTools.
//
// JsonWriter: objects, arrays, strings (escaped as serde_json escapes them: \" \\ \b \f \n \r
// \t, other control characters as \u00xx; bytes that are not valid UTF-8 become U+FFFD so a
// line is always valid JSON), integers and booleans. Commas are placed by the writer; callers
// only nest correctly.
//
// parse_json(): a strict RFC 8259 reader for untrusted text (request bodies, executor log
// lines): nesting bounded by kMaxJsonDepth, object members kept in their order (serde_json's
// preserve_order, as the public manager is built), numbers kept as their text.
//
//   Result<JsonValue> v = parse_json(R"({"level":"info","n":1})");
//   JsonWriter w; write_json(w, *v); w.take() == R"({"level":"info","n":1})"
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace genvm {

class JsonWriter {
 public:
  JsonWriter& begin_object() { sep(); out_ += '{'; first_.push_back(true); return *this; }
  JsonWriter& end_object() { out_ += '}'; first_.pop_back(); return *this; }
  JsonWriter& begin_array() { sep(); out_ += '['; first_.push_back(true); return *this; }
  JsonWriter& end_array() { out_ += ']'; first_.pop_back(); return *this; }
  JsonWriter& key(std::string_view k) { sep(); write_string(k); out_ += ':'; after_key_ = true; return *this; }
  JsonWriter& string(std::string_view s) { sep(); write_string(s); return *this; }
  JsonWriter& number(std::int64_t v) { sep(); out_ += std::to_string(v); return *this; }
  JsonWriter& unsigned_number(std::uint64_t v) { sep(); out_ += std::to_string(v); return *this; }
  JsonWriter& number_text(std::string_view t) { sep(); out_ += t; return *this; }  // a preformatted number
  JsonWriter& raw(std::string_view json) { sep(); out_ += json; return *this; }     // a value already JSON
  JsonWriter& boolean(bool b) { sep(); out_ += b ? "true" : "false"; return *this; }
  JsonWriter& null() { sep(); out_ += "null"; return *this; }
  std::string take() { return std::move(out_); }

 private:
  void sep();
  void write_string(std::string_view s);
  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

std::string base64_encode(std::string_view bytes);
// Standard base64 with padding, strictly: error "bad_base64" naming the first wrong character.
Result<std::string> base64_decode(std::string_view text);

// Deeper than this is rejected (serde_json's own recursion limit).
inline constexpr std::size_t kMaxJsonDepth = 128;

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  using Member = std::pair<std::string, JsonValue>;

  JsonValue() = default;  // null
  static JsonValue boolean(bool b);
  static JsonValue number(std::string text);  // text must be an RFC 8259 number
  static JsonValue string(std::string s);
  static JsonValue array(std::vector<JsonValue> items);
  static JsonValue object(std::vector<Member> members);

  Kind kind() const { return kind_; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_object() const { return kind_ == Kind::kObject; }
  bool as_bool() const { return bool_; }
  // A number's text, a string's decoded contents.
  const std::string& text() const { return text_; }
  const std::vector<JsonValue>& items() const { return items_; }
  const std::vector<Member>& members() const { return members_; }
  std::vector<Member>& members() { return members_; }
  // The last member named `key` (serde_json keeps the last of duplicates); nullptr if none.
  const JsonValue* find(std::string_view key) const;
  // An integer number within u64; nullopt for anything else (fractions, exponents, negatives).
  std::optional<std::uint64_t> as_u64() const;  // parse_decimal_u64 of the number's text

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  std::string text_;
  std::vector<JsonValue> items_;
  std::vector<Member> members_;
};

// Error code "bad_json", message naming the byte offset.
Result<JsonValue> parse_json(std::string_view text);
void write_json(JsonWriter& w, const JsonValue& v);

}  // namespace genvm

namespace genvm::calldata {
class Value;
}

namespace genvm {

// A calldata value as JSON: integers that fit in i64 as numbers, others as decimal strings;
// bytes as base64 strings; addresses as "0x" + hex; maps as objects.
void write_value(JsonWriter& w, const calldata::Value& v);

// ASCII digits only (no sign, no exponent), at most 2^64 - 1; nullopt otherwise.
std::optional<std::uint64_t> parse_decimal_u64(std::string_view s);

}  // namespace genvm
