// Sha3Hasher: streaming SHA3-256 (OpenSSL EVP), for hashes folded piece by piece: the sub-VM
// hash accumulator, execution hashes over encodings that are built in parts.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace genvm::executor {

using Digest32 = std::array<std::uint8_t, 32>;

class Sha3Hasher {
 public:
  Sha3Hasher();
  ~Sha3Hasher();
  Sha3Hasher(const Sha3Hasher& other);
  Sha3Hasher& operator=(const Sha3Hasher&) = delete;

  void update(std::span<const std::uint8_t> data);
  // The digest of everything so far; the hasher stays usable (finalizes a copy).
  Digest32 digest() const;

 private:
  void* ctx_;  // EVP_MD_CTX
};

Digest32 sha3_256(std::span<const std::uint8_t> data);

}  // namespace genvm::executor
