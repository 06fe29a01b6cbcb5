// A minimal JSON writer for the manager's log lines and HTTP bodies: objects, arrays, strings
// (escaped; bytes that are not valid UTF-8 become U+FFFD so a line is always valid JSON),
// integers and booleans. Commas are placed by the writer; callers only nest correctly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace genvm::manager {

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

}  // namespace genvm::manager

namespace genvm::calldata {
class Value;
}

namespace genvm::manager {

// A calldata value as JSON: integers that fit in i64 as numbers, others as decimal strings;
// bytes as base64 strings; addresses as "0x" + hex; maps as objects.
void write_value(JsonWriter& w, const calldata::Value& v);

}  // namespace genvm::manager
