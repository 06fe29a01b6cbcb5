/* The contract's entry: reading the startup message, running the contract function or a
 * non-deterministic block, and what happens when a function returns without ending the call.
 * wasm32 only. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "genlayer.h"
#include "gl_internal.h"

int gl_read_fd(uint32_t fd, gl_buf* out) {
  uint8_t chunk[4096];
  for (;;) {
    ssize_t r = read((int)fd, chunk, sizeof(chunk));
    if (r < 0) {
      close((int)fd);
      return GL_IO;
    }
    if (r == 0) break;
    gl_buf_append(out, chunk, (size_t)r);
  }
  close((int)fd);
  return out->oom ? GL_ENOMEM : 0;
}

static int read_stdin(gl_buf* in) { return gl_read_fd(0, in); }

/* A contract function that falls off its end is a bug in the contract: ending with a null
 * Return would hide it (a view that forgot gl_return "returns" null). */
__attribute__((noreturn)) static void returned_without_result(const char* what) {
  char msg[128];
  snprintf(msg, sizeof(msg), "%s returned without gl_return or gl_user_error", what);
  gl_user_error(msg);
}

static void read_message(gl_buf* in, gl_message* m) {
  if (read_stdin(in) != 0) gl_user_error("cannot read the startup message");
  if (gl_message_parse(in->data, in->len, m) != 0) gl_user_error("malformed startup message");
}

int gl_run_entry(gl_entry_fn fn) {
  gl_buf in = {0};
  gl_message m;
  read_message(&in, &m);
  fn(&m);
  returned_without_result("the contract function");
}

void gl_args_check(const gl_args* a) {
  if (a->failed) gl_user_error(a->error);
}

/* A block's entry_data: {"block": index, "data": bytes}. */
static int parse_block(const gl_message* m, uint64_t* index, const uint8_t** data, size_t* len) {
  gl_reader r;
  gl_item it;
  gl_reader_init(&r, m->entry_data, m->entry_len);
  if (gl_map_find(&r, "block") || gl_next(&r, &it) || it.kind != GL_K_UINT || it.big) return GL_EDECODE;
  *index = it.u;
  gl_reader_init(&r, m->entry_data, m->entry_len);
  if (gl_map_find(&r, "data") || gl_next(&r, &it) || it.kind != GL_K_BYTES) return GL_EDECODE;
  *data = it.data;
  *len = (size_t)it.n;
  return 0;
}

int gl_run_entry_nondet(gl_entry_fn fn, const gl_nondet_block* blocks, size_t n) {
  gl_buf in = {0};
  gl_message m;
  read_message(&in, &m);
  if (m.entry_kind != 2) {
    fn(&m);
    returned_without_result("the contract function");
  }
  uint64_t index = 0;
  const uint8_t* data = NULL;
  size_t len = 0;
  if (parse_block(&m, &index, &data, &len) || index >= n) gl_user_error("malformed nondet block");
  if (!m.stage_data) {
    blocks[index].leader(data, len);
    returned_without_result("a non-deterministic block's leader function");
  }
  gl_buf vote = {0};
  gl_enc_bool(&vote, blocks[index].validator(data, len, m.stage_data, m.stage_len) != 0);
  gl_return(&vote);
}

int gl_run_nondet(uint32_t index, const void* data, size_t len, gl_buf* out) {
  gl_buf block = {0};
  gl_enc_map(&block, 2);
  gl_enc_key(&block, "block");
  gl_enc_u64(&block, index);
  gl_enc_key(&block, "data");
  gl_enc_bytes(&block, data, len);
  gl_buf body = {0};
  gl_enc_map(&body, 2);
  gl_enc_key(&body, "data_leader");
  gl_enc_bytes(&body, block.data, block.len);
  gl_enc_key(&body, "data_validator");
  gl_enc_bytes(&body, block.data, block.len);
  gl_buf_free(&block);
  uint32_t fd = 0;
  int e = gl_call_named("RunNondet", &body, &fd);
  gl_buf_free(&body);
  if (e) return e;
  return gl_read_fd(fd, out);
}
