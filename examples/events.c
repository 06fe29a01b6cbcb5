/* events: emits an event and posts a message back to the sender.
 *   {"": "notify", "args": [text]} -> emits topic sha3("Notified") with blob {"text": text},
 *                                     posts {"": "on_notified", "args": [text]} to the sender
 *                                     (on "finalized", value 0), returns null
 *   {"": "pay", "args": [amount]}   -> posts {"": "on_paid"} with value `amount` (u64) to the
 *                                     sender; returns the contract's balance afterwards (u256);
 *                                     UserError "insufficient contract balance" */
#include <string.h>

#include "genlayer.h"

static void pay(const gl_message* m) {
  gl_args a;
  gl_args_open(m, 1, 1, &a);
  uint64_t amount = gl_arg_u64(&a);
  gl_args_check(&a);
  uint8_t value[32];
  memset(value, 0, sizeof(value));
  for (int i = 0; i < 8; ++i) value[i] = (uint8_t)(amount >> (8 * i));
  gl_buf call = {0};
  gl_enc_map(&call, 1);
  gl_enc_key(&call, "");
  gl_enc_cstr(&call, "on_paid");
  int e = gl_post_message(m->sender_address, &call, value, "finalized");
  gl_buf_free(&call);
  if (e == GL_INBALANCE) gl_user_error("insufficient contract balance");
  if (e != GL_SUCCESS) gl_user_error("post refused");
  uint8_t balance[32];
  if (gl_sdk_get_self_balance(balance) != GL_SUCCESS) gl_user_error("balance refused");
  gl_buf out = {0};
  gl_enc_u256(&out, balance);
  gl_return(&out);
}

static void run(const gl_message* m) {
  if (m->is_init) gl_return(NULL);
  if (gl_method_is(m, "pay")) pay(m);
  if (!gl_method_is(m, "notify")) gl_user_error("unknown method");
  gl_args a;
  gl_args_open(m, 1, 1, &a);
  size_t text_len = 0;
  const char* text = gl_arg_str(&a, &text_len);
  gl_args_check(&a);

  uint8_t topics[1][32];
  gl_sha3_256("Notified", 8, topics[0]);
  gl_buf blob = {0};
  gl_enc_map(&blob, 1);
  gl_enc_key(&blob, "text");
  gl_enc_str(&blob, text, text_len);
  int e = gl_emit_event((const uint8_t(*)[32])topics, 1, &blob);
  gl_buf_free(&blob);
  if (e != GL_SUCCESS) gl_user_error("emit refused");

  gl_buf call = {0};
  gl_enc_map(&call, 2);
  gl_enc_key(&call, "");
  gl_enc_cstr(&call, "on_notified");
  gl_enc_key(&call, "args");
  gl_enc_array(&call, 1);
  gl_enc_str(&call, text, text_len);
  uint8_t zero[32];
  memset(zero, 0, sizeof(zero));
  e = gl_post_message(m->sender_address, &call, zero, "finalized");
  gl_buf_free(&call);
  if (e != GL_SUCCESS) gl_user_error("post refused");
  gl_return(NULL);
}

GL_CONTRACT(run)
