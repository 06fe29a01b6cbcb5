// BLAKE3: a tree hash with a 32-byte default output and output of any length (XOF), in three
// modes: hash, keyed_hash (32-byte key) and derive_key (context string, then key material).
//
//   auto d = genvm::blake3::hash(bytes);                  // 32 bytes
//   genvm::blake3::Hasher h; h.update(a); h.update(b);     // same digest as hash(a ++ b)
//   h.finalize(out);                                       // any length; shorter is a prefix
//   auto r = h.finalize_xof(); r.seek(1 << 20); r.fill(out);  // read output from any offset
//
// Contract: every instruction-set path (portable, SSE4.1 4-way, AVX2 8-way, AVX-512 16-way)
// gives bit-identical output. The path is chosen once per process as the widest the CPU has,
// unless GENVM_BLAKE3_ISA=portable|sse41|avx2|avx512 names one the CPU supports, or set_isa()
// is called. A Hasher is a plain value: copy it to fork a stream; finalize does not consume
// it, so update may continue afterwards. One object is not safe to share between threads
// without locking; distinct objects are independent.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/result.h"

namespace genvm::blake3 {

inline constexpr std::size_t kOutLen = 32;    // default digest length
inline constexpr std::size_t kKeyLen = 32;    // keyed_hash key length
inline constexpr std::size_t kBlockLen = 64;  // compression block
inline constexpr std::size_t kChunkLen = 1024;

using Digest = std::array<std::uint8_t, kOutLen>;
using Key = std::array<std::uint8_t, kKeyLen>;

// Instruction-set paths, narrowest first.
enum class Isa { kPortable, kSse41, kAvx2, kAvx512 };

// "portable", "sse41", "avx2" or "avx512".
const char* isa_name(Isa isa);
// Inverse of isa_name; an error names the accepted values.
Result<Isa> parse_isa(std::string_view name);
// Whether this CPU (and OS) can run `isa`; kPortable always can.
bool isa_supported(Isa isa);
// The path in use now.
Isa active_isa();
// Forces a path for the whole process (tests, benchmarks); fails if the CPU lacks it.
// Call it while no hashing is in flight on other threads.
Status set_isa(Isa isa);

// Reads the output of a finalized stream: 2^64 bytes addressable by seek.
class OutputReader {
 public:
  // Writes the next out.size() output bytes and advances the position.
  void fill(std::span<std::uint8_t> out);
  void seek(std::uint64_t position) { position_ = position; }
  std::uint64_t position() const { return position_; }

 private:
  friend class Hasher;
  std::uint32_t cv_[8] = {};
  std::uint8_t block_[kBlockLen] = {};
  std::uint64_t counter_ = 0;  // the node's counter (a chunk index, or 0 for a parent)
  std::uint8_t block_len_ = 0;
  std::uint8_t flags_ = 0;
  std::uint64_t position_ = 0;
};

class Hasher {
 public:
  Hasher();  // the default hash mode
  static Hasher keyed(const Key& key);
  static Hasher keyed(std::span<const std::uint8_t, kKeyLen> key);
  // The context should be a hard-coded, globally unique, application-specific string.
  static Hasher derive_key(std::string_view context);

  Hasher& update(std::span<const std::uint8_t> input);
  Hasher& update(std::string_view input);

  Digest finalize() const;
  void finalize(std::span<std::uint8_t> out) const;  // any length
  OutputReader finalize_xof() const;

  // Back to the state right after construction, keeping the mode and key.
  void reset();

 private:
  struct ChunkState {
    std::uint32_t cv[8];
    std::uint64_t counter;
    std::uint8_t buf[kBlockLen];
    std::uint8_t buf_len;
    std::uint8_t blocks_compressed;
    std::size_t len() const { return std::size_t{blocks_compressed} * kBlockLen + buf_len; }
  };
  // A 2^54-chunk input (2^64 bytes) needs 54 stack entries; one more for the lazy merge.
  static constexpr std::size_t kMaxDepth = 55;

  Hasher(const std::uint32_t key[8], std::uint8_t flags);
  void reset_chunk(std::uint64_t counter);
  void chunk_update(const std::uint8_t* in, std::size_t len);
  void push_cv(const std::uint32_t cv[8], std::uint64_t chunks_before);
  void merge_stack(std::uint64_t chunks);
  OutputReader root_output() const;

  std::uint32_t key_[8];
  std::uint8_t flags_;
  ChunkState chunk_;
  std::uint8_t stack_len_ = 0;
  std::uint32_t stack_[kMaxDepth][8];
};

// One-shot helpers.
Digest hash(std::span<const std::uint8_t> input);
Digest hash(std::string_view input);
void hash_xof(std::span<const std::uint8_t> input, std::span<std::uint8_t> out);
Digest keyed_hash(const Key& key, std::span<const std::uint8_t> input);
// Derives out.size() bytes of key from `context` and `key_material`.
void derive_key(std::string_view context, std::span<const std::uint8_t> key_material,
                std::span<std::uint8_t> out);
Digest derive_key(std::string_view context, std::span<const std::uint8_t> key_material);

}  // namespace genvm::blake3
