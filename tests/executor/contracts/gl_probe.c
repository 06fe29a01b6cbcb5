/* gl_probe: sends gl_call requests the test builds and returns what came back, in a
 * deterministic VM or inside a non-deterministic block.
 *   {"": "raw", "args": [request]}      gl_call(request) here; returns
 *                                       {"ret": code, "fd": descriptor, "data": bytes | null}
 *                                       (data read from the descriptor when one came back)
 *   {"": "raw_nondet", "args": [request]}  the same call from a RunNondet block's leader; returns
 *                                       the leader's [code][data] entry as bytes
 *   {"": "echo", "args": [expected]}    one RunNondet block: the leader returns 42, the
 *                                       validator votes true iff the entry it was handed is
 *                                       exactly `expected`; returns the entry the contract got
 *   {"": "call", "args": [address, state]}  CallContract {"": "get"} on address in view
 *                                       `state`; returns the [code][data] result as bytes, or
 *                                       UserError "refused N" when the call answered code N
 *   {"": "get"}                         returns 7 (a callee for "call")
 */
#include <stdint.h>
#include <string.h>

#include "genlayer.h"

/* Sends `request`, returns the {"ret", "fd", "data"} map (encoded). */
static void probe(const uint8_t* request, size_t len, gl_buf* out) {
  gl_buf req = {0};
  gl_buf_append(&req, request, len);
  uint32_t fd = 0xfffffffeu; /* neither a descriptor nor "no file": shows what the call wrote */
  /* The import itself, not gl_call_raw (which starts from its own "no file"): the slot keeps
     0xfffffffe unless the executor writes it. */
  int e = req.oom ? GL_ENOMEM : (int)gl_sdk_gl_call(req.data, (uint32_t)req.len, &fd);
  gl_buf_free(&req);
  gl_buf data = {0};
  int have = e == 0 && fd != 0xffffffffu && fd != 0xfffffffeu && gl_read_fd(fd, &data) == 0;
  gl_enc_map(out, 3);
  gl_enc_key(out, "data");
  if (have) {
    gl_enc_bytes(out, data.data, data.len);
  } else {
    gl_enc_null(out);
  }
  gl_enc_key(out, "fd");
  gl_enc_u64(out, fd);
  gl_enc_key(out, "ret");
  gl_enc_u64(out, (uint64_t)e);
  gl_buf_free(&data);
}

static void probe_leader(const uint8_t* data, size_t len) {
  gl_buf out = {0};
  probe(data, len, &out);
  gl_return(&out);
}

static int probe_validator(const uint8_t* data, size_t len, const uint8_t* leader, size_t leader_len) {
  (void)data;
  (void)len;
  (void)leader;
  (void)leader_len;
  return 1;
}

static void echo_leader(const uint8_t* data, size_t len) {
  (void)data;
  (void)len;
  gl_buf out = {0};
  gl_enc_u64(&out, 42);
  gl_return(&out);
}

/* Agrees iff the entry handed in is byte for byte the expected one. */
static int echo_validator(const uint8_t* data, size_t len, const uint8_t* leader, size_t leader_len) {
  return len == leader_len && memcmp(data, leader, len) == 0;
}

static const gl_nondet_block blocks[] = {
    {probe_leader, probe_validator},
    {echo_leader, echo_validator},
};

/* The first argument, which must be bytes. */
static gl_item bytes_arg(const gl_message* m) {
  gl_reader r = m->args;
  gl_item it;
  if (!m->has_args || gl_next(&r, &it) || it.kind != GL_K_ARRAY || it.n != 1 || gl_next(&r, &it) ||
      it.kind != GL_K_BYTES) {
    gl_user_error("expects one bytes argument");
  }
  return it;
}

static void return_bytes(const gl_buf* b) {
  gl_buf out = {0};
  gl_enc_bytes(&out, b->data, b->len);
  gl_return(&out);
}

static void run(const gl_message* m) {
  if (m->is_init) gl_return(NULL);
  if (gl_method_is(m, "raw")) {
    gl_item req = bytes_arg(m);
    gl_buf out = {0};
    probe(req.data, req.n, &out);
    gl_return(&out);
  }
  if (gl_method_is(m, "raw_nondet") || gl_method_is(m, "echo")) {
    gl_item arg = bytes_arg(m);
    gl_buf res = {0};
    if (gl_run_nondet(gl_method_is(m, "echo") ? 1 : 0, arg.data, arg.n, &res) != 0) gl_user_error("RunNondet refused");
    return_bytes(&res);
  }
  if (gl_method_is(m, "call")) {
    gl_reader r = m->args;
    gl_item it, st;
    if (!m->has_args || gl_next(&r, &it) || it.kind != GL_K_ARRAY || it.n != 2 || gl_next(&r, &it) ||
        it.kind != GL_K_ADDRESS || gl_next(&r, &st) || st.kind != GL_K_UINT || st.big) {
      gl_user_error("call expects an address and a storage view");
    }
    uint8_t callee[20];
    memcpy(callee, it.data, 20);
    gl_buf call = {0};
    gl_enc_map(&call, 1);
    gl_enc_key(&call, "");
    gl_enc_cstr(&call, "get");
    gl_buf result = {0};
    int e = gl_call_contract(callee, &call, (uint32_t)st.u, &result);
    gl_buf_free(&call);
    if (e != GL_SUCCESS) {
      char msg[] = "refused 0";
      msg[8] = (char)('0' + e % 10);
      gl_user_error(msg);
    }
    return_bytes(&result);
  }
  if (gl_method_is(m, "get")) {
    gl_buf out = {0};
    gl_enc_u64(&out, 7);
    gl_return(&out);
  }
  gl_user_error("unknown method");
}

GL_CONTRACT_WITH_NONDET(run, blocks)
