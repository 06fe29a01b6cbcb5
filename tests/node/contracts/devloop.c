/* devloop: what a contract developer's loop runs into (tests/node: votes, failed deploys,
 * timeouts, readers during a long write, arguments).
 *   deploy: no arguments                   -> null; any argument: UserError "no deploy arguments"
 *   {"": "disagree"}                       -> two non-deterministic blocks; the validator of
 *                                            block 1 always rejects the leader's answer, so
 *                                            every validator votes disagree naming call_no 1
 *   {"": "agree"}                          -> the same two blocks, both validators accept
 *   {"": "forever"}                        -> never returns (deterministic loop): a timeout
 *   {"": "echo", "args": [x]}              -> x, whatever value it is */
#include "genlayer.h"

static void answer_leader(const uint8_t* data, size_t len) {
  (void)data;
  (void)len;
  gl_buf out = {0};
  gl_enc_u64(&out, 1);
  gl_return(&out);
}

static int accept_validator(const uint8_t* data, size_t len, const uint8_t* leader, size_t leader_len) {
  (void)data;
  (void)len;
  (void)leader;
  (void)leader_len;
  return 1;
}

static int reject_validator(const uint8_t* data, size_t len, const uint8_t* leader, size_t leader_len) {
  (void)data;
  (void)len;
  (void)leader;
  (void)leader_len;
  return 0;
}

static const gl_nondet_block blocks[] = {
    {answer_leader, accept_validator},
    {answer_leader, reject_validator},
    {answer_leader, accept_validator},
};

/* The reader at the first element of a one-element args array, or a UserError. */
static gl_reader one_arg(const gl_message* m) {
  gl_reader r = m->args;
  gl_item it;
  if (!m->has_args || gl_next(&r, &it) || it.kind != GL_K_ARRAY || it.n != 1) gl_user_error("expects one argument");
  return r;
}

static void run(const gl_message* m) {
  if (m->is_init) {
    gl_reader r = m->args;
    gl_item it;
    if (m->has_args && gl_next(&r, &it) == 0 && it.kind == GL_K_ARRAY && it.n > 0) gl_user_error("no deploy arguments");
    gl_return(NULL);
  }
  if (gl_method_is(m, "disagree") || gl_method_is(m, "agree")) {
    gl_buf res = {0};
    if (gl_run_nondet(0, NULL, 0, &res) != 0) gl_user_error("RunNondet refused");
    gl_buf_free(&res);
    if (gl_run_nondet(gl_method_is(m, "disagree") ? 1 : 2, NULL, 0, &res) != 0) gl_user_error("RunNondet refused");
    gl_buf out = {0};
    gl_enc_bytes(&out, res.data, res.len);
    gl_return(&out);
  }
  if (gl_method_is(m, "forever")) {
    volatile uint64_t i = 0;
    for (;;) ++i;
  }
  if (gl_method_is(m, "echo")) {
    gl_reader r = one_arg(m);
    const uint8_t* start = r.p;
    if (gl_skip(&r) != 0) gl_user_error("bad argument");
    gl_buf out = {0};
    gl_buf_append(&out, start, (size_t)(r.p - start));
    gl_return(&out);
  }
  gl_user_error("unknown method");
}

GL_CONTRACT_WITH_NONDET(run, blocks)
