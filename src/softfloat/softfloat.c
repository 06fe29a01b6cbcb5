/* gvmsf: IEEE-754 binary32/binary64 in integer arithmetic (see softfloat.h).
 *
 * Why this shape: the file is compiled twice, natively (tests) and to wasm32 (linked into the
 * deterministic CPython by the float-rewriting tool). The wasm build must contain no float
 * instruction and touch no memory, so nothing here uses a float type, an array, a switch (clang
 * turns dense switches into lookup tables in memory), a pointer or a 128-bit integer (a libcall
 * on wasm32); everything is locals and 32/64-bit integer operations, and leading zeros are
 * counted with the clz builtins (one wasm instruction) instead of loops.
 *
 * Internal representation of a finite nonzero value being rounded: (sign, e, sig) meaning
 *   f32: sig * 2^(e - 156)      f64: sig * 2^(e - 1084)
 * With sig's leading one at bit 30 (f32) / 62 (f64), e is the biased exponent minus one; the
 * low 7 / 10 bits are below the result's last place, and the lowest of them is "sticky" (ORed
 * with every bit shifted out), which is all that correct rounding needs. */
#include "softfloat.h"

#define GVMSF_API __attribute__((visibility("default")))

typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t i32;
typedef int64_t i64;

#define F32_SIGN UINT32_C(0x80000000)
#define F32_INF UINT32_C(0x7f800000)
#define F32_FRAC UINT32_C(0x007fffff)
#define F32_HIDDEN UINT32_C(0x00800000)
#define F64_SIGN UINT64_C(0x8000000000000000)
#define F64_INF UINT64_C(0x7ff0000000000000)
#define F64_FRAC UINT64_C(0x000fffffffffffff)
#define F64_HIDDEN UINT64_C(0x0010000000000000)

static inline u32 f32_exp(u32 a) { return (a >> 23) & 0xff; }
static inline u32 f64_exp(u64 a) { return (u32)(a >> 52) & 0x7ff; }
static inline int f32_is_nan(u32 a) { return (a & ~F32_SIGN) > F32_INF; }
static inline int f64_is_nan(u64 a) { return (a & ~F64_SIGN) > F64_INF; }
static inline int f32_is_zero(u32 a) { return (a << 1) == 0; }
static inline int f64_is_zero(u64 a) { return (a << 1) == 0; }

/* x >> n, ORing every bit shifted out into the lowest bit (n may exceed the width). */
static inline u32 shr_jam32(u32 x, u32 n) {
  if (n == 0) return x;
  if (n >= 32) return x != 0;
  return (x >> n) | ((x << (32 - n)) != 0);
}
static inline u64 shr_jam64(u64 x, u32 n) {
  if (n == 0) return x;
  if (n >= 64) return x != 0;
  return (x >> n) | ((x << (64 - n)) != 0);
}

/* Round (sign, e, sig) to nearest-even and pack; sig < 2^31 with its leading one at bit 30
 * unless the value is below the normal range (then e <= 0). Overflow gives infinity; values
 * below the normal range are shifted into the subnormal position before rounding, so they are
 * rounded once, at the subnormal precision. */
static u32 f32_round_pack(u32 sign, i32 e, u32 sig) {
  if ((u32)e >= 0xfd) {
    if (e < 0) {
      sig = shr_jam32(sig, (u32)(-e));
      e = 0;
    } else if (e > 0xfd || sig + 0x40 >= UINT32_C(0x80000000)) {
      return (sign << 31) | F32_INF;
    }
  }
  u32 below = sig & 0x7f;
  sig = (sig + 0x40) >> 7;
  if (below == 0x40) sig &= ~UINT32_C(1); /* a tie: back to the even neighbour */
  if (sig == 0) e = 0;
  /* sig's leading one (bit 23) adds one to e; a rounding carry to bit 24 adds one more. */
  return (sign << 31) + ((u32)e << 23) + sig;
}
static u64 f64_round_pack(u32 sign, i32 e, u64 sig) {
  if ((u32)e >= 0x7fd) {
    if (e < 0) {
      sig = shr_jam64(sig, (u32)(-e));
      e = 0;
    } else if (e > 0x7fd || sig + 0x200 >= UINT64_C(0x8000000000000000)) {
      return ((u64)sign << 63) | F64_INF;
    }
  }
  u64 below = sig & 0x3ff;
  sig = (sig + 0x200) >> 10;
  if (below == 0x200) sig &= ~UINT64_C(1);
  if (sig == 0) e = 0;
  return ((u64)sign << 63) + ((u64)(u32)e << 52) + sig;
}

