// Memory fingerprints: BLAKE3 of every linear memory, keyed by module name, in instance then
// memory-index order (GenVM compares these between leader and validators).
#include "common/blake3.h"
#include "wasm/wasm.h"

namespace genvm::wasm {

std::vector<MemoryFingerprint> fingerprint_memories(const Store& s) {
  std::vector<MemoryFingerprint> out;
  for (const auto& v : memories_for_fingerprint(s)) out.push_back({v.module, v.index, genvm::blake3::hash(v.bytes)});
  return out;
}

}  // namespace genvm::wasm
