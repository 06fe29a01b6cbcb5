// The executor's own SHA3-256 against FIPS 202 vectors and against OpenSSL (through
// common/sha3.h) for every length across several rate blocks and every split of the input into
// two update() calls: fails on a padding, lane-order or block-boundary mistake.
#include "executor/sha3.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/sha3.h"

namespace genvm::executor {
namespace {

std::string hex(const Digest32& d) {
  static const char* k = "0123456789abcdef";
  std::string s;
  for (auto c : d) {
    s += k[c >> 4];
    s += k[c & 15];
  }
  return s;
}

Digest32 ours(std::string_view s) {
  return sha3_256(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()));
}

TEST(Sha3, Fips202Vectors) {
  EXPECT_EQ(hex(ours("")), "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a");
  EXPECT_EQ(hex(ours("abc")), "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532");
  EXPECT_EQ(hex(ours("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "41c0dba2a9d6240849100376a8235e2c82e1b9998a999e21db32dd97496d3376");
}

TEST(Sha3, MatchesOpenSslForEveryLengthAndSplit) {
  std::vector<std::uint8_t> data(3 * 136 + 7);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 37 + 11);
  for (std::size_t n = 0; n <= data.size(); ++n) {
    std::span<const std::uint8_t> in(data.data(), n);
    Digest32 want;
    auto ref = genvm::sha3_256(in);
    std::copy(ref.begin(), ref.end(), want.begin());
    ASSERT_EQ(sha3_256(in), want) << "length " << n;
    // Splits: every one for lengths up to two blocks, a few beyond.
    for (std::size_t cut = 0; cut <= n; cut += (n <= 272 ? 1 : 17)) {
      Sha3Hasher h;
      h.update(in.first(cut));
      h.update(in.subspan(cut));
      ASSERT_EQ(h.digest(), want) << "length " << n << " split at " << cut;
    }
  }
}

TEST(Sha3, Keccak256Vectors) {
  auto k = [](std::string_view s) {
    return hex(keccak256(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size())));
  };
  EXPECT_EQ(k(""), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  EXPECT_EQ(k("abc"), "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
}

TEST(Sha3, DigestLeavesTheHasherUsable) {
  Sha3Hasher h;
  const std::uint8_t a[3] = {'a', 'b', 'c'};
  h.update(std::span<const std::uint8_t>(a, 1));
  (void)h.digest();
  h.update(std::span<const std::uint8_t>(a + 1, 2));
  EXPECT_EQ(hex(h.digest()), hex(ours("abc")));
}

}  // namespace
}  // namespace genvm::executor
