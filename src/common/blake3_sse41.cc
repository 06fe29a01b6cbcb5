// BLAKE3 4-way kernel (SSE4.1): 4 inputs compressed at once, one input per 32-bit lane of each
// 128-bit register. Compiled with -msse4.1 and called only after the CPU check in blake3.cc.
// Everything here except the entry point has internal linkage so that no function compiled
// with these flags can be picked by the linker for other callers.
#if defined(__x86_64__) || defined(__i386__)

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

constexpr int kLanes = 4;
using V = __m128i;

#define GENVM_INLINE inline __attribute__((always_inline))
// Full unrolling keeps the vector arrays in registers (GCC leaves these loops rolled and
// spills the arrays to the stack otherwise, ~25% slower).
#define GENVM_UNROLL _Pragma("GCC unroll 16")

GENVM_INLINE V add(V a, V b) { return _mm_add_epi32(a, b); }
GENVM_INLINE V xor_(V a, V b) { return _mm_xor_si128(a, b); }
GENVM_INLINE V set1(std::uint32_t x) { return _mm_set1_epi32(static_cast<int>(x)); }
// Rotations by 16 and 8 move whole bytes, so one byte shuffle (SSSE3) does them.
GENVM_INLINE V rot16(V x) {
  return _mm_shuffle_epi8(x, _mm_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
}
GENVM_INLINE V rot8(V x) {
  return _mm_shuffle_epi8(x, _mm_setr_epi8(1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12));
}
GENVM_INLINE V rot12(V x) { return _mm_or_si128(_mm_srli_epi32(x, 12), _mm_slli_epi32(x, 20)); }
GENVM_INLINE V rot7(V x) { return _mm_or_si128(_mm_srli_epi32(x, 7), _mm_slli_epi32(x, 25)); }

GENVM_INLINE void g(V& a, V& b, V& c, V& d, V x, V y) {
  a = add(add(a, b), x);
  d = rot16(xor_(d, a));
  c = add(c, d);
  b = rot12(xor_(b, c));
  a = add(add(a, b), y);
  d = rot8(xor_(d, a));
  c = add(c, d);
  b = rot7(xor_(b, c));
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

// m[j] <- word j of the block at `offset` of each of the 4 inputs (lane i = input i): four
// 4x4 transposes of 32-bit words (words 4k .. 4k+3 for k = 0..3).
GENVM_INLINE void load_transposed(const std::uint8_t* const* inputs, std::size_t offset,
                                  std::size_t prefetch, V* m) {
  GENVM_UNROLL
  for (int k = 0; k < 4; ++k) {
    V r[4];
    GENVM_UNROLL
    for (int i = 0; i < 4; ++i) {
      r[i] = _mm_loadu_si128(reinterpret_cast<const V*>(inputs[i] + offset + 16 * k));
      if (k == 0 && prefetch != 0) {
        _mm_prefetch(reinterpret_cast<const char*>(inputs[i] + offset + prefetch), _MM_HINT_T0);
      }
    }
    const V t0 = _mm_unpacklo_epi32(r[0], r[1]);  // a0 b0 a1 b1
    const V t1 = _mm_unpackhi_epi32(r[0], r[1]);  // a2 b2 a3 b3
    const V t2 = _mm_unpacklo_epi32(r[2], r[3]);  // c0 d0 c1 d1
    const V t3 = _mm_unpackhi_epi32(r[2], r[3]);  // c2 d2 c3 d3
    m[4 * k + 0] = _mm_unpacklo_epi64(t0, t2);
    m[4 * k + 1] = _mm_unpackhi_epi64(t0, t2);
    m[4 * k + 2] = _mm_unpacklo_epi64(t1, t3);
    m[4 * k + 3] = _mm_unpackhi_epi64(t1, t3);
  }
}

}  // namespace

void hash4_sse41(const std::uint8_t* const* inputs, std::size_t blocks, const std::uint32_t key[8],
                 std::uint64_t counter, bool increment_counter, std::uint8_t flags,
                 std::uint8_t flags_start, std::uint8_t flags_end, std::uint8_t* out) {
  alignas(16) std::uint32_t lo[kLanes];
  alignas(16) std::uint32_t hi[kLanes];
  for (int i = 0; i < kLanes; ++i) {
    const std::uint64_t c = counter + (increment_counter ? static_cast<std::uint64_t>(i) : 0);
    lo[i] = static_cast<std::uint32_t>(c);
    hi[i] = static_cast<std::uint32_t>(c >> 32);
  }
  const V counter_lo = _mm_load_si128(reinterpret_cast<const V*>(lo));
  const V counter_hi = _mm_load_si128(reinterpret_cast<const V*>(hi));

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
  alignas(16) std::uint32_t words[8][kLanes];
  for (int i = 0; i < 8; ++i) _mm_store_si128(reinterpret_cast<V*>(words[i]), h[i]);
  for (int lane = 0; lane < kLanes; ++lane) {
    std::uint32_t cv[8];
    for (int i = 0; i < 8; ++i) cv[i] = words[i][lane];
    std::memcpy(out + 32 * lane, cv, sizeof(cv));
  }
}

}  // namespace genvm::blake3::kernel

#endif  // x86
