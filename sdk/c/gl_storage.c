/* Storage over the genlayer_sdk imports. wasm32 only. */
#include <string.h>

#include "genlayer.h"

int gl_storage_read(const gl_slot* slot, uint32_t index, void* buf, uint32_t len) {
  return (int)gl_sdk_storage_read(slot->b, index, (uint8_t*)buf, len);
}

int gl_storage_write(const gl_slot* slot, uint32_t index, const void* buf, uint32_t len) {
  return (int)gl_sdk_storage_write(slot->b, index, (const uint8_t*)buf, len);
}

uint64_t gl_storage_read_u64(const gl_slot* slot, uint32_t index) {
  uint8_t b[8];
  if (gl_storage_read(slot, index, b, 8) != 0) return 0;
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

int gl_storage_write_u64(const gl_slot* slot, uint32_t index, uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = (uint8_t)(v >> (8 * i));
  return gl_storage_write(slot, index, b, 8);
}

int gl_storage_write_bytes(const gl_slot* slot, uint32_t offset, const void* data, uint32_t len) {
  uint8_t n[4];
  for (int i = 0; i < 4; ++i) n[i] = (uint8_t)(len >> (8 * i));
  gl_slot content;
  gl_slot_derive(slot, offset, &content);
  /* Content first: a refused length write then leaves the old value's length, never a length
   * that claims bytes that were not written. */
  int e = gl_storage_write(&content, 0, data, len);
  return e ? e : gl_storage_write(slot, offset, n, 4);
}

int gl_storage_read_bytes(const gl_slot* slot, uint32_t offset, gl_buf* out) {
  uint8_t n[4];
  int e = gl_storage_read(slot, offset, n, 4);
  if (e) return e;
  uint32_t len = (uint32_t)n[0] | ((uint32_t)n[1] << 8) | ((uint32_t)n[2] << 16) | ((uint32_t)n[3] << 24);
  if (len == 0) return 0;
  gl_slot content;
  gl_slot_derive(slot, offset, &content);
  size_t at = out->len;
  gl_buf_append(out, NULL, len);
  if (out->oom) return GL_ENOMEM;
  e = gl_storage_read(&content, 0, out->data + at, len);
  if (e) out->len = at;
  return e;
}
