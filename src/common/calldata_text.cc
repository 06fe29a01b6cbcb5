// The human-readable calldata text form: printer and non-recursive parser.
//
// The printer emits exactly one spelling per value (ASCII only, keys sorted, ", " and ": "
// separators), so text printed by to_text() parses back and prints identically. The parser is
// more lenient only where a user's typing is unambiguous: any whitespace between tokens, map
// keys in any order, raw UTF-8 and upper-case \u escapes inside strings.
#include <cstring>

#include "common/calldata.h"

namespace genvm::calldata {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex(std::string& out, const uint8_t* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 15]);
  }
}

void append_u_escape(std::string& out, uint32_t unit) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(unit >> shift) & 15]);
}

// Decodes one UTF-8 sequence at s[i] (validity checked by the caller, else U+FFFD, 1 byte).
uint32_t next_code_point(std::string_view s, size_t& i) {
  auto c = static_cast<uint8_t>(s[i]);
  size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
  if (len == 0 || s.size() - i < len || !is_valid_utf8(s.substr(i, len))) {
    ++i;
    return 0xfffd;
  }
  uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[i + k]) & 0x3f);
  i += len;
  return cp;
}

void append_quoted(std::string& out, std::string_view s) {
  out.push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    uint32_t cp = next_code_point(s, i);
    switch (cp) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (cp >= 0x20 && cp < 0x7f) {
          out.push_back(static_cast<char>(cp));
        } else if (cp < 0x10000) {
          append_u_escape(out, cp);
        } else {  // JSON spells astral code points as a UTF-16 surrogate pair
          cp -= 0x10000;
          append_u_escape(out, 0xd800 + (cp >> 10));
          append_u_escape(out, 0xdc00 + (cp & 0x3ff));
        }
    }
  }
  out.push_back('"');
}

void print(const Value& v, std::string& out) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      out += "null";
      return;
    case Value::Kind::kBool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Kind::kAddress:
      out += "addr#";
      append_hex(out, v.as_address().bytes.data(), kAddressSize);
      return;
    case Value::Kind::kInt:
      out += v.as_int().to_decimal();
      return;
    case Value::Kind::kBytes:
      out += "b#";
      append_hex(out, v.as_bytes().data(), v.as_bytes().size());
      return;
    case Value::Kind::kString:
      append_quoted(out, v.as_string());
      return;
    case Value::Kind::kArray: {
      out.push_back('[');
      bool first = true;
      for (const Value& item : v.as_array()) {
        if (!first) out += ", ";
        first = false;
        print(item, out);
      }
      out.push_back(']');
      return;
    }
    case Value::Kind::kMap: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, item] : v.as_map()) {
        if (!first) out += ", ";
        first = false;
        append_quoted(out, key);
        out += ": ";
        print(item, out);
      }
      out.push_back('}');
      return;
    }
  }
}

