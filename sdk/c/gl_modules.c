/* The module gl_calls' request maps (02-gl_call.rst ExecPrompt, ExecPromptTemplate, WebRender,
 * WebRequest) and the reader of their answers (03-schemas.rst "Module Result Encoding"). Built
 * natively too, so the SDK's tests check the bytes against the executor's own payload readers;
 * the calls that send them are in gl_calls.c (wasm32 only). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genlayer.h"

/* ---- answers ---- */

void gl_module_answer_free(gl_module_answer* a) {
  gl_buf_free(&a->raw);
  a->value = NULL;
  a->value_len = 0;
}

/* Appends to a fixed message buffer, cutting (at a UTF-8 boundary) with "..." when full. */
typedef struct {
  char* p;
  size_t cap;
  size_t len;
  int full;
} line_writer;

static void line_put(line_writer* w, const char* s, size_t n) {
  if (w->full) return;
  size_t room = w->cap - 1 - w->len;
  if (n > room) {
    size_t keep = room >= 3 ? room - 3 : 0;
    while (keep > 0 && (((unsigned char)s[keep]) & 0xC0) == 0x80) --keep; /* not inside a character */
    memcpy(w->p + w->len, s, keep);
    w->len += keep;
    memcpy(w->p + w->len, "...", room - keep >= 3 ? 3 : room - keep);
    w->len += room - keep >= 3 ? 3 : room - keep;
    w->full = 1;
  } else {
    memcpy(w->p + w->len, s, n);
    w->len += n;
  }
  w->p[w->len] = 0;
}

static void line_puts(line_writer* w, const char* s) { line_put(w, s, strlen(s)); }

/* One scalar as text: strings as they are, integers in decimal, the rest by kind. */
static int line_put_scalar(line_writer* w, gl_reader* r) {
  gl_reader at = *r;
  gl_item it;
  int e = gl_next(&at, &it);
  if (e) return e;
  char num[24];
  switch (it.kind) {
    case GL_K_STR: line_put(w, (const char*)it.data, (size_t)it.n); break;
    case GL_K_UINT:
    case GL_K_NINT:
      if (it.big) {
        line_puts(w, "(big integer)");
      } else {
        snprintf(num, sizeof(num), it.kind == GL_K_UINT ? "%llu" : "-%llu",
                 (unsigned long long)(it.kind == GL_K_UINT ? it.u : it.u + 1));
        line_puts(w, num);
      }
      break;
    case GL_K_TRUE: line_puts(w, "true"); break;
    case GL_K_FALSE: line_puts(w, "false"); break;
    case GL_K_NULL: line_puts(w, "null"); break;
    default: line_puts(w, "..."); break;
  }
  return gl_skip(r);
}

/* E as one line: "CAUSE, CAUSE (key: value, ...)" for the modules' {causes, ctx}, a string as it
 * is, anything else "module error". */
static void describe_module_error(const uint8_t* p, size_t n, char* out, size_t cap) {
  line_writer w = {out, cap, 0, 0};
  out[0] = 0;
  gl_reader r;
  gl_reader_init(&r, p, n);
  gl_item it;
  gl_reader peek = r;
  if (gl_next(&peek, &it) == 0 && it.kind == GL_K_STR) {
    line_put(&w, (const char*)it.data, (size_t)it.n);
    return;
  }
  gl_reader causes = r;
  if (gl_map_find(&causes, "causes") == 0 && gl_next(&causes, &it) == 0 && it.kind == GL_K_ARRAY) {
    uint64_t count = it.n;
    for (uint64_t i = 0; i < count; ++i) {
      if (i) line_puts(&w, ", ");
      if (line_put_scalar(&w, &causes)) break;
    }
  }
  gl_reader ctx = r;
  if (gl_map_find(&ctx, "ctx") == 0 && gl_next(&ctx, &it) == 0 && it.kind == GL_K_MAP && it.n > 0) {
    uint64_t count = it.n;
    line_puts(&w, w.len ? " (" : "(");
    for (uint64_t i = 0; i < count; ++i) {
      const char* k;
      size_t kn;
      if (gl_key(&ctx, &k, &kn)) break;
      if (i) line_puts(&w, ", ");
      line_put(&w, k, kn);
      line_puts(&w, ": ");
      if (line_put_scalar(&w, &ctx)) break;
    }
    line_puts(&w, ")");
  }
  if (w.len == 0) line_puts(&w, "module error");
}