/* The same for any nonzero sig < 2^31 / 2^63: shift its leading one into place first. */
static inline u32 f32_norm_round_pack(u32 sign, i32 e, u32 sig) {
  i32 shift = __builtin_clz(sig) - 1;
  return f32_round_pack(sign, e - shift, sig << shift);
}
static inline u64 f64_norm_round_pack(u32 sign, i32 e, u64 sig) {
  i32 shift = __builtin_clzll(sig) - 1;
  return f64_round_pack(sign, e - shift, sig << shift);
}

/* ---- add, sub ---------------------------------------------------------------------------- */

/* The alignment shift and the add-or-subtract are written without branches: their direction
 * depends on the operands' signs and exponents, which a branch predictor cannot guess. */
static inline u32 align_jam32(u32 x, u32 n) { /* shr_jam32 for x < 2^31, any n */
  n = n < 31 ? n : 31;
  return (x >> n) | (((x << ((32 - n) & 31)) != 0) & (n != 0));
}
static inline u64 align_jam64(u64 x, u32 n) { /* shr_jam64 for x < 2^63, any n */
  n = n < 63 ? n : 63;
  return (x >> n) | (((x << ((64 - n) & 63)) != 0) & (n != 0));
}

static u32 f32_add_signed(u32 a, u32 b) {
  if (f32_is_nan(a) || f32_is_nan(b)) return GVMSF_F32_NAN;
  /* a is the larger magnitude from here on */
  u32 swap = (0u - (u32)((a & ~F32_SIGN) < (b & ~F32_SIGN))) & (a ^ b);
  a ^= swap;
  b ^= swap;
  u32 subtract = (a ^ b) >> 31;
  i32 ea = (i32)f32_exp(a), eb = (i32)f32_exp(b);
  if (ea == 0xff) return (eb == 0xff && subtract) ? GVMSF_F32_NAN : a;
  u32 ma = a & F32_FRAC, mb = b & F32_FRAC;
  /* subnormals: exponent 1 without the hidden bit */
  if (ea != 0) ma |= F32_HIDDEN; else ea = 1;
  if (eb != 0) mb |= F32_HIDDEN; else eb = 1;
  /* leading one at bit 29: six bits below the last place, the carry fits at bit 30 */
  ma <<= 6;
  mb = align_jam32(mb << 6, (u32)(ea - eb));
  u32 m = ma + ((mb ^ (0u - subtract)) + subtract); /* ma + mb, or ma - mb */
  /* a zero sum: +-0 + +-0 of one sign keeps it; exact cancellation is +0 (nearest rounding) */
  if (m == 0) return subtract ? 0 : a;
  return f32_norm_round_pack(a >> 31, ea, m);
}

static u64 f64_add_signed(u64 a, u64 b) {
  if (f64_is_nan(a) || f64_is_nan(b)) return GVMSF_F64_NAN;
  u64 swap = (0u - (u64)((a & ~F64_SIGN) < (b & ~F64_SIGN))) & (a ^ b);
  a ^= swap;
  b ^= swap;
  u32 subtract = (u32)((a ^ b) >> 63);
  i32 ea = (i32)f64_exp(a), eb = (i32)f64_exp(b);
  if (ea == 0x7ff) return (eb == 0x7ff && subtract) ? GVMSF_F64_NAN : a;
  u64 ma = a & F64_FRAC, mb = b & F64_FRAC;
  if (ea != 0) ma |= F64_HIDDEN; else ea = 1;
  if (eb != 0) mb |= F64_HIDDEN; else eb = 1;
  ma <<= 9; /* leading one at bit 61 */
  mb = align_jam64(mb << 9, (u32)(ea - eb));
  u64 m = ma + ((mb ^ (0u - (u64)subtract)) + subtract);
  if (m == 0) return subtract ? 0 : a;
  return f64_norm_round_pack((u32)(a >> 63), ea, m);
}

