#include "common/sha3.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// FIPS 202 / NIST example values.
constexpr const char* kEmpty = "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a";
constexpr const char* kAbc = "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532";
constexpr const char* k448 = "41c0dba2a9d6240849100376a8235e2c82e1b9998a999e21db32dd97496d3376";
constexpr const char* kMillionA =
    "5c8875ae474a3634ba4fd55ec85bffd661f32aca75c6d699d0cdcb6c115891c1";
constexpr const char* k448Msg = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

TEST(Sha3Test, OneShotMatchesKnownVectors) {
  EXPECT_EQ(hex(sha3_256("")), kEmpty);
  EXPECT_EQ(hex(sha3_256("abc")), kAbc);
  EXPECT_EQ(hex(sha3_256(k448Msg)), k448);
  EXPECT_EQ(hex(sha3_256(std::string(1000000, 'a'))), kMillionA);
}

TEST(Sha3Test, IncrementalMatchesOneShotForAnySplit) {
  Sha3_256 h;
  EXPECT_EQ(hex(h.finalize()), kEmpty);
  // Pieces that straddle the 136-byte SHA3-256 rate.
  const std::string million(1000000, 'a');
  std::size_t pos = 0;
  for (std::size_t n = 1; pos < million.size(); n = n * 2 + 1) {
    const std::size_t take = std::min(n % 5000 + 1, million.size() - pos);
    h.update(std::string_view(million).substr(pos, take));
    pos += take;
  }
  EXPECT_EQ(hex(h.finalize()), kMillionA);
}

TEST(Sha3Test, FinalizeStartsANewMessage) {
  Sha3_256 h;
  h.update("ab").update("c");
  EXPECT_EQ(hex(h.finalize()), kAbc);
  h.update("abc");
  EXPECT_EQ(hex(h.finalize()), kAbc);  // not sha3("abcabc")
}

TEST(Sha3Test, MovedHasherKeepsItsState) {
  Sha3_256 a;
  a.update("ab");
  Sha3_256 b = std::move(a);
  b.update("c");
  EXPECT_EQ(hex(b.finalize()), kAbc);
  a = std::move(b);
  a.update("abc");
  EXPECT_EQ(hex(a.finalize()), kAbc);
}

// The same sponge in its Keccak-256 padding (Ethereum's): known digests, and streaming across
// rate-block boundaries equal to one-shot.
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