int gl_module_answer_parse(gl_module_answer* a) {
  a->value = NULL;
  a->value_len = 0;
  a->is_error = 0;
  a->error[0] = 0;
  gl_reader r;
  gl_reader_init(&r, a->raw.data, a->raw.len);
  gl_item it;
  const char* k;
  size_t kn;
  if (gl_next(&r, &it) || it.kind != GL_K_MAP || it.n != 1 || gl_key(&r, &k, &kn)) goto malformed;
  int is_ok = kn == 2 && memcmp(k, "ok", 2) == 0;
  int is_error = kn == 5 && memcmp(k, "error", 5) == 0;
  if (!is_ok && !is_error) goto malformed;
  const uint8_t* start = r.p;
  if (gl_skip(&r) || r.p != r.end) goto malformed;
  a->value = start;
  a->value_len = (size_t)(r.p - start);
  if (is_ok) return GL_SUCCESS;
  a->is_error = 1;
  describe_module_error(a->value, a->value_len, a->error, sizeof(a->error));
  return GL_EMODULE;
malformed:
  snprintf(a->error, sizeof(a->error), "the module result is not {\"ok\": ...} or {\"error\": ...}");
  return GL_EDECODE;
}

static int answer_item(const gl_module_answer* a, gl_reader* r, gl_item* it) {
  if (!a->value || a->is_error) return GL_EDECODE;
  gl_reader_init(r, a->value, a->value_len);
  return gl_next(r, it);
}

const char* gl_answer_str(const gl_module_answer* a, size_t* len) {
  gl_reader r;
  gl_item it;
  if (answer_item(a, &r, &it) || it.kind != GL_K_STR) return NULL;
  *len = (size_t)it.n;
  return (const char*)it.data;
}

int gl_answer_bool(const gl_module_answer* a, int* v) {
  gl_reader r;
  gl_item it;
  if (answer_item(a, &r, &it) || (it.kind != GL_K_TRUE && it.kind != GL_K_FALSE)) return GL_EDECODE;
  *v = it.kind == GL_K_TRUE;
  return GL_SUCCESS;
}

int gl_answer_field(const gl_module_answer* a, const char* key, gl_item* it) {
  if (!a->value || a->is_error) return GL_EDECODE;
  gl_reader r;
  gl_reader_init(&r, a->value, a->value_len);
  int e = gl_map_find(&r, key);
  if (e) return e;
  return gl_next(&r, it);
}

/* ---- requests ---- */

static int is_one_of(const char* s, const char* const* names, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (strcmp(s, names[i]) == 0) return 1;
  }
  return 0;
}

int gl_enc_exec_prompt(gl_buf* req, const char* prompt, const char* response_format, const gl_image* images,
                       size_t n_images) {
  static const char* const formats[] = {"text", "json"};
  if (!response_format) response_format = "text";
  if (!prompt || !is_one_of(response_format, formats, 2) || (n_images && !images)) return GL_INVAL;
  gl_enc_map(req, 1);
  gl_enc_key(req, "ExecPrompt");
  gl_enc_map(req, 3);
  gl_enc_key(req, "images");
  gl_enc_array(req, n_images);
  for (size_t i = 0; i < n_images; ++i) gl_enc_bytes(req, images[i].data, images[i].len);
  gl_enc_key(req, "prompt");
  gl_enc_cstr(req, prompt);
  gl_enc_key(req, "response_format");
  gl_enc_cstr(req, response_format);
  return req->oom ? GL_ENOMEM : GL_SUCCESS;
}