int hex_digit_lower(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

int hex_digit_any(char c) {
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return hex_digit_lower(c);
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '#' ||
         c == '-' || c == '+' || c == '.' || c == '_';
}

// A container being filled by the parser (kept on an explicit stack, not the native one).
struct TextFrame {
  Value container;
  std::string key;  // maps: key of the value being parsed
};

class TextParser {
 public:
  explicit TextParser(std::string_view s) : s_(s) {}

  Result<Value> parse() {
    size_t bad = 0;
    if (!is_valid_utf8(s_, &bad)) return error("text_invalid_utf8", "invalid UTF-8", bad);
    std::vector<TextFrame> stack;
    for (;;) {
      skip_ws();
      Value v;
      if (pos_ < s_.size() && (s_[pos_] == '[' || s_[pos_] == '{')) {
        bool is_map = s_[pos_] == '{';
        const size_t open = pos_;
        ++pos_;
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == (is_map ? '}' : ']')) {
          ++pos_;
          v = is_map ? Value(Value::Map{}) : Value(Value::Array{});
        } else {
          // Only a container with elements counts towards the depth, as in decode(): an empty
          // one is a leaf there, so both accept exactly the same values.
          if (stack.size() >= kMaxDepth) {
            return error("depth_exceeded",
                         "nesting deeper than " + std::to_string(kMaxDepth) + " containers", open);
          }
          stack.push_back(TextFrame{is_map ? Value(Value::Map{}) : Value(Value::Array{}), {}});
          if (is_map) {
            if (Status st = parse_key(stack.back()); !st) return st.take_error();
          }
          continue;
        }
      } else {
        if (Status st = parse_scalar(&v); !st) return st.take_error();
      }
      // Hand the value to its parent, then expect a separator or the parent's end.
      for (;;) {
        if (stack.empty()) {
          skip_ws();
          if (pos_ != s_.size()) return error("text_syntax", "unexpected text after the value", pos_);
          return v;
        }
        TextFrame& f = stack.back();
        bool is_map = f.container.is_map();
        if (is_map) {
          f.container.as_map().emplace(std::move(f.key), std::move(v));
        } else {
          f.container.as_array().push_back(std::move(v));
        }
        skip_ws();
        char close = is_map ? '}' : ']';
        if (pos_ < s_.size() && s_[pos_] == ',') {
          ++pos_;
          if (is_map) {
            if (Status st = parse_key(f); !st) return st.take_error();
          }
          break;
        }
        if (pos_ < s_.size() && s_[pos_] == close) {
          ++pos_;
          v = std::move(f.container);
          stack.pop_back();
          continue;
        }
        return error("text_syntax", std::string("expected ',' or '") + close + "'", pos_);
      }
    }
  }

 private:
  Error error(const char* code, const std::string& what, size_t at) const {
    // Columns count characters (code points), 1-based, within the line of `at`.
    size_t line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    size_t column = 1;
    for (size_t i = line_start; i < at && i < s_.size(); ++i) {
      if ((static_cast<uint8_t>(s_[i]) & 0xc0) != 0x80) ++column;
    }
    std::string where = line == 1 ? "column " + std::to_string(column)
                                  : "line " + std::to_string(line) + ", column " + std::to_string(column);
    return make_error(code, what + " at " + where);
  }

  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  // `"key" :` for the map on top of the stack; rejects a key the map already has.
  Status parse_key(TextFrame& f) {
    skip_ws();
    size_t start = pos_;
    if (pos_ >= s_.size() || s_[pos_] != '"') return error("text_syntax", "expected a string key", pos_);
    if (Status st = parse_string(&f.key); !st) return st;
    if (f.container.as_map().count(f.key) != 0) {
      return error("text_duplicate_key", "duplicate map key", start);
    }
    skip_ws();
    if (pos_ >= s_.size() || s_[pos_] != ':') return error("text_syntax", "expected ':'", pos_);
    ++pos_;
    return {};
  }

  Status read_u_escape(uint32_t* unit) {
    // pos_ is just after "\u".
    if (s_.size() - pos_ < 4) return error("text_syntax", "\\u needs 4 hex digits", pos_);
    uint32_t u = 0;
    for (size_t k = 0; k < 4; ++k) {
      int d = hex_digit_any(s_[pos_ + k]);
      if (d < 0) return error("text_syntax", "\\u needs 4 hex digits", pos_ + k);
      u = (u << 4) | static_cast<uint32_t>(d);
    }
    pos_ += 4;
    *unit = u;
    return {};
  }

  Status parse_string(std::string* out) {
    out->clear();
    size_t open = pos_;
    ++pos_;  // the opening quote
    for (;;) {
      if (pos_ >= s_.size()) return error("text_syntax", "unterminated string", open);
      char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return {};
      }
      if (static_cast<uint8_t>(c) < 0x20) {
        return error("text_syntax", "control character in a string (escape it)", pos_);
      }
      if (c != '\\') {
        out->push_back(c);  // raw UTF-8 was validated up front
        ++pos_;
        continue;
      }
      size_t esc = pos_;
      if (++pos_ >= s_.size()) return error("text_syntax", "unterminated string", open);
      char e = s_[pos_++];
      switch (e) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t cp = 0;
          if (Status st = read_u_escape(&cp); !st) return st;
          if (cp >= 0xdc00 && cp <= 0xdfff) {
            return error("text_syntax", "lone low surrogate escape", esc);
          }
          if (cp >= 0xd800 && cp <= 0xdbff) {
            uint32_t low = 0;
            if (s_.substr(pos_, 2) != "\\u") return error("text_syntax", "lone high surrogate escape", esc);
            pos_ += 2;
            if (Status st = read_u_escape(&low); !st) return st;
            if (low < 0xdc00 || low > 0xdfff) {
              return error("text_syntax", "high surrogate escape not followed by a low one", esc);
            }
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          }
          append_utf8(*out, cp);
          break;
        }
        default:
          return error("text_syntax", std::string("unknown escape '\\") + e + "'", esc);
      }
    }
  }



  // Lower-case hex only: one spelling per value keeps the round trip exact.
  Status parse_hex(std::string_view digits, size_t at, Bytes* out) {
    if (digits.size() % 2 != 0) return error("text_syntax", "odd number of hex digits", at);
    out->clear();
    for (size_t i = 0; i < digits.size(); i += 2) {
      int hi = hex_digit_lower(digits[i]);
      int lo = hex_digit_lower(digits[i + 1]);
      if (hi < 0 || lo < 0) {
        size_t bad = at + i + (hi < 0 ? 0 : 1);
        return error("text_syntax", "expected a lower-case hex digit", bad);
      }
      out->push_back(static_cast<uint8_t>(hi << 4 | lo));
    }
    return {};
  }

  Status parse_scalar(Value* out) {
    if (pos_ >= s_.size()) return error("text_syntax", "expected a value", pos_);
    if (s_[pos_] == '"') {
      std::string str;
      if (Status st = parse_string(&str); !st) return st;
      *out = Value(std::move(str));
      return {};
    }
    size_t start = pos_;
    while (pos_ < s_.size() && is_word_char(s_[pos_])) ++pos_;
    std::string_view word = s_.substr(start, pos_ - start);
    if (word.empty()) return error("text_syntax", "expected a value", start);
    if (word == "null") {
      *out = Value();
    } else if (word == "true" || word == "false") {
      *out = Value(word == "true");
    } else if (word.starts_with("b#")) {
      Bytes b;
      if (Status st = parse_hex(word.substr(2), start + 2, &b); !st) return st;
      *out = Value(std::move(b));
    } else if (word.starts_with("addr#")) {
      Bytes b;
      if (word.size() - 5 != 2 * kAddressSize) {
        return error("text_syntax", "an address is addr# and 40 hex digits", start);
      }
      if (Status st = parse_hex(word.substr(5), start + 5, &b); !st) return st;
      Address a;
      std::memcpy(a.bytes.data(), b.data(), kAddressSize);
      *out = Value(a);
    } else if (word.starts_with("0x") || word.starts_with("-0x")) {
      return error("text_syntax", "0x is not accepted: write bytes as b#hex, integers in decimal", start);
    } else if ((word[0] >= '0' && word[0] <= '9') || word[0] == '-') {
      Result<BigInt> i = BigInt::parse_decimal(word);
      if (!i) return error("text_syntax", "bad integer (" + i.error().message + ")", start);
      *out = Value(std::move(*i));
    } else {
      return error("text_syntax", "unexpected '" + std::string(word) + "'", start);
    }
    return {};
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

std::string to_text(const Value& value) {
  std::string out;
  print(value, out);
  return out;
}

Result<Value> parse_text(std::string_view text) { return TextParser(text).parse(); }

}  // namespace genvm::calldata
