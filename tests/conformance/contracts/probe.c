/* probe.c: the conformance suite's generic contract. It runs a script the test gives it and
 * composes as little as possible itself: every gl_call request is calldata built by the Python
 * side from the spec, passed through verbatim.
 *
 * The script is args[0] of the entry payload ({"args": [steps]} in entry_data; for a RunNondet
 * block, data_leader / data_validator are the same shape). Each step is an array:
 *   ["call", request]            gl_call(request)          answer [rc, fd contents | errno | null]
 *   ["read", slot, index, len]   storage_read               answer [rc, bytes | null]
 *   ["write", slot, index, data] storage_write              answer [rc]
 *   ["balance", address_bytes]   get_balance                answer [rc, 32 bytes | null]
 *   ["self_balance"]             get_self_balance           answer [rc, 32 bytes | null]
 *   ["stdin"]                    -                          answer [0, the startup message]
 *   ["return_answers"]           gl_call {"Return": [answer, ...]}      (ends the run)
 *   ["return_field_eq", key, b]  gl_call {"Return": true|false}: whether the startup message's
 *                                value under `key`, as encoded, equals the bytes b   (ends the run)
 *   ["exit", n]                  proc_exit(n)                                       (ends the run)
 *   ["trap"]                     unreachable                                        (ends the run)
 * A call answer holds the bytes read from the result descriptor until EOF (the descriptor is
 * then closed), the WASI errno when reading it failed, or null when rc != 0.
 * A script the probe cannot parse ends the run with proc_exit(99).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "genlayer.h"

enum { kScriptError = 99 };

static uint8_t* g_input;
static size_t g_input_len;
static gl_buf g_answers;
static uint64_t g_answer_count;

static void script_error(void) { _Exit(kScriptError); }

static void read_all(int fd, gl_buf* out) {
  uint8_t chunk[4096];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n == 0) return;
    if (n < 0) {
      if (errno == EINTR) continue;
      script_error();
    }
    gl_buf_append(out, chunk, (size_t)n);
    if (out->oom) script_error();
  }
}

/* Reads the next item and requires it to be of `kind`. */
static void expect(gl_reader* r, gl_kind kind, gl_item* it) {
  if (gl_next(r, it) != 0 || it->kind != kind) script_error();
}

static uint64_t expect_u64(gl_reader* r) {
  gl_item it;
  expect(r, GL_K_UINT, &it);
  if (it.big) script_error();
  return it.u;
}

static int op_is(const gl_item* op, const char* name) {
  return op->n == strlen(name) && memcmp(op->data, name, op->n) == 0;
}

static void add_answer(const gl_buf* answer) {
  gl_enc_raw(&g_answers, answer);
  ++g_answer_count;
}

static void answer_rc_and(uint32_t rc, const void* data, size_t len, int have_data) {
  gl_buf a = {0};
  gl_enc_array(&a, 2);
  gl_enc_u64(&a, rc);
  if (have_data) {
    gl_enc_bytes(&a, data, len);
  } else {
    gl_enc_null(&a);
  }
  add_answer(&a);
  gl_buf_free(&a);
}

static void step_call(gl_reader* r) {
  gl_item req;
  expect(r, GL_K_BYTES, &req);
  uint32_t fd = 0;
  uint32_t rc = gl_sdk_gl_call(req.data, (uint32_t)req.n, &fd);
  gl_buf a = {0};
  gl_enc_array(&a, 2);
  gl_enc_u64(&a, rc);
  if (rc != 0) {
    gl_enc_null(&a);
  } else {
    gl_buf contents = {0};
    uint8_t chunk[4096];
    int failed_errno = 0;
    for (;;) {
      ssize_t n = read((int)fd, chunk, sizeof(chunk));
      if (n == 0) break;
      if (n < 0) {
        failed_errno = errno;
        break;
      }
      gl_buf_append(&contents, chunk, (size_t)n);
      if (contents.oom) script_error();
    }
    if (failed_errno) {
      gl_enc_u64(&a, (uint64_t)failed_errno);
    } else {
      gl_enc_bytes(&a, contents.data, contents.len);
      if (fd > 2) close((int)fd);
    }
    gl_buf_free(&contents);
  }
  add_answer(&a);
  gl_buf_free(&a);
}

static void step_read(gl_reader* r) {
  gl_item slot;
  expect(r, GL_K_BYTES, &slot);
  if (slot.n != 32) script_error();
  uint64_t index = expect_u64(r);
  uint64_t len = expect_u64(r);
  if (index > UINT32_MAX || len > (1u << 24)) script_error();
  uint8_t* buf = calloc(1, len ? (size_t)len : 1);
  if (!buf) script_error();
  uint32_t rc = gl_sdk_storage_read(slot.data, (uint32_t)index, buf, (uint32_t)len);
  answer_rc_and(rc, buf, (size_t)len, rc == 0);
  free(buf);
}