int gl_enc_exec_prompt_template(gl_buf* req, const gl_prompt_template* t) {
  /* Each template's fields with "template" among them, in bytewise order. */
  const char* names[5];
  const char* values[5];
  size_t n = 0;
  const char* name = NULL;
#define GL_FIELD(key, v) (names[n] = (key), values[n++] = (v))
  switch (t->kind) {
    case GL_EQ_COMPARATIVE:
      name = "EqComparative";
      GL_FIELD("leader_answer", t->leader_answer);
      GL_FIELD("principle", t->principle);
      GL_FIELD("template", name);
      GL_FIELD("validator_answer", t->validator_answer);
      break;
    case GL_EQ_NON_COMPARATIVE_LEADER:
      name = "EqNonComparativeLeader";
      GL_FIELD("criteria", t->criteria);
      GL_FIELD("input", t->input);
      GL_FIELD("task", t->task);
      GL_FIELD("template", name);
      break;
    case GL_EQ_NON_COMPARATIVE_VALIDATOR:
      name = "EqNonComparativeValidator";
      GL_FIELD("criteria", t->criteria);
      GL_FIELD("input", t->input);
      GL_FIELD("output", t->output);
      GL_FIELD("task", t->task);
      GL_FIELD("template", name);
      break;
    default: return GL_INVAL;
  }
#undef GL_FIELD
  for (size_t i = 0; i < n; ++i) {
    if (!values[i]) return GL_INVAL;
  }
  gl_enc_map(req, 1);
  gl_enc_key(req, "ExecPromptTemplate");
  gl_enc_map(req, n);
  for (size_t i = 0; i < n; ++i) {
    gl_enc_key(req, names[i]);
    gl_enc_cstr(req, values[i]);
  }
  return req->oom ? GL_ENOMEM : GL_SUCCESS;
}

int gl_enc_web_render(gl_buf* req, const char* url, const char* mode, const char* wait_after_loaded) {
  static const char* const modes[] = {"text", "html", "screenshot"};
  if (!wait_after_loaded) wait_after_loaded = "0ms";
  if (!url || !mode || !is_one_of(mode, modes, 3)) return GL_INVAL;
  gl_enc_map(req, 1);
  gl_enc_key(req, "WebRender");
  gl_enc_map(req, 3);
  gl_enc_key(req, "mode");
  gl_enc_cstr(req, mode);
  gl_enc_key(req, "url");
  gl_enc_cstr(req, url);
  gl_enc_key(req, "wait_after_loaded");
  gl_enc_cstr(req, wait_after_loaded);
  return req->oom ? GL_ENOMEM : GL_SUCCESS;
}

enum { kMaxHeaders = 256 };

int gl_enc_web_request(gl_buf* req, const char* method, const char* url, const gl_header* headers, size_t n_headers,
                       const void* body, size_t body_len) {
  static const char* const methods[] = {"GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH"};
  if (!method || !url || !is_one_of(method, methods, 7) || (n_headers && !headers) || n_headers > kMaxHeaders) {
    return GL_INVAL;
  }
  /* Map keys go in bytewise order: sort the headers' indices (insertion sort, n is small). */
  size_t order[kMaxHeaders];
  for (size_t i = 0; i < n_headers; ++i) {
    if (!headers[i].name || (headers[i].len && !headers[i].value)) return GL_INVAL;
    size_t j = i;
    while (j > 0 && strcmp(headers[order[j - 1]].name, headers[i].name) > 0) {
      order[j] = order[j - 1];
      --j;
    }
    order[j] = i;
  }
  for (size_t i = 1; i < n_headers; ++i) {
    if (strcmp(headers[order[i - 1]].name, headers[order[i]].name) == 0) return GL_INVAL;
  }
  gl_enc_map(req, 1);
  gl_enc_key(req, "WebRequest");
  gl_enc_map(req, 5);
  gl_enc_key(req, "body");
  if (body) {
    gl_enc_bytes(req, body, body_len);
  } else {
    gl_enc_null(req);
  }
  gl_enc_key(req, "headers");
  gl_enc_map(req, n_headers);
  for (size_t i = 0; i < n_headers; ++i) {
    const gl_header* h = &headers[order[i]];
    gl_enc_key(req, h->name);
    gl_enc_bytes(req, h->value, h->len);
  }
  gl_enc_key(req, "method");
  gl_enc_cstr(req, method);
  gl_enc_key(req, "sign");
  gl_enc_bool(req, 0);
  gl_enc_key(req, "url");
  gl_enc_cstr(req, url);
  return req->oom ? GL_ENOMEM : GL_SUCCESS;
}
