/* nondet: non-deterministic blocks (RunNondet) through the C SDK.
 *   {"": "run", "args": [n]}   n blocks, alternating "clock" (the leader's wall clock, which
 *                              validators accept when positive) and "double" (2*i, which
 *                              validators recompute and compare); returns the n values
 *   {"": "many", "args": [n]}  n trivial blocks; returns n
 *   {"": "loop"}               one block whose leader never ends (its fuel stops it); returns
 *                              the leader's [code][data] as bytes
 *   {"": "boom", "args": [b]}  puts byte b into memory, then UserError "boom"
 *   {"": "prompt"}             one block whose leader sends ExecPrompt "hi" to the LLM module;
 *                              returns the leader's [code][data] as bytes
 *   {"": "nest", "args": [k]}  k sandboxes, each inside the last; returns k, or the VM error
 *                              string the innermost one got (e.g. out_of vm_recursion)
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "genlayer.h"

static void clock_leader(const uint8_t* data, size_t len) {
  (void)data;
  (void)len;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  gl_buf out = {0};
  gl_enc_u64(&out, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
  gl_return(&out);
}

/* Accepts any positive integer the leader returned. */
static int clock_validator(const uint8_t* data, size_t len, const uint8_t* leader, size_t leader_len) {
  (void)data;
  (void)len;
  if (leader_len < 1 || leader[0] != 0) return 0;
  gl_reader r;
  gl_item it;
  gl_reader_init(&r, leader + 1, leader_len - 1);
  return gl_next(&r, &it) == 0 && it.kind == GL_K_UINT && (it.big || it.u > 0);
}

static uint64_t read_u64_data(const uint8_t* data, size_t len) {
  uint64_t v = 0;
  for (size_t i = 0; i < len && i < 8; ++i) v |= (uint64_t)data[i] << (8 * i);
  return v;
}

static void double_leader(const uint8_t* data, size_t len) {
  gl_buf out = {0};
  gl_enc_u64(&out, 2 * read_u64_data(data, len));
  gl_return(&out);
}

/* Recomputes the value and agrees only on the exact bytes. */
static int double_validator(const uint8_t* data, size_t len, const uint8_t* leader, size_t leader_len) {
  gl_buf mine = {0};
  uint8_t code = 0;
  gl_buf_append(&mine, &code, 1);
  gl_enc_u64(&mine, 2 * read_u64_data(data, len));
  int same = mine.len == leader_len && memcmp(mine.data, leader, leader_len) == 0;
  gl_buf_free(&mine);
  return same;
}

static void trivial_leader(const uint8_t* data, size_t len) {
  (void)data;
  (void)len;
  gl_return(NULL);
}

static int trivial_validator(const uint8_t* data, size_t len, const uint8_t* leader, size_t leader_len) {
  (void)data;
  (void)len;
  (void)leader;
  (void)leader_len;
  return 1;
}

static void loop_leader(const uint8_t* data, size_t len) {
  (void)data;
  (void)len;
  gl_trace("loop block started");
  volatile uint64_t i = 0;
  for (;;) ++i;
}

static void prompt_leader(const uint8_t* data, size_t len) {
  (void)data;
  (void)len;
  gl_buf req = {0};
  gl_enc_map(&req, 1);
  gl_enc_key(&req, "ExecPrompt");
  gl_enc_map(&req, 3);
  gl_enc_key(&req, "images");
  gl_enc_array(&req, 0);
  gl_enc_key(&req, "prompt");
  gl_enc_cstr(&req, "hi");
  gl_enc_key(&req, "response_format");
  gl_enc_cstr(&req, "text");
  uint32_t fd = 0;
  int e = gl_call_raw(&req, &fd);
  gl_buf_free(&req);
  char msg[32] = "module refused 0";
  if (e != 0) {
    msg[15] = (char)('0' + e % 10);
    gl_user_error(msg);
  }
  gl_buf answer = {0};
  if (gl_read_fd(fd, &answer) != 0) gl_user_error("module answer unreadable");
  gl_return(&answer);
}

