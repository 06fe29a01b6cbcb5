/* malicious: contracts that try to hurt the executor, each method one attack (the tests in
 * tests/executor/malicious_test.cc say what each must end in).
 *   {"": "grow"}            memory.grow until refused; returns the pages it ended with
 *   {"": "storage_bomb"}    grows memory to the budget, then writes new storage pages forever
 *   {"": "size", "args": [b]} returns the length of the bytes b (for huge calldata)
 *   {"": "garbage"}         gl_call with garbage requests; returns the four error codes */
#include "genlayer.h"

#include <string.h>

/* Grows memory by `step` pages until memory.grow refuses; returns the final size in pages. */
static uint64_t grow_to_budget(void) {
  size_t step = 4096;
  while (step > 0) {
    if (__builtin_wasm_memory_grow(0, step) == (size_t)-1) step /= 2;
  }
  return (uint64_t)__builtin_wasm_memory_size(0);
}

static void run(const gl_message* m) {
  if (m->is_init) gl_return(NULL);
  if (gl_method_is(m, "grow")) {
    gl_buf out = {0};
    gl_enc_u64(&out, grow_to_budget());
    gl_return(&out);
  }
  if (gl_method_is(m, "storage_bomb")) {
    /* What memory left of the RAM budget is a few hundred storage pages. */
    grow_to_budget();
    gl_slot s;
    gl_contract_slot(&s);
    uint8_t page[32];
    memset(page, 0xab, sizeof(page));
    for (uint32_t i = 0;; ++i) {
      if (gl_sdk_storage_write(s.b, i * 32u, page, 32) != GL_SUCCESS) gl_user_error("write refused");
      if (i == 0xffffffffu / 32u) gl_user_error("wrote the whole slot");
    }
  }
  if (gl_method_is(m, "size")) {
    gl_reader r = m->args;
    gl_item it;
    if (!m->has_args || gl_next(&r, &it) || it.kind != GL_K_ARRAY || it.n != 1 || gl_next(&r, &it) ||
        it.kind != GL_K_BYTES) {
      gl_user_error("size expects one bytes argument");
    }
    gl_buf out = {0};
    gl_enc_u64(&out, it.n);
    gl_return(&out);
  }
  if (gl_method_is(m, "garbage")) {
    uint32_t fd = 0;
    /* Not calldata: a ULEB128 that never ends. */
    static const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    uint32_t not_calldata = gl_sdk_gl_call(junk, sizeof(junk), &fd);
    /* A request buffer outside linear memory. */
    uint32_t out_of_memory = gl_sdk_gl_call((const uint8_t*)0xfffffff0u, 64, &fd);
    /* Well-formed calldata naming no message. */
    gl_buf unknown = {0};
    gl_enc_map(&unknown, 1);
    gl_enc_key(&unknown, "NoSuchMessage");
    gl_enc_null(&unknown);
    uint32_t unknown_message = gl_sdk_gl_call(unknown.data, (uint32_t)unknown.len, &fd);
    /* A known message with a payload of the wrong shape. */
    gl_buf shape = {0};
    gl_enc_map(&shape, 1);
    gl_enc_key(&shape, "EmitEvent");
    gl_enc_cstr(&shape, "not a map");
    uint32_t wrong_shape = gl_sdk_gl_call(shape.data, (uint32_t)shape.len, &fd);
    gl_buf out = {0};
    gl_enc_array(&out, 4);
    gl_enc_u64(&out, not_calldata);
    gl_enc_u64(&out, out_of_memory);
    gl_enc_u64(&out, unknown_message);
    gl_enc_u64(&out, wrong_shape);
    gl_return(&out);
  }
  gl_user_error("unknown method");
}

GL_CONTRACT(run)
