#include "common/bigint.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace genvm {
namespace {

TEST(BigInt, DecimalRoundTripsAtLimbAndChunkEdges) {
  for (const char* text :
       {"0", "1", "-1", "999999999", "1000000000", "-1000000000", "4294967295", "4294967296",
        "18446744073709551615", "18446744073709551616", "-18446744073709551617",
        "1606938044258990275541962092341162602522202993782792835301376",
        "-123456789012345678901234567890", "100000000000000000000000000000000000000000000"}) {
    Result<BigInt> v = BigInt::parse_decimal(text);
    ASSERT_TRUE(v) << text;
    EXPECT_EQ(v->to_decimal(), text);
  }
}

TEST(BigInt, ParseRejectsNonCanonicalDecimal) {
  for (const char* text : {"", "-", "+1", "01", "-0", "00", "1a", " 1", "1 ", "0x10", "1.0", "--1"}) {
    Result<BigInt> v = BigInt::parse_decimal(text);
    ASSERT_FALSE(v) << text;
    EXPECT_EQ(v.error().code, "invalid_integer") << text;
  }
}

TEST(BigInt, Int64AndUint64ConversionsHoldExactlyWhereTheyFit) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr uint64_t kUMax = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(BigInt(kMin).to_decimal(), "-9223372036854775808");
  EXPECT_EQ(BigInt(kMax).to_decimal(), "9223372036854775807");
  EXPECT_EQ(BigInt(kUMax).to_decimal(), "18446744073709551615");
  EXPECT_EQ(BigInt(kMin).to_int64(), kMin);
  EXPECT_EQ(BigInt(kMax).to_int64(), kMax);
  EXPECT_EQ(BigInt(kUMax).to_uint64(), kUMax);
  EXPECT_FALSE(BigInt(kUMax).to_int64());
  EXPECT_FALSE(BigInt(-1).to_uint64());
  EXPECT_FALSE((-BigInt(kMin)).to_int64());  // 2^63
  EXPECT_EQ((-BigInt(kMin)).to_uint64(), uint64_t{1} << 63);
  EXPECT_FALSE(BigInt::parse_decimal("18446744073709551616")->to_uint64());
  EXPECT_FALSE(BigInt::parse_decimal("-9223372036854775809")->to_int64());
  EXPECT_EQ(BigInt(0).to_int64(), 0);
}

TEST(BigInt, ZeroIsNeverNegativeSoEqualityIsStructural) {
  EXPECT_EQ(-BigInt(0), BigInt(0));
  EXPECT_FALSE((-BigInt(0)).is_negative());
  EXPECT_EQ(BigInt::from_magnitude(true, {0, 0, 0}), BigInt());
  EXPECT_EQ(BigInt::from_magnitude(false, {5, 0, 0}), BigInt(5));
}

TEST(BigInt, OrderingFollowsTheNumberLine) {
  auto n = [](const char* s) { return *BigInt::parse_decimal(s); };
  EXPECT_LT(n("-18446744073709551617"), n("-18446744073709551616"));
  EXPECT_LT(n("-1"), n("0"));
  EXPECT_LT(n("0"), n("1"));
  EXPECT_LT(n("4294967295"), n("4294967296"));
  EXPECT_GT(n("-1"), n("-2"));
  EXPECT_EQ(n("123456789012345678901234567890"), n("123456789012345678901234567890"));
}

TEST(BigInt, BitLengthCountsSignificantBits) {
  EXPECT_EQ(BigInt(0).bit_length(), 0u);
  EXPECT_EQ(BigInt(1).bit_length(), 1u);
  EXPECT_EQ(BigInt(-255).bit_length(), 8u);
  EXPECT_EQ(BigInt(uint64_t{1} << 32).bit_length(), 33u);
}

}  // namespace
}  // namespace genvm