GVMSF_API u32 gvmsf_f32_add(u32 a, u32 b) { return f32_add_signed(a, b); }
GVMSF_API u32 gvmsf_f32_sub(u32 a, u32 b) { return f32_add_signed(a, b ^ F32_SIGN); }
GVMSF_API u64 gvmsf_f64_add(u64 a, u64 b) { return f64_add_signed(a, b); }
GVMSF_API u64 gvmsf_f64_sub(u64 a, u64 b) { return f64_add_signed(a, b ^ F64_SIGN); }

/* ---- mul, div ---------------------------------------------------------------------------- */

/* Significand with the hidden bit at bit 23 / 52 and the matching exponent; subnormals are
 * normalized (their exponent goes to zero or below). The value must be finite and nonzero. */
#define F32_UNPACK(x, m, e)                                  \
  do {                                                       \
    m = (x) & F32_FRAC;                                      \
    e = (i32)f32_exp(x);                                     \
    if (e == 0) {                                            \
      i32 shift_ = __builtin_clz(m) - 8;                     \
      m <<= shift_;                                          \
      e = 1 - shift_;                                        \
    } else {                                                 \
      m |= F32_HIDDEN;                                       \
    }                                                        \
  } while (0)
#define F64_UNPACK(x, m, e)                                  \
  do {                                                       \
    m = (x) & F64_FRAC;                                      \
    e = (i32)f64_exp(x);                                     \
    if (e == 0) {                                            \
      i32 shift_ = __builtin_clzll(m) - 11;                  \
      m <<= shift_;                                          \
      e = 1 - shift_;                                        \
    } else {                                                 \
      m |= F64_HIDDEN;                                       \
    }                                                        \
  } while (0)

GVMSF_API u32 gvmsf_f32_mul(u32 a, u32 b) {
  if (f32_is_nan(a) || f32_is_nan(b)) return GVMSF_F32_NAN;
  u32 s = (a ^ b) >> 31;
  if (f32_exp(a) == 0xff || f32_exp(b) == 0xff) {
    if (f32_is_zero(a) || f32_is_zero(b)) return GVMSF_F32_NAN; /* inf * 0 */
    return (s << 31) | F32_INF;
  }
  if (f32_is_zero(a) || f32_is_zero(b)) return s << 31;
  u32 ma, mb;
  i32 ea, eb;
  F32_UNPACK(a, ma, ea);
  F32_UNPACK(b, mb, eb);
  u64 p = (u64)ma * mb; /* [2^46, 2^48) */
  u32 m = (u32)(p >> 17) | ((p & 0x1ffff) != 0);
  return f32_norm_round_pack(s, ea + eb - 127, m);
}

/* The high 64 bits of a * b, with the lowest bit ORed with "any of the low 64 bits set". */
static inline u64 mul64_high_jam(u64 a, u64 b) {
  u64 al = (u32)a, ah = a >> 32, bl = (u32)b, bh = b >> 32;
  u64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  u64 mid = (ll >> 32) + (u32)lh + (u32)hl;
  u64 hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
  u64 lo = (mid << 32) | (u32)ll;
  return hi | (lo != 0);
}

GVMSF_API u64 gvmsf_f64_mul(u64 a, u64 b) {
  if (f64_is_nan(a) || f64_is_nan(b)) return GVMSF_F64_NAN;
  u32 s = (u32)((a ^ b) >> 63);
  if (f64_exp(a) == 0x7ff || f64_exp(b) == 0x7ff) {
    if (f64_is_zero(a) || f64_is_zero(b)) return GVMSF_F64_NAN;
    return ((u64)s << 63) | F64_INF;
  }
  if (f64_is_zero(a) || f64_is_zero(b)) return (u64)s << 63;
  u64 ma, mb;
  i32 ea, eb;
  F64_UNPACK(a, ma, ea);
  F64_UNPACK(b, mb, eb);
  /* leading ones at bits 62 and 63: the product's high word is in [2^61, 2^63) */
  u64 m = mul64_high_jam(ma << 10, mb << 11);
  return f64_norm_round_pack(s, ea + eb - 1023, m);
}

