// The executor's names for the shared Keccak sponge (common/sha3.h): streaming SHA3-256 for
// hashes folded piece by piece (the sub-VM hash accumulator, execution hashes over encodings
// built in parts, slot derivation) and Keccak-256 for the call keys of long method names. The
// sponge is our own, not OpenSSL's; common/sha3.h says why.
//
//   Sha3Hasher h; h.update(a); h.update(b); Digest32 d = h.digest();   // == sha3_256(a ++ b)
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "common/sha3.h"

namespace genvm::executor {

using Digest32 = genvm::Sha3_256Digest;
using Sha3Hasher = genvm::KeccakSponge;  // default-constructed: SHA3-256's padding

inline Digest32 sha3_256(std::span<const std::uint8_t> data) {
  Sha3Hasher h;
  h.update(data);
  return h.digest();
}

using genvm::keccak256;

}  // namespace genvm::executor
