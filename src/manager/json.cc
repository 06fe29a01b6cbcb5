#include "manager/json.h"

#include "common/calldata.h"

namespace genvm::manager {

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
      case '\n': out_ += "\\n"; break;
      case '\r': out_ += "\\r"; break;
      case '\t': out_ += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
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

}  // namespace genvm::manager
