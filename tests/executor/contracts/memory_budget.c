/* memory_budget: a run's bytes against its one RAM budget (tests/executor/memory_budget_test.cc
 * and bench/memory_budget.sh measure the executor's peak RSS for each).
 *   {"": "read", "args": [n]}      storage_read of n bytes of this contract's slot into memory
 *                                  grown for it; returns n
 *   {"": "write", "args": [n]}     storage_write of n bytes (0x5a) into this contract's slot; returns n
 *   {"": "nest", "args": [d, n, t]} grows memory by n bytes (and touches them when t is 1), then
 *                                  (d > 0) runs nest(d - 1, n, t) in a Sandbox; returns how many
 *                                  levels got their memory (a level the budget refuses counts 0
 *                                  and goes no deeper)
 *   {"": "ret", "args": [n]}       returns n bytes (0x5a) */
#include "genlayer.h"

#include <string.h>

/* n more bytes of linear memory (touched when `touch`); NULL when memory.grow refuses. */
static uint8_t* take_memory(uint64_t n, int touch) {
  size_t pages = (size_t)((n + 65535) / 65536);
  size_t old = __builtin_wasm_memory_grow(0, pages);
  if (old == (size_t)-1) return NULL;
  uint8_t* p = (uint8_t*)(old * 65536);
  if (touch) memset(p, 0x5a, (size_t)n);
  return p;
}

static void run(const gl_message* m) {
  if (m->is_init) gl_return(NULL);
  gl_slot s;
  gl_contract_slot(&s);
  if (gl_method_is(m, "read") || gl_method_is(m, "write") || gl_method_is(m, "ret")) {
    gl_args a;
    gl_args_open(m, 1, 1, &a);
    uint64_t n = gl_arg_u64(&a);
    gl_args_check(&a);
    uint8_t* buf = take_memory(n, 1);
    if (!buf) gl_user_error("memory refused");
    gl_buf out = {0};
    if (gl_method_is(m, "ret")) {
      gl_enc_bytes(&out, buf, (size_t)n);
      gl_return(&out);
    }
    int rc = gl_method_is(m, "read") ? gl_sdk_storage_read(s.b, 0, buf, (uint32_t)n)
                                     : gl_sdk_storage_write(s.b, 0, buf, (uint32_t)n);
    if (rc != GL_SUCCESS) gl_user_error("storage refused");
    gl_enc_u64(&out, n);
    gl_return(&out);
  }
  if (gl_method_is(m, "nest")) {
    gl_args a;
    gl_args_open(m, 3, 3, &a);
    uint64_t depth = gl_arg_u64(&a);
    uint64_t n = gl_arg_u64(&a);
    int touch = gl_arg_u64(&a) == 1;
    gl_args_check(&a);
    gl_buf out = {0};
    if (!take_memory(n, touch)) {
      gl_enc_u64(&out, 0);
      gl_return(&out);
    }
    uint64_t levels = 1;
    if (depth > 0) {
      gl_buf call = {0};
      gl_enc_map(&call, 2);
      gl_enc_key(&call, "");
      gl_enc_cstr(&call, "nest");
      gl_enc_key(&call, "args");
      gl_enc_array(&call, 3);
      gl_enc_u64(&call, depth - 1);
      gl_enc_u64(&call, n);
      gl_enc_u64(&call, (uint64_t)touch);
      gl_buf res = {0};
      if (gl_sandbox(&call, 0, 0, &res) != GL_SUCCESS || res.len < 2 || res.data[0] != 0) {
        gl_user_error("sandbox failed");
      }
      gl_reader r;
      gl_item it;
      gl_reader_init(&r, res.data + 1, res.len - 1);
      if (gl_next(&r, &it) || it.kind != GL_K_UINT) gl_user_error("sandbox answered no count");
      levels += it.u;
    }
    gl_enc_u64(&out, levels);
    gl_return(&out);
  }
  gl_user_error("unknown method");
}

GL_CONTRACT(run)
