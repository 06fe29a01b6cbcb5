/* Typed reading of a call's positional arguments and keyword arguments. Native and wasm32: the
 * first problem is kept as text in the gl_args (sticky, like a stream's error flag), so a
 * contract reads every argument and checks once; gl_args_check (gl_sdk.c) turns it into the
 * UserError. */
#include <stdio.h>
#include <string.h>

#include "genlayer.h"

static const char* kind_name(gl_kind k) {
  switch (k) {
    case GL_K_NULL: return "null";
    case GL_K_FALSE:
    case GL_K_TRUE: return "a bool";
    case GL_K_ADDRESS: return "an address";
    case GL_K_UINT: return "an unsigned integer";
    case GL_K_NINT: return "a negative integer";
    case GL_K_BYTES: return "bytes";
    case GL_K_STR: return "a string";
    case GL_K_ARRAY: return "an array";
    case GL_K_MAP: return "a map";
  }
  return "an unknown value";
}

/* The method's name for messages: at most 40 bytes of it, "deployment" when there is none. */
static void name_of(const gl_message* m, char* out, size_t cap) {
  if (!m->method) {
    snprintf(out, cap, "deployment");
    return;
  }
  int n = m->method_len > 40 ? 40 : (int)m->method_len;
  snprintf(out, cap, "%.*s%s", n, m->method, m->method_len > 40 ? "..." : "");
}

static void fail(gl_args* a, const char* fmt, const char* what, const char* got) {
  if (a->failed) return;
  a->failed = 1;
  char where[128];
  if (a->keyword[0]) {
    snprintf(where, sizeof(where), "keyword argument %s of %s", a->keyword, a->method);
  } else {
    snprintf(where, sizeof(where), "argument %u of %s", (unsigned)a->next, a->method);
  }
  snprintf(a->error, sizeof(a->error), fmt, where, what, got);
}

static void init(const gl_message* m, gl_args* a) {
  memset(a, 0, sizeof(*a));
  name_of(m, a->method, sizeof(a->method));
}

void gl_args_open(const gl_message* m, uint64_t min, uint64_t max, gl_args* a) {
  init(m, a);
  if (m->has_args) {
    gl_item it;
    a->r = m->args;
    if (gl_next(&a->r, &it) || it.kind != GL_K_ARRAY) {
      a->failed = 1;
      snprintf(a->error, sizeof(a->error), "%s: \"args\" is not an array", a->method);
      return;
    }
    a->count = it.n;
  }
  if (a->count < min || a->count > max) {
    a->failed = 1;
    if (min == max) {
      snprintf(a->error, sizeof(a->error), "%s takes %llu argument%s, got %llu", a->method,
               (unsigned long long)min, min == 1 ? "" : "s", (unsigned long long)a->count);
    } else {
      snprintf(a->error, sizeof(a->error), "%s takes %llu to %llu arguments, got %llu", a->method,
               (unsigned long long)min, (unsigned long long)max, (unsigned long long)a->count);
    }
  }
}

int gl_kwarg_open(const gl_message* m, const char* name, gl_args* a) {
  init(m, a);
  snprintf(a->keyword, sizeof(a->keyword), "%.40s", name);
  if (!m->has_kwargs) return 0;
  gl_reader r = m->kwargs;
  int e = gl_map_find(&r, name);
  if (e == GL_ENOTFOUND) return 0;
  if (e) {
    a->failed = 1;
    snprintf(a->error, sizeof(a->error), "%s: \"kwargs\" is not a well-formed map", a->method);
    return 0;
  }
  a->r = r;
  a->count = 1;
  return 1;
}

uint64_t gl_args_count(const gl_args* a) { return a->count; }

const char* gl_args_error(const gl_args* a) { return a->failed ? a->error : NULL; }

/* The next item, or NULL (and the error set) when it is missing or malformed. Containers are
 * returned at their header: the caller skips their content. */
static int next_item(gl_args* a, gl_item* it) {
  if (a->failed) return 0;
  if (a->next >= a->count) {
    a->next++;
    fail(a, "%s: missing%s%s", "", "");
    return 0;
  }
  a->next++;
  if (gl_next(&a->r, it)) {
    fail(a, "%s: malformed calldata%s%s", "", "");
    return 0;
  }
  return 1;
}

