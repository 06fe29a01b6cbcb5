#include "common/json.h"

#include "common/calldata.h"

namespace genvm {

void JsonWriter::sep() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

void JsonWriter::write_string(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out_ += '"';
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      // Copy one well-formed UTF-8 sequence, or replace one bad byte with U+FFFD.
      std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      std::size_t bad = 0;
      if (len > 1 && i + len <= s.size() && calldata::is_valid_utf8(s.substr(i, len), &bad)) {
        out_.append(s.substr(i, len));
        i += len;
      } else {
        out_ += "\xEF\xBF\xBD";
        ++i;
      }
      continue;
    }
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\b': out_ += "\\b"; break;
      case '\f': out_ += "\\f"; break;
      case '\n': out_ += "\\n"; break;
      case '\r': out_ += "\\r"; break;
      case '\t': out_ += "\\t"; break;
      default:
        if (c < 0x20) {
          out_ += "\\u00";
          out_ += kHex[c >> 4];
          out_ += kHex[c & 15];
        } else {
          out_ += static_cast<char>(c);
        }
    }
    ++i;
  }
  out_ += '"';
}

std::string base64_encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    std::uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) |
                      (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                      static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<std::string> base64_decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0) return make_error("bad_base64", "the length is not a multiple of 4");
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad > 0 || (v[k] = value(c)) < 0) {
        return make_error("bad_base64", "a character that is not standard base64 at " + std::to_string(i + k));
      }
    }
    std::uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>(n >> 16);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xFF);
    if (pad < 1) out += static_cast<char>(n & 0xFF);
  }
  return out;
}

JsonValue JsonValue::boolean(bool b) {
  JsonValue v;
  v.kind_ = Kind::kBool;
  v.bool_ = b;
  return v;
}

JsonValue JsonValue::number(std::string text) {
  JsonValue v;
  v.kind_ = Kind::kNumber;
  v.text_ = std::move(text);
  return v;
}

JsonValue JsonValue::string(std::string s) {
  JsonValue v;
  v.kind_ = Kind::kString;
  v.text_ = std::move(s);
  return v;
}

JsonValue JsonValue::array(std::vector<JsonValue> items) {
  JsonValue v;
  v.kind_ = Kind::kArray;
  v.items_ = std::move(items);
  return v;
}

JsonValue JsonValue::object(std::vector<Member> members) {
  JsonValue v;
  v.kind_ = Kind::kObject;
  v.members_ = std::move(members);
  return v;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  for (auto it = members_.rbegin(); it != members_.rend(); ++it) {
    if (it->first == key) return &it->second;
  }
  return nullptr;
}