GVMSF_API u32 gvmsf_f32_div(u32 a, u32 b) {
  if (f32_is_nan(a) || f32_is_nan(b)) return GVMSF_F32_NAN;
  u32 s = (a ^ b) >> 31;
  if (f32_exp(a) == 0xff) return f32_exp(b) == 0xff ? GVMSF_F32_NAN : (s << 31) | F32_INF;
  if (f32_exp(b) == 0xff) return s << 31;
  if (f32_is_zero(b)) return f32_is_zero(a) ? GVMSF_F32_NAN : (s << 31) | F32_INF;
  if (f32_is_zero(a)) return s << 31;
  u32 ma, mb;
  i32 ea, eb;
  F32_UNPACK(a, ma, ea);
  F32_UNPACK(b, mb, eb);
  u64 n = (u64)ma << 30;
  u64 q = n / mb; /* (2^29, 2^31) */
  u32 m = (u32)q | (n - q * mb != 0);
  return f32_norm_round_pack(s, ea - eb + 126, m);
}

GVMSF_API u64 gvmsf_f64_div(u64 a, u64 b) {
  if (f64_is_nan(a) || f64_is_nan(b)) return GVMSF_F64_NAN;
  u32 s = (u32)((a ^ b) >> 63);
  if (f64_exp(a) == 0x7ff) return f64_exp(b) == 0x7ff ? GVMSF_F64_NAN : ((u64)s << 63) | F64_INF;
  if (f64_exp(b) == 0x7ff) return (u64)s << 63;
  if (f64_is_zero(b)) return f64_is_zero(a) ? GVMSF_F64_NAN : ((u64)s << 63) | F64_INF;
  if (f64_is_zero(a)) return (u64)s << 63;
  u64 ma, mb;
  i32 ea, eb;
  F64_UNPACK(a, ma, ea);
  F64_UNPACK(b, mb, eb);
  i32 e = ea - eb;
  if (ma < mb) { /* make mb <= ma < 2 mb: the quotient's leading one is its first bit */
    ma <<= 1;
    e -= 1;
  }
  /* Long division, 11 quotient bits per 64-bit divide (the remainder stays below mb < 2^53):
   * 1 + 5 * 11 = 56 bits, two more than the 53 kept plus the rounding bit. */
  u64 r = ma - mb, q = 1;
  for (int i = 0; i < 5; i++) {
    r <<= 11;
    u64 d = r / mb;
    r -= d * mb;
    q = (q << 11) | d;
  }
  return f64_norm_round_pack(s, e + 1029, q | (r != 0));
}

/* ---- sqrt -------------------------------------------------------------------------------- */

/* Square roots are exact integer roots of the significand, built in two or three stages: a
 * short digit-by-digit root of the radicand's top bits, then stages that each roughly double
 * the root's bits with one 64-bit division. If r = isqrt(N) and rem = N - r^2, the root of
 * N' = N * 4^s + D is r * 2^s + d with d <= (rem * 4^s + D) / (r * 2^(s+1)): the division
 * overestimates d by at most 2^(s-1) / r (below 3 for every stage here), and a few steps down
 * fix it. */

/* One step of the digit-by-digit root: bring down the radicand's next two bits into rem and
 * decide the root's next bit. */
#define SQRT_STEP(root, rem, two_bits)            \
  do {                                            \
    rem = (rem << 2) | (two_bits);                \
    u64 trial_ = (root << 2) | 1;                 \
    u64 fits_ = rem >= trial_;                    \
    rem -= trial_ & (0 - fits_);                  \
    root = (root << 1) | fits_;                   \
  } while (0)

GVMSF_API u32 gvmsf_f32_sqrt(u32 a) {
  if (f32_is_nan(a)) return GVMSF_F32_NAN;
  if (f32_is_zero(a)) return a; /* sqrt(-0) = -0 */
  if (a >> 31) return GVMSF_F32_NAN;
  if (a == F32_INF) return a;
  u32 ma;
  i32 ea;
  F32_UNPACK(a, ma, ea);
  i32 x = ea - 150;        /* a = ma * 2^x */
  i32 k = 28 - (x & 1);    /* x - k even; radicand ma << k in [2^50, 2^52) */
  u64 radicand = (u64)ma << k;
  u64 top = radicand >> 26, root = 0, rem = 0;
  for (int i = 24; i >= 0; i -= 2) SQRT_STEP(root, rem, (top >> i) & 3); /* root in [2^12, 2^13) */
  root = (root << 13) + ((rem << 26) | (radicand & 0x3ffffff)) / (root << 14);
  while (root * root > radicand) root--;
  /* root in [2^25, 2^26): the 24 kept bits, the rounding bit and one more */
  return f32_norm_round_pack(0, (x - k) / 2 + 156, (u32)root | (root * root != radicand));
}