static const gl_nondet_block blocks[] = {
    {clock_leader, clock_validator},
    {double_leader, double_validator},
    {trivial_leader, trivial_validator},
    {loop_leader, trivial_validator},
    {prompt_leader, trivial_validator},
};

static uint64_t one_uint_arg(const gl_message* m) {
  gl_args a;
  gl_args_open(m, 1, 1, &a);
  uint64_t n = gl_arg_u64(&a);
  gl_args_check(&a);
  return n;
}

static volatile uint8_t scratch[64];

static void run(const gl_message* m) {
  if (m->is_init) gl_return(NULL);
  if (gl_method_is(m, "run")) {
    uint64_t n = one_uint_arg(m);
    gl_buf out = {0};
    gl_enc_array(&out, (size_t)n);
    for (uint64_t i = 0; i < n; ++i) {
      uint8_t arg[8];
      for (int k = 0; k < 8; ++k) arg[k] = (uint8_t)(i >> (8 * k));
      gl_buf res = {0};
      if (gl_run_nondet(i % 2 ? 1 : 0, arg, sizeof(arg), &res) != 0) gl_user_error("RunNondet refused");
      if (res.len < 1 || res.data[0] != 0) gl_user_error("block failed");
      gl_buf value = {0};
      gl_buf_append(&value, res.data + 1, res.len - 1);
      gl_enc_raw(&out, &value);
      gl_buf_free(&value);
      gl_buf_free(&res);
    }
    gl_return(&out);
  }
  if (gl_method_is(m, "many")) {
    uint64_t n = one_uint_arg(m);
    for (uint64_t i = 0; i < n; ++i) {
      gl_buf res = {0};
      if (gl_run_nondet(2, NULL, 0, &res) != 0) gl_user_error("RunNondet refused");
      gl_buf_free(&res);
    }
    gl_buf out = {0};
    gl_enc_u64(&out, n);
    gl_return(&out);
  }
  if (gl_method_is(m, "loop") || gl_method_is(m, "prompt")) {
    gl_buf res = {0};
    if (gl_run_nondet(gl_method_is(m, "loop") ? 3 : 4, NULL, 0, &res) != 0) gl_user_error("RunNondet refused");
    gl_buf out = {0};
    gl_enc_bytes(&out, res.data, res.len);
    gl_return(&out);
  }
  if (gl_method_is(m, "nest")) {
    uint64_t k = one_uint_arg(m);
    gl_buf out = {0};
    if (k == 0) {
      gl_enc_u64(&out, 0);
      gl_return(&out);
    }
    gl_buf call = {0};
    gl_enc_map(&call, 2);
    gl_enc_key(&call, "");
    gl_enc_cstr(&call, "nest");
    gl_enc_key(&call, "args");
    gl_enc_array(&call, 1);
    gl_enc_u64(&call, k - 1);
    gl_buf res = {0};
    if (gl_sandbox(&call, 0, 0, &res) != 0 || res.len < 1) gl_user_error("Sandbox refused");
    gl_reader r;
    gl_item it;
    gl_reader_init(&r, res.data + 1, res.len - 1);
    if (res.data[0] == 0 && gl_next(&r, &it) == 0 && it.kind == GL_K_UINT) {
      gl_enc_u64(&out, it.u + 1);
    } else if (res.data[0] == 2) {
      gl_enc_str(&out, (const char*)res.data + 1, res.len - 1); /* pass the VM error up */
    } else {
      gl_buf_append(&out, res.data + 1, res.len - 1);
    }
    gl_return(&out);
  }
  if (gl_method_is(m, "boom")) {
    scratch[7] = (uint8_t)one_uint_arg(m);
    gl_user_error("boom");
  }
  gl_user_error("unknown method");
}

GL_CONTRACT_WITH_NONDET(run, blocks)
