/* caller: calls another contract's "get" and returns what it returned.
 *   {"": "call_get", "args": [address]} -> the callee's Return value;
 *                                          UserError "callee failed" otherwise */
#include "genlayer.h"

static void run(const gl_message* m) {
  if (m->is_init) gl_return(NULL);
  if (!gl_method_is(m, "call_get")) gl_user_error("unknown method");
  gl_args a;
  gl_args_open(m, 1, 1, &a);
  uint8_t callee[20];
  gl_arg_address(&a, callee);
  gl_args_check(&a);
  gl_buf call = {0};
  gl_enc_map(&call, 1);
  gl_enc_key(&call, "");
  gl_enc_cstr(&call, "get");
  gl_buf result = {0};
  int e = gl_call_contract(callee, &call, 0, &result);
  gl_buf_free(&call);
  if (e != GL_SUCCESS) gl_user_error("call refused");
  /* [result_code][data]: 0 = Return with calldata data. */
  if (result.len < 1 || result.data[0] != 0) gl_user_error("callee failed");
  gl_buf value = {0};
  gl_buf_append(&value, result.data + 1, result.len - 1);
  gl_return(&value);
}

GL_CONTRACT(run)