static int expect(gl_args* a, gl_item* it, int ok, const char* what) {
  /* After a failure every later read returns early, so a container's content left unread
   * cannot be misread as the next argument. */
  if (!ok) fail(a, "%s: expected %s, got %s", what, kind_name(it->kind));
  return ok;
}

/* The reader marks integers of 2^61 and above "big" (their header does not fit 64 bits). */
static int magnitude_u64(const gl_item* it, uint64_t* v) {
  if (!it->big) {
    *v = it->u;
    return 1;
  }
  uint8_t le[32];
  if (gl_item_magnitude(it, le) != 0) return 0;
  for (int i = 8; i < 32; ++i) {
    if (le[i]) return 0;
  }
  *v = 0;
  for (int i = 7; i >= 0; --i) *v = (*v << 8) | le[i];
  return 1;
}

uint64_t gl_arg_u64(gl_args* a) {
  gl_item it;
  uint64_t v = 0;
  if (!next_item(a, &it)) return 0;
  if (!expect(a, &it, it.kind == GL_K_UINT, "an unsigned 64-bit integer")) return 0;
  if (!magnitude_u64(&it, &v)) {
    fail(a, "%s: expected %s, got %s", "an unsigned 64-bit integer", "a wider integer");
    return 0;
  }
  return v;
}

int64_t gl_arg_i64(gl_args* a) {
  gl_item it;
  if (!next_item(a, &it)) return 0;
  if (!expect(a, &it, it.kind == GL_K_UINT || it.kind == GL_K_NINT, "a signed 64-bit integer")) return 0;
  uint64_t m = 0;
  /* m <= INT64_MAX both ways: a negative is -m-1, so INT64_MIN has m = INT64_MAX */
  if (!magnitude_u64(&it, &m) || m > (uint64_t)INT64_MAX) {
    fail(a, "%s: expected %s, got %s", "a signed 64-bit integer", "an integer out of its range");
    return 0;
  }
  return it.kind == GL_K_UINT ? (int64_t)m : -(int64_t)m - 1;
}

int gl_arg_bool(gl_args* a) {
  gl_item it;
  if (!next_item(a, &it)) return 0;
  return expect(a, &it, it.kind == GL_K_TRUE || it.kind == GL_K_FALSE, "a bool") && it.kind == GL_K_TRUE;
}

void gl_arg_u256(gl_args* a, uint8_t le[32]) {
  gl_item it;
  memset(le, 0, 32);
  if (!next_item(a, &it)) return;
  if (!expect(a, &it, it.kind == GL_K_UINT, "an unsigned 256-bit integer")) return;
  if (gl_item_u256(&it, le) != 0) {
    memset(le, 0, 32);
    fail(a, "%s: expected %s, got %s", "an unsigned 256-bit integer", "a wider integer");
  }
}

void gl_arg_address(gl_args* a, uint8_t out[20]) {
  gl_item it;
  memset(out, 0, 20);
  if (!next_item(a, &it)) return;
  if (expect(a, &it, it.kind == GL_K_ADDRESS, "an address")) memcpy(out, it.data, 20);
}

const char* gl_arg_str(gl_args* a, size_t* len) {
  gl_item it;
  *len = 0;
  if (!next_item(a, &it)) return "";
  if (!expect(a, &it, it.kind == GL_K_STR, "a string")) return "";
  *len = (size_t)it.n;
  return (const char*)it.data;
}

const uint8_t* gl_arg_bytes(gl_args* a, size_t* len) {
  static const uint8_t kEmpty[1] = {0};
  gl_item it;
  *len = 0;
  if (!next_item(a, &it)) return kEmpty;
  if (!expect(a, &it, it.kind == GL_K_BYTES, "bytes")) return kEmpty;
  *len = (size_t)it.n;
  return it.data;
}

const uint8_t* gl_arg_value(gl_args* a, size_t* len) {
  *len = 0;
  if (a->failed) return NULL;
  if (a->next >= a->count) {
    a->next++;
    fail(a, "%s: missing%s%s", "", "");
    return NULL;
  }
  a->next++;
  const uint8_t* start = a->r.p;
  if (gl_skip(&a->r)) {
    fail(a, "%s: malformed calldata%s%s", "", "");
    return NULL;
  }
  *len = (size_t)(a->r.p - start);
  return start;
}