std::optional<std::uint64_t> parse_decimal_u64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return std::nullopt;
    auto d = static_cast<std::uint64_t>(ch - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

std::optional<std::uint64_t> JsonValue::as_u64() const {
  if (kind_ != Kind::kNumber) return std::nullopt;
  return parse_decimal_u64(text_);
}

namespace {

// Recursive descent over untrusted text; the depth bound keeps the recursion small.
class JsonParser {
 public:
  explicit JsonParser(std::string_view s) : s_(s) {}

  Result<JsonValue> parse_document() {
    skip_ws();
    auto v = value(0);
    if (!v) return v;
    skip_ws();
    if (pos_ != s_.size()) return fail("trailing characters");
    return v;
  }

 private:
  Error fail(const std::string& what) const {
    return make_error("bad_json", what + " at byte offset " + std::to_string(pos_));
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Result<JsonValue> value(std::size_t depth) {
    if (pos_ >= s_.size()) return fail("unexpected end");
    char c = s_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= kMaxJsonDepth) return fail("nesting deeper than " + std::to_string(kMaxJsonDepth));
      return c == '{' ? object(depth + 1) : array(depth + 1);
    }
    if (c == '"') {
      auto str = string();
      if (!str) return str.take_error();
      return JsonValue::string(std::move(*str));
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    if (literal("true")) return JsonValue::boolean(true);
    if (literal("false")) return JsonValue::boolean(false);
    if (literal("null")) return JsonValue();
    return fail("unexpected character");
  }

  Result<JsonValue> number() {
    std::size_t start = pos_;
    auto digits = [&] {
      std::size_t n = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_, ++n;
      return n;
    };
    if (s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') {
      ++pos_;
      if (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') return fail("leading zero in a number");
    } else if (digits() == 0) {
      return fail("a number needs digits");
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (digits() == 0) return fail("a fraction needs digits");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) return fail("an exponent needs digits");
    }
    return JsonValue::number(std::string(s_.substr(start, pos_ - start)));
  }

  Result<std::uint32_t> hex4() {
    if (s_.size() - pos_ < 4) return fail("short \\u escape");
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char h = s_[pos_++];
      int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      if (d < 0) return fail("bad \\u escape");
      v = v * 16 + static_cast<std::uint32_t>(d);
    }
    return v;
  }

  Result<std::string> string() {
    ++pos_;  // the opening quote
    std::string out;
    std::size_t run = pos_;
    for (;;) {
      if (pos_ >= s_.size()) return fail("unterminated string");
      auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        out.append(s_.substr(run, pos_ - run));
        ++pos_;
        break;
      }
      if (c < 0x20) return fail("control character in a string");
      if (c != '\\') {
        ++pos_;
        continue;
      }
      out.append(s_.substr(run, pos_ - run));
      ++pos_;
      if (pos_ >= s_.size()) return fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          auto hi = hex4();
          if (!hi) return hi.take_error();
          std::uint32_t cp = *hi;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("lone trailing surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!literal("\\u")) return fail("lone leading surrogate");
            auto lo = hex4();
            if (!lo) return lo.take_error();
            if (*lo < 0xDC00 || *lo > 0xDFFF) return fail("lone leading surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (*lo - 0xDC00);
          }
          calldata::append_utf8(out, cp);
          break;
        }
        default: return fail("unknown escape");
      }
      run = pos_;
    }
    if (!calldata::is_valid_utf8(out)) return fail("string is not UTF-8");
    return out;
  }

  Result<JsonValue> array(std::size_t depth) {
    ++pos_;
    std::vector<JsonValue> items;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return JsonValue::array(std::move(items));
    }
    for (;;) {
      skip_ws();
      auto v = value(depth);
      if (!v) return v;
      items.push_back(std::move(*v));
      skip_ws();
      if (pos_ >= s_.size()) return fail("unterminated array");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] != ']') return fail("expected , or ]");
      ++pos_;
      return JsonValue::array(std::move(items));
    }
  }

  Result<JsonValue> object(std::size_t depth) {
    ++pos_;
    std::vector<JsonValue::Member> members;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return JsonValue::object(std::move(members));
    }
    for (;;) {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') return fail("expected a member name");
      auto key = string();
      if (!key) return key.take_error();
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') return fail("expected :");
      ++pos_;
      skip_ws();
      auto v = value(depth);
      if (!v) return v;
      // A repeated name keeps its first place and takes the last value (serde_json's
      // preserve_order map). Linear, bounded by the input's own size.
      bool merged = false;
      for (auto& m : members) {
        if (m.first == *key) {
          m.second = std::move(*v);
          merged = true;
          break;
        }
      }
      if (!merged) members.emplace_back(std::move(*key), std::move(*v));
      skip_ws();
      if (pos_ >= s_.size()) return fail("unterminated object");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] != '}') return fail("expected , or }");
      ++pos_;
      return JsonValue::object(std::move(members));
    }
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

Result<JsonValue> parse_json(std::string_view text) { return JsonParser(text).parse_document(); }

void write_json(JsonWriter& w, const JsonValue& v) {
  switch (v.kind()) {
    case JsonValue::Kind::kNull: w.null(); break;
    case JsonValue::Kind::kBool: w.boolean(v.as_bool()); break;
    case JsonValue::Kind::kNumber: w.number_text(v.text()); break;
    case JsonValue::Kind::kString: w.string(v.text()); break;
    case JsonValue::Kind::kArray:
      w.begin_array();
      for (const auto& item : v.items()) write_json(w, item);
      w.end_array();
      break;
    case JsonValue::Kind::kObject:
      w.begin_object();
      for (const auto& [k, item] : v.members()) {
        w.key(k);
        write_json(w, item);
      }
      w.end_object();
      break;
  }
}

void write_value(JsonWriter& w, const calldata::Value& v) {
  using K = calldata::Value::Kind;
  switch (v.kind()) {
    case K::kNull: w.null(); break;
    case K::kBool: w.boolean(v.as_bool()); break;
    case K::kAddress: {
      static constexpr char kHex[] = "0123456789abcdef";
      std::string s = "0x";
      for (auto b : v.as_address().bytes) {
        s += kHex[b >> 4];
        s += kHex[b & 15];
      }
      w.string(s);
      break;
    }
    case K::kInt:
      if (auto i = v.as_int().to_int64()) {
        w.number(*i);
      } else {
        w.string(v.as_int().to_decimal());
      }
      break;
    case K::kBytes: {
      const auto& b = v.as_bytes();
      w.string(base64_encode(std::string_view(reinterpret_cast<const char*>(b.data()), b.size())));
      break;
    }
    case K::kString: w.string(v.as_string()); break;
    case K::kArray:
      w.begin_array();
      for (const auto& item : v.as_array()) write_value(w, item);
      w.end_array();
      break;
    case K::kMap:
      w.begin_object();
      for (const auto& [k, item] : v.as_map()) {
        w.key(k);
        write_value(w, item);
      }
      w.end_object();
      break;
  }
}

}  // namespace genvm