GVMSF_API u64 gvmsf_f64_sqrt(u64 a) {
  if (f64_is_nan(a)) return GVMSF_F64_NAN;
  if (f64_is_zero(a)) return a;
  if (a >> 63) return GVMSF_F64_NAN;
  if (a == F64_INF) return a;
  u64 ma;
  i32 ea;
  F64_UNPACK(a, ma, ea);
  i32 x = ea - 1075;               /* a = ma * 2^x */
  i32 k = 56 + (x & 1);            /* x - k even */
  u64 top = ma << (k - 56);        /* radicand = top * 2^56, top in [2^52, 2^54) */
  u64 high = top >> 24, root = 0, rem = 0;
  for (int i = 28; i >= 0; i -= 2) SQRT_STEP(root, rem, (high >> i) & 3); /* [2^14, 2^15) */
  root = (root << 12) + ((rem << 24) | (top & 0xffffff)) / (root << 13);
  while (root * root > top) root--;
  rem = top - root * root;         /* root = isqrt(top) in [2^26, 2^27), rem <= 2 root */
  root = (root << 28) + (rem << 27) / root;
  /* radicand - root^2 is small (|.| < 2^59), so its low 64 bits are all of it */
  i64 diff = (i64)((top << 56) - root * root);
  while (diff < 0) {
    diff += (i64)(2 * root - 1);
    root--;
  }
  /* root in [2^54, 2^55): the 53 kept bits, the rounding bit and one more */
  return f64_norm_round_pack(0, (x - k) / 2 + 1084, root | (diff != 0));
}

/* ---- ceil, floor, trunc, nearest --------------------------------------------------------- */

enum { ROUND_TRUNC, ROUND_FLOOR, ROUND_CEIL, ROUND_NEAREST };

/* Round to an integral value in the given direction; `one` is 1.0's bit pattern. Written once
 * for both widths (W = 32 or 64); mode is a constant at every call, so each instance folds. */
#define DEFINE_ROUND_INT(W, T, BIAS, FRACBITS, EXP, IS_NAN, NAN, SIGN, ONE)                   \
  static inline T f##W##_round_int(T a, int mode) {                                            \
    u32 e = EXP(a);                                                                            \
    if (e >= (BIAS) + (FRACBITS)) return IS_NAN(a) ? (NAN) : a; /* integral, inf or NaN */     \
    T s = a & (SIGN);                                                                          \
    if (e < (BIAS)) { /* |a| < 1 */                                                            \
      if ((T)(a << 1) == 0) return a;                                                          \
      if (mode == ROUND_FLOOR) return s ? (s | (ONE)) : 0;                                     \
      if (mode == ROUND_CEIL) return s ? s : (ONE);                                            \
      if (mode == ROUND_NEAREST && e == (BIAS)-1 && (T)(a << (W - FRACBITS)) != 0)             \
        return s | (ONE); /* above one half */                                                 \
      return s;                                                                                \
    }                                                                                          \
    T unit = (T)1 << ((BIAS) + (FRACBITS)-e); /* the bit of 1.0 at this exponent */            \
    T fraction = a & (unit - 1);                                                               \
    if (fraction == 0) return a;                                                               \
    T r = a & ~(unit - 1);                                                                     \
    /* adding `unit` to the magnitude carries into the exponent when needed */                 \
    if (mode == ROUND_FLOOR && s) r += unit;                                                   \
    if (mode == ROUND_CEIL && !s) r += unit;                                                   \
    if (mode == ROUND_NEAREST) {                                                               \
      T half = unit >> 1;                                                                      \
      if (fraction > half || (fraction == half && (r & unit))) r += unit;                      \
    }                                                                                          \
    return r;                                                                                  \
  }
