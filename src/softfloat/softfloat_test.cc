// Edge cases of the software float, with expected bit patterns written out (or the compiler's
// exact decimal conversion of a literal). The differential test (softfloat_diff.cc) covers
// the bulk; these pin the cases the wasm spec and our NaN rule single out.
#include "softfloat/softfloat.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>

namespace {

uint32_t f(float x) { return std::bit_cast<uint32_t>(x); }
uint64_t d(double x) { return std::bit_cast<uint64_t>(x); }

constexpr uint32_t kF32Inf = 0x7f800000, kF32NegZero = 0x80000000, kF32MinSub = 0x00000001,
                   kF32MaxSub = 0x007fffff, kF32MinNormal = 0x00800000, kF32Max = 0x7f7fffff;
constexpr uint64_t kF64Inf = 0x7ff0000000000000, kF64NegZero = 0x8000000000000000, kF64MinSub = 1,
                   kF64MinNormal = 0x0010000000000000, kF64Max = 0x7fefffffffffffff;
// NaNs with payloads and signs, quiet and signalling
constexpr uint32_t kF32NaNs[] = {0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fbfffff, 0x7fffffff, 0xffd23456};
constexpr uint64_t kF64NaNs[] = {0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001, 0xfff0000000000001,
                                 0x7ff7ffffffffffff, 0x7fffffffffffffff, 0xfffa5a5a5a5a5a5a};

TEST(SoftfloatF32, AddRoundsTiesToEven) {
  EXPECT_EQ(gvmsf_f32_add(f(1.0f), f(1.0f)), f(2.0f));
  // 1 + 2^-24 is exactly halfway between 1 and 1 + 2^-23: the even neighbour is 1
  EXPECT_EQ(gvmsf_f32_add(f(1.0f), 0x33800000), f(1.0f));
  // 1 + 2^-23 (odd last bit) + 2^-24: up to 1 + 2^-22
  EXPECT_EQ(gvmsf_f32_add(0x3f800001, 0x33800000), 0x3f800002u);
  // just above the tie rounds up
  EXPECT_EQ(gvmsf_f32_add(f(1.0f), 0x33800001), 0x3f800001u);
  EXPECT_EQ(gvmsf_f32_add(f(0.1f), f(0.2f)), f(0.1f + 0.2f));
  EXPECT_EQ(gvmsf_f32_add(kF32Max, kF32Max), kF32Inf);
  EXPECT_EQ(gvmsf_f32_sub(kF32MinNormal, kF32MaxSub), kF32MinSub);  // subnormal result kept
  EXPECT_EQ(gvmsf_f32_add(kF32MaxSub, kF32MinSub), kF32MinNormal);
}

TEST(SoftfloatF32, SignedZeros) {
  EXPECT_EQ(gvmsf_f32_add(kF32NegZero, kF32NegZero), kF32NegZero);
  EXPECT_EQ(gvmsf_f32_add(kF32NegZero, 0), 0u);
  EXPECT_EQ(gvmsf_f32_sub(f(1.5f), f(1.5f)), 0u);    // exact cancellation is +0
  EXPECT_EQ(gvmsf_f32_sub(f(-1.5f), f(-1.5f)), 0u);
  EXPECT_EQ(gvmsf_f32_sub(kF32NegZero, 0), kF32NegZero);
  EXPECT_EQ(gvmsf_f32_mul(kF32NegZero, f(3.0f)), kF32NegZero);
  EXPECT_EQ(gvmsf_f32_div(f(1.0f), kF32NegZero), kF32Inf | 0x80000000u);
  EXPECT_EQ(gvmsf_f32_div(kF32NegZero, f(-2.0f)), 0u);
  EXPECT_EQ(gvmsf_f32_sqrt(kF32NegZero), kF32NegZero);
}

TEST(SoftfloatF32, MulDivSqrt) {
  EXPECT_EQ(gvmsf_f32_div(f(1.0f), f(3.0f)), 0x3eaaaaabu);
  EXPECT_EQ(gvmsf_f32_div(f(2.0f), f(3.0f)), 0x3f2aaaabu);
  EXPECT_EQ(gvmsf_f32_mul(f(3.0f), f(1.0f / 3.0f)), f(1.0f));
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: an exact tie, even neighbour 1 + 2^-11
  EXPECT_EQ(gvmsf_f32_mul(0x3f800800, 0x3f800800), 0x3f801000u);
  // products in the subnormal range round once, at subnormal precision
  EXPECT_EQ(gvmsf_f32_mul(kF32MinSub, f(0.5f)), 0u);            // halfway to 0: even is 0
  EXPECT_EQ(gvmsf_f32_mul(0x00000003, f(0.5f)), 0x00000002u);  // 1.5 ulp: even is 2
  EXPECT_EQ(gvmsf_f32_mul(kF32MinNormal, f(0.5f)), 0x00400000u);
  EXPECT_EQ(gvmsf_f32_div(kF32MinSub, f(2.0f)), 0u);
  EXPECT_EQ(gvmsf_f32_div(kF32MaxSub, f(0.5f)), 0x00fffffeu);
  EXPECT_EQ(gvmsf_f32_mul(kF32Max, f(2.0f)), kF32Inf);
  EXPECT_EQ(gvmsf_f32_div(f(1.0f), 0), kF32Inf);
  EXPECT_EQ(gvmsf_f32_sqrt(f(2.0f)), 0x3fb504f3u);
  EXPECT_EQ(gvmsf_f32_sqrt(f(4.0f)), f(2.0f));
  EXPECT_EQ(gvmsf_f32_sqrt(kF32MinSub), 0x1a3504f3u);  // sqrt(2^-149) = 2^-75 sqrt(2)
  EXPECT_EQ(gvmsf_f32_sqrt(kF32Inf), kF32Inf);
}

TEST(SoftfloatF64, Arithmetic) {
  EXPECT_EQ(gvmsf_f64_add(d(0.1), d(0.2)), 0x3fd3333333333334u);
  EXPECT_EQ(gvmsf_f64_add(d(1.0), 0x3ca0000000000000), d(1.0));  // 1 + 2^-53: tie to even
  EXPECT_EQ(gvmsf_f64_add(0x3ff0000000000001, 0x3ca0000000000000), 0x3ff0000000000002u);
  EXPECT_EQ(gvmsf_f64_sub(kF64MinNormal, kF64MinNormal - 1), kF64MinSub);
  EXPECT_EQ(gvmsf_f64_mul(d(0.1), d(3.0)), 0x3fd3333333333334u);
  // (1 + 2^-26)(1 + 2^-27) = 1 + 2^-26 + 2^-27 + 2^-53: a tie, the even neighbour drops 2^-53
  EXPECT_EQ(gvmsf_f64_mul(0x3ff0000004000000, 0x3ff0000002000000), 0x3ff0000006000000u);
  EXPECT_EQ(gvmsf_f64_mul(0x3ff0000004000000, 0x3ff0000004000000), 0x3ff0000008000001u);  // exact
  EXPECT_EQ(gvmsf_f64_mul(0x3, d(0.5)), 0x2u);
  EXPECT_EQ(gvmsf_f64_mul(kF64Max, d(1.0000000000000002)), kF64Inf);
  EXPECT_EQ(gvmsf_f64_div(d(1.0), d(3.0)), 0x3fd5555555555555u);
  EXPECT_EQ(gvmsf_f64_div(d(2.0), d(3.0)), 0x3fe5555555555555u);
  EXPECT_EQ(gvmsf_f64_div(kF64MinNormal, d(2.0)), 0x0008000000000000u);
  EXPECT_EQ(gvmsf_f64_div(d(1.0), d(-0.0)), kF64Inf | kF64NegZero);
  EXPECT_EQ(gvmsf_f64_sqrt(d(2.0)), 0x3ff6a09e667f3bcdu);
  EXPECT_EQ(gvmsf_f64_sqrt(d(9.0)), d(3.0));
  EXPECT_EQ(gvmsf_f64_sqrt(kF64MinSub), 0x1e60000000000000u);  // 2^-537
  EXPECT_EQ(gvmsf_f64_sqrt(kF64NegZero), kF64NegZero);
  EXPECT_EQ(gvmsf_f64_add(kF64NegZero, kF64NegZero), kF64NegZero);
  EXPECT_EQ(gvmsf_f64_sub(d(2.5), d(2.5)), 0u);
}

TEST(SoftfloatNaN, EveryNaNResultIsTheCanonicalQuietNaN) {
  for (uint32_t n : kF32NaNs) {
    SCOPED_TRACE(n);
    EXPECT_EQ(gvmsf_f32_add(n, f(1.0f)), GVMSF_F32_NAN);
    EXPECT_EQ(gvmsf_f32_sub(f(1.0f), n), GVMSF_F32_NAN);
    EXPECT_EQ(gvmsf_f32_mul(n, n), GVMSF_F32_NAN);
    EXPECT_EQ(gvmsf_f32_div(f(1.0f), n), GVMSF_F32_NAN);
    EXPECT_EQ(gvmsf_f32_min(n, f(1.0f)), GVMSF_F32_NAN);
    EXPECT_EQ(gvmsf_f32_max(f(-1.0f), n), GVMSF_F32_NAN);
    EXPECT_EQ(gvmsf_f32_sqrt(n), GVMSF_F32_NAN);
    EXPECT_EQ(gvmsf_f32_nearest(n), GVMSF_F32_NAN);
    EXPECT_EQ(gvmsf_f32_ceil(n), GVMSF_F32_NAN);
    EXPECT_EQ(gvmsf_f64_promote_f32(n), GVMSF_F64_NAN);
  }
  for (uint64_t n : kF64NaNs) {
    SCOPED_TRACE(n);
    EXPECT_EQ(gvmsf_f64_add(n, d(1.0)), GVMSF_F64_NAN);
    EXPECT_EQ(gvmsf_f64_mul(d(2.0), n), GVMSF_F64_NAN);
    EXPECT_EQ(gvmsf_f64_div(n, n), GVMSF_F64_NAN);
    EXPECT_EQ(gvmsf_f64_min(n, n), GVMSF_F64_NAN);
    EXPECT_EQ(gvmsf_f64_sqrt(n), GVMSF_F64_NAN);
    EXPECT_EQ(gvmsf_f64_floor(n), GVMSF_F64_NAN);
    EXPECT_EQ(gvmsf_f64_trunc(n), GVMSF_F64_NAN);
    EXPECT_EQ(gvmsf_f32_demote_f64(n), GVMSF_F32_NAN);
  }
  // invalid operations make NaNs from non-NaNs
  EXPECT_EQ(gvmsf_f32_sub(kF32Inf, kF32Inf), GVMSF_F32_NAN);
  EXPECT_EQ(gvmsf_f32_mul(kF32Inf, 0), GVMSF_F32_NAN);
  EXPECT_EQ(gvmsf_f32_div(0, kF32NegZero), GVMSF_F32_NAN);
  EXPECT_EQ(gvmsf_f32_div(kF32Inf, kF32Inf), GVMSF_F32_NAN);
  EXPECT_EQ(gvmsf_f32_sqrt(f(-1.0f)), GVMSF_F32_NAN);
  EXPECT_EQ(gvmsf_f32_sqrt(kF32MinSub | 0x80000000u), GVMSF_F32_NAN);
  EXPECT_EQ(gvmsf_f64_add(kF64Inf, kF64Inf | kF64NegZero), GVMSF_F64_NAN);
  EXPECT_EQ(gvmsf_f64_mul(kF64NegZero, kF64Inf), GVMSF_F64_NAN);
  EXPECT_EQ(gvmsf_f64_div(0, 0), GVMSF_F64_NAN);
  EXPECT_EQ(gvmsf_f64_sqrt(kF64Inf | kF64NegZero), GVMSF_F64_NAN);
}

TEST(SoftfloatNaN, SignOperationsKeepPayloads) {
  EXPECT_EQ(gvmsf_f32_abs(0xff800001), 0x7f800001u);
  EXPECT_EQ(gvmsf_f32_neg(0x7fd23456), 0xffd23456u);
  EXPECT_EQ(gvmsf_f32_copysign(0x7f800001, f(-1.0f)), 0xff800001u);
  EXPECT_EQ(gvmsf_f32_copysign(f(2.0f), 0xffc00000), f(-2.0f));
  EXPECT_EQ(gvmsf_f64_abs(0xfff0000000000001), 0x7ff0000000000001u);
  EXPECT_EQ(gvmsf_f64_neg(0), kF64NegZero);
  EXPECT_EQ(gvmsf_f64_copysign(0xfffa5a5a5a5a5a5a, 0), 0x7ffa5a5a5a5a5a5au);
}

TEST(SoftfloatOrder, MinMaxAndCompares) {
  EXPECT_EQ(gvmsf_f32_min(kF32NegZero, 0), kF32NegZero);
  EXPECT_EQ(gvmsf_f32_min(0, kF32NegZero), kF32NegZero);
  EXPECT_EQ(gvmsf_f32_max(kF32NegZero, 0), 0u);
  EXPECT_EQ(gvmsf_f32_max(0, kF32NegZero), 0u);
  EXPECT_EQ(gvmsf_f32_min(f(-1.0f), f(-2.0f)), f(-2.0f));
  EXPECT_EQ(gvmsf_f32_max(kF32Inf | 0x80000000u, kF32MinSub), kF32MinSub);
  EXPECT_EQ(gvmsf_f64_min(kF64NegZero, 0), kF64NegZero);
  EXPECT_EQ(gvmsf_f64_max(kF64NegZero, 0), 0u);
  EXPECT_EQ(gvmsf_f64_max(d(-3.0), d(-2.0)), d(-2.0));

  EXPECT_EQ(gvmsf_f32_eq(0, kF32NegZero), 1);
  EXPECT_EQ(gvmsf_f32_lt(kF32NegZero, 0), 0);
  EXPECT_EQ(gvmsf_f32_le(kF32NegZero, 0), 1);
  EXPECT_EQ(gvmsf_f32_lt(f(-2.0f), f(-1.0f)), 1);
  EXPECT_EQ(gvmsf_f32_gt(f(-2.0f), f(-1.0f)), 0);
  EXPECT_EQ(gvmsf_f32_ge(kF32Inf, kF32Max), 1);
  EXPECT_EQ(gvmsf_f64_lt(d(-1.0), d(1.0)), 1);
  EXPECT_EQ(gvmsf_f64_ge(kF64NegZero, 0), 1);
  for (uint32_t n : kF32NaNs) {
    EXPECT_EQ(gvmsf_f32_eq(n, n), 0);
    EXPECT_EQ(gvmsf_f32_ne(n, n), 1);
    EXPECT_EQ(gvmsf_f32_lt(n, kF32Inf), 0);
    EXPECT_EQ(gvmsf_f32_ge(kF32Inf, n), 0);
  }
  for (uint64_t n : kF64NaNs) {
    EXPECT_EQ(gvmsf_f64_le(n, n), 0);
    EXPECT_EQ(gvmsf_f64_ne(d(1.0), n), 1);
    EXPECT_EQ(gvmsf_f64_gt(n, kF64Inf | kF64NegZero), 0);
  }
}

TEST(SoftfloatRound, IntegralRoundings) {
  EXPECT_EQ(gvmsf_f32_nearest(f(2.5f)), f(2.0f));
  EXPECT_EQ(gvmsf_f32_nearest(f(3.5f)), f(4.0f));
  EXPECT_EQ(gvmsf_f32_nearest(f(-0.5f)), kF32NegZero);
  EXPECT_EQ(gvmsf_f32_nearest(f(0.50000006f)), f(1.0f));
  EXPECT_EQ(gvmsf_f32_nearest(f(1.5f)), f(2.0f));
  EXPECT_EQ(gvmsf_f32_nearest(f(8388607.5f)), f(8388608.0f));  // 2^23 - 0.5
  EXPECT_EQ(gvmsf_f32_floor(f(-0.5f)), f(-1.0f));
  EXPECT_EQ(gvmsf_f32_floor(f(0.5f)), 0u);
  EXPECT_EQ(gvmsf_f32_floor(f(-1.5f)), f(-2.0f));
  EXPECT_EQ(gvmsf_f32_ceil(f(-0.5f)), kF32NegZero);
  EXPECT_EQ(gvmsf_f32_ceil(kF32MinSub), f(1.0f));
  EXPECT_EQ(gvmsf_f32_ceil(f(1.25f)), f(2.0f));
  EXPECT_EQ(gvmsf_f32_trunc(f(-1.75f)), f(-1.0f));
  EXPECT_EQ(gvmsf_f32_trunc(kF32Inf), kF32Inf);
  EXPECT_EQ(gvmsf_f32_floor(kF32NegZero), kF32NegZero);
  EXPECT_EQ(gvmsf_f64_nearest(d(4503599627370495.5)), d(4503599627370496.0));  // 2^52 - 0.5
  EXPECT_EQ(gvmsf_f64_nearest(d(-2.5)), d(-2.0));
  EXPECT_EQ(gvmsf_f64_floor(d(-1e-300)), d(-1.0));
  EXPECT_EQ(gvmsf_f64_ceil(d(-0.999)), kF64NegZero);
  EXPECT_EQ(gvmsf_f64_trunc(d(1e300)), d(1e300));
  EXPECT_EQ(gvmsf_f64_ceil(d(9007199254740991.0)), d(9007199254740991.0));
}

TEST(SoftfloatConvert, IntegersToFloats) {
  EXPECT_EQ(gvmsf_f32_convert_i32_s(16777217), f(16777216.0f));  // 2^24 + 1: tie to even
  EXPECT_EQ(gvmsf_f32_convert_i32_s(16777219), f(16777220.0f));  // 2^24 + 3: tie up to even
  EXPECT_EQ(gvmsf_f32_convert_i32_s(INT32_MIN), 0xcf000000u);
  EXPECT_EQ(gvmsf_f32_convert_i32_s(-1), f(-1.0f));
  EXPECT_EQ(gvmsf_f32_convert_i32_s(0), 0u);
  EXPECT_EQ(gvmsf_f32_convert_i32_u(0xffffffffu), f(4294967296.0f));
  EXPECT_EQ(gvmsf_f32_convert_i64_s(INT64_MAX), 0x5f000000u);
  EXPECT_EQ(gvmsf_f32_convert_i64_s(INT64_MIN), 0xdf000000u);
  EXPECT_EQ(gvmsf_f32_convert_i64_u(UINT64_MAX), 0x5f800000u);
  EXPECT_EQ(gvmsf_f32_convert_i64_u(0x8000008000000000u), 0x5f000000u);  // tie to even
  EXPECT_EQ(gvmsf_f32_convert_i64_u(0x8000008000000001u), 0x5f000001u);  // just above
  EXPECT_EQ(gvmsf_f64_convert_i32_s(INT32_MIN), d(-2147483648.0));
  EXPECT_EQ(gvmsf_f64_convert_i32_u(0xffffffffu), d(4294967295.0));
  EXPECT_EQ(gvmsf_f64_convert_i64_s((int64_t{1} << 53) + 1), d(9007199254740992.0));
  EXPECT_EQ(gvmsf_f64_convert_i64_s(-((int64_t{1} << 53) + 3)), d(-9007199254740996.0));
  EXPECT_EQ(gvmsf_f64_convert_i64_u(UINT64_MAX), 0x43f0000000000000u);
  EXPECT_EQ(gvmsf_f64_convert_i64_u(0), 0u);
}

TEST(SoftfloatConvert, DemotePromote) {
  EXPECT_EQ(gvmsf_f32_demote_f64(0x3ff0000010000000), f(1.0f));  // 1 + 2^-24: tie
  EXPECT_EQ(gvmsf_f32_demote_f64(0x3ff0000010000001), 0x3f800001u);
  EXPECT_EQ(gvmsf_f32_demote_f64(0x3ff0000030000000), 0x3f800002u);  // 1 + 3 * 2^-24: tie up
  EXPECT_EQ(gvmsf_f32_demote_f64(kF64Max), kF32Inf);
  EXPECT_EQ(gvmsf_f32_demote_f64(d(-1e300)), kF32Inf | 0x80000000u);
  EXPECT_EQ(gvmsf_f32_demote_f64(0x47efffffe0000000), kF32Max);  // exactly f32 max
  EXPECT_EQ(gvmsf_f32_demote_f64(0x47effffff0000000), kF32Inf);  // max + half ulp: tie, to inf
  EXPECT_EQ(gvmsf_f32_demote_f64(0x47efffffefffffff), kF32Max);  // just below that tie
  EXPECT_EQ(gvmsf_f32_demote_f64(0x47efffffd0000000), kF32Max - 1);  // tie below max: even
  EXPECT_EQ(gvmsf_f32_demote_f64(0x36a0000000000000), kF32MinSub);  // 2^-149
  EXPECT_EQ(gvmsf_f32_demote_f64(0x3690000000000000), 0u);          // 2^-150: tie to 0
  EXPECT_EQ(gvmsf_f32_demote_f64(0x3690000000000001), kF32MinSub);
  EXPECT_EQ(gvmsf_f32_demote_f64(0x36a8000000000000), 0x2u);  // 1.5 * 2^-149: tie to 2
  EXPECT_EQ(gvmsf_f32_demote_f64(kF64MinSub | kF64NegZero), kF32NegZero);
  EXPECT_EQ(gvmsf_f64_promote_f32(kF32MinSub), 0x36a0000000000000u);
  EXPECT_EQ(gvmsf_f64_promote_f32(kF32MaxSub), d(static_cast<double>(std::bit_cast<float>(kF32MaxSub))));
  EXPECT_EQ(gvmsf_f64_promote_f32(kF32Inf | 0x80000000u), kF64Inf | kF64NegZero);
  EXPECT_EQ(gvmsf_f64_promote_f32(f(0.1f)), d(static_cast<double>(0.1f)));
}

TEST(SoftfloatConvert, TruncationsSaturateAndSayWhenWasmTraps) {
  // i32 from f32: -2^31 is in range, the next float below is not
  EXPECT_EQ(gvmsf_i32_trunc_sat_f32_s(0xcf000000), INT32_MIN);
  EXPECT_EQ(gvmsf_i32_trunc_f32_s_valid(0xcf000000), 1);
  EXPECT_EQ(gvmsf_i32_trunc_f32_s_valid(0xcf000001), 0);
  EXPECT_EQ(gvmsf_i32_trunc_sat_f32_s(0xcf000001), INT32_MIN);
  EXPECT_EQ(gvmsf_i32_trunc_f32_s_valid(f(2147483648.0f)), 0);
  EXPECT_EQ(gvmsf_i32_trunc_sat_f32_s(f(2147483648.0f)), INT32_MAX);
  EXPECT_EQ(gvmsf_i32_trunc_sat_f32_s(f(-1.9f)), -1);
  // i32 from f64: anything above -2^31 - 1 truncates into range
  EXPECT_EQ(gvmsf_i32_trunc_f64_s_valid(d(-2147483648.9)), 1);
  EXPECT_EQ(gvmsf_i32_trunc_sat_f64_s(d(-2147483648.9)), INT32_MIN);
  EXPECT_EQ(gvmsf_i32_trunc_f64_s_valid(d(-2147483649.0)), 0);
  EXPECT_EQ(gvmsf_i32_trunc_f64_s_valid(d(2147483647.9)), 1);
  EXPECT_EQ(gvmsf_i32_trunc_sat_f64_s(d(2147483647.9)), INT32_MAX);
  EXPECT_EQ(gvmsf_i32_trunc_f64_s_valid(d(2147483648.0)), 0);
  // unsigned: (-1, 0] truncates to 0 and does not trap; -1 traps and saturates to 0
  EXPECT_EQ(gvmsf_i32_trunc_f32_u_valid(f(-0.9f)), 1);
  EXPECT_EQ(gvmsf_i32_trunc_sat_f32_u(f(-0.9f)), 0u);
  EXPECT_EQ(gvmsf_i32_trunc_f32_u_valid(f(-1.0f)), 0);
  EXPECT_EQ(gvmsf_i32_trunc_f32_u_valid(kF32NegZero), 1);
  EXPECT_EQ(gvmsf_i32_trunc_sat_f32_u(f(4294967040.0f)), 4294967040u);
  EXPECT_EQ(gvmsf_i32_trunc_f64_u_valid(d(4294967295.9)), 1);
  EXPECT_EQ(gvmsf_i32_trunc_sat_f64_u(d(4294967295.9)), 4294967295u);
  EXPECT_EQ(gvmsf_i32_trunc_f64_u_valid(d(4294967296.0)), 0);
  EXPECT_EQ(gvmsf_i32_trunc_sat_f64_u(d(1e10)), UINT32_MAX);
  // 64-bit
  EXPECT_EQ(gvmsf_i64_trunc_f64_s_valid(0xc3e0000000000000), 1);  // -2^63
  EXPECT_EQ(gvmsf_i64_trunc_sat_f64_s(0xc3e0000000000000), INT64_MIN);
  EXPECT_EQ(gvmsf_i64_trunc_f64_s_valid(0x43e0000000000000), 0);  // 2^63
  EXPECT_EQ(gvmsf_i64_trunc_sat_f64_s(0x43e0000000000000), INT64_MAX);
  EXPECT_EQ(gvmsf_i64_trunc_sat_f64_s(0x43dfffffffffffff), INT64_C(0x7ffffffffffffc00));
  EXPECT_EQ(gvmsf_i64_trunc_f64_u_valid(0x43efffffffffffff), 1);
  EXPECT_EQ(gvmsf_i64_trunc_sat_f64_u(0x43efffffffffffff), UINT64_C(0xfffffffffffff800));
  EXPECT_EQ(gvmsf_i64_trunc_f64_u_valid(0x43f0000000000000), 0);  // 2^64
  EXPECT_EQ(gvmsf_i64_trunc_sat_f64_u(0x43f0000000000000), UINT64_MAX);
  EXPECT_EQ(gvmsf_i64_trunc_sat_f32_u(0x5f7fffff), UINT64_C(0xffffff0000000000));
  EXPECT_EQ(gvmsf_i64_trunc_f32_u_valid(0x5f800000), 0);
  EXPECT_EQ(gvmsf_i64_trunc_f32_s_valid(0xdf000000), 1);
  EXPECT_EQ(gvmsf_i64_trunc_sat_f32_s(f(-1e30f)), INT64_MIN);
  // NaN and infinities: 0 / saturated, always a trap
  for (uint32_t n : kF32NaNs) {
    EXPECT_EQ(gvmsf_i32_trunc_sat_f32_s(n), 0);
    EXPECT_EQ(gvmsf_i64_trunc_sat_f32_u(n), 0u);
    EXPECT_EQ(gvmsf_i32_trunc_f32_u_valid(n), 0);
    EXPECT_EQ(gvmsf_i64_trunc_f32_s_valid(n), 0);
  }
  for (uint64_t n : kF64NaNs) {
    EXPECT_EQ(gvmsf_i64_trunc_sat_f64_s(n), 0);
    EXPECT_EQ(gvmsf_i32_trunc_sat_f64_u(n), 0u);
    EXPECT_EQ(gvmsf_i32_trunc_f64_s_valid(n), 0);
    EXPECT_EQ(gvmsf_i64_trunc_f64_u_valid(n), 0);
  }
  EXPECT_EQ(gvmsf_i64_trunc_sat_f64_u(kF64Inf), UINT64_MAX);
  EXPECT_EQ(gvmsf_i64_trunc_sat_f64_u(kF64Inf | kF64NegZero), 0u);
  EXPECT_EQ(gvmsf_i32_trunc_sat_f64_s(kF64Inf | kF64NegZero), INT32_MIN);
  EXPECT_EQ(gvmsf_i64_trunc_f64_u_valid(kF64Inf), 0);
}

}  // namespace
