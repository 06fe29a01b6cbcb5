/* counter: a u64 in the contract's storage.
 *   deploy: {}                      -> stores 0
 *   {"": "get"}                     -> the value
 *   {"": "increment"}               -> adds one, returns the new value
 *   {"": "add", "args": [n]}        -> adds n (a u64), returns the new value */
#include "genlayer.h"

static void run(const gl_message* m) {
  gl_slot s;
  gl_contract_slot(&s);
  if (m->is_init) {
    gl_storage_write_u64(&s, 0, 0);
    gl_return(NULL);
  }
  uint64_t v = gl_storage_read_u64(&s, 0);
  if (gl_method_is(m, "get")) {
    gl_buf out = {0};
    gl_enc_u64(&out, v);
    gl_return(&out);
  }
  if (gl_method_is(m, "increment") || gl_method_is(m, "add")) {
    uint64_t n = 1;
    if (gl_method_is(m, "add")) {
      gl_args a;
      gl_args_open(m, 1, 1, &a);
      n = gl_arg_u64(&a);
      gl_args_check(&a);
    }
    if (v + n < v) gl_user_error("counter overflow");
    v += n;
    if (gl_storage_write_u64(&s, 0, v) != GL_SUCCESS) gl_user_error("storage write refused");
    gl_buf out = {0};
    gl_enc_u64(&out, v);
    gl_return(&out);
  }
  gl_user_error("unknown method");
}

GL_CONTRACT(run)