DEFINE_ROUND_INT(32, u32, 127u, 23u, f32_exp, f32_is_nan, GVMSF_F32_NAN, F32_SIGN, UINT32_C(0x3f800000))
DEFINE_ROUND_INT(64, u64, 1023u, 52u, f64_exp, f64_is_nan, GVMSF_F64_NAN, F64_SIGN,
                 UINT64_C(0x3ff0000000000000))

GVMSF_API u32 gvmsf_f32_ceil(u32 a) { return f32_round_int(a, ROUND_CEIL); }
GVMSF_API u32 gvmsf_f32_floor(u32 a) { return f32_round_int(a, ROUND_FLOOR); }
GVMSF_API u32 gvmsf_f32_trunc(u32 a) { return f32_round_int(a, ROUND_TRUNC); }
GVMSF_API u32 gvmsf_f32_nearest(u32 a) { return f32_round_int(a, ROUND_NEAREST); }
GVMSF_API u64 gvmsf_f64_ceil(u64 a) { return f64_round_int(a, ROUND_CEIL); }
GVMSF_API u64 gvmsf_f64_floor(u64 a) { return f64_round_int(a, ROUND_FLOOR); }
GVMSF_API u64 gvmsf_f64_trunc(u64 a) { return f64_round_int(a, ROUND_TRUNC); }
GVMSF_API u64 gvmsf_f64_nearest(u64 a) { return f64_round_int(a, ROUND_NEAREST); }

/* ---- sign bits, min, max, compares ------------------------------------------------------- */

/* Both widths share one definition each; "ordered" means neither operand is a NaN. */
#define DEFINE_SIGN_AND_ORDER(W, T, SIGN, IS_NAN, NAN)                                          \
  GVMSF_API T gvmsf_f##W##_abs(T a) { return a & ~(SIGN); }                                    \
  GVMSF_API T gvmsf_f##W##_neg(T a) { return a ^ (SIGN); }                                     \
  GVMSF_API T gvmsf_f##W##_copysign(T a, T b) { return (a & ~(SIGN)) | (b & (SIGN)); }         \
  /* a < b for ordered operands, with -0 below +0 (min/max's order) */                         \
  static inline int f##W##_below(T a, T b) {                                                   \
    if ((a ^ b) & (SIGN)) return (a & (SIGN)) != 0;                                            \
    return a != b && ((a < b) ^ ((a & (SIGN)) != 0));                                          \
  }                                                                                            \
  /* a < b for ordered operands, IEEE's order (-0 == +0) */                                    \
  static inline int f##W##_less(T a, T b) {                                                    \
    if ((T)((a | b) << 1) == 0) return 0;                                                      \
    return f##W##_below(a, b);                                                                 \
  }                                                                                            \
  static inline int f##W##_equal(T a, T b) { return a == b || (T)((a | b) << 1) == 0; }       \
  GVMSF_API T gvmsf_f##W##_min(T a, T b) {                                                     \
    if (IS_NAN(a) || IS_NAN(b)) return NAN;                                                    \
    return f##W##_below(a, b) ? a : b;                                                         \
  }                                                                                            \
  GVMSF_API T gvmsf_f##W##_max(T a, T b) {                                                     \
    if (IS_NAN(a) || IS_NAN(b)) return NAN;                                                    \
    return f##W##_below(a, b) ? b : a;                                                         \
  }                                                                                            \
  GVMSF_API i32 gvmsf_f##W##_eq(T a, T b) { return !IS_NAN(a) && !IS_NAN(b) && f##W##_equal(a, b); } \
  GVMSF_API i32 gvmsf_f##W##_ne(T a, T b) { return IS_NAN(a) || IS_NAN(b) || !f##W##_equal(a, b); } \
  GVMSF_API i32 gvmsf_f##W##_lt(T a, T b) { return !IS_NAN(a) && !IS_NAN(b) && f##W##_less(a, b); } \
  GVMSF_API i32 gvmsf_f##W##_gt(T a, T b) { return !IS_NAN(a) && !IS_NAN(b) && f##W##_less(b, a); } \
  GVMSF_API i32 gvmsf_f##W##_le(T a, T b) {                                                    \
    return !IS_NAN(a) && !IS_NAN(b) && (f##W##_equal(a, b) || f##W##_less(a, b));              \
  }                                                                                            \
  GVMSF_API i32 gvmsf_f##W##_ge(T a, T b) {                                                    \
    return !IS_NAN(a) && !IS_NAN(b) && (f##W##_equal(a, b) || f##W##_less(b, a));              \
  }
