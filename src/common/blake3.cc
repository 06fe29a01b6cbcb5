// BLAKE3, written from the specification (BLAKE3-specs, "BLAKE3: one function, fast
// everywhere", 2020): the portable compression function, the chunk/parent tree, the hasher's
// chaining-value stack, and the dispatch to the SIMD kernels in blake3_{sse41,avx2,avx512}.cc.
//
// Speed comes from hashing many chunks at once: update() cuts its input into the largest
// power-of-two subtrees that fit and are aligned with the chunks already hashed, hashes the
// leaves of each subtree N at a time (N = lanes of the widest kernel) and then its parents N at
// a time, so the wide kernels stay busy on large inputs.
#include "common/blake3.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#define GENVM_BLAKE3_X86 1
#else
#define GENVM_BLAKE3_X86 0
#endif

namespace genvm::blake3 {

#if GENVM_BLAKE3_X86
// The multi-lane kernels, each in a file compiled with its own instruction-set flags and only
// called after isa_supported() said yes. Each hashes exactly its lane count of inputs: for every
// input, `blocks` consecutive 64-byte blocks starting from the chaining value `key`; the first
// block also gets `flags_start`, the last `flags_end`; input i uses counter + i when
// increment_counter, else counter. The 32-byte chaining value of input i goes to out + 32 * i.
namespace kernel {
void hash4_sse41(const std::uint8_t* const* inputs, std::size_t blocks, const std::uint32_t key[8],
                 std::uint64_t counter, bool increment_counter, std::uint8_t flags,
                 std::uint8_t flags_start, std::uint8_t flags_end, std::uint8_t* out);
void hash8_avx2(const std::uint8_t* const* inputs, std::size_t blocks, const std::uint32_t key[8],
                std::uint64_t counter, bool increment_counter, std::uint8_t flags,
                std::uint8_t flags_start, std::uint8_t flags_end, std::uint8_t* out);
void hash16_avx512(const std::uint8_t* const* inputs, std::size_t blocks,
                   const std::uint32_t key[8], std::uint64_t counter, bool increment_counter,
                   std::uint8_t flags, std::uint8_t flags_start, std::uint8_t flags_end,
                   std::uint8_t* out);
}  // namespace kernel
#endif

namespace {

constexpr std::uint32_t kIv[8] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
                                  0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19};
constexpr std::uint8_t kPermutation[16] = {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8};

enum : std::uint8_t {
  kChunkStart = 1 << 0,
  kChunkEnd = 1 << 1,
  kParent = 1 << 2,
  kRoot = 1 << 3,
  kKeyedHash = 1 << 4,
  kDeriveKeyContext = 1 << 5,
  kDeriveKeyMaterial = 1 << 6,
};

constexpr std::size_t kMaxLanes = 16;

// Round r reads message word kSchedule[r][i] where round 0 reads word i: applying the
// permutation r times, computed once here instead of moving the words between rounds.
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

inline std::uint32_t load32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}
inline void store32(std::uint8_t* p, std::uint32_t w) {
  p[0] = static_cast<std::uint8_t>(w);
  p[1] = static_cast<std::uint8_t>(w >> 8);
  p[2] = static_cast<std::uint8_t>(w >> 16);
  p[3] = static_cast<std::uint8_t>(w >> 24);
}
inline void load_words(const std::uint8_t* p, std::uint32_t* w, int n) {
  for (int i = 0; i < n; ++i) w[i] = load32(p + 4 * i);
}
inline void store_words(std::uint8_t* p, const std::uint32_t* w, int n) {
  for (int i = 0; i < n; ++i) store32(p + 4 * i, w[i]);
}

inline void g(std::uint32_t* v, int a, int b, int c, int d, std::uint32_t x, std::uint32_t y) {
  v[a] = v[a] + v[b] + x;
  v[d] = std::rotr(v[d] ^ v[a], 16);
  v[c] = v[c] + v[d];
  v[b] = std::rotr(v[b] ^ v[c], 12);
  v[a] = v[a] + v[b] + y;
  v[d] = std::rotr(v[d] ^ v[a], 8);
  v[c] = v[c] + v[d];
  v[b] = std::rotr(v[b] ^ v[c], 7);
}

