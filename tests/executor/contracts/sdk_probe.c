/* sdk_probe: the C SDK's own behaviour inside a real run (tests/executor/sdk_c_test.cc).
 *   {"": "forget"}                                   returns from run() without a result
 *   {"": "forget_block"}                             a nondet block whose leader returns without one
 *   {"": "typed", "args": [address, u64, i64, str, bytes, bool], "kwargs": {"memo"?: str}}
 *                                                    -> [address, u64, i64, str, bytes, bool, memo|null]
 *   {"": "store", "args": [bytes]}                   stores bytes with gl_storage_write_bytes at
 *                                                    offset 4 of the contract slot
 *   {"": "load"}                                     -> the bytes gl_storage_read_bytes reads back
 */
#include "genlayer.h"

static void forgetful_leader(const uint8_t* data, size_t len) {
  (void)data;
  (void)len;
}

static int agree(const uint8_t* data, size_t len, const uint8_t* leader, size_t leader_len) {
  (void)data;
  (void)len;
  (void)leader;
  (void)leader_len;
  return 1;
}

static const gl_nondet_block blocks[] = {{forgetful_leader, agree}};

static void typed(const gl_message* m) {
  gl_args a;
  gl_args_open(m, 6, 6, &a);
  uint8_t who[20];
  gl_arg_address(&a, who);
  uint64_t u = gl_arg_u64(&a);
  int64_t i = gl_arg_i64(&a);
  size_t str_len = 0, bytes_len = 0;
  const char* str = gl_arg_str(&a, &str_len);
  const uint8_t* bytes = gl_arg_bytes(&a, &bytes_len);
  int flag = gl_arg_bool(&a);
  gl_args_check(&a);
  gl_args kw;
  size_t memo_len = 0;
  const char* memo = NULL;
  if (gl_kwarg_open(m, "memo", &kw)) memo = gl_arg_str(&kw, &memo_len);
  gl_args_check(&kw);
  gl_buf out = {0};
  gl_enc_array(&out, 7);
  gl_enc_address(&out, who);
  gl_enc_u64(&out, u);
  gl_enc_i64(&out, i);
  gl_enc_str(&out, str, str_len);
  gl_enc_bytes(&out, bytes, bytes_len);
  gl_enc_bool(&out, flag);
  if (memo) {
    gl_enc_str(&out, memo, memo_len);
  } else {
    gl_enc_null(&out);
  }
  gl_return(&out);
}

static void run(const gl_message* m) {
  if (m->is_init) gl_return(NULL);
  if (gl_method_is(m, "forget")) return;
  if (gl_method_is(m, "forget_block")) {
    gl_buf res = {0};
    if (gl_run_nondet(0, "", 0, &res) != 0) gl_user_error("RunNondet refused");
    gl_buf out = {0};
    gl_enc_bytes(&out, res.data, res.len);
    gl_return(&out);
  }
  if (gl_method_is(m, "typed")) typed(m);
  gl_slot s;
  gl_contract_slot(&s);
  if (gl_method_is(m, "store")) {
    gl_args a;
    gl_args_open(m, 1, 1, &a);
    size_t n = 0;
    const uint8_t* p = gl_arg_bytes(&a, &n);
    gl_args_check(&a);
    if (gl_storage_write_bytes(&s, 4, p, (uint32_t)n) != GL_SUCCESS) gl_user_error("storage write refused");
    gl_return(NULL);
  }
  if (gl_method_is(m, "load")) {
    gl_buf content = {0};
    if (gl_storage_read_bytes(&s, 4, &content) != GL_SUCCESS) gl_user_error("storage read refused");
    gl_buf out = {0};
    gl_enc_bytes(&out, content.data, content.len);
    gl_return(&out);
  }
  gl_user_error("unknown method");
}

GL_CONTRACT_WITH_NONDET(run, blocks)