DEFINE_SIGN_AND_ORDER(32, u32, F32_SIGN, f32_is_nan, GVMSF_F32_NAN)
DEFINE_SIGN_AND_ORDER(64, u64, F64_SIGN, f64_is_nan, GVMSF_F64_NAN)

/* ---- integer -> float -------------------------------------------------------------------- */

static inline u32 f32_from_magnitude(u32 sign, u64 m) {
  if (m == 0) return 0;
  i32 lz = __builtin_clzll(m);
  m <<= lz; /* leading one at bit 63; keep 31 bits and jam the rest */
  return f32_round_pack(sign, 189 - lz, (u32)(m >> 33) | ((m & UINT64_C(0x1ffffffff)) != 0));
}
static inline u32 f32_from_magnitude32(u32 sign, u32 m) {
  if (m == 0) return 0;
  i32 lz = __builtin_clz(m);
  m <<= lz;
  return f32_round_pack(sign, 157 - lz, (m >> 1) | (m & 1));
}
static inline u64 f64_from_magnitude(u32 sign, u64 m) {
  if (m == 0) return 0;
  i32 lz = __builtin_clzll(m);
  m <<= lz;
  return f64_round_pack(sign, 1085 - lz, (m >> 1) | (m & 1));
}

GVMSF_API u32 gvmsf_f32_convert_i32_s(i32 a) {
  return f32_from_magnitude32((u32)a >> 31, a < 0 ? 0u - (u32)a : (u32)a);
}
GVMSF_API u32 gvmsf_f32_convert_i32_u(u32 a) { return f32_from_magnitude32(0, a); }
GVMSF_API u32 gvmsf_f32_convert_i64_s(i64 a) {
  return f32_from_magnitude((u32)((u64)a >> 63), a < 0 ? 0u - (u64)a : (u64)a);
}
GVMSF_API u32 gvmsf_f32_convert_i64_u(u64 a) { return f32_from_magnitude(0, a); }
GVMSF_API u64 gvmsf_f64_convert_i32_s(i32 a) {
  return f64_from_magnitude((u32)a >> 31, a < 0 ? 0u - (u32)a : (u32)a);
}
GVMSF_API u64 gvmsf_f64_convert_i32_u(u32 a) { return f64_from_magnitude(0, a); }
GVMSF_API u64 gvmsf_f64_convert_i64_s(i64 a) {
  return f64_from_magnitude((u32)((u64)a >> 63), a < 0 ? 0u - (u64)a : (u64)a);
}
GVMSF_API u64 gvmsf_f64_convert_i64_u(u64 a) { return f64_from_magnitude(0, a); }

/* ---- float <-> float --------------------------------------------------------------------- */

GVMSF_API u32 gvmsf_f32_demote_f64(u64 a) {
  u32 s = (u32)(a >> 63);
  u32 e = f64_exp(a);
  u64 f = a & F64_FRAC;
  if (e == 0x7ff) return f ? GVMSF_F32_NAN : (s << 31) | F32_INF;
  if (e == 0 && f == 0) return s << 31;
  if (e != 0) f |= F64_HIDDEN; else e = 1;
  /* leading one from bit 52 to bit 30, jamming the 22 bits shifted out; an f64 subnormal
   * leaves only the sticky bit, far below the f32 range, and rounds to zero */
  u32 m = (u32)(f >> 22) | ((f & 0x3fffff) != 0);
  return f32_norm_round_pack(s, (i32)e - 897, m);
}

GVMSF_API u64 gvmsf_f64_promote_f32(u32 a) {
  u64 s = (u64)(a >> 31) << 63;
  i32 e = (i32)f32_exp(a);
  u32 f = a & F32_FRAC;
  if (e == 0xff) return f ? GVMSF_F64_NAN : s | F64_INF;
  if (e == 0) {
    if (f == 0) return s;
    i32 shift = __builtin_clz(f) - 8; /* every f32 subnormal is an f64 normal */
    f = (f << shift) & F32_FRAC;
    e = 1 - shift;
  }
  return s | ((u64)(u32)(e + 896) << 52) | ((u64)f << 29);
}

