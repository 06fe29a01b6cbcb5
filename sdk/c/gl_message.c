/* The startup message: parsing the executor's map and the call-convention entry inside it.
 * Native and wasm32 (no imports), so the SDK's tests run it natively. */
#include <string.h>

#include "genlayer.h"

static int copy_address(gl_reader* r, uint8_t out[20]) {
  gl_item it;
  int e = gl_next(r, &it);
  if (e) return e;
  if (it.kind != GL_K_ADDRESS) return GL_EDECODE;
  memcpy(out, it.data, 20);
  return 0;
}

int gl_message_parse(const void* data, size_t len, gl_message* m) {
  gl_reader r;
  gl_item it;
  memset(m, 0, sizeof(*m));
  gl_reader_init(&r, data, len);
  int e = gl_next(&r, &it);
  if (e || it.kind != GL_K_MAP) return GL_EDECODE;
  for (uint64_t i = 0; i < it.n; ++i) {
    const char* k;
    size_t kn;
    if ((e = gl_key(&r, &k, &kn))) return e;
#define KEY_IS(s) (kn == sizeof(s) - 1 && memcmp(k, s, kn) == 0)
    if (KEY_IS("contract_address")) {
      e = copy_address(&r, m->contract_address);
    } else if (KEY_IS("sender_address")) {
      e = copy_address(&r, m->sender_address);
    } else if (KEY_IS("origin_address")) {
      e = copy_address(&r, m->origin_address);
    } else if (KEY_IS("value")) {
      gl_item v;
      e = gl_next(&r, &v);
      if (!e) e = gl_item_u256(&v, m->value);
    } else if (KEY_IS("is_init")) {
      gl_item v;
      e = gl_next(&r, &v);
      if (!e && v.kind != GL_K_TRUE && v.kind != GL_K_FALSE) e = GL_EDECODE;
      m->is_init = v.kind == GL_K_TRUE;
    } else if (KEY_IS("entry_kind")) {
      gl_item v;
      e = gl_next(&r, &v);
      if (!e && (v.kind != GL_K_UINT || v.big)) e = GL_EDECODE;
      m->entry_kind = (uint32_t)v.u;
    } else if (KEY_IS("entry_data")) {
      gl_item v;
      e = gl_next(&r, &v);
      if (!e && v.kind != GL_K_BYTES) e = GL_EDECODE;
      m->entry_data = v.data;
      m->entry_len = (size_t)v.n;
    } else if (KEY_IS("entry_stage_data")) {
      /* null, or {"leader_result": [code][data]} in a validator's block (the public executor's
       * fork_leader); other keys of that map are skipped. */
      gl_item v;
      e = gl_next(&r, &v);
      if (!e && v.kind == GL_K_MAP) {
        for (uint64_t i = 0; !e && i < v.n; ++i) {
          const char* k = NULL;
          size_t kn = 0;
          e = gl_key(&r, &k, &kn);
          if (!e && kn == 13 && memcmp(k, "leader_result", 13) == 0) {
            gl_item b;
            e = gl_next(&r, &b);
            if (!e && b.kind != GL_K_BYTES) e = GL_EDECODE;
            if (!e) {
              m->stage_data = b.data;
              m->stage_len = (size_t)b.n;
            }
          } else if (!e) {
            e = gl_skip(&r);
          }
        }
      } else if (!e && v.kind != GL_K_NULL) {
        e = GL_EDECODE;
      }
    } else {
      e = gl_skip(&r);
    }
#undef KEY_IS
    if (e) return e;
  }
  if (!m->entry_data) return GL_EDECODE;
  /* A consensus stage's entry_data is the block's own data, not a call. */
  if (m->entry_kind == 2) return 0;
  /* The entry: {"": method, "args": [...], "kwargs": {...}}. */
  gl_reader_init(&r, m->entry_data, m->entry_len);
  if ((e = gl_next(&r, &it)) || it.kind != GL_K_MAP) return GL_EDECODE;
  for (uint64_t i = 0; i < it.n; ++i) {
    const char* k;
    size_t kn;
    if ((e = gl_key(&r, &k, &kn))) return e;
    if (kn == 0) {
      gl_item v;
      if ((e = gl_next(&r, &v)) || v.kind != GL_K_STR) return GL_EDECODE;
      m->method = (const char*)v.data;
      m->method_len = (size_t)v.n;
    } else if (kn == 4 && memcmp(k, "args", 4) == 0) {
      m->has_args = 1;
      m->args = r;
      if ((e = gl_skip(&r))) return e;
    } else if (kn == 6 && memcmp(k, "kwargs", 6) == 0) {
      m->has_kwargs = 1;
      m->kwargs = r;
      if ((e = gl_skip(&r))) return e;
    } else {
      if ((e = gl_skip(&r))) return e;
    }
  }
  return 0;
}

int gl_method_is(const gl_message* m, const char* name) {
  size_t n = strlen(name);
  return m->method && m->method_len == n && memcmp(m->method, name, n) == 0;
}

