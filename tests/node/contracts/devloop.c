/* devloop: what a contract developer's loop runs into (tests/node: votes, failed deploys,
 * timeouts, readers during a long write, arguments).
 *   deploy: no arguments                   -> null; any argument: UserError "no deploy arguments"
 *   {"": "disagree"}                       -> two non-deterministic blocks; the validator of
 *                                            block 1 always rejects the leader's answer, so
 *                                            every validator votes disagree naming call_no 1
 *   {"": "agree"}                          -> the same two blocks, both validators accept
 *   {"": "forever"}                        -> never returns (deterministic loop): a timeout
 *   {"": "echo", "args": [x]}              -> x, whatever value it is
 *   {"": "ping"}                           -> posts {"": "ping"} to itself: a chain of
 *                                            follow-ups that never ends on its own
 *   {"": "chatty"}                         -> writes a line to stdout and to stderr, traces
 *                                            "tracing 42" (gl_trace), returns 7
 *   {"": "escape"}                         -> writes a terminal escape sequence to stdout
 *   {"": "loud"}                           -> writes 40000 bytes to stdout (past the node's
 *                                            16 KiB debug tail), returns null
 *   {"": "#get-schema"}                    -> the GenVM ABI's schema method: a string holding
 *                                            a JSON object {"ctor": ..., "methods": ...} */
#include <string.h>
#include <unistd.h>

#include "genlayer.h"

static const char kSchema[] =
    "{\"ctor\": {\"params\": [], \"kwparams\": {}},"
    " \"methods\": {"
    "\"echo\": {\"params\": [[\"x\", \"any\"]], \"kwparams\": {}, \"readonly\": true, \"ret\": \"any\"},"
    " \"chatty\": {\"params\": [], \"kwparams\": {}, \"readonly\": false, \"ret\": \"int\"},"
    " \"agree\": {\"params\": [], \"kwparams\": {}, \"readonly\": false, \"ret\": \"bytes\", \"payable\": true}}}";

/* Unbuffered, so nothing waits in a stdio buffer when gl_return ends the run. */
static void say(int fd, const char* text) { (void)write(fd, text, strlen(text)); }

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
  if (gl_method_is(m, "chatty")) {
    say(1, "hello from stdout\n");
    say(2, "hello from stderr\n");
    gl_trace("tracing 42");
    gl_buf out = {0};
    gl_enc_u64(&out, 7);
    gl_return(&out);
  }
  if (gl_method_is(m, "escape")) {
    say(1, "\x1b[2Jcleared\n");
    gl_return(NULL);
  }
  if (gl_method_is(m, "loud")) {
    static char line[100];
    memset(line, 'x', sizeof(line) - 1);
    line[sizeof(line) - 1] = '\n';
    for (int i = 0; i < 400; ++i) (void)write(1, line, sizeof(line));
    gl_return(NULL);
  }
  if (gl_method_is(m, "#get-schema")) {
    gl_buf out = {0};
    gl_enc_cstr(&out, kSchema);
    gl_return(&out);
  }
  if (gl_method_is(m, "ping")) {
    gl_buf call = {0};
    gl_enc_map(&call, 1);
    gl_enc_key(&call, "");
    gl_enc_cstr(&call, "ping");
    uint8_t zero[32] = {0};
    if (gl_post_message(m->contract_address, &call, zero, "finalized") != GL_SUCCESS) gl_user_error("post refused");
    gl_return(NULL);
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