/* ---- float -> integer -------------------------------------------------------------------- */

/* |trunc(a)| of a non-NaN float, or UINT64_MAX when |a| >= 2^64 (including infinity): no
 * float below 2^64 truncates to UINT64_MAX, so that value means "out of every range". */
static inline u64 f32_trunc_magnitude(u32 a) {
  i32 e = (i32)f32_exp(a);
  if (e < 127) return 0;
  if (e >= 127 + 64) return UINT64_MAX;
  u64 m = (a & F32_FRAC) | F32_HIDDEN;
  i32 x = e - 150;
  return x >= 0 ? m << x : m >> -x;
}
static inline u64 f64_trunc_magnitude(u64 a) {
  i32 e = (i32)f64_exp(a);
  if (e < 1023) return 0;
  if (e >= 1023 + 64) return UINT64_MAX;
  u64 m = (a & F64_FRAC) | F64_HIDDEN;
  i32 x = e - 1075;
  return x >= 0 ? m << x : m >> -x;
}

/* saturate a truncated magnitude into an integer range whose maximum is `max` */
static inline i64 saturate_signed(int negative, u64 m, u64 max) {
  if (negative) return m > max ? -(i64)max - 1 : -(i64)m;
  return m > max ? (i64)max : (i64)m;
}
static inline u64 saturate_unsigned(int negative, u64 m, u64 max) {
  if (negative) return 0;
  return m > max ? max : m;
}
/* would the trapping truncation succeed? (-2^(N-1) itself is in range; a negative value
 * that truncates to 0 is in an unsigned range) */
static inline i32 in_range_signed(int negative, u64 m, u64 max) {
  return negative ? m <= max + 1 : m <= max;
}
static inline i32 in_range_unsigned(int negative, u64 m, u64 max) {
  return negative ? m == 0 : (m <= max && m != UINT64_MAX);
}

#define DEFINE_TRUNC(IW, FW, FT, SIGNED_T, UNSIGNED_T, IMAX_S, IMAX_U)                          \
  GVMSF_API SIGNED_T gvmsf_i##IW##_trunc_sat_f##FW##_s(FT a) {                                 \
    if (f##FW##_is_nan(a)) return 0;                                                           \
    return (SIGNED_T)saturate_signed((int)(a >> (FW - 1)), f##FW##_trunc_magnitude(a), IMAX_S); \
  }                                                                                            \
  GVMSF_API UNSIGNED_T gvmsf_i##IW##_trunc_sat_f##FW##_u(FT a) {                               \
    if (f##FW##_is_nan(a)) return 0;                                                           \
    return (UNSIGNED_T)saturate_unsigned((int)(a >> (FW - 1)), f##FW##_trunc_magnitude(a), IMAX_U); \
  }                                                                                            \
  GVMSF_API i32 gvmsf_i##IW##_trunc_f##FW##_s_valid(FT a) {                                    \
    return !f##FW##_is_nan(a) && in_range_signed((int)(a >> (FW - 1)), f##FW##_trunc_magnitude(a), IMAX_S); \
  }                                                                                            \
  GVMSF_API i32 gvmsf_i##IW##_trunc_f##FW##_u_valid(FT a) {                                    \
    return !f##FW##_is_nan(a) && in_range_unsigned((int)(a >> (FW - 1)), f##FW##_trunc_magnitude(a), IMAX_U); \
  }
DEFINE_TRUNC(32, 32, u32, i32, u32, UINT64_C(0x7fffffff), UINT64_C(0xffffffff))
DEFINE_TRUNC(32, 64, u64, i32, u32, UINT64_C(0x7fffffff), UINT64_C(0xffffffff))
DEFINE_TRUNC(64, 32, u32, i64, u64, UINT64_C(0x7fffffffffffffff), UINT64_MAX)
DEFINE_TRUNC(64, 64, u64, i64, u64, UINT64_C(0x7fffffffffffffff), UINT64_MAX)
