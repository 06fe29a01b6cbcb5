/* render: reads a number off a web page and keeps it, validators reading the page themselves.
 *   deploy: {}
 *   {"": "fetch", "args": [url]}   a write: the leader's non-deterministic block renders the page
 *                                  through the web module (WebRender, text mode) and takes the
 *                                  first number in its text (a run of decimal digits, at most
 *                                  18); each validator renders it too and agrees when it reads
 *                                  the same number; the number is stored and returned
 *   {"": "value"}                  a view: the last number stored (0 before the first)
 *   {"": "count"}                  a view: how many were stored
 * A page the module refuses (an address it forbids, a load that fails) or one without a number
 * ends `fetch` with a UserError that says why.
 */
#include <stdlib.h>
#include <string.h>

#include "genlayer.h"

/* Storage, in this contract's slot: the value u64 at 0, the count u64 at 8. */
enum { kValue = 0, kCount = 8 };
enum { kMaxDigits = 18 };

static char* text_of(const uint8_t* data, size_t len) {
  char* s = malloc(len + 1);
  if (!s) gl_user_error("out of memory");
  memcpy(s, data, len);
  s[len] = 0;
  return s;
}

/* Renders `url` and reads its first number into *value. 0, or a message saying what failed. */
static const char* read_number(const char* url, uint64_t* value, gl_module_answer* a) {
  if (gl_web_render(url, "text", "0ms", a) != GL_SUCCESS) return a->error;
  gl_item text;
  if (gl_answer_field(a, "text", &text) != GL_SUCCESS || text.kind != GL_K_STR) return "the render has no text";
  const char* p = (const char*)text.data;
  size_t n = (size_t)text.n, i = 0;
  while (i < n && (p[i] < '0' || p[i] > '9')) ++i;
  if (i == n) return "no number in the page";
  uint64_t v = 0;
  size_t digits = 0;
  for (; i < n && p[i] >= '0' && p[i] <= '9'; ++i) {
    if (++digits > kMaxDigits) return "the page's number has more than 18 digits";
    v = v * 10 + (uint64_t)(p[i] - '0');
  }
  *value = v;
  return NULL;
}

static void fetch_leader(const uint8_t* data, size_t len) {
  gl_module_answer a;
  uint64_t v = 0;
  const char* failed = read_number(text_of(data, len), &v, &a);
  if (failed) gl_user_error(failed);
  gl_buf out = {0};
  gl_enc_u64(&out, v);
  gl_return(&out);
}

/* Agrees when the validator reads the same number; a leader that failed is agreed to only when
 * the validator fails with the same message. */
static int fetch_validator(const uint8_t* data, size_t len, const uint8_t* leader, size_t leader_len) {
  gl_module_answer a;
  uint64_t mine = 0;
  const char* failed = read_number(text_of(data, len), &mine, &a);
  if (leader_len < 1) return 0;
  gl_reader r;
  gl_item it;
  gl_reader_init(&r, leader + 1, leader_len - 1);
  if (gl_next(&r, &it)) return 0;
  if (leader[0] == 1) {
    return failed && it.kind == GL_K_STR && it.n == strlen(failed) && memcmp(it.data, failed, it.n) == 0;
  }
  return leader[0] == 0 && !failed && it.kind == GL_K_UINT && !it.big && it.u == mine;
}

static const gl_nondet_block blocks[] = {{fetch_leader, fetch_validator}};

static void run(const gl_message* m) {
  gl_slot s;
  gl_contract_slot(&s);
  if (m->is_init) gl_return(NULL); /* storage starts zeroed */
  if (gl_method_is(m, "value") || gl_method_is(m, "count")) {
    gl_buf out = {0};
    gl_enc_u64(&out, gl_storage_read_u64(&s, gl_method_is(m, "value") ? kValue : kCount));
    gl_return(&out);
  }
  if (gl_method_is(m, "fetch")) {
    gl_args a;
    gl_args_open(m, 1, 1, &a);
    size_t n = 0;
    const char* url = gl_arg_str(&a, &n);
    gl_args_check(&a);
    if (n == 0 || n > 2048) gl_user_error("a URL has 1 to 2048 bytes");
    gl_buf res = {0};
    if (gl_run_nondet(0, url, n, &res) != GL_SUCCESS) gl_user_error("RunNondet refused");
    if (res.len < 1) gl_user_error("the block gave no result");
    gl_reader r;
    gl_item it;
    gl_reader_init(&r, res.data + 1, res.len - 1);
    if (res.data[0] > 1 || gl_next(&r, &it)) gl_user_error("the render block failed"); /* a VM error */
    if (res.data[0] == 1 && it.kind == GL_K_STR) gl_user_error(text_of(it.data, (size_t)it.n));
    if (res.data[0] != 0 || it.kind != GL_K_UINT || it.big) gl_user_error("the render block failed");
    if (gl_storage_write_u64(&s, kValue, it.u) != GL_SUCCESS ||
        gl_storage_write_u64(&s, kCount, gl_storage_read_u64(&s, kCount) + 1) != GL_SUCCESS) {
      gl_user_error("storage write refused");
    }
    gl_buf out = {0};
    gl_enc_u64(&out, it.u);
    gl_return(&out);
  }
  gl_user_error("unknown method");
}

GL_CONTRACT_WITH_NONDET(run, blocks)
