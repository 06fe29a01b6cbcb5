/* Slot derivation (spec 04-contract-interface/03-storage.rst, "Default Derivation Algorithm").
 * Native and wasm32: pure SHA3. */
#include <string.h>

#include "genlayer.h"

void gl_slot_derive(const gl_slot* slot, uint32_t offset, gl_slot* out) {
  uint8_t in[36];
  memcpy(in, slot->b, 32);
  for (int i = 0; i < 4; ++i) in[32 + i] = (uint8_t)(offset >> (8 * i));
  gl_sha3_256(in, sizeof(in), out->b);
}

void gl_slot_of_key(const gl_slot* slot, const void* key, size_t key_len, gl_slot* out) {
  uint8_t in[32 + 64];
  if (key_len > 64) key_len = 64;
  memcpy(in, slot->b, 32);
  memcpy(in + 32, key, key_len);
  gl_sha3_256(in, 32 + key_len, out->b);
}

void gl_contract_slot(gl_slot* out) {
  gl_slot root;
  memset(&root, 0, sizeof(root));
  gl_slot_derive(&root, 1, out);
}
