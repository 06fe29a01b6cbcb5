#include "common/bigint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>

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

// The arithmetic is checked against __int128 on random operands that fit, and by identities
// (q * b + r == a, |r| < |b|) on operands of many limbs, where Knuth's division takes its
// rarely-hit correction branches.
TEST(BigInt, ArithmeticMatchesInt128OnSmallOperands) {
  std::mt19937_64 rng(42);
  auto to_i128 = [](const BigInt& v) {
    __int128 out = 0;
    for (size_t i = v.magnitude().size(); i-- > 0;) out = (out << 32) | v.magnitude()[i];
    return v.is_negative() ? -out : out;
  };
  for (int i = 0; i < 20000; ++i) {
    int64_t a = static_cast<int64_t>(rng()) >> (rng() % 63);
    int64_t b = static_cast<int64_t>(rng()) >> (rng() % 63);
    EXPECT_EQ(to_i128(BigInt(a) + BigInt(b)), static_cast<__int128>(a) + b);
    EXPECT_EQ(to_i128(BigInt(a) - BigInt(b)), static_cast<__int128>(a) - b);
    EXPECT_EQ(to_i128(BigInt(a) * BigInt(b)), static_cast<__int128>(a) * b);
    if (b != 0) {
      BigInt q, r;
      BigInt::div_mod(BigInt(a), BigInt(b), q, r);
      EXPECT_EQ(to_i128(q), static_cast<__int128>(a) / b) << a << " / " << b;
      EXPECT_EQ(to_i128(r), static_cast<__int128>(a) % b) << a << " % " << b;
    }
  }
}

TEST(BigInt, DivisionOfManyLimbsSatisfiesTheDivisionIdentity) {
  std::mt19937_64 rng(7);
  auto random_big = [&](size_t limbs) {
    BigInt::Limbs mag(limbs);
    for (uint32_t& l : mag) {
      // Runs of all-ones and all-zeros limbs make the quotient estimate overshoot.
      switch (rng() % 4) {
        case 0: l = 0xffffffffu; break;
        case 1: l = 0; break;
        default: l = static_cast<uint32_t>(rng());
      }
    }
    return BigInt::from_magnitude(rng() % 2 == 0, std::move(mag));
  };
  for (int i = 0; i < 5000; ++i) {
    BigInt a = random_big(1 + rng() % 12);
    BigInt b = random_big(1 + rng() % 8);
    if (b.is_zero()) continue;
    BigInt q, r;
    BigInt::div_mod(a, b, q, r);
    EXPECT_EQ(q * b + r, a) << a.to_decimal() << " / " << b.to_decimal();
    EXPECT_LT(r.is_negative() ? -r : r, b.is_negative() ? -b : b);
    EXPECT_TRUE(r.is_zero() || r.is_negative() == a.is_negative());
  }
}

TEST(BigInt, KnownLargeProductsAndQuotients) {
  auto n = [](const char* s) { return *BigInt::parse_decimal(s); };
  BigInt two128 = n("340282366920938463463374607431768211456");
  EXPECT_EQ((two128 * two128).to_decimal(),
            "115792089237316195423570985008687907853269984665640564039457584007913129639936");
  EXPECT_EQ((two128 * two128 - BigInt(1)).to_decimal(),
            "115792089237316195423570985008687907853269984665640564039457584007913129639935");
  BigInt q, r;
  BigInt::div_mod(two128 * two128 - BigInt(1), two128, q, r);
  EXPECT_EQ(q.to_decimal(), "340282366920938463463374607431768211455");
  EXPECT_EQ(r.to_decimal(), "340282366920938463463374607431768211455");
  EXPECT_EQ((BigInt(5) - BigInt(7)).to_decimal(), "-2");
  EXPECT_EQ((BigInt(-5) + BigInt(5)), BigInt(0));
  EXPECT_FALSE((BigInt(-5) + BigInt(5)).is_negative());
  EXPECT_FALSE((BigInt(-3) * BigInt(0)).is_negative());
}

