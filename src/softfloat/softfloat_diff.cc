// softfloat-diff: the differential test of src/softfloat against this machine's SSE hardware.
//
// Every gvmsf_ function is run on generated operands and compared with what the CPU computes
// (SSE2 arithmetic, SSE4.1 roundss/roundsd, cvt* conversions; never x87: this file is built
// with -mfpmath=sse -msse4.1 -ffp-contract=off and without any fast-math flag, and MXCSR is
// set to round-to-nearest without flush-to-zero or denormals-are-zero before the run). Float
// results must match bit for bit, except that where the hardware answers a NaN ours must be
// the canonical NaN (our deterministic NaN rule); abs/neg/copysign must keep NaN payloads
// exactly; integer results and trap decisions must match exactly.
//
// Operands: a quarter uniformly random bit patterns, the rest generated edge classes: zeros,
// subnormals, normal min/max, infinities, quiet and signalling NaNs, halfway cases (sums and
// products that are exact ties, operands one ulp apart, integers with one bit too many for
// the significand), powers of two (exact and subnormal quotients), values around 2^23, 2^24,
// 2^31, 2^32, 2^52, 2^53, 2^63, 2^64 for the conversions.
#include <immintrin.h>

#include <bit>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <type_traits>
#include <vector>

#include "common/result.h"
#include "softfloat/softfloat.h"
#include "wasm/wasm.h"

