// GVM32, SHA-256 and runner ids.
#include <openssl/sha.h>

#include "runners/errors.h"
#include "runners/runners.h"

namespace genvm::runners {

namespace {
constexpr std::string_view kAlphabet = "0123456789abcdefghjkmnpqrstvwxyz";

int gvm32_value(char c) {
  if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  if (c == 'i' || c == 'l') return 1;
  if (c == 'o') return 0;
  auto pos = kAlphabet.find(c);
  return pos == std::string_view::npos ? -1 : static_cast<int>(pos);
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

Result<Hash32> decode_hash(std::string_view text, std::string_view what) {
  if (text.size() != 52) {
    return malformed(std::string(what) + " hash must be 52 GVM32 characters, got " +
                     std::to_string(text.size()));
  }
  auto bytes = gvm32_decode(text);
  if (!bytes) return bytes.take_error();
  if (bytes->size() != 32) return malformed(std::string(what) + " hash is not 32 bytes");
  Hash32 h{};
  std::copy(bytes->begin(), bytes->end(), h.begin());
  return h;
}
}  // namespace

std::string gvm32_encode(std::span<const std::uint8_t> data) {
  std::string out;
  out.reserve((data.size() * 8 + 4) / 5);
  std::uint32_t value = 0;
  int bits = 0;
  for (std::uint8_t byte : data) {
    value = ((value << 8) | byte) & 0xFFFF;  // at most 12 live bits
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += kAlphabet[(value >> bits) & 0x1F];
    }
  }
  if (bits > 0) out += kAlphabet[(value << (5 - bits)) & 0x1F];
  return out;
}

Result<std::vector<std::uint8_t>> gvm32_decode(std::string_view text) {
  std::vector<std::uint8_t> out;
  out.reserve(text.size() * 5 / 8);
  std::uint32_t value = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '-') continue;
    int v = gvm32_value(c);
    if (v < 0) return malformed("invalid GVM32 character in \"" + std::string(text) + "\"");
    value = ((value << 5) | static_cast<std::uint32_t>(v)) & 0x1FFF;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>(value >> bits));
    }
  }
  if (bits > 0 && (value & ((1u << bits) - 1)) != 0) {
    return malformed("GVM32 text has non-zero leftover bits");
  }
  return out;
}

Hash32 sha256(std::string_view bytes) {
  Hash32 h{};
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), h.data());
  return h;
}

Hash32 test_runner_hash() {
  Hash32 h{};
  h[0] = 0xd3;  // GVM32 "test" = 11001 11010 11100 11010, then zeros
  h[1] = 0xb3;
  h[2] = 0xa0;
  return h;
}

std::string RunnerId::canonical() const {
  switch (kind) {
    case Kind::kContract: return "contract";
    case Kind::kChain: return "chain:" + chain;
    case Kind::kCustom: return "custom:" + gvm32_encode(hash);
    case Kind::kPackaged: return name + ":" + (tag.empty() ? gvm32_encode(hash) : tag);
  }
  return {};
}

Result<RunnerId> parse_runner_id(std::string_view text) {
  RunnerId id;
  if (text == "contract") return id;
  if (text.size() > 256) return malformed("runner id longer than 256 octets");
  auto colon = text.find(':');
  if (colon == std::string_view::npos) {
    return malformed("runner id \"" + std::string(text) + "\" is not name:hash");
  }
  std::string_view prefix = text.substr(0, colon);
  std::string_view rest = text.substr(colon + 1);
  if (prefix == "custom") {
    auto h = decode_hash(rest, "custom runner");
    if (!h) return h.take_error();
    id.kind = RunnerId::Kind::kCustom;
    id.hash = *h;
    return id;
  }
  if (prefix == "chain") {
    // chain:0x<40 hex>[:a|f[:<52 gvm32>]] — checked for shape; resolving needs the host.
    auto parts_ok = [&]() {
      std::string_view r = rest;
      auto next = r.find(':');
      std::string_view addr = r.substr(0, next);
      if (addr.size() != 42 || addr.substr(0, 2) != "0x") return false;
      for (char c : addr.substr(2)) {
        if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
      }
      if (next == std::string_view::npos) return true;
      r = r.substr(next + 1);
      next = r.find(':');
      std::string_view state = r.substr(0, next);
      if (state != "a" && state != "f") return false;
      if (next == std::string_view::npos) return true;
      return decode_hash(r.substr(next + 1), "chain slot").ok();
    };
    if (!parts_ok()) return malformed("chain runner id \"" + std::string(text) + "\" is malformed");
    id.kind = RunnerId::Kind::kChain;
    id.chain = std::string(rest);
    return id;
  }
  if (prefix.empty() || prefix == "contract") {
    return malformed("runner name \"" + std::string(prefix) + "\" is empty or reserved");
  }
  for (char c : prefix) {
    if (!is_name_char(c)) return malformed("runner name \"" + std::string(prefix) + "\" has a character outside [A-Za-z0-9_-]");
  }
  id.kind = RunnerId::Kind::kPackaged;
  id.name = std::string(prefix);
  if (rest == "latest" || rest == "test") {
    id.tag = std::string(rest);
    return id;
  }
  auto h = decode_hash(rest, "runner");
  if (!h) return h.take_error();
  id.hash = *h;
  return id;
}

}  // namespace genvm::runners
