// The shared Keccak sponge (common/keccak.cc) in its Keccak-256 padding: Ethereum's known
// digests, and streaming across rate-block boundaries equal to one-shot. Its SHA3 padding is
// checked against OpenSSL in src/executor/sha3_test.cc (the executor's hasher is this sponge).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/sha3.h"

namespace genvm {
namespace {

std::string hex(const Sha3_256Digest& d) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : d) {
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

TEST(Keccak256Test, KnownDigests) {
  EXPECT_EQ(hex(keccak256("")), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  EXPECT_EQ(hex(keccak256("abc")), "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
  // The ERC-20 Transfer event's topic, a digest every Ethereum tool prints.
  EXPECT_EQ(hex(keccak256("Transfer(address,address,uint256)")),
            "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
}

TEST(Keccak256Test, StreamingEqualsOneShotAcrossBlocks) {
  std::vector<std::uint8_t> data(2 * 136 + 9);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 13 + 5);
  for (std::size_t n : {135u, 136u, 137u, 272u, 281u}) {
    std::span<const std::uint8_t> in(data.data(), n);
    Sha3_256Digest want = keccak256(in);
    for (std::size_t cut = 0; cut <= n; cut += 7) {
      KeccakSponge h(KeccakPadding::keccak);
      h.update(in.first(cut));
      h.update(in.subspan(cut));
      ASSERT_EQ(h.digest(), want) << "length " << n << " split at " << cut;
    }
  }
}

TEST(Keccak256Test, PaddingsDiffer) {
  KeccakSponge sha3;
  EXPECT_EQ(sha3.digest(), sha3_256(""));
  EXPECT_NE(keccak256(""), sha3_256(""));
}

}  // namespace
}  // namespace genvm
