/* Storage helpers, the entry, and the gl_call wrappers. wasm32 only (uses the imports). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int gl_method_is(const gl_message* m, const char* name) {
  size_t n = strlen(name);
  return m->method && m->method_len == n && memcmp(m->method, name, n) == 0;
}

int gl_read_fd(uint32_t fd, gl_buf* out) {
  uint8_t chunk[4096];
  for (;;) {
    ssize_t r = read((int)fd, chunk, sizeof(chunk));
    if (r < 0) {
      close((int)fd);
      return GL_IO;
    }
    if (r == 0) break;
    gl_buf_append(out, chunk, (size_t)r);
  }
  close((int)fd);
  return out->oom ? GL_ENOMEM : 0;
}

static int read_stdin(gl_buf* in) { return gl_read_fd(0, in); }

static int copy_address(gl_reader* r, uint8_t out[20]) {
  gl_item it;
  int e = gl_next(r, &it);
  if (e) return e;
  if (it.kind != GL_K_ADDRESS) return GL_EDECODE;
  memcpy(out, it.data, 20);
  return 0;
}

static int parse_message(const gl_buf* in, gl_message* m) {
  gl_reader r;
  gl_item it;
  gl_reader_init(&r, in->data, in->len);
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
    } else {
      if ((e = gl_skip(&r))) return e;
    }
  }
  return 0;
}

int gl_run_entry(gl_entry_fn fn) {
  gl_buf in = {0};
  gl_message m;
  memset(&m, 0, sizeof(m));
  if (read_stdin(&in) != 0) gl_user_error("cannot read the startup message");
  if (parse_message(&in, &m) != 0) gl_user_error("malformed startup message");
  fn(&m);
  gl_return(NULL);
}

static int call_wrapped(const char* name, const gl_buf* body, uint32_t* fd);

/* A block's entry_data: {"block": index, "data": bytes}. */
static int parse_block(const gl_message* m, uint64_t* index, const uint8_t** data, size_t* len) {
  gl_reader r;
  gl_item it;
  gl_reader_init(&r, m->entry_data, m->entry_len);
  if (gl_map_find(&r, "block") || gl_next(&r, &it) || it.kind != GL_K_UINT || it.big) return GL_EDECODE;
  *index = it.u;
  gl_reader_init(&r, m->entry_data, m->entry_len);
  if (gl_map_find(&r, "data") || gl_next(&r, &it) || it.kind != GL_K_BYTES) return GL_EDECODE;
  *data = it.data;
  *len = (size_t)it.n;
  return 0;
}

int gl_run_entry_nondet(gl_entry_fn fn, const gl_nondet_block* blocks, size_t n) {
  gl_buf in = {0};
  gl_message m;
  memset(&m, 0, sizeof(m));
  if (read_stdin(&in) != 0) gl_user_error("cannot read the startup message");
  if (parse_message(&in, &m) != 0) gl_user_error("malformed startup message");
  if (m.entry_kind != 2) {
    fn(&m);
    gl_return(NULL);
  }
  uint64_t index = 0;
  const uint8_t* data = NULL;
  size_t len = 0;
  if (parse_block(&m, &index, &data, &len) || index >= n) gl_user_error("malformed nondet block");
  if (!m.stage_data) {
    blocks[index].leader(data, len);
    gl_return(NULL);
  }
  gl_buf vote = {0};
  gl_enc_bool(&vote, blocks[index].validator(data, len, m.stage_data, m.stage_len) != 0);
  gl_return(&vote);
}

int gl_run_nondet(uint32_t index, const void* data, size_t len, gl_buf* out) {
  gl_buf block = {0};
  gl_enc_map(&block, 2);
  gl_enc_key(&block, "block");
  gl_enc_u64(&block, index);
  gl_enc_key(&block, "data");
  gl_enc_bytes(&block, data, len);
  gl_buf body = {0};
  gl_enc_map(&body, 2);
  gl_enc_key(&body, "data_leader");
  gl_enc_bytes(&body, block.data, block.len);
  gl_enc_key(&body, "data_validator");
  gl_enc_bytes(&body, block.data, block.len);
  gl_buf_free(&block);
  uint32_t fd = 0;
  int e = call_wrapped("RunNondet", &body, &fd);
  gl_buf_free(&body);
  if (e) return e;
  return gl_read_fd(fd, out);
}

int gl_call_raw(const gl_buf* request, uint32_t* result_fd) {
  if (request->oom) return GL_ENOMEM;
  uint32_t fd = 0xffffffffu;
  uint32_t e = gl_sdk_gl_call(request->data, (uint32_t)request->len, &fd);
  if (result_fd) {
    *result_fd = fd;
  } else if (e == 0 && fd != 0xffffffffu) {
    close((int)fd);
  }
  return (int)e;
}

/* Builds {name: <body>} where body is given encoded. */
static int call_wrapped(const char* name, const gl_buf* body, uint32_t* fd) {
  gl_buf req = {0};
  gl_enc_map(&req, 1);
  gl_enc_key(&req, name);
  gl_enc_raw(&req, body);
  int e = gl_call_raw(&req, fd);
  gl_buf_free(&req);
  return e;
}