// The 7 rounds over the 16-word state; the caller derives its outputs from v.
void compress_state(std::uint32_t v[16], const std::uint32_t cv[8], const std::uint8_t block[64],
                    std::uint8_t block_len, std::uint64_t counter, std::uint8_t flags) {
  std::uint32_t m[16];
  load_words(block, m, 16);
  for (int i = 0; i < 8; ++i) v[i] = cv[i];
  for (int i = 0; i < 4; ++i) v[8 + i] = kIv[i];
  v[12] = static_cast<std::uint32_t>(counter);
  v[13] = static_cast<std::uint32_t>(counter >> 32);
  v[14] = block_len;
  v[15] = flags;
  for (const auto& s : kSchedule.index) {
    g(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    g(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    g(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    g(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    g(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    g(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    g(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    g(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
}

// cv <- the next chaining value.
void compress_cv(std::uint32_t cv[8], const std::uint8_t block[64], std::uint8_t block_len,
                 std::uint64_t counter, std::uint8_t flags) {
  std::uint32_t v[16];
  compress_state(v, cv, block, block_len, counter, flags);
  for (int i = 0; i < 8; ++i) cv[i] = v[i] ^ v[8 + i];
}

// The full 64-byte output of one compression (the root's extended output).
void compress_xof(const std::uint32_t cv[8], const std::uint8_t block[64], std::uint8_t block_len,
                  std::uint64_t counter, std::uint8_t flags, std::uint8_t out[64]) {
  std::uint32_t v[16];
  compress_state(v, cv, block, block_len, counter, flags);
  for (int i = 0; i < 8; ++i) {
    store32(out + 4 * i, v[i] ^ v[8 + i]);
    store32(out + 32 + 4 * i, v[8 + i] ^ cv[i]);
  }
}

void hash_one_portable(const std::uint8_t* input, std::size_t blocks, const std::uint32_t key[8],
                       std::uint64_t counter, std::uint8_t flags, std::uint8_t flags_start,
                       std::uint8_t flags_end, std::uint8_t* out) {
  std::uint32_t cv[8];
  std::memcpy(cv, key, sizeof(cv));
  for (std::size_t b = 0; b < blocks; ++b) {
    std::uint8_t f = flags;
    if (b == 0) f |= flags_start;
    if (b + 1 == blocks) f |= flags_end;
    compress_cv(cv, input + b * kBlockLen, kBlockLen, counter, f);
  }
  store_words(out, cv, 8);
}

// --- instruction-set selection -------------------------------------------------------------

Isa best_isa() {
#if GENVM_BLAKE3_X86
  __builtin_cpu_init();
  // __builtin_cpu_supports also checks that the OS saves the wide registers (XCR0).
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
    return Isa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2")) return Isa::kAvx2;
  if (__builtin_cpu_supports("sse4.1")) return Isa::kSse41;
#endif
  return Isa::kPortable;
}

Isa initial_isa() {
  const char* env = std::getenv("GENVM_BLAKE3_ISA");
  if (env != nullptr && *env != '\0') {
    Result<Isa> forced = parse_isa(env);
    if (forced && isa_supported(*forced)) return *forced;
  }
  return best_isa();
}

std::atomic<Isa>& isa_slot() {
  static std::atomic<Isa> slot{initial_isa()};
  return slot;
}

std::size_t lanes(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return 16;
    case Isa::kAvx2:
      return 8;
    case Isa::kSse41:
      return 4;
    case Isa::kPortable:
      return 1;
  }
  return 1;
}

// Hashes n inputs as the kernels do (see namespace kernel), widest kernel first, so a
// remainder of 12 inputs on an AVX-512 machine still goes 8 + 4 wide.
void hash_many(const std::uint8_t* const* inputs, std::size_t n, std::size_t blocks,
               const std::uint32_t key[8], std::uint64_t counter, bool increment_counter,
               std::uint8_t flags, std::uint8_t flags_start, std::uint8_t flags_end,
               std::uint8_t* out) {
  [[maybe_unused]] const Isa isa = active_isa();
#if GENVM_BLAKE3_X86
  auto run = [&](std::size_t width, auto kernel) {
    while (n >= width) {
      kernel(inputs, blocks, key, counter, increment_counter, flags, flags_start, flags_end, out);
      inputs += width;
      n -= width;
      if (increment_counter) counter += width;
      out += width * kOutLen;
    }
  };
  if (isa >= Isa::kAvx512) run(16, kernel::hash16_avx512);
  if (isa >= Isa::kAvx2) run(8, kernel::hash8_avx2);
  if (isa >= Isa::kSse41) run(4, kernel::hash4_sse41);
#endif
  for (; n > 0; --n) {
    hash_one_portable(*inputs, blocks, key, counter, flags, flags_start, flags_end, out);
    ++inputs;
    if (increment_counter) ++counter;
    out += kOutLen;
  }
}

// Chaining values of the n = len / kChunkLen full chunks at `in` (n <= kMaxLanes).
std::size_t hash_chunks(const std::uint8_t* in, std::size_t len, const std::uint32_t key[8],
                        std::uint64_t counter, std::uint8_t flags, std::uint8_t* out) {
  const std::size_t n = len / kChunkLen;
  assert(n * kChunkLen == len && n <= kMaxLanes);
  const std::uint8_t* inputs[kMaxLanes];
  for (std::size_t i = 0; i < n; ++i) inputs[i] = in + i * kChunkLen;
  hash_many(inputs, n, kChunkLen / kBlockLen, key, counter, true, flags, kChunkStart, kChunkEnd,
            out);
  return n;
}

// Pairs up n chaining values into parents; an odd last one is carried over unchanged.
std::size_t hash_parents(const std::uint8_t* cvs, std::size_t n, const std::uint32_t key[8],
                         std::uint8_t flags, std::uint8_t* out) {
  const std::size_t parents = n / 2;
  assert(parents <= kMaxLanes);
  const std::uint8_t* inputs[kMaxLanes];
  for (std::size_t i = 0; i < parents; ++i) inputs[i] = cvs + i * 2 * kOutLen;
  hash_many(inputs, parents, 1, key, 0, false, flags | kParent, 0, 0, out);
  if (n % 2 != 0) std::memcpy(out + parents * kOutLen, cvs + (n - 1) * kOutLen, kOutLen);
  return parents + n % 2;
}

// Reduces a subtree of len bytes (a power-of-two number of full chunks) to at most
// max(degree, 2) chaining values of its leftmost equal-size subtrees; never fewer than 2 when
// it has 2 chunks or more, so its root is left to the caller (it might be the root of all).
std::size_t compress_subtree_wide(const std::uint8_t* in, std::size_t len,
                                  const std::uint32_t key[8], std::uint64_t counter,
                                  std::uint8_t flags, std::size_t degree, std::uint8_t* out) {
  if (len <= degree * kChunkLen) return hash_chunks(in, len, key, counter, flags, out);
  const std::size_t left = len / 2;
  std::uint8_t cvs[2 * kMaxLanes * kOutLen];
  const std::size_t nl = compress_subtree_wide(in, left, key, counter, flags, degree, cvs);
  const std::size_t nr = compress_subtree_wide(
      in + left, len - left, key, counter + left / kChunkLen, flags, degree, cvs + nl * kOutLen);
  const std::size_t n = nl + nr;
  if (n == 2) {  // only with degree 1: keep both so the caller still sees two children
    std::memcpy(out, cvs, 2 * kOutLen);
    return 2;
  }
  return hash_parents(cvs, n, key, flags, out);
}

// The two children of a subtree of >= 2 chunks (power-of-two count, all full).
void compress_subtree_to_two(const std::uint8_t* in, std::size_t len, const std::uint32_t key[8],
                             std::uint64_t counter, std::uint8_t flags, std::uint32_t left[8],
                             std::uint32_t right[8]) {
  std::uint8_t cvs[kMaxLanes * kOutLen];
  std::uint8_t next[kMaxLanes * kOutLen];
  std::size_t n = compress_subtree_wide(in, len, key, counter, flags, lanes(active_isa()), cvs);
  while (n > 2) {
    n = hash_parents(cvs, n, key, flags, next);
    std::memcpy(cvs, next, n * kOutLen);
  }
  assert(n == 2);
  load_words(cvs, left, 8);
  load_words(cvs + kOutLen, right, 8);
}

// The chaining value of a non-root node (a chunk's last block or a parent block).
void node_cv(const std::uint32_t in_cv[8], const std::uint8_t block[64], std::uint8_t block_len,
             std::uint64_t counter, std::uint8_t flags, std::uint32_t out[8]) {
  std::memcpy(out, in_cv, 8 * sizeof(std::uint32_t));
  compress_cv(out, block, block_len, counter, flags);
}

}  // namespace

// --- Isa API -------------------------------------------------------------------------------

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kPortable:
      return "portable";
    case Isa::kSse41:
      return "sse41";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

Result<Isa> parse_isa(std::string_view name) {
  for (Isa isa : {Isa::kPortable, Isa::kSse41, Isa::kAvx2, Isa::kAvx512}) {
    if (name == isa_name(isa)) return isa;
  }
  return make_error("unknown_isa",
                    "'" + std::string(name) + "' is not one of portable, sse41, avx2, avx512");
}

bool isa_supported(Isa isa) {
#if GENVM_BLAKE3_X86
  return isa <= best_isa();
#else
  return isa == Isa::kPortable;
#endif
}

Isa active_isa() { return isa_slot().load(std::memory_order_relaxed); }

Status set_isa(Isa isa) {
  if (!isa_supported(isa)) {
    return make_error("isa_unsupported",
                      std::string("this CPU cannot run the ") + isa_name(isa) + " path");
  }
  isa_slot().store(isa, std::memory_order_relaxed);
  return {};
}

// --- OutputReader --------------------------------------------------------------------------

void OutputReader::fill(std::span<std::uint8_t> out) {
  std::uint8_t buf[kBlockLen];
  while (!out.empty()) {
    const std::uint64_t block_index = position_ / kBlockLen;
    const std::size_t offset = static_cast<std::size_t>(position_ % kBlockLen);
    // The root's output block i is one compression with counter i.
    compress_xof(cv_, block_, block_len_, block_index, flags_ | kRoot, buf);
    const std::size_t take = std::min(kBlockLen - offset, out.size());
    std::memcpy(out.data(), buf + offset, take);
    position_ += take;
    out = out.subspan(take);
  }
}

// --- Hasher --------------------------------------------------------------------------------

Hasher::Hasher() : Hasher(kIv, 0) {}

Hasher::Hasher(const std::uint32_t key[8], std::uint8_t flags) : flags_(flags) {
  std::memcpy(key_, key, sizeof(key_));
  reset_chunk(0);
}

Hasher Hasher::keyed(const Key& key) { return keyed(std::span<const std::uint8_t, kKeyLen>(key)); }

Hasher Hasher::keyed(std::span<const std::uint8_t, kKeyLen> key) {
  std::uint32_t words[8];
  load_words(key.data(), words, 8);
  return Hasher(words, kKeyedHash);
}

Hasher Hasher::derive_key(std::string_view context) {
  Hasher context_hasher(kIv, kDeriveKeyContext);
  context_hasher.update(context);
  const Digest context_key = context_hasher.finalize();
  std::uint32_t words[8];
  load_words(context_key.data(), words, 8);
  return Hasher(words, kDeriveKeyMaterial);
}

void Hasher::reset() {
  stack_len_ = 0;
  reset_chunk(0);
}

void Hasher::reset_chunk(std::uint64_t counter) {
  std::memcpy(chunk_.cv, key_, sizeof(key_));
  chunk_.counter = counter;
  std::memset(chunk_.buf, 0, sizeof(chunk_.buf));
  chunk_.buf_len = 0;
  chunk_.blocks_compressed = 0;
}

// Appends to the current chunk; the caller keeps it within kChunkLen. The last block stays
// buffered because only the next byte tells whether it ends the chunk.
void Hasher::chunk_update(const std::uint8_t* in, std::size_t len) {
  ChunkState& c = chunk_;
  while (len > 0) {
    if (c.buf_len == kBlockLen) {
      compress_cv(c.cv, c.buf, kBlockLen, c.counter,
                  flags_ | (c.blocks_compressed == 0 ? kChunkStart : 0));
      ++c.blocks_compressed;
      c.buf_len = 0;
      std::memset(c.buf, 0, sizeof(c.buf));
    }
    while (c.buf_len == 0 && len > kBlockLen) {
      compress_cv(c.cv, in, kBlockLen, c.counter,
                  flags_ | (c.blocks_compressed == 0 ? kChunkStart : 0));
      ++c.blocks_compressed;
      in += kBlockLen;
      len -= kBlockLen;
    }
    const std::size_t take = std::min(kBlockLen - c.buf_len, len);
    std::memcpy(c.buf + c.buf_len, in, take);
    c.buf_len = static_cast<std::uint8_t>(c.buf_len + take);
    in += take;
    len -= take;
  }
}

// Lazy merging: before adding the CV of chunk number `chunks_before`, the stack is folded to
// one entry per 1-bit of chunks_before (the complete subtrees so far). Merging only when more
// input arrives keeps the last subtree unmerged, since it may turn out to be the root.
// merge_stack(chunks) does the folding alone.
void Hasher::push_cv(const std::uint32_t cv[8], std::uint64_t chunks_before) {
  merge_stack(chunks_before);
  assert(stack_len_ < kMaxDepth);
  std::memcpy(stack_[stack_len_], cv, 8 * sizeof(std::uint32_t));
  ++stack_len_;
}

void Hasher::merge_stack(std::uint64_t chunks) {
  const std::size_t keep = static_cast<std::size_t>(std::popcount(chunks));
  while (stack_len_ > keep) {
    std::uint8_t block[kBlockLen];
    store_words(block, stack_[stack_len_ - 2], 8);
    store_words(block + kOutLen, stack_[stack_len_ - 1], 8);
    std::uint32_t* parent = stack_[stack_len_ - 2];
    std::memcpy(parent, key_, sizeof(key_));
    compress_cv(parent, block, kBlockLen, 0, flags_ | kParent);
    --stack_len_;
  }
}

Hasher& Hasher::update(std::string_view input) {
  return update(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(input.data()),
                                              input.size()));
}

Hasher& Hasher::update(std::span<const std::uint8_t> input) {
  const std::uint8_t* in = input.data();
  std::size_t len = input.size();
  if (len == 0) return *this;

  if (chunk_.len() > 0) {
    const std::size_t take = std::min(kChunkLen - chunk_.len(), len);
    chunk_update(in, take);
    in += take;
    len -= take;
    if (len == 0) return *this;
    // The chunk is full and more input follows, so it is not the root.
    std::uint32_t cv[8];
    node_cv(chunk_.cv, chunk_.buf, chunk_.buf_len, chunk_.counter, flags_ | kChunkEnd, cv);
    push_cv(cv, chunk_.counter);
    reset_chunk(chunk_.counter + 1);
  }

  // Whole subtrees straight from the input: the largest power-of-two number of chunks that
  // fits and keeps the tree aligned with the chunks already hashed. At least one byte past
  // a single chunk, or the subtree's two children, stays un-finalized as a possible root.
  while (len > kChunkLen) {
    const std::uint64_t done = chunk_.counter;
    std::uint64_t chunks = std::bit_floor(static_cast<std::uint64_t>(len)) / kChunkLen;
    while ((done & (chunks - 1)) != 0) chunks /= 2;
    const std::size_t size = static_cast<std::size_t>(chunks) * kChunkLen;
    if (chunks == 1) {
      chunk_update(in, kChunkLen);
      std::uint32_t cv[8];
      node_cv(chunk_.cv, chunk_.buf, chunk_.buf_len, chunk_.counter, flags_ | kChunkEnd, cv);
      push_cv(cv, done);
    } else {
      std::uint32_t left[8], right[8];
      compress_subtree_to_two(in, size, key_, done, flags_, left, right);
      push_cv(left, done);
      push_cv(right, done + chunks / 2);
    }
    reset_chunk(done + chunks);
    in += size;
    len -= size;
  }
  if (len > 0) {
    chunk_update(in, len);
    // Input follows every subtree on the stack now, so complete ones can be merged (finalize
    // folds the stack from the top and relies on it).
    merge_stack(chunk_.counter);
  }
  return *this;
}

OutputReader Hasher::root_output() const {
  OutputReader out;
  auto set_parent = [&](const std::uint32_t left[8], const std::uint32_t right[8]) {
    std::memcpy(out.cv_, key_, sizeof(key_));
    store_words(out.block_, left, 8);
    store_words(out.block_ + kOutLen, right, 8);
    out.counter_ = 0;
    out.block_len_ = kBlockLen;
    out.flags_ = flags_ | kParent;
  };
  std::size_t i = stack_len_;
  if (stack_len_ == 0 || chunk_.len() > 0) {
    std::memcpy(out.cv_, chunk_.cv, sizeof(out.cv_));
    std::memcpy(out.block_, chunk_.buf, kBlockLen);
    out.counter_ = chunk_.counter;
    out.block_len_ = chunk_.buf_len;
    out.flags_ = flags_ | kChunkEnd | (chunk_.blocks_compressed == 0 ? kChunkStart : 0);
  } else {
    // The input ended on a subtree boundary: its last two stack entries are the root's
    // children (update pushes subtrees as pairs, so there are at least two).
    assert(stack_len_ >= 2);
    set_parent(stack_[stack_len_ - 2], stack_[stack_len_ - 1]);
    i = stack_len_ - 2;
  }
  while (i > 0) {
    std::uint32_t right[8];
    node_cv(out.cv_, out.block_, out.block_len_, out.counter_, out.flags_, right);
    set_parent(stack_[i - 1], right);
    --i;
  }
  return out;
}

OutputReader Hasher::finalize_xof() const { return root_output(); }

void Hasher::finalize(std::span<std::uint8_t> out) const { root_output().fill(out); }

Digest Hasher::finalize() const {
  Digest d;
  finalize(d);
  return d;
}

// --- one-shot helpers ----------------------------------------------------------------------

Digest hash(std::span<const std::uint8_t> input) { return Hasher().update(input).finalize(); }

Digest hash(std::string_view input) { return Hasher().update(input).finalize(); }

void hash_xof(std::span<const std::uint8_t> input, std::span<std::uint8_t> out) {
  Hasher().update(input).finalize(out);
}

Digest keyed_hash(const Key& key, std::span<const std::uint8_t> input) {
  return Hasher::keyed(key).update(input).finalize();
}

void derive_key(std::string_view context, std::span<const std::uint8_t> key_material,
                std::span<std::uint8_t> out) {
  Hasher::derive_key(context).update(key_material).finalize(out);
}

Digest derive_key(std::string_view context, std::span<const std::uint8_t> key_material) {
  Digest d;
  derive_key(context, key_material, d);
  return d;
}

}  // namespace genvm::blake3
