/* fee_probe: the charges a contract makes, as tests/executor/fees_test.cc drives them.
 *   {"": "calls", "args": [[request, ...]]}  gl_call(request) for each, in order; returns the
 *                                            answer codes [ret, ...] (a charge that ends the VM
 *                                            ends the run instead)
 *   {"": "write", "args": [data]}            storage_write(data) at index 0 of one slot
 *   {"": "nondet", "args": [data]}           one RunNondet block whose leader returns `data`
 *                                            (bytes) and whose validator agrees; returns the
 *                                            entry the contract got
 */
#include <stdint.h>
#include <string.h>

#include "genlayer.h"

static void echo_leader(const uint8_t* data, size_t len) {
  gl_buf out = {0};
  gl_enc_bytes(&out, data, len);
  gl_return(&out);
}

static int agree(const uint8_t* data, size_t len, const uint8_t* leader, size_t leader_len) {
  (void)data;
  (void)len;
  (void)leader;
  (void)leader_len;
  return 1;
}

static const gl_nondet_block blocks[] = {{echo_leader, agree}};

/* The single argument, which must be of `kind`. */
static gl_item one_arg(const gl_message* m, gl_kind kind, const char* what) {
  gl_reader r = m->args;
  gl_item it;
  if (!m->has_args || gl_next(&r, &it) || it.kind != GL_K_ARRAY || it.n != 1 || gl_next(&r, &it) || it.kind != kind) {
    gl_user_error(what);
  }
  return it;
}

static void run(const gl_message* m) {
  if (m->is_init) gl_return(NULL);
  if (gl_method_is(m, "calls")) {
    gl_reader r = m->args;
    gl_item it;
    if (!m->has_args || gl_next(&r, &it) || it.kind != GL_K_ARRAY || it.n != 1 || gl_next(&r, &it) ||
        it.kind != GL_K_ARRAY) {
      gl_user_error("calls expects one array of requests");
    }
    size_t n = it.n;
    gl_buf out = {0};
    gl_enc_array(&out, n);
    for (size_t i = 0; i < n; ++i) {
      gl_item req;
      if (gl_next(&r, &req) || req.kind != GL_K_BYTES) gl_user_error("a request is not bytes");
      gl_buf b = {0};
      gl_buf_append(&b, req.data, req.n);
      uint32_t fd = 0;
      int e = gl_call_raw(&b, &fd);
      gl_buf_free(&b);
      gl_enc_u64(&out, (uint64_t)e);
    }
    gl_return(&out);
  }
  if (gl_method_is(m, "write")) {
    gl_item data = one_arg(m, GL_K_BYTES, "write expects bytes");
    gl_slot root, slot;
    gl_contract_slot(&root);
    gl_slot_derive(&root, 100, &slot);
    if (gl_storage_write(&slot, 0, data.data, (uint32_t)data.n) != GL_SUCCESS) gl_user_error("write refused");
    gl_return(NULL);
  }
  if (gl_method_is(m, "nondet")) {
    gl_item data = one_arg(m, GL_K_BYTES, "nondet expects bytes");
    gl_buf res = {0};
    if (gl_run_nondet(0, data.data, data.n, &res) != 0) gl_user_error("RunNondet refused");
    gl_buf out = {0};
    gl_enc_bytes(&out, res.data, res.len);
    gl_return(&out);
  }
  gl_user_error("unknown method");
}

GL_CONTRACT_WITH_NONDET(run, blocks)
