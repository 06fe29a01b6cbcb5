// BLAKE3 16-way kernel (AVX-512F + VL): 16 inputs compressed at once, one input per 32-bit
// lane of each 512-bit register. Compiled with -mavx512f -mavx512vl and called only after the
// CPU check in blake3.cc. Everything here except the entry point has internal linkage so that
// no function compiled with these flags can be picked by the linker for other callers.
#if defined(__x86_64__) || defined(__i386__)

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's own avx512fintrin.h passes a deliberately uninitialized "undefined" vector as the
// merge source of unmasked operations, which its -Wmaybe-uninitialized then reports in our
// callers after inlining. Nothing here reads uninitialized data.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace genvm::blake3::kernel {
namespace {

// Kept per kernel file (instead of in a shared header) so this file shares no inline code
// with files built for other instruction sets.
constexpr std::uint32_t kIv[4] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A};
constexpr std::uint8_t kPermutation[16] = {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8};
struct Schedule {
  std::uint8_t index[7][16];
};
constexpr Schedule make_schedule() {
  Schedule s{};
  for (int i = 0; i < 16; ++i) s.index[0][i] = static_cast<std::uint8_t>(i);
  for (int r = 1; r < 7; ++r)
    for (int i = 0; i < 16; ++i) s.index[r][i] = s.index[r - 1][kPermutation[i]];
  return s;
}
constexpr Schedule kSchedule = make_schedule();

constexpr int kLanes = 16;
using V = __m512i;

#define GENVM_INLINE inline __attribute__((always_inline))
// Full unrolling keeps the vector arrays in registers (GCC leaves these loops rolled and
// spills the arrays to the stack otherwise, ~25% slower).
#define GENVM_UNROLL _Pragma("GCC unroll 16")

GENVM_INLINE V add(V a, V b) { return _mm512_add_epi32(a, b); }
GENVM_INLINE V xor_(V a, V b) { return _mm512_xor_si512(a, b); }
GENVM_INLINE V set1(std::uint32_t x) { return _mm512_set1_epi32(static_cast<int>(x)); }

GENVM_INLINE void g(V& a, V& b, V& c, V& d, V x, V y) {
  a = add(add(a, b), x);
  d = _mm512_ror_epi32(xor_(d, a), 16);
  c = add(c, d);
  b = _mm512_ror_epi32(xor_(b, c), 12);
  a = add(add(a, b), y);
  d = _mm512_ror_epi32(xor_(d, a), 8);
  c = add(c, d);
  b = _mm512_ror_epi32(xor_(b, c), 7);
}

template <int R>
GENVM_INLINE void round(V* v, const V* m) {
  constexpr const std::uint8_t* s = kSchedule.index[R];
  g(v[0], v[4], v[8], v[12], m[s[0]], m[s[1]]);
  g(v[1], v[5], v[9], v[13], m[s[2]], m[s[3]]);
  g(v[2], v[6], v[10], v[14], m[s[4]], m[s[5]]);
  g(v[3], v[7], v[11], v[15], m[s[6]], m[s[7]]);
  g(v[0], v[5], v[10], v[15], m[s[8]], m[s[9]]);
  g(v[1], v[6], v[11], v[12], m[s[10]], m[s[11]]);
  g(v[2], v[7], v[8], v[13], m[s[12]], m[s[13]]);
  g(v[3], v[4], v[9], v[14], m[s[14]], m[s[15]]);
}

