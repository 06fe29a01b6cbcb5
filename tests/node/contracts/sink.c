/* sink: accepts every message and the value it carries (tests/node: a posted message's value
 * must reach a contract target with the follow-up's accepted Return).
 *   any call -> returns its own balance (u256) as get_self_balance sees it */
#include "genlayer.h"

static void run(const gl_message* m) {
  if (m->is_init) gl_return(NULL);
  uint8_t balance[32];
  if (gl_sdk_get_self_balance(balance) != GL_SUCCESS) gl_user_error("balance refused");
  gl_buf out = {0};
  gl_enc_u256(&out, balance);
  gl_return(&out);
}

GL_CONTRACT(run)
