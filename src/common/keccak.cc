// The Keccak-f[1600] sponge behind common/sha3.h's KeccakSponge: no OpenSSL here, so a binary
// that hashes only through this file never loads libcrypto for it.
#include <algorithm>
#include <cstring>

#include "common/sha3.h"

namespace genvm {

namespace {

constexpr std::uint64_t kRoundConstants[24] = {
    0x0000000000000001ull, 0x0000000000008082ull, 0x800000000000808aull, 0x8000000080008000ull,
    0x000000000000808bull, 0x0000000080000001ull, 0x8000000080008081ull, 0x8000000000008009ull,
    0x000000000000008aull, 0x0000000000000088ull, 0x0000000080008009ull, 0x000000008000000aull,
    0x000000008000808bull, 0x800000000000008bull, 0x8000000000008089ull, 0x8000000000008003ull,
    0x8000000000008002ull, 0x8000000000000080ull, 0x000000000000800aull, 0x800000008000000aull,
    0x8000000080008081ull, 0x8000000000008080ull, 0x0000000080000001ull, 0x8000000080008008ull};

// Rotation offsets r[x + 5y] of the rho step.
constexpr unsigned kRho[25] = {0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14};

constexpr std::uint64_t rotl(std::uint64_t v, unsigned n) { return n == 0 ? v : (v << n) | (v >> (64 - n)); }

void keccak_f1600(std::array<std::uint64_t, 25>& a) {
  for (std::uint64_t rc : kRoundConstants) {
    std::uint64_t c[5], b[25];
    for (int x = 0; x < 5; ++x) c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
    for (int x = 0; x < 5; ++x) {
      std::uint64_t d = c[(x + 4) % 5] ^ rotl(c[(x + 1) % 5], 1);
      for (int y = 0; y < 25; y += 5) a[x + y] ^= d;
    }
    // rho and pi: lane (x, y) moves to (y, 2x + 3y).
    for (int x = 0; x < 5; ++x) {
      for (int y = 0; y < 5; ++y) b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl(a[x + 5 * y], kRho[x + 5 * y]);
    }
    for (int y = 0; y < 25; y += 5) {
      for (int x = 0; x < 5; ++x) a[x + y] = b[x + y] ^ (~b[(x + 1) % 5 + y] & b[(x + 2) % 5 + y]);
    }
    a[0] ^= rc;
  }
}

// XORs one full rate block (little-endian lanes) into the state and permutes.
void absorb(std::array<std::uint64_t, 25>& state, const std::uint8_t* block, std::size_t rate) {
  for (std::size_t i = 0; i < rate / 8; ++i) {
    std::uint64_t lane = 0;
    for (int j = 7; j >= 0; --j) lane = (lane << 8) | block[8 * i + static_cast<std::size_t>(j)];
    state[i] ^= lane;
  }
  keccak_f1600(state);
}

}  // namespace

void KeccakSponge::update(std::span<const std::uint8_t> data) {
  const std::uint8_t* p = data.data();
  std::size_t n = data.size();
  if (used_ > 0) {
    std::size_t take = std::min(n, kRate - used_);
    std::memcpy(block_.data() + used_, p, take);
    used_ += take;
    p += take;
    n -= take;
    if (used_ < kRate) return;
    absorb(state_, block_.data(), kRate);
    used_ = 0;
  }
  for (; n >= kRate; p += kRate, n -= kRate) absorb(state_, p, kRate);
  if (n > 0) {
    std::memcpy(block_.data(), p, n);
    used_ = n;
  }
}

Sha3_256Digest KeccakSponge::digest() const {
  std::array<std::uint64_t, 25> state = state_;
  std::array<std::uint8_t, kRate> last{};
  std::memcpy(last.data(), block_.data(), used_);
  // The domain bits and the first padding bit: SHA3 appends 01 before its pad10*1, the original
  // Keccak nothing.
  last[used_] ^= padding_ == KeccakPadding::sha3 ? 0x06 : 0x01;
  last[kRate - 1] ^= 0x80;    // the last padding bit
  absorb(state, last.data(), kRate);
  Sha3_256Digest out;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(state[i / 8] >> (8 * (i % 8)));
  return out;
}

Sha3_256Digest keccak256(std::span<const std::uint8_t> input) {
  KeccakSponge h(KeccakPadding::keccak);
  h.update(input);
  return h.digest();
}

Sha3_256Digest keccak256(std::string_view input) {
  return keccak256(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(input.data()),
                                                 input.size()));
}

}  // namespace genvm
