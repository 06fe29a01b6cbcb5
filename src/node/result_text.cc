#include "node/result_text.h"

#include <algorithm>

namespace genvm::node {

using calldata::Value;

namespace {

// An estimate of to_text's length, without converting any integer (decimal digits of a b-bit
// integer: at most b * log10(2) + 1, plus a sign). Strings count one character a byte (escapes
// make them longer): the text is cut at the limit anyway, so this only sizes the work.
std::size_t estimate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull: return 4;
    case Value::Kind::kBool: return 5;
    case Value::Kind::kAddress: return 45;
    case Value::Kind::kInt: return v.as_int().bit_length() * 30103 / 100000 + 2;
    case Value::Kind::kBytes: return 2 * v.as_bytes().size() + 2;
    case Value::Kind::kString: return v.as_string().size() + 2;
    case Value::Kind::kArray: {
      std::size_t n = 2;
      for (const Value& item : v.as_array()) n += estimate(item) + 2;
      return n;
    }
    case Value::Kind::kMap: {
      std::size_t n = 2;
      for (const auto& [key, item] : v.as_map()) n += key.size() + 4 + estimate(item) + 2;
      return n;
    }
  }
  return 0;
}

std::string int_note(const BigInt& i) {
  static const char* digits = "0123456789abcdef";
  std::string hex;
  const auto& mag = i.magnitude();
  for (std::size_t k = mag.size(); k-- > 0 && hex.size() < 16;) {
    for (int s = 28; s >= 0; s -= 4) hex.push_back(digits[(mag[k] >> s) & 15]);
  }
  hex.erase(0, std::min(hex.find_first_not_of('0'), hex.size() - 1));
  return std::string("<") + (i.is_negative() ? "negative " : "") + "integer of " + std::to_string(i.bit_length()) +
         " bits, not rendered: 0x" + hex.substr(0, 16) + "...>";
}

// A copy that renders within about `room` characters: what is cut is marked in *cut.
Value reduce(const Value& v, const ResultTextLimits& limits, std::size_t room, bool* cut) {
  switch (v.kind()) {
    case Value::Kind::kInt:
      if (v.as_int().bit_length() > limits.max_int_bits) {
        *cut = true;
        return Value(int_note(v.as_int()));
      }
      return v;
    case Value::Kind::kBytes: {
      const calldata::Bytes& b = v.as_bytes();
      if (b.size() <= room / 2 + 1) return v;
      *cut = true;
      return Value(calldata::Bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(room / 2 + 1)));
    }
    case Value::Kind::kString: {
      const std::string& s = v.as_string();
      if (s.size() <= room + 1) return v;
      *cut = true;
      std::size_t n = room + 1;
      while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // a UTF-8 boundary
      return Value(s.substr(0, n));
    }
    case Value::Kind::kArray: {
      Value::Array out;
      std::size_t used = 0;
      for (const Value& item : v.as_array()) {
        if (used > room) {
          *cut = true;
          break;
        }
        out.push_back(reduce(item, limits, room - used, cut));
        used += std::min(estimate(out.back()), room + 1) + 2;
      }
      return Value(std::move(out));
    }
    case Value::Kind::kMap: {
      Value::Map out;
      std::size_t used = 0;
      for (const auto& [key, item] : v.as_map()) {
        if (used > room) {
          *cut = true;
          break;
        }
        Value r = reduce(item, limits, room - used, cut);
        used += std::min(estimate(r), room + 1) + key.size() + 6;
        out.emplace(key, std::move(r));
      }
      return Value(std::move(out));
    }
    default:
      return v;
  }
}

}  // namespace

std::string result_text(const Value& value, const ResultTextLimits& limits) {
  const std::size_t full = estimate(value);
  bool cut = false;
  Value reduced = reduce(value, limits, limits.max_chars, &cut);
  if (!cut) {
    // Nothing above a limit: the exact text (its integers are small, so the conversion is).
    std::string text = calldata::to_text(value);
    if (text.size() <= limits.max_chars) return text;
    cut = true;
  }
  std::string text = calldata::to_text(reduced);
  if (text.size() > limits.max_chars) text.resize(limits.max_chars);  // ASCII only: any cut is safe
  return text + " ... (cut: the full text would be about " + std::to_string(full) + " characters; " +
         std::to_string(limits.max_chars) + " kept)";
}

}  // namespace genvm::node