static void step_write(gl_reader* r) {
  gl_item slot, data;
  expect(r, GL_K_BYTES, &slot);
  if (slot.n != 32) script_error();
  uint64_t index = expect_u64(r);
  expect(r, GL_K_BYTES, &data);
  if (index > UINT32_MAX) script_error();
  uint32_t rc = gl_sdk_storage_write(slot.data, (uint32_t)index, data.data, (uint32_t)data.n);
  gl_buf a = {0};
  gl_enc_array(&a, 1);
  gl_enc_u64(&a, rc);
  add_answer(&a);
  gl_buf_free(&a);
}

static void step_balance(gl_reader* r) {
  gl_item address;
  expect(r, GL_K_BYTES, &address);
  if (address.n != 20) script_error();
  uint8_t out[32] = {0};
  uint32_t rc = gl_sdk_get_balance(address.data, out);
  answer_rc_and(rc, out, sizeof(out), rc == 0);
}

static void step_self_balance(void) {
  uint8_t out[32] = {0};
  uint32_t rc = gl_sdk_get_self_balance(out);
  answer_rc_and(rc, out, sizeof(out), rc == 0);
}

/* Ends the run with gl_call {"Return": value}; a gl_call that comes back is a script error. */
__attribute__((noreturn)) static void return_value(const gl_buf* value) {
  gl_buf req = {0};
  gl_enc_map(&req, 1);
  gl_enc_key(&req, "Return");
  gl_enc_raw(&req, value);
  uint32_t fd = 0;
  gl_sdk_gl_call(req.data, (uint32_t)req.len, &fd);
  script_error();
  __builtin_unreachable();
}

__attribute__((noreturn)) static void step_return_answers(void) {
  gl_buf value = {0};
  gl_enc_array(&value, (size_t)g_answer_count);
  gl_buf_append(&value, g_answers.data, g_answers.len);
  return_value(&value);
}

__attribute__((noreturn)) static void step_return_field_eq(gl_reader* r) {
  gl_item key, expected;
  expect(r, GL_K_STR, &key);
  expect(r, GL_K_BYTES, &expected);
  char name[64];
  if (key.n >= sizeof(name)) script_error();
  memcpy(name, key.data, key.n);
  name[key.n] = 0;
  gl_reader msg;
  gl_reader_init(&msg, g_input, g_input_len);
  int equal = 0;
  if (gl_map_find(&msg, name) == 0) {
    const uint8_t* start = msg.p;
    if (gl_skip(&msg) != 0) script_error();
    size_t n = (size_t)(msg.p - start);
    equal = n == expected.n && memcmp(start, expected.data, n) == 0;
  }
  gl_buf value = {0};
  gl_enc_bool(&value, equal);
  return_value(&value);
}

static void run_step(gl_reader* r, uint64_t parts) {
  gl_item op;
  expect(r, GL_K_STR, &op);
  /* argument counts, so a malformed script fails here rather than half-way through a step */
  struct {
    const char* name;
    uint64_t args;
  } arity[] = {{"call", 1}, {"read", 3}, {"write", 3}, {"balance", 1}, {"self_balance", 0}, {"stdin", 0},
               {"return_answers", 0}, {"return_field_eq", 2}, {"exit", 1}, {"trap", 0}};
  int known = 0;
  for (size_t i = 0; i < sizeof(arity) / sizeof(arity[0]); ++i) {
    if (op_is(&op, arity[i].name)) {
      if (parts != arity[i].args + 1) script_error();
      known = 1;
    }
  }
  if (!known) script_error();
  if (op_is(&op, "call")) {
    step_call(r);
  } else if (op_is(&op, "read")) {
    step_read(r);
  } else if (op_is(&op, "write")) {
    step_write(r);
  } else if (op_is(&op, "balance")) {
    step_balance(r);
  } else if (op_is(&op, "self_balance")) {
    step_self_balance();
  } else if (op_is(&op, "stdin")) {
    answer_rc_and(0, g_input, g_input_len, 1);
  } else if (op_is(&op, "return_answers")) {
    step_return_answers();
  } else if (op_is(&op, "return_field_eq")) {
    step_return_field_eq(r);
  } else if (op_is(&op, "exit")) {
    _Exit((int)expect_u64(r));
  } else if (op_is(&op, "trap")) {
    __builtin_trap();
  }
}

int main(void) {
  gl_buf in = {0};
  read_all(0, &in);
  g_input = in.data;
  g_input_len = in.len;

  gl_reader msg;
  gl_item entry, args, steps;
  gl_reader_init(&msg, g_input, g_input_len);
  if (gl_map_find(&msg, "entry_data") != 0) script_error();
  expect(&msg, GL_K_BYTES, &entry);
  gl_reader payload;
  gl_reader_init(&payload, entry.data, entry.n);
  if (gl_map_find(&payload, "args") != 0) script_error();
  expect(&payload, GL_K_ARRAY, &args);
  if (args.n < 1) script_error();
  expect(&payload, GL_K_ARRAY, &steps);
  for (uint64_t i = 0; i < steps.n; ++i) {
    gl_item step;
    expect(&payload, GL_K_ARRAY, &step);
    if (step.n < 1) script_error();
    run_step(&payload, step.n);
  }
  /* A script without a final step ends like a contract whose _start returns. */
  return 0;
}