namespace {

using u32 = uint32_t;
using u64 = uint64_t;
using i32 = int32_t;
using i64 = int64_t;

constexpr u64 kDefaultTotal = 100'000'000;
constexpr u64 kDefaultSeed = 0x5eed'f10a'7000'0017;
constexpr int kMaxReportedMismatches = 20;

// ---- operand generation ----------------------------------------------------------------------

struct Rng {
  u64 state;
  u64 next() {  // splitmix64
    u64 z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  u32 below(u32 n) { return static_cast<u32>(((next() >> 32) * n) >> 32); }
  i32 between(i32 lo, i32 hi) { return lo + static_cast<i32>(below(static_cast<u32>(hi - lo + 1))); }
  bool coin() { return next() >> 63; }
};

// Format parameters, so one generator serves both widths.
struct Format {
  int bits;       // 32 / 64
  int frac_bits;  // 23 / 52
  int exp_max;    // 255 / 2047
  int bias;       // 127 / 1023
};
constexpr Format kF32{32, 23, 255, 127};
constexpr Format kF64{64, 52, 2047, 1023};

u64 make_float(const Format& f, u64 sign, i64 exp, u64 frac) {
  if (exp < 0) exp = 0;
  if (exp > f.exp_max) exp = f.exp_max;
  return (sign << (f.bits - 1)) | (static_cast<u64>(exp) << f.frac_bits) |
         (frac & ((u64{1} << f.frac_bits) - 1));
}
u64 width_mask(const Format& f) { return f.bits == 64 ? ~u64{0} : (u64{1} << f.bits) - 1; }
i64 exp_of(const Format& f, u64 x) { return static_cast<i64>((x >> f.frac_bits) & static_cast<u64>(f.exp_max)); }

// An odd integer of exactly k bits (1 <= k <= frac_bits + 1) as a significand: products of
// two of them with k + m = precision + 1 or + 2 bits are often exact halfway cases.
u64 odd_significand(const Format& f, Rng& r, int k) {
  u64 v = (r.next() & ((u64{1} << k) - 1)) | 1 | (u64{1} << (k - 1));
  return v << (f.frac_bits + 1 - k);  // leading one at the hidden bit position
}

// Values the conversions and roundings care about, as (unbiased exponent, fraction) seeds.
u64 special(const Format& f, Rng& r) {
  const u64 frac_all = (u64{1} << f.frac_bits) - 1;
  const u64 quiet = u64{1} << (f.frac_bits - 1);
  u64 x;
  switch (r.below(12)) {
    case 0: x = 0; break;                                          // zero
    case 1: x = r.below(4); break;                                 // smallest subnormals
    case 2: x = frac_all - r.below(4); break;                      // largest subnormals
    case 3: x = make_float(f, 0, 1, r.below(4)); break;            // smallest normals
    case 4: x = make_float(f, 0, f.exp_max - 1, frac_all - r.below(4)); break;  // largest
    case 5: x = make_float(f, 0, f.exp_max, 0); break;             // infinity
    case 6: x = make_float(f, 0, f.exp_max, quiet | (r.next() & (r.coin() ? frac_all : 0))); break;
    case 7: x = make_float(f, 0, f.exp_max, (r.next() & (quiet - 1)) | 1); break;  // signalling
    default: {  // 2^k +- a few ulps for k around the conversion and rounding limits
      static constexpr int kPowers[] = {-2, -1, 0, 1, 22, 23, 24, 25, 30, 31, 32, 33, 51, 52, 53, 54, 62, 63, 64, 65};
      int k = kPowers[r.below(sizeof kPowers / sizeof kPowers[0])];
      x = make_float(f, 0, f.bias + k, 0);
      x += static_cast<u64>(r.between(-3, 3));
      break;
    }
  }
  if (r.coin()) x ^= u64{1} << (f.bits - 1);
  return x & width_mask(f);
}

u64 gen_float(const Format& f, Rng& r) {
  const u64 frac_all = (u64{1} << f.frac_bits) - 1;
  u64 sign = r.coin();
  switch (r.below(8)) {
    case 0:
    case 1: return r.next() & width_mask(f);
    case 2:
    case 3: return special(f, r);
    case 4: {  // exponents at both ends of the range
      i64 e = r.coin() ? r.between(0, 3) : f.exp_max - r.between(1, 3);
      return make_float(f, sign, e, r.next());
    }
    case 5: {  // sparse fractions (few bits set: exact sums and products, ties)
      u64 frac = r.next() & r.next() & r.next();
      if (r.coin()) frac &= ~((u64{1} << r.below(f.frac_bits)) - 1);
      return make_float(f, sign, r.between(0, f.exp_max - 1), frac);
    }
    case 6:  // ordinary magnitudes
      return make_float(f, sign, f.bias + r.between(-40, 70), r.next());
    default:  // integral and half-integral values (nearest/floor/ceil/trunc, conversions)
      return make_float(f, sign, f.bias + r.between(-2, f.frac_bits + 12),
                        r.next() & ~((u64{1} << r.below(f.frac_bits + 1)) - 1) & frac_all);
  }
}

struct Pair {
  u64 a, b;
};

Pair gen_float_pair(const Format& f, Rng& r) {
  u64 a = gen_float(f, r);
  switch (r.below(7)) {
    case 0:
    case 1: return {a, gen_float(f, r)};
    case 2: {  // b's exponent near a's: alignment, sticky bits, sum ties
      i64 e = exp_of(f, a) + r.between(-(f.frac_bits + 8), 8);
      u64 frac = r.coin() ? r.next() : (r.next() & r.next() & r.next());
      return {a, make_float(f, r.coin(), e, frac)};
    }
    case 3: {  // b = +-a a few ulps away: cancellation
      u64 b = (a + static_cast<u64>(r.between(-4, 4))) & width_mask(f);
      if (r.coin()) b ^= u64{1} << (f.bits - 1);
      return {a, b};
    }
    case 4: {  // products of odd significands that need one or two bits too many: ties
      int precision = f.frac_bits + 1;
      int k = r.between(1, precision);
      int m = precision + 1 + static_cast<int>(r.below(2)) - k;
      if (m < 1) m = 1;
      if (m > precision) m = precision;
      // exponents anywhere, including products in and around the subnormal range
      i64 ea = r.coin() ? r.between(1, f.exp_max - 1) : r.between(1, f.bias);
      i64 eb = r.coin() ? r.between(1, f.exp_max - 1) : f.bias - ea + r.between(-f.frac_bits - 3, 3);
      return {make_float(f, r.coin(), ea, odd_significand(f, r, k)),
              make_float(f, r.coin(), eb, odd_significand(f, r, m))};
    }
    case 5:  // powers of two: exact quotients and products, halfway subnormal results
      return {a, make_float(f, r.coin(), r.between(0, f.exp_max - 1), r.coin() ? 0 : (u64{1} << r.below(f.frac_bits)))};
    default:  // equal magnitudes, either sign (min/max of zeros, x - x)
      return {a, r.coin() ? a : (a ^ (u64{1} << (f.bits - 1)))};
  }
}

// Square roots near their hard cases: exact squares, and radicands whose root is within a
// hair of a midpoint between two floats (the square of an odd p+1-bit integer, truncated to p
// bits, give or take an ulp), at even and odd exponents.
u64 gen_sqrt_operand(const Format& f, Rng& r) {
  const int p = f.frac_bits + 1;
  const u64 frac_all = (u64{1} << f.frac_bits) - 1;
  if (r.below(4) == 0) return gen_float(f, r);
  unsigned __int128 square;
  if (r.coin()) {
    u64 root = (r.next() >> (64 - r.between(1, p / 2))) | 1;
    square = static_cast<unsigned __int128>(root) * root;
  } else {
    u64 m = (r.next() >> (64 - p)) | (u64{1} << (p - 1));
    unsigned __int128 odd = 2 * static_cast<unsigned __int128>(m) + 1;
    square = odd * odd;
  }
  int bits = 0;
  for (unsigned __int128 t = square; t; t >>= 1) bits++;
  int shift = bits > p ? bits - p : 0;
  u64 sig = static_cast<u64>(square >> shift) << (bits < p ? p - bits : 0);
  sig += static_cast<u64>(r.between(-1, 1));
  if (sig >> p) sig >>= 1;  // the +1 carried out of p bits: stay a p-bit significand
  if (!(sig >> (p - 1))) sig = u64{1} << (p - 1);
  // unbiased exponent p - 1 + shift keeps the square's value; move it by an even amount, or
  // by an odd one a quarter of the time (roots near midpoints times sqrt(2): ordinary cases)
  i64 e0 = f.bias + p - 1 + shift - (bits < p ? p - bits : 0);
  i64 lo = 1, hi = f.exp_max - 1;
  i64 j = r.between(static_cast<i32>((lo - e0) / 2), static_cast<i32>((hi - e0) / 2));
  i64 e = e0 + 2 * j + (r.below(4) == 0 ? 1 : 0);
  return make_float(f, 0, e, sig & frac_all);
}

// Integers for the int -> float conversions, as 64 bits (the 32-bit ops use the low half).
u64 gen_int(Rng& r, int bits) {
  u64 v;
  switch (r.below(5)) {
    case 0: v = r.next(); break;
    case 1: v = r.next() >> r.below(static_cast<u32>(bits)); break;  // every bit length
    case 2: v = (u64{1} << r.below(static_cast<u32>(bits))) + static_cast<u64>(r.between(-3, 3)); break;
    case 3: {  // odd numbers of 23..26 or 52..55 bits shifted: exact ties for f32/f64
      int k = r.coin() ? r.between(23, 26) : r.between(52, 55);
      if (k > bits) k = bits;
      v = (r.next() & ((u64{1} << k) - 1)) | 1 | (u64{1} << (k - 1));
      v <<= r.below(static_cast<u32>(bits - k + 1));
      break;
    }
    default: v = static_cast<u64>(r.between(-6, 6)) + (r.coin() ? (u64{1} << (bits - 1)) : 0); break;
  }
  if (r.below(4) == 0) v = 0 - v;
  return bits == 64 ? v : (v & 0xffffffffULL);
}

// ---- the hardware reference ------------------------------------------------------------------

inline float F(u32 x) { return std::bit_cast<float>(x); }
inline double D(u64 x) { return std::bit_cast<double>(x); }
inline u32 B(float x) { return std::bit_cast<u32>(x); }
inline u64 B(double x) { return std::bit_cast<u64>(x); }
inline __m128 S(u32 x) { return _mm_set_ss(F(x)); }
inline __m128d S(u64 x) { return _mm_set_sd(D(x)); }
inline u32 R(__m128 v) { return B(_mm_cvtss_f32(v)); }
inline u64 R(__m128d v) { return B(_mm_cvtsd_f64(v)); }

template <class T>
bool is_nan_bits(T x) {
  if constexpr (sizeof(T) == 4) return (x & 0x7fffffffU) > 0x7f800000U;
  else return (x & 0x7fffffffffffffffULL) > 0x7ff0000000000000ULL;
}
template <class T>
bool sign_bit(T x) { return x >> (sizeof(T) * 8 - 1); }

// wasm's min/max from hardware compares: NaN if either is, -0 below +0
u32 hw_min32(u32 a, u32 b) {
  if (is_nan_bits(a) || is_nan_bits(b)) return R(_mm_add_ss(S(a), S(b)));
  if (F(a) == F(b)) return sign_bit(a) ? a : b;
  return F(a) < F(b) ? a : b;
}
u32 hw_max32(u32 a, u32 b) {
  if (is_nan_bits(a) || is_nan_bits(b)) return R(_mm_add_ss(S(a), S(b)));
  if (F(a) == F(b)) return sign_bit(a) ? b : a;
  return F(a) > F(b) ? a : b;
}
u64 hw_min64(u64 a, u64 b) {
  if (is_nan_bits(a) || is_nan_bits(b)) return R(_mm_add_sd(S(a), S(b)));
  if (D(a) == D(b)) return sign_bit(a) ? a : b;
  return D(a) < D(b) ? a : b;
}
u64 hw_max64(u64 a, u64 b) {
  if (is_nan_bits(a) || is_nan_bits(b)) return R(_mm_add_sd(S(a), S(b)));
  if (D(a) == D(b)) return sign_bit(a) ? b : a;
  return D(a) > D(b) ? a : b;
}

// Truncations: cvtt* for the in-range values, hardware compares against exact bounds for the
// saturation and the trap decision.
constexpr double kTwo31 = 2147483648.0, kTwo32 = 4294967296.0, kTwo63 = 9223372036854775808.0,
                 kTwo64 = 18446744073709551616.0;
i64 hw_cvtt64(double x) { return _mm_cvttsd_si64(_mm_set_sd(x)); }
i32 hw_sat_i32(double x) {
  if (x != x) return 0;
  if (x >= kTwo31) return INT32_MAX;
  if (x <= -kTwo31 - 1) return INT32_MIN;
  return _mm_cvttsd_si32(_mm_set_sd(x));
}
u32 hw_sat_u32(double x) {
  if (x != x || x < 0) return 0;
  if (x >= kTwo32) return UINT32_MAX;
  return static_cast<u32>(hw_cvtt64(x));
}
i64 hw_sat_i64(double x) {
  if (x != x) return 0;
  if (x >= kTwo63) return INT64_MAX;
  if (x < -kTwo63) return INT64_MIN;
  return hw_cvtt64(x);
}
u64 hw_sat_u64(double x) {
  if (x != x || x < 0) return 0;
  if (x >= kTwo64) return UINT64_MAX;
  if (x >= kTwo63) return static_cast<u64>(hw_cvtt64(x - kTwo63)) + (u64{1} << 63);
  return static_cast<u64>(hw_cvtt64(x));
}
bool hw_valid_i32(double x) { return x > -kTwo31 - 1 && x < kTwo31; }
bool hw_valid_u32(double x) { return x > -1.0 && x < kTwo32; }
bool hw_valid_i64(double x) { return x >= -kTwo63 && x < kTwo63; }
bool hw_valid_u64(double x) { return x > -1.0 && x < kTwo64; }
// f32 operands go through cvtss2sd, which is exact for every non-NaN value
double widen(u32 a) { return _mm_cvtsd_f64(_mm_cvtss_sd(_mm_setzero_pd(), S(a))); }

// ---- the run ---------------------------------------------------------------------------------

enum class Check { kFloat32, kFloat64, kExact };  // kFloat*: NaN allowed as canonical NaN

// "Ours" computed by softfloat.wasm on our engine (deterministic mode, so a float instruction
// in the module would trap) instead of by the native build.
class EngineRunner {
 public:
  genvm::Status load(const std::string& path, bool jit) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return genvm::Error{"io", "cannot read " + path + ": " + std::strerror(errno)};
    std::vector<uint8_t> bytes;
    uint8_t chunk[65536];
    for (size_t got; (got = std::fread(chunk, 1, sizeof chunk, f)) > 0;) bytes.insert(bytes.end(), chunk, chunk + got);
    std::fclose(f);
    genvm::wasm::LoadOptions opts;
    opts.deterministic = true;
    opts.engine = jit ? genvm::wasm::Engine::kJit : genvm::wasm::Engine::kInterp;
    auto mod = genvm::wasm::Module::load(bytes, opts);
    if (!mod) return genvm::Error{"load", path + ": " + mod.error().message};
    genvm::wasm::Linker linker;
    auto inst = linker.instantiate(store_, mod.value());
    if (!inst) return genvm::Error{"instantiate", path + ": " + inst.error().message};
    instance_ = inst.value();
    return {};
  }
  // the export for an operation name as the table prints it ("f64.sqrt(hard)" -> gvmsf_f64_sqrt)
  genvm::wasm::FuncInst* function(const char* op) const {
    std::string name = std::string("gvmsf_") + op;
    if (auto paren = name.find('('); paren != std::string::npos) name.resize(paren);
    for (char& c : name)
      if (c == '.') c = '_';
    return instance_->get_func(name);
  }
  // a, b as the function's parameter types; the result's bits, zero-extended. A trap or an
  // engine error sets `failed` (the first few are printed).
  u64 call(genvm::wasm::FuncInst* f, u64 a, u64 b, bool& failed) {
    const auto& type = genvm::wasm::func_type(f);
    genvm::wasm::Value args[2];
    const u64 operands[2] = {a, b};
    for (size_t i = 0; i < type.params.size() && i < 2; i++)
      args[i] = type.params[i] == genvm::wasm::ValType::I64 ? genvm::wasm::Value::i64(static_cast<i64>(operands[i]))
                                                            : genvm::wasm::Value::i32(static_cast<i32>(operands[i]));
    auto out = store_.call(f, std::span<const genvm::wasm::Value>(args, type.params.size()));
    if (!out || !out.value().ok() || out.value().values.size() != 1) {
      failed = true;
      if (++failures_ > kMaxReportedMismatches) return ~u64{0};
      if (!out) std::fprintf(stderr, "engine: %s\n", out.error().message.c_str());
      else if (!out.value().ok()) std::fprintf(stderr, "engine: %s\n", out.value().trap->public_string().c_str());
      else std::fprintf(stderr, "engine: %zu results\n", out.value().values.size());
      return ~u64{0};
    }
    return out.value().values[0].bits;
  }