// Products and conversions of many limbs (the Karatsuba and divide-and-conquer paths) checked
// against identities that use only the quadratic, single-limb code: division by the product,
// digit-by-digit decimal text, and powers of ten built by repeated small multiplication.
BigInt random_magnitude(std::mt19937_64& rng, size_t limbs) {
  BigInt::Limbs mag(limbs);
  for (uint32_t& l : mag) {
    switch (rng() % 4) {
      case 0: l = 0xffffffffu; break;
      case 1: l = 0; break;
      default: l = static_cast<uint32_t>(rng());
    }
  }
  mag.back() |= 1;
  return BigInt::from_magnitude(false, std::move(mag));
}

std::string decimal_digit_by_digit(BigInt v) {
  std::string out;
  const BigInt ten(10);
  while (!v.is_zero()) {
    BigInt q, r;
    BigInt::div_mod(v, ten, q, r);
    out.push_back(static_cast<char>('0' + *r.to_uint64()));
    v = q;
  }
  std::reverse(out.begin(), out.end());
  return out.empty() ? "0" : out;
}

TEST(BigInt, LargeProductsDivideBackExactly) {
  std::mt19937_64 rng(11);
  for (size_t la : {39u, 40u, 41u, 80u, 97u, 300u, 1000u}) {
    for (size_t lb : {1u, 39u, 40u, 64u, 150u, 999u}) {
      BigInt a = random_magnitude(rng, la), b = random_magnitude(rng, lb);
      BigInt p = a * b, q, r;
      BigInt::div_mod(p, b, q, r);
      EXPECT_EQ(q, a) << la << "x" << lb;
      EXPECT_TRUE(r.is_zero()) << la << "x" << lb;
    }
  }
}

TEST(BigInt, LargeDecimalTextMatchesDigitByDigitConversion) {
  std::mt19937_64 rng(5);
  for (size_t limbs : {63u, 64u, 65u, 128u, 129u, 300u}) {
    BigInt v = random_magnitude(rng, limbs);
    std::string text = v.to_decimal();
    EXPECT_EQ(text, decimal_digit_by_digit(v)) << limbs;
    EXPECT_EQ(BigInt::parse_decimal(text).value(), v) << limbs;
    EXPECT_EQ(BigInt::parse_decimal("-" + text).value(), -v) << limbs;
  }
  BigInt power(1);
  for (int digits = 1; digits <= 3000; ++digits) {
    power = power * BigInt(10);
    if (digits % 577 != 0 && digits != 3000) continue;
    std::string text = "1" + std::string(size_t(digits), '0');
    EXPECT_EQ(BigInt::parse_decimal(text).value(), power) << digits;
    EXPECT_EQ(power.to_decimal(), text) << digits;
    EXPECT_EQ((power - BigInt(1)).to_decimal(), std::string(size_t(digits), '9')) << digits;
  }
}

// Issue 19: a contract returning one 1 MB integer kept the node 84 s in to_decimal (quadratic).
// Work, not time (a timing ratio failed on a loaded machine): 16x the size must cost well under
// the 256x of a quadratic method; Karatsuba-based divide and conquer does ~70-80x. Counted in
// limb operations (bigint_limb_steps), so the check is the same on any machine.
TEST(BigInt, DecimalConversionIsSubQuadratic) {
  std::mt19937_64 rng(3);
  auto steps = [&](size_t bytes) {
    BigInt v = random_magnitude(rng, bytes / 4);
    const uint64_t before = bigint_limb_steps();
    std::string text = v.to_decimal();
    BigInt back = BigInt::parse_decimal(text).value();
    const uint64_t used = bigint_limb_steps() - before;
    EXPECT_EQ(back, v);
    return static_cast<double>(used);
  };
  const double small = steps(16 << 10), large = steps(256 << 10);
  EXPECT_LT(large / small, 120.0) << "16 KiB: " << small << " limb steps, 256 KiB: " << large;
}