void gl_return(const gl_buf* value) {
  gl_buf body = {0};
  if (value) {
    gl_enc_raw(&body, value);
  } else {
    gl_enc_null(&body);
  }
  call_wrapped("Return", &body, NULL);
  /* gl_call(Return) does not come back; if it does, stop anyway. */
  _exit(1);
}

void gl_user_error(const char* message) {
  gl_buf body = {0};
  gl_enc_cstr(&body, message);
  call_wrapped("UserError", &body, NULL);
  _exit(1);
}

int gl_trace(const char* message) {
  gl_buf body = {0};
  gl_enc_map(&body, 1);
  gl_enc_key(&body, "Message");
  gl_enc_cstr(&body, message);
  int e = call_wrapped("Trace", &body, NULL);
  gl_buf_free(&body);
  return e;
}

int gl_emit_event(const uint8_t (*topics)[32], size_t n, const gl_buf* blob) {
  gl_buf body = {0};
  gl_enc_map(&body, 2);
  gl_enc_key(&body, "blob");
  gl_enc_raw(&body, blob);
  gl_enc_key(&body, "topics");
  gl_enc_array(&body, n);
  for (size_t i = 0; i < n; ++i) gl_enc_bytes(&body, topics[i], 32);
  int e = call_wrapped("EmitEvent", &body, NULL);
  gl_buf_free(&body);
  return e;
}

int gl_post_message(const uint8_t address[20], const gl_buf* calldata, const uint8_t value_le[32],
                    const char* on) {
  gl_buf body = {0};
  gl_enc_map(&body, 4);
  gl_enc_key(&body, "address");
  gl_enc_address(&body, address);
  gl_enc_key(&body, "calldata");
  gl_enc_raw(&body, calldata);
  gl_enc_key(&body, "on");
  gl_enc_cstr(&body, on);
  gl_enc_key(&body, "value");
  gl_enc_u256(&body, value_le);
  int e = call_wrapped("PostMessage", &body, NULL);
  gl_buf_free(&body);
  return e;
}

int gl_deploy_contract(const gl_buf* calldata, const void* code, size_t code_len, const uint8_t value_le[32],
                       const char* on, const uint8_t salt_nonce_le[32]) {
  gl_buf body = {0};
  gl_enc_map(&body, 5);
  gl_enc_key(&body, "calldata");
  gl_enc_raw(&body, calldata);
  gl_enc_key(&body, "code");
  gl_enc_bytes(&body, code, code_len);
  gl_enc_key(&body, "on");
  gl_enc_cstr(&body, on);
  gl_enc_key(&body, "salt_nonce");
  gl_enc_u256(&body, salt_nonce_le);
  gl_enc_key(&body, "value");
  gl_enc_u256(&body, value_le);
  int e = call_wrapped("DeployContract", &body, NULL);
  gl_buf_free(&body);
  return e;
}

int gl_eth_send(const uint8_t address[20], const void* calldata, size_t len, const uint8_t value_le[32]) {
  gl_buf body = {0};
  gl_enc_map(&body, 3);
  gl_enc_key(&body, "address");
  gl_enc_address(&body, address);
  gl_enc_key(&body, "calldata");
  gl_enc_bytes(&body, calldata, len);
  gl_enc_key(&body, "value");
  gl_enc_u256(&body, value_le);
  int e = call_wrapped("EthSend", &body, NULL);
  gl_buf_free(&body);
  return e;
}

int gl_eth_call(const uint8_t address[20], const void* calldata, size_t len, gl_buf* out) {
  gl_buf body = {0};
  gl_enc_map(&body, 2);
  gl_enc_key(&body, "address");
  gl_enc_address(&body, address);
  gl_enc_key(&body, "calldata");
  gl_enc_bytes(&body, calldata, len);
  uint32_t fd = 0;
  int e = call_wrapped("EthCall", &body, &fd);
  gl_buf_free(&body);
  if (e) return e;
  return gl_read_fd(fd, out);
}

int gl_call_contract(const uint8_t address[20], const gl_buf* calldata, uint32_t state, gl_buf* out) {
  gl_buf body = {0};
  gl_enc_map(&body, 3);
  gl_enc_key(&body, "address");
  gl_enc_address(&body, address);
  gl_enc_key(&body, "calldata");
  gl_enc_raw(&body, calldata);
  gl_enc_key(&body, "state");
  gl_enc_u64(&body, state);
  uint32_t fd = 0;
  int e = call_wrapped("CallContract", &body, &fd);
  gl_buf_free(&body);
  if (e) return e;
  return gl_read_fd(fd, out);
}

int gl_sandbox(const gl_buf* calldata, int allow_write_storage, int allow_send_messages, gl_buf* out) {
  gl_buf body = {0};
  gl_enc_map(&body, 5);
  gl_enc_key(&body, "allow_register_runners");
  gl_enc_bool(&body, 0);
  gl_enc_key(&body, "allow_send_messages");
  gl_enc_bool(&body, allow_send_messages);
  gl_enc_key(&body, "allow_write_storage");
  gl_enc_bool(&body, allow_write_storage);
  gl_enc_key(&body, "data");
  gl_enc_bytes(&body, calldata->data, calldata->len);
  gl_enc_key(&body, "runner");
  gl_enc_cstr(&body, "contract");
  uint32_t fd = 0;
  int e = call_wrapped("Sandbox", &body, &fd);
  gl_buf_free(&body);
  if (e) return e;
  return gl_read_fd(fd, out);
}