 private:
  genvm::wasm::Store store_;
  genvm::wasm::Instance* instance_ = nullptr;
  int failures_ = 0;
};

struct Report {
  bool dry = false;        // only count what would be compared
  bool exhaustive = false; // operations of one f32/i32 operand: all 2^32 operands instead
  EngineRunner* engine = nullptr;  // ours from softfloat.wasm on our engine
  FILE* emit = nullptr;    // write operands and hardware results instead of comparing
  bool emit_failed = false;
  u64 compared = 0;
  u64 mismatches = 0;
};

void mismatch(Report& rep, const char* op, u64 a, u64 b, u64 ours, u64 ref) {
  if (++rep.mismatches <= kMaxReportedMismatches)
    std::fprintf(stderr, "MISMATCH %s a=0x%" PRIx64 " b=0x%" PRIx64 " ours=0x%" PRIx64 " hardware=0x%" PRIx64 "\n",
                 op, a, b, ours, ref);
}

// Generators in the shape run() wants.
auto f32_unary = [](Rng& r) { return Pair{gen_float(kF32, r), 0}; };
auto f64_unary = [](Rng& r) { return Pair{gen_float(kF64, r), 0}; };
auto f32_binary = [](Rng& r) { return gen_float_pair(kF32, r); };
auto f64_binary = [](Rng& r) { return gen_float_pair(kF64, r); };
auto int32_operand = [](Rng& r) { return Pair{gen_int(r, 32), 0}; };
auto int64_operand = [](Rng& r) { return Pair{gen_int(r, 64), 0}; };

template <class Gen, class Ours, class Ref>
void run(Report& rep, const char* only, const char* op, u64 count, u64 seed, Check check, Gen gen, Ours ours,
         Ref ref) {
  if (only && std::strcmp(only, op) != 0) return;
  if (rep.dry) {
    rep.compared += count;
    return;
  }
  Rng r{seed ^ std::hash<std::string>{}(op)};
  if (rep.emit) {
    // block: u32 name length, name, u32 check, u64 count, then count x (a, b, hardware) as
    // little-endian u64 (this is an x86-64 tool, so host order is little-endian)
    u32 len = static_cast<u32>(std::strlen(op)), kind = static_cast<u32>(check);
    bool ok = std::fwrite(&len, 4, 1, rep.emit) == 1 && std::fwrite(op, 1, len, rep.emit) == len &&
              std::fwrite(&kind, 4, 1, rep.emit) == 1 && std::fwrite(&count, 8, 1, rep.emit) == 1;
    for (u64 i = 0; ok && i < count; i++) {
      Pair p = gen(r);
      u64 rec[3] = {p.a, p.b, ref(p.a, p.b)};
      ok = std::fwrite(rec, 8, 3, rep.emit) == 3;
    }
    if (!ok) rep.emit_failed = true;
    rep.compared += count;
    return;
  }
  u64 bad = 0;
  genvm::wasm::FuncInst* exported = rep.engine ? rep.engine->function(op) : nullptr;
  if (rep.engine && !exported) {
    std::fprintf(stderr, "MISMATCH %s: the wasm module does not export it\n", op);
    rep.mismatches++;
    return;
  }
  auto check_one = [&](u64 a, u64 b) {
    bool failed = false;
    u64 o = exported ? rep.engine->call(exported, a, b, failed) : ours(a, b), h = ref(a, b);
    bool ok = o == h && !failed;
    if (!ok && check == Check::kFloat32) ok = is_nan_bits(static_cast<u32>(h)) && o == GVMSF_F32_NAN;
    if (!ok && check == Check::kFloat64) ok = is_nan_bits(h) && o == GVMSF_F64_NAN;
    if (!ok) {
      bad++;
      mismatch(rep, op, a, b, o, h);
    }
  };
  auto start = std::chrono::steady_clock::now();
  if (rep.exhaustive) {  // every 32-bit operand, for the operations of one f32 or i32 operand
    if constexpr (!std::is_same_v<Gen, decltype(f32_unary)> && !std::is_same_v<Gen, decltype(int32_operand)>) return;
    count = u64{1} << 32;
    for (u64 a = 0; a < count; a++) check_one(a, 0);
  } else {
    for (u64 i = 0; i < count; i++) {
      Pair p = gen(r);
      check_one(p.a, p.b);
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rep.compared += count;
  std::printf("%-26s %10" PRIu64 " operands %8" PRIu64 " mismatches  %6.1f ns/check\n", op, count, bad,
              count ? secs * 1e9 / static_cast<double>(count) : 0.0);
}

void run_all(Report& rep, u64 per_op, u64 seed, const char* only) {
  const u64 n = per_op;
#define U32(x) static_cast<u32>(x)
#define BIN32(name, ours, hw)                                                                         \
  run(rep, only, name, n, seed, Check::kFloat32, f32_binary, [](u64 a, u64 b) -> u64 { return ours(U32(a), U32(b)); }, \
      [](u64 a, u64 b) -> u64 { return R(hw(S(U32(a)), S(U32(b)))); })
#define BIN64(name, ours, hw)                                                                         \
  run(rep, only, name, n, seed, Check::kFloat64, f64_binary, [](u64 a, u64 b) -> u64 { return ours(a, b); }, \
      [](u64 a, u64 b) -> u64 { return R(hw(S(a), S(b))); })
  BIN32("f32.add", gvmsf_f32_add, _mm_add_ss);
  BIN32("f32.sub", gvmsf_f32_sub, _mm_sub_ss);
  BIN32("f32.mul", gvmsf_f32_mul, _mm_mul_ss);
  BIN32("f32.div", gvmsf_f32_div, _mm_div_ss);
  BIN64("f64.add", gvmsf_f64_add, _mm_add_sd);
  BIN64("f64.sub", gvmsf_f64_sub, _mm_sub_sd);
  BIN64("f64.mul", gvmsf_f64_mul, _mm_mul_sd);
  BIN64("f64.div", gvmsf_f64_div, _mm_div_sd);
  run(rep, only, "f32.min", n, seed, Check::kFloat32, f32_binary, [](u64 a, u64 b) -> u64 { return gvmsf_f32_min(U32(a), U32(b)); },
      [](u64 a, u64 b) -> u64 { return hw_min32(U32(a), U32(b)); });
  run(rep, only, "f32.max", n, seed, Check::kFloat32, f32_binary, [](u64 a, u64 b) -> u64 { return gvmsf_f32_max(U32(a), U32(b)); },
      [](u64 a, u64 b) -> u64 { return hw_max32(U32(a), U32(b)); });
  run(rep, only, "f64.min", n, seed, Check::kFloat64, f64_binary, [](u64 a, u64 b) -> u64 { return gvmsf_f64_min(a, b); },
      [](u64 a, u64 b) -> u64 { return hw_min64(a, b); });
  run(rep, only, "f64.max", n, seed, Check::kFloat64, f64_binary, [](u64 a, u64 b) -> u64 { return gvmsf_f64_max(a, b); },
      [](u64 a, u64 b) -> u64 { return hw_max64(a, b); });

  // sign operations: bit-exact, NaN payloads included (andps/xorps/orps)
  run(rep, only, "f32.abs", n / 8, seed, Check::kExact, f32_unary, [](u64 a, u64) -> u64 { return gvmsf_f32_abs(U32(a)); },
      [](u64 a, u64) -> u64 { return R(_mm_andnot_ps(_mm_set_ss(-0.0f), S(U32(a)))); });
  run(rep, only, "f32.neg", n / 8, seed, Check::kExact, f32_unary, [](u64 a, u64) -> u64 { return gvmsf_f32_neg(U32(a)); },
      [](u64 a, u64) -> u64 { return R(_mm_xor_ps(_mm_set_ss(-0.0f), S(U32(a)))); });
  run(rep, only, "f32.copysign", n / 8, seed, Check::kExact, f32_binary,
      [](u64 a, u64 b) -> u64 { return gvmsf_f32_copysign(U32(a), U32(b)); },
      [](u64 a, u64 b) -> u64 {
        __m128 m = _mm_set_ss(-0.0f);
        return R(_mm_or_ps(_mm_andnot_ps(m, S(U32(a))), _mm_and_ps(m, S(U32(b)))));
      });
  run(rep, only, "f64.abs", n / 8, seed, Check::kExact, f64_unary, [](u64 a, u64) -> u64 { return gvmsf_f64_abs(a); },
      [](u64 a, u64) -> u64 { return R(_mm_andnot_pd(_mm_set_sd(-0.0), S(a))); });
  run(rep, only, "f64.neg", n / 8, seed, Check::kExact, f64_unary, [](u64 a, u64) -> u64 { return gvmsf_f64_neg(a); },
      [](u64 a, u64) -> u64 { return R(_mm_xor_pd(_mm_set_sd(-0.0), S(a))); });
  run(rep, only, "f64.copysign", n / 8, seed, Check::kExact, f64_binary, [](u64 a, u64 b) -> u64 { return gvmsf_f64_copysign(a, b); },
      [](u64 a, u64 b) -> u64 {
        __m128d m = _mm_set_sd(-0.0);
        return R(_mm_or_pd(_mm_andnot_pd(m, S(a)), _mm_and_pd(m, S(b))));
      });

  run(rep, only, "f32.sqrt", n, seed, Check::kFloat32, f32_unary, [](u64 a, u64) -> u64 { return gvmsf_f32_sqrt(U32(a)); },
      [](u64 a, u64) -> u64 { return R(_mm_sqrt_ss(S(U32(a)))); });
  run(rep, only, "f32.sqrt(hard)", n, seed, Check::kFloat32, [](Rng& r) { return Pair{gen_sqrt_operand(kF32, r), 0}; },
      [](u64 a, u64) -> u64 { return gvmsf_f32_sqrt(U32(a)); }, [](u64 a, u64) -> u64 { return R(_mm_sqrt_ss(S(U32(a)))); });
  run(rep, only, "f64.sqrt(hard)", n, seed, Check::kFloat64, [](Rng& r) { return Pair{gen_sqrt_operand(kF64, r), 0}; },
      [](u64 a, u64) -> u64 { return gvmsf_f64_sqrt(a); },
      [](u64 a, u64) -> u64 { return R(_mm_sqrt_sd(_mm_setzero_pd(), S(a))); });
  run(rep, only, "f64.sqrt", n, seed, Check::kFloat64, f64_unary, [](u64 a, u64) -> u64 { return gvmsf_f64_sqrt(a); },
      [](u64 a, u64) -> u64 { return R(_mm_sqrt_sd(_mm_setzero_pd(), S(a))); });
#define ROUND32(name, ours, mode)                                                                     \
  run(rep, only, name, n, seed, Check::kFloat32, f32_unary, [](u64 a, u64) -> u64 { return ours(U32(a)); }, \
      [](u64 a, u64) -> u64 { return R(_mm_round_ss(S(U32(a)), S(U32(a)), (mode) | _MM_FROUND_NO_EXC)); })
#define ROUND64(name, ours, mode)                                                                     \
  run(rep, only, name, n, seed, Check::kFloat64, f64_unary, [](u64 a, u64) -> u64 { return ours(a); }, \
      [](u64 a, u64) -> u64 { return R(_mm_round_sd(S(a), S(a), (mode) | _MM_FROUND_NO_EXC)); })
  ROUND32("f32.ceil", gvmsf_f32_ceil, _MM_FROUND_TO_POS_INF);
  ROUND32("f32.floor", gvmsf_f32_floor, _MM_FROUND_TO_NEG_INF);
  ROUND32("f32.trunc", gvmsf_f32_trunc, _MM_FROUND_TO_ZERO);
  ROUND32("f32.nearest", gvmsf_f32_nearest, _MM_FROUND_TO_NEAREST_INT);
  ROUND64("f64.ceil", gvmsf_f64_ceil, _MM_FROUND_TO_POS_INF);
  ROUND64("f64.floor", gvmsf_f64_floor, _MM_FROUND_TO_NEG_INF);
  ROUND64("f64.trunc", gvmsf_f64_trunc, _MM_FROUND_TO_ZERO);
  ROUND64("f64.nearest", gvmsf_f64_nearest, _MM_FROUND_TO_NEAREST_INT);

  // compares: comiss/ucomiss through C's operators
#define CMP32(name, ours, op)                                                                         \
  run(rep, only, name, n / 2, seed, Check::kExact, f32_binary, [](u64 a, u64 b) -> u64 { return static_cast<u32>(ours(U32(a), U32(b))); }, \
      [](u64 a, u64 b) -> u64 { return F(U32(a)) op F(U32(b)); })
#define CMP64(name, ours, op)                                                                         \
  run(rep, only, name, n / 2, seed, Check::kExact, f64_binary, [](u64 a, u64 b) -> u64 { return static_cast<u32>(ours(a, b)); }, \
      [](u64 a, u64 b) -> u64 { return D(a) op D(b); })
  CMP32("f32.eq", gvmsf_f32_eq, ==);
  CMP32("f32.ne", gvmsf_f32_ne, !=);
  CMP32("f32.lt", gvmsf_f32_lt, <);
  CMP32("f32.gt", gvmsf_f32_gt, >);
  CMP32("f32.le", gvmsf_f32_le, <=);
  CMP32("f32.ge", gvmsf_f32_ge, >=);
  CMP64("f64.eq", gvmsf_f64_eq, ==);
  CMP64("f64.ne", gvmsf_f64_ne, !=);
  CMP64("f64.lt", gvmsf_f64_lt, <);
  CMP64("f64.gt", gvmsf_f64_gt, >);
  CMP64("f64.le", gvmsf_f64_le, <=);
  CMP64("f64.ge", gvmsf_f64_ge, >=);

  // integer -> float: cvtsi2ss/sd (32- and 64-bit forms; u32 via the exact i64 form; u64 through
  // GCC's halving sequence around cvtsi2ss/sd, which rounds once)
  run(rep, only, "f32.convert_i32_s", n, seed, Check::kFloat32, int32_operand,
      [](u64 a, u64) -> u64 { return gvmsf_f32_convert_i32_s(static_cast<i32>(a)); },
      [](u64 a, u64) -> u64 { return R(_mm_cvtsi32_ss(_mm_setzero_ps(), static_cast<i32>(a))); });
  run(rep, only, "f32.convert_i32_u", n, seed, Check::kFloat32, int32_operand,
      [](u64 a, u64) -> u64 { return gvmsf_f32_convert_i32_u(U32(a)); },
      [](u64 a, u64) -> u64 { return R(_mm_cvtsi64_ss(_mm_setzero_ps(), static_cast<i64>(a))); });
  run(rep, only, "f32.convert_i64_s", n, seed, Check::kFloat32, int64_operand,
      [](u64 a, u64) -> u64 { return gvmsf_f32_convert_i64_s(static_cast<i64>(a)); },
      [](u64 a, u64) -> u64 { return R(_mm_cvtsi64_ss(_mm_setzero_ps(), static_cast<i64>(a))); });
  run(rep, only, "f32.convert_i64_u", n, seed, Check::kFloat32, int64_operand,
      [](u64 a, u64) -> u64 { return gvmsf_f32_convert_i64_u(a); }, [](u64 a, u64) -> u64 { return B(static_cast<float>(a)); });
  run(rep, only, "f64.convert_i32_s", n / 4, seed, Check::kFloat64, int32_operand,
      [](u64 a, u64) -> u64 { return gvmsf_f64_convert_i32_s(static_cast<i32>(a)); },
      [](u64 a, u64) -> u64 { return R(_mm_cvtsi32_sd(_mm_setzero_pd(), static_cast<i32>(a))); });
  run(rep, only, "f64.convert_i32_u", n / 4, seed, Check::kFloat64, int32_operand,
      [](u64 a, u64) -> u64 { return gvmsf_f64_convert_i32_u(U32(a)); },
      [](u64 a, u64) -> u64 { return R(_mm_cvtsi64_sd(_mm_setzero_pd(), static_cast<i64>(a))); });
  run(rep, only, "f64.convert_i64_s", n, seed, Check::kFloat64, int64_operand,
      [](u64 a, u64) -> u64 { return gvmsf_f64_convert_i64_s(static_cast<i64>(a)); },
      [](u64 a, u64) -> u64 { return R(_mm_cvtsi64_sd(_mm_setzero_pd(), static_cast<i64>(a))); });
  run(rep, only, "f64.convert_i64_u", n, seed, Check::kFloat64, int64_operand,
      [](u64 a, u64) -> u64 { return gvmsf_f64_convert_i64_u(a); }, [](u64 a, u64) -> u64 { return B(static_cast<double>(a)); });

  // float <-> float: cvtsd2ss / cvtss2sd
  run(rep, only, "f32.demote_f64", n, seed, Check::kFloat32, f64_unary, [](u64 a, u64) -> u64 { return gvmsf_f32_demote_f64(a); },
      [](u64 a, u64) -> u64 { return R(_mm_cvtsd_ss(_mm_setzero_ps(), S(a))); });
  // demotion's interesting operands are f64s near f32 values: widen an f32 and perturb it
  run(rep, only, "f32.demote_f64(near)", n, seed, Check::kFloat32,
      [](Rng& r) {
        u64 w = B(widen(static_cast<u32>(gen_float(kF32, r))));
        int shift = static_cast<int>(r.below(30));
        return Pair{w + ((r.next() >> 34) << shift >> 2) - (r.coin() ? (u64{1} << 28) : 0), 0};
      },
      [](u64 a, u64) -> u64 { return gvmsf_f32_demote_f64(a); },
      [](u64 a, u64) -> u64 { return R(_mm_cvtsd_ss(_mm_setzero_ps(), S(a))); });
  run(rep, only, "f64.promote_f32", n / 2, seed, Check::kFloat64, f32_unary,
      [](u64 a, u64) -> u64 { return gvmsf_f64_promote_f32(U32(a)); },
      [](u64 a, u64) -> u64 { return R(_mm_cvtss_sd(_mm_setzero_pd(), S(U32(a)))); });

  // float -> integer, saturating and trap decisions
// the operand as the reference sees it: a double (cvtss2sd is exact for every non-NaN f32)
#define AS_DOUBLE_32(a) widen(U32(a))
#define AS_DOUBLE_64(a) D(a)
#define TRUNC(name, ours, hw, fmt, T)                                                                 \
  run(rep, only, name, n / 2, seed, Check::kExact, f##fmt##_unary,                                    \
      [](u64 a, u64) -> u64 { return static_cast<u64>(static_cast<T>(ours(static_cast<uint##fmt##_t>(a)))); }, \
      [](u64 a, u64) -> u64 { return static_cast<u64>(static_cast<T>(hw(AS_DOUBLE_##fmt(a)))); })
  TRUNC("i32.trunc_sat_f32_s", gvmsf_i32_trunc_sat_f32_s, hw_sat_i32, 32, u32);
  TRUNC("i32.trunc_sat_f32_u", gvmsf_i32_trunc_sat_f32_u, hw_sat_u32, 32, u32);
  TRUNC("i32.trunc_sat_f64_s", gvmsf_i32_trunc_sat_f64_s, hw_sat_i32, 64, u32);
  TRUNC("i32.trunc_sat_f64_u", gvmsf_i32_trunc_sat_f64_u, hw_sat_u32, 64, u32);
  TRUNC("i64.trunc_sat_f32_s", gvmsf_i64_trunc_sat_f32_s, hw_sat_i64, 32, u64);
  TRUNC("i64.trunc_sat_f32_u", gvmsf_i64_trunc_sat_f32_u, hw_sat_u64, 32, u64);
  TRUNC("i64.trunc_sat_f64_s", gvmsf_i64_trunc_sat_f64_s, hw_sat_i64, 64, u64);
  TRUNC("i64.trunc_sat_f64_u", gvmsf_i64_trunc_sat_f64_u, hw_sat_u64, 64, u64);
  TRUNC("i32.trunc_f32_s_valid", gvmsf_i32_trunc_f32_s_valid, hw_valid_i32, 32, u32);
  TRUNC("i32.trunc_f32_u_valid", gvmsf_i32_trunc_f32_u_valid, hw_valid_u32, 32, u32);
  TRUNC("i32.trunc_f64_s_valid", gvmsf_i32_trunc_f64_s_valid, hw_valid_i32, 64, u32);
  TRUNC("i32.trunc_f64_u_valid", gvmsf_i32_trunc_f64_u_valid, hw_valid_u32, 64, u32);
  TRUNC("i64.trunc_f32_s_valid", gvmsf_i64_trunc_f32_s_valid, hw_valid_i64, 32, u32);
  TRUNC("i64.trunc_f32_u_valid", gvmsf_i64_trunc_f32_u_valid, hw_valid_u64, 32, u32);
  TRUNC("i64.trunc_f64_s_valid", gvmsf_i64_trunc_f64_s_valid, hw_valid_i64, 64, u32);
  TRUNC("i64.trunc_f64_u_valid", gvmsf_i64_trunc_f64_u_valid, hw_valid_u64, 64, u32);
#undef U32
#undef BIN32
#undef BIN64
#undef ROUND32
#undef ROUND64
#undef CMP32
#undef CMP64
#undef TRUNC
#undef AS_DOUBLE_32
#undef AS_DOUBLE_64
}

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// ns/op of a few functions alone, on pregenerated ordinary operands (not a test: a figure).
void bench() {
  Rng r{kDefaultSeed};
  constexpr int kN = 1 << 20;
  std::vector<u64> a32(kN), b32(kN), a64(kN), b64(kN);
  for (int i = 0; i < kN; i++) {
    a32[i] = make_float(kF32, r.coin(), kF32.bias + r.between(-20, 20), r.next());
    b32[i] = make_float(kF32, r.coin(), kF32.bias + r.between(-20, 20), r.next());
    a64[i] = make_float(kF64, r.coin(), kF64.bias + r.between(-20, 20), r.next());
    b64[i] = make_float(kF64, r.coin(), kF64.bias + r.between(-20, 20), r.next());
  }
  auto time = [&](const char* name, auto fn, const std::vector<u64>& x, const std::vector<u64>& y) {
    u64 sink = 0;
    double t0 = thread_cpu_ns();  // CPU time, not wall time: this machine is shared and loaded
    for (int rep = 0; rep < 4; rep++)
      for (int i = 0; i < kN; i++) sink += fn(x[i], y[i]);
    double ns = (thread_cpu_ns() - t0) / (4.0 * kN);
    std::printf("%-16s %6.2f ns/op   (checksum %016" PRIx64 ")\n", name, ns, sink);
  };
  time("f32.add", [](u64 a, u64 b) -> u64 { return gvmsf_f32_add(static_cast<u32>(a), static_cast<u32>(b)); }, a32, b32);
  time("f32.mul", [](u64 a, u64 b) -> u64 { return gvmsf_f32_mul(static_cast<u32>(a), static_cast<u32>(b)); }, a32, b32);
  time("f32.div", [](u64 a, u64 b) -> u64 { return gvmsf_f32_div(static_cast<u32>(a), static_cast<u32>(b)); }, a32, b32);
  time("f32.sqrt", [](u64 a, u64) -> u64 { return gvmsf_f32_sqrt(static_cast<u32>(a) & 0x7fffffff); }, a32, b32);
  time("f64.add", [](u64 a, u64 b) -> u64 { return gvmsf_f64_add(a, b); }, a64, b64);
  time("f64.mul", [](u64 a, u64 b) -> u64 { return gvmsf_f64_mul(a, b); }, a64, b64);
  time("f64.div", [](u64 a, u64 b) -> u64 { return gvmsf_f64_div(a, b); }, a64, b64);
  time("f64.sqrt", [](u64 a, u64) -> u64 { return gvmsf_f64_sqrt(a & 0x7fffffffffffffffULL); }, a64, b64);
  time("f64.lt", [](u64 a, u64 b) -> u64 { return static_cast<u64>(gvmsf_f64_lt(a, b)); }, a64, b64);
  time("f64.nearest", [](u64 a, u64) -> u64 { return gvmsf_f64_nearest(a); }, a64, b64);
  time("f64.convert_i64_s", [](u64 a, u64) -> u64 { return gvmsf_f64_convert_i64_s(static_cast<i64>(a)); }, a64, b64);
  time("i64.trunc_sat_f64_s", [](u64 a, u64) -> u64 { return static_cast<u64>(gvmsf_i64_trunc_sat_f64_s(a)); }, a64, b64);
  time("f32.demote_f64", [](u64 a, u64) -> u64 { return gvmsf_f32_demote_f64(a); }, a64, b64);
}

bool parse_u64(const char* s, u64& out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 0);
  if (*end != '\0') return false;
  out = v;
  return true;
}

void usage(FILE* to) {
  std::fprintf(to,
               "usage: softfloat-diff [--total N] [--seed S] [--only OP] [--engine softfloat.wasm [--jit]]\n"
               "                      [--exhaustive-f32 | --bench | --emit FILE]\n"
               "  Checks every gvmsf_ function against this CPU's SSE arithmetic on about N generated\n"
               "  operands in total (default %" PRIu64 ", or $GVMSF_DIFF_TOTAL), from seed S (default fixed,\n"
               "  or $GVMSF_DIFF_SEED). --only runs one operation (names as printed, e.g. f64.div).\n"
               "  --engine: \"ours\" is softfloat.wasm run by our wasm engine in deterministic mode (its\n"
               "  interpreter, or its JIT with --jit) instead of the native build.\n"
               "  --bench prints ns/op of some functions instead. --emit writes the operands and the\n"
               "  hardware's results to FILE for another implementation (wasm_diff.mjs runs softfloat.wasm\n"
               "  on them) instead of comparing. --exhaustive-f32 checks the operations of one f32 or i32\n"
               "  operand (sqrt, ceil, floor, trunc, nearest, abs, neg, promote, the f32 truncations, the\n"
               "  i32 conversions) on all 2^32 operands (about a minute of CPU each). Exit 0 when nothing\n"
               "  differs.\n",
               kDefaultTotal);
}

}  // namespace

int main(int argc, char** argv) {
  u64 total = kDefaultTotal, seed = kDefaultSeed;
  if (const char* env = std::getenv("GVMSF_DIFF_TOTAL"); env && !parse_u64(env, total)) {
    std::fprintf(stderr, "softfloat-diff: GVMSF_DIFF_TOTAL is not a number: %s\n", env);
    return 2;
  }
  if (const char* env = std::getenv("GVMSF_DIFF_SEED"); env && !parse_u64(env, seed)) {
    std::fprintf(stderr, "softfloat-diff: GVMSF_DIFF_SEED is not a number: %s\n", env);
    return 2;
  }
  const char* only = nullptr;
  const char* emit_path = nullptr;
  bool do_bench = false, exhaustive = false, jit = false;
  const char* engine_path = nullptr;
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else if ((arg == "--total" || arg == "--seed") && i + 1 < argc) {
      if (!parse_u64(argv[++i], arg == "--total" ? total : seed)) {
        std::fprintf(stderr, "softfloat-diff: %s needs a number, got %s\n", arg.c_str(), argv[i]);
        return 2;
      }
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--emit" && i + 1 < argc) {
      emit_path = argv[++i];
    } else if (arg == "--engine" && i + 1 < argc) {
      engine_path = argv[++i];
    } else if (arg == "--jit") {
      jit = true;
    } else if (arg == "--exhaustive-f32") {
      exhaustive = true;
    } else if (arg == "--bench") {
      do_bench = true;
    } else {
      std::fprintf(stderr, "softfloat-diff: unknown argument %s (see --help)\n", arg.c_str());
      return 2;
    }
  }
  // The reference must round to nearest-even and keep subnormals: default MXCSR, all masked.
  _mm_setcsr(0x1f80);
  if (!__builtin_cpu_supports("sse4.1")) {
    std::fprintf(stderr, "softfloat-diff: this CPU has no SSE4.1 (roundss/roundsd), cannot run the reference\n");
    return 2;
  }
  if (do_bench) {
    bench();
    return 0;
  }
  // Operations carry weights (1, 1/2, 1/4, 1/8 of per_op); a dry pass finds their sum so
  // that the total is what was asked for.
  Report dry;
  dry.dry = true;
  constexpr u64 kProbe = 800;
  run_all(dry, kProbe, seed, only);
  u64 per_op = dry.compared ? total * kProbe / dry.compared : 0;
  Report rep;
  if (emit_path) {
    rep.emit = std::fopen(emit_path, "wb");
    if (!rep.emit) {
      std::fprintf(stderr, "softfloat-diff: cannot write %s: %s\n", emit_path, std::strerror(errno));
      return 2;
    }
    run_all(rep, per_op, seed, only);
    if (std::fclose(rep.emit) != 0 || rep.emit_failed) {
      std::fprintf(stderr, "softfloat-diff: writing %s failed: %s\n", emit_path, std::strerror(errno));
      return 2;
    }
    std::printf("wrote %" PRIu64 " operands with the hardware's results to %s\n", rep.compared, emit_path);
    return 0;
  }
  rep.exhaustive = exhaustive;
  EngineRunner engine;
  if (engine_path) {
    if (genvm::Status st = engine.load(engine_path, jit); !st) {
      std::fprintf(stderr, "softfloat-diff: %s\n", st.error().message.c_str());
      return 2;
    }
    rep.engine = &engine;
  }
  auto t0 = std::chrono::steady_clock::now();
  run_all(rep, per_op, seed, only);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("total: %" PRIu64 " operands compared, %" PRIu64 " mismatches, %.1f s (seed 0x%" PRIx64 ")\n",
              rep.compared, rep.mismatches, secs, seed);
  if (only && rep.compared == 0) {
    std::fprintf(stderr, exhaustive ? "softfloat-diff: %s is not an operation of one f32 or i32 operand\n"
                                    : "softfloat-diff: no operation is named %s\n", only);
    return 2;
  }
  return rep.mismatches == 0 ? 0 : 1;
}