// The decimal parser against a reference that cannot share its bugs: Horner's rule over
// 9-digit chunks with BigInt's plain multiply-add (quadratic, so kept below 60k digits). Sizes
// on both sides of the product thresholds (Karatsuba at 40 limbs, NTT from 1536), random digits
// and runs of 9s and 0s (carries through every limb), both signs; each parse renders back.
TEST(BigInt, ParseMatchesAReferenceAtEverySize) {
  auto reference = [](const std::string& digits) {
    BigInt v;
    size_t head = digits.size() % 9 == 0 ? 9 : digits.size() % 9;
    v = BigInt(std::stoull(digits.substr(0, head)));
    for (size_t at = head; at < digits.size(); at += 9) v = v * BigInt(1000000000) + BigInt(std::stoull(digits.substr(at, 9)));
    return v;
  };
  std::mt19937_64 rng(17);
  std::vector<size_t> sizes;
  for (size_t n = 1; n < 400; n += 1 + n / 8) sizes.push_back(n);
  for (size_t n : {3000u, 13000u, 13824u, 14000u, 14800u, 15000u, 20000u, 28000u, 41000u, 59000u}) sizes.push_back(n);
  for (size_t n : sizes) {
    for (int shape = 0; shape < 3; ++shape) {
      std::string digits(n, '0');
      for (char& c : digits) c = shape == 0 ? char('0' + rng() % 10) : shape == 1 ? '9' : (rng() % 50 == 0 ? '1' : '0');
      digits[0] = shape == 1 ? '9' : char('1' + rng() % 9);
      SCOPED_TRACE(std::to_string(n) + " digits, shape " + std::to_string(shape));
      BigInt want = reference(digits);
      Result<BigInt> got = BigInt::parse_decimal(digits);
      ASSERT_TRUE(got);
      ASSERT_EQ(*got, want);
      ASSERT_EQ(got->to_decimal(), digits);
      ASSERT_EQ(BigInt::parse_decimal("-" + digits).value(), -want);
    }
  }
}

// Products large enough for the NTT (and lopsided ones that mix it with slicing) divide back
// exactly, and agree with the sum of their 1000-limb partial products, each below the NTT
// threshold (so computed by Karatsuba) and shifted into place by limbs.
TEST(BigInt, NttProductsAgreeWithKaratsuba) {
  auto piece = [](const BigInt& x, size_t at) {
    const auto& m = x.magnitude();
    return BigInt::from_magnitude(false, BigInt::Limbs(m.begin() + long(at), m.begin() + long(std::min(m.size(), at + 1000))));
  };
  auto shifted = [](const BigInt& x, size_t limbs) {
    BigInt::Limbs l(limbs, 0);
    l.insert(l.end(), x.magnitude().begin(), x.magnitude().end());
    return BigInt::from_magnitude(false, std::move(l));
  };
  std::mt19937_64 rng(23);
  for (auto [la, lb] : {std::pair<size_t, size_t>{1536, 1536}, {1600, 1535}, {3000, 2000}, {9000, 1600}, {5000, 5000}}) {
    SCOPED_TRACE(std::to_string(la) + "x" + std::to_string(lb));
    BigInt a = random_magnitude(rng, la), b = random_magnitude(rng, lb);
    BigInt p = a * b;
    BigInt sum;
    for (size_t i = 0; i < la; i += 1000) {
      for (size_t k = 0; k < lb; k += 1000) sum = sum + shifted(piece(a, i) * piece(b, k), i + k);
    }
    EXPECT_EQ(p, sum);
    BigInt q, r;
    BigInt::div_mod(p, b, q, r);
    EXPECT_EQ(q, a);
    EXPECT_TRUE(r.is_zero());
    EXPECT_EQ((-a) * b, -p);
  }
}

// The review's case: a CLI argument of millions of digits kept genvm-node parsing for 28 s at
// 16 M digits (Karatsuba-based divide and conquer, O(n^1.585 log n)). With NTT products, 16x
// the digits costs ~25-35x the limb work (O(n log^2 n)); the Karatsuba method took ~80x.
TEST(BigInt, ParsingMillionsOfDigitsIsNearLinear) {
  std::mt19937_64 rng(31);
  auto steps = [&](size_t digits) {
    std::string text(digits, '0');
    for (char& c : text) c = char('0' + rng() % 10);
    text[0] = '7';
    const uint64_t before = bigint_limb_steps();
    BigInt v = BigInt::parse_decimal(text).value();
    const uint64_t used = bigint_limb_steps() - before;
    EXPECT_EQ(v.to_decimal(), text);
    return static_cast<double>(used);
  };
  const double small = steps(64000), large = steps(1024000);
  EXPECT_LT(large / small, 45.0) << "64k digits: " << small << " limb steps, 1M digits: " << large;
}

}  // namespace
}  // namespace genvm
