// Differential fuzz target for BLAKE3: the portable one-shot digest is the reference; every
// SIMD path the CPU has, and the incremental hasher fed in fuzzer-chosen pieces, must give the
// same bytes in all three modes, including an extended output read after a seek.
//
// Input layout: byte 0 = repetitions (the rest is repeated 1..64 times so inputs reach the
// multi-chunk subtree paths), byte 1 = mode, bytes 2..9 = seed for the split sizes and the
// seek offset, the rest = message.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/blake3.h"

namespace {

using genvm::blake3::Hasher;
using genvm::blake3::Isa;

Hasher make_hasher(std::uint8_t mode) {
  static const genvm::blake3::Key kKey = {'f', 'u', 'z', 'z', ' ', 'k', 'e', 'y', ' ', 'f', 'o',
                                          'r', ' ', 'g', 'e', 'n', 'v', 'm', ' ', 'b', 'l', 'a',
                                          'k', 'e', '3', ' ', '3', '2', ' ', 'b', 'y', 't'};
  switch (mode % 3) {
    case 1: return Hasher::keyed(kKey);
    case 2: return Hasher::derive_key("genvm blake3 fuzz context");
    default: return Hasher();
  }
}

void check(bool ok, const char* what, Isa isa, std::size_t len) {
  if (ok) return;
  std::fprintf(stderr, "blake3_fuzz: %s differs on %s for a %zu-byte input\n", what,
               genvm::blake3::isa_name(isa), len);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 10) return 0;
  const std::size_t reps = 1 + data[0] % 64;
  const std::uint8_t mode = data[1];
  std::uint64_t seed;
  std::memcpy(&seed, data + 2, sizeof(seed));
  std::vector<std::uint8_t> msg;
  for (std::size_t r = 0; r < reps; ++r) msg.insert(msg.end(), data + 10, data + size);

  const Isa saved = genvm::blake3::active_isa();
  (void)genvm::blake3::set_isa(Isa::kPortable);
  std::uint8_t expected[200];
  make_hasher(mode).update(msg).finalize(expected);

  for (Isa isa : {Isa::kPortable, Isa::kSse41, Isa::kAvx2, Isa::kAvx512}) {
    if (!genvm::blake3::set_isa(isa).ok()) continue;
    std::uint8_t out[200];
    make_hasher(mode).update(msg).finalize(out);
    check(std::memcmp(out, expected, sizeof(out)) == 0, "one-shot", isa, msg.size());

    // Split sizes from a small xorshift stream: mostly small, sometimes several chunks.
    Hasher h = make_hasher(mode);
    std::uint64_t s = seed | 1;
    for (std::size_t pos = 0; pos < msg.size();) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      const std::size_t n = (s & 1) ? s % 70 : s % 5000;
      const std::size_t take = std::min(n + 1, msg.size() - pos);
      h.update(std::span<const std::uint8_t>(msg.data() + pos, take));
      pos += take;
    }
    h.finalize(out);
    check(std::memcmp(out, expected, sizeof(out)) == 0, "incremental", isa, msg.size());

    const std::size_t at = seed % 150;
    genvm::blake3::OutputReader reader = h.finalize_xof();
    reader.seek(at);
    reader.fill(std::span<std::uint8_t>(out, sizeof(out) - at));
    check(std::memcmp(out, expected + at, sizeof(out) - at) == 0, "seek", isa, msg.size());
  }
  (void)genvm::blake3::set_isa(saved);
  return 0;
}
