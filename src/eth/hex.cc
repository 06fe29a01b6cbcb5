// Hex text forms of octets and addresses, as JSON-RPC carries them.
#include <string>

#include "common/sha3.h"
#include "eth/eth.h"

namespace genvm::eth {

namespace {

constexpr char kDigits[] = "0123456789abcdef";

int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string to_hex(ByteView b) {
  std::string s = "0x";
  s.reserve(2 + 2 * b.size());
  for (std::uint8_t x : b) {
    s += kDigits[x >> 4];
    s += kDigits[x & 15];
  }
  return s;
}

std::string to_checksum_address(const Address& a) {
  // EIP-55: a hex digit is upper-case when the matching nibble of keccak256(lower-case hex) is 8+.
  std::string lower = to_hex(ByteView(a)).substr(2);
  Hash32 h = keccak256(std::string_view(lower));
  std::string out = "0x";
  for (std::size_t i = 0; i < lower.size(); ++i) {
    const int n = (i % 2 == 0) ? h[i / 2] >> 4 : h[i / 2] & 15;
    const char c = lower[i];
    out += (c >= 'a' && n >= 8) ? static_cast<char>(c - 'a' + 'A') : c;
  }
  return out;
}

Result<Bytes> parse_hex(std::string_view s, std::size_t max_octets) {
  if (s.size() < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) {
    return make_eth_error(Errc::bad_hex, "hex must start with 0x");
  }
  s.remove_prefix(2);
  if (s.size() % 2 != 0) return make_eth_error(Errc::bad_hex, "hex needs an even number of digits");
  if (s.size() / 2 > max_octets) {
    return make_eth_error(Errc::bad_hex, "hex of " + std::to_string(s.size() / 2) + " octets, at most " +
                                             std::to_string(max_octets) + " accepted");
  }
  Bytes out(s.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return make_eth_error(Errc::bad_hex, "a character that is not a hex digit");
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return out;
}

Result<Address> parse_address(std::string_view s) {
  if (s.size() != 42) return make_eth_error(Errc::bad_hex, "an address is 0x and 40 hex digits");
  auto b = parse_hex(s, 20);
  if (!b) return b.error();
  Address a;
  std::copy(b->begin(), b->end(), a.begin());
  return a;
}

}  // namespace genvm::eth