// m[j] <- word j of the block at `offset` of each of the 16 inputs (lane i = input i): a
// 16x16 transpose of 32-bit words in three steps (32-bit, 64-bit, then 128-bit granules).
GENVM_INLINE void load_transposed(const std::uint8_t* const* inputs, std::size_t offset,
                                  std::size_t prefetch, V* m) {
  V r[16];
  GENVM_UNROLL
  for (int i = 0; i < 16; ++i) {
    r[i] = _mm512_loadu_si512(inputs[i] + offset);
    if (prefetch != 0) {
      _mm_prefetch(reinterpret_cast<const char*>(inputs[i] + offset + prefetch), _MM_HINT_T0);
    }
  }
  V t[16];
  GENVM_UNROLL
  for (int k = 0; k < 8; ++k) {
    t[2 * k] = _mm512_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
  }
  // x[4 * grp + w]: 128-bit lane q holds word 4q + w of rows 4grp .. 4grp + 3.
  V x[16];
  GENVM_UNROLL
  for (int grp = 0; grp < 4; ++grp) {
    x[4 * grp + 0] = _mm512_unpacklo_epi64(t[4 * grp], t[4 * grp + 2]);
    x[4 * grp + 1] = _mm512_unpackhi_epi64(t[4 * grp], t[4 * grp + 2]);
    x[4 * grp + 2] = _mm512_unpacklo_epi64(t[4 * grp + 1], t[4 * grp + 3]);
    x[4 * grp + 3] = _mm512_unpackhi_epi64(t[4 * grp + 1], t[4 * grp + 3]);
  }
  GENVM_UNROLL
  for (int w = 0; w < 4; ++w) {
    const V p = _mm512_shuffle_i32x4(x[w], x[4 + w], 0x44);        // A0 A1 B0 B1
    const V q = _mm512_shuffle_i32x4(x[w], x[4 + w], 0xEE);        // A2 A3 B2 B3
    const V r2 = _mm512_shuffle_i32x4(x[8 + w], x[12 + w], 0x44);  // C0 C1 D0 D1
    const V s = _mm512_shuffle_i32x4(x[8 + w], x[12 + w], 0xEE);   // C2 C3 D2 D3
    m[0 + w] = _mm512_shuffle_i32x4(p, r2, 0x88);                  // A0 B0 C0 D0
    m[4 + w] = _mm512_shuffle_i32x4(p, r2, 0xDD);                  // A1 B1 C1 D1
    m[8 + w] = _mm512_shuffle_i32x4(q, s, 0x88);
    m[12 + w] = _mm512_shuffle_i32x4(q, s, 0xDD);
  }
}

}  // namespace

void hash16_avx512(const std::uint8_t* const* inputs, std::size_t blocks,
                   const std::uint32_t key[8], std::uint64_t counter, bool increment_counter,
                   std::uint8_t flags, std::uint8_t flags_start, std::uint8_t flags_end,
                   std::uint8_t* out) {
  alignas(64) std::uint32_t lo[kLanes];
  alignas(64) std::uint32_t hi[kLanes];
  for (int i = 0; i < kLanes; ++i) {
    const std::uint64_t c = counter + (increment_counter ? static_cast<std::uint64_t>(i) : 0);
    lo[i] = static_cast<std::uint32_t>(c);
    hi[i] = static_cast<std::uint32_t>(c >> 32);
  }
  const V counter_lo = _mm512_load_si512(lo);
  const V counter_hi = _mm512_load_si512(hi);

  // Chunk inputs are consecutive in memory, so the caller's next call reads the same block
  // offsets kLanes chunks further on: prefetching them while this group computes hides the
  // memory latency the hardware prefetcher does not (measured ~1.4x on 128 MiB with AVX-512).
  // Parent inputs (one block each) are scattered and small; no prefetch for them.
  const std::size_t prefetch = blocks > 1 ? kLanes * blocks * 64 : 0;

  V h[8];
  GENVM_UNROLL
  for (int i = 0; i < 8; ++i) h[i] = set1(key[i]);
  for (std::size_t b = 0; b < blocks; ++b) {
    std::uint32_t f = flags;
    if (b == 0) f |= flags_start;
    if (b + 1 == blocks) f |= flags_end;
    V m[16];
    load_transposed(inputs, b * 64, prefetch, m);
    V v[16] = {h[0],       h[1],       h[2],         h[3],         h[4],         h[5],
               h[6],       h[7],       set1(kIv[0]), set1(kIv[1]), set1(kIv[2]), set1(kIv[3]),
               counter_lo, counter_hi, set1(64),     set1(f)};
    round<0>(v, m);
    round<1>(v, m);
    round<2>(v, m);
    round<3>(v, m);
    round<4>(v, m);
    round<5>(v, m);
    round<6>(v, m);
    GENVM_UNROLL
    for (int i = 0; i < 8; ++i) h[i] = xor_(v[i], v[i + 8]);
  }

  // Back from word-major to one 32-byte chaining value per input (little-endian words).
  alignas(64) std::uint32_t words[8][kLanes];
  for (int i = 0; i < 8; ++i) _mm512_store_si512(words[i], h[i]);
  for (int lane = 0; lane < kLanes; ++lane) {
    std::uint32_t cv[8];
    for (int i = 0; i < 8; ++i) cv[i] = words[i][lane];
    std::memcpy(out + 32 * lane, cv, sizeof(cv));
  }
}

}  // namespace genvm::blake3::kernel

#endif  // x86
