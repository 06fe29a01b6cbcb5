// Sha3Hasher: streaming SHA3-256 (FIPS 202), for hashes folded piece by piece: the sub-VM hash
// accumulator, execution hashes over encodings that are built in parts, slot derivation.
//
//   Sha3Hasher h; h.update(a); h.update(b); Digest32 d = h.digest();   // == sha3_256(a ++ b)
//
// Our own Keccak-f[1600] rather than OpenSSL's: the executor hashes a few kilobytes per run, and
// loading and initializing libcrypto cost more of a short run's wall time than all its hashing
// (docs/BENCHMARKS.md, ## Executor).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace genvm::executor {

using Digest32 = std::array<std::uint8_t, 32>;

class Sha3Hasher {
 public:
  Sha3Hasher() = default;
  void update(std::span<const std::uint8_t> data);
  // The digest of everything so far; the hasher stays usable (finalizes a copy).
  Digest32 digest() const;

 private:
  static constexpr std::size_t kRate = 136;  // octets absorbed per permutation (SHA3-256)
  std::array<std::uint64_t, 25> state_{};
  std::array<std::uint8_t, kRate> block_{};
  std::size_t used_ = 0;  // octets of block_ filled
  std::uint8_t domain_ = 0x06;  // SHA3's domain bits; the original Keccak pads with 0x01

  friend Digest32 keccak256(std::span<const std::uint8_t> data);
};

Digest32 sha3_256(std::span<const std::uint8_t> data);
// Keccak-256 as Ethereum uses it (the pre-FIPS padding): call keys of long method names.
Digest32 keccak256(std::span<const std::uint8_t> data);

}  // namespace genvm::executor
