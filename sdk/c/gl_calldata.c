/* Calldata encoder and decoder for contracts: no allocation when reading, bounded depth. */
#include <stdlib.h>
#include <string.h>

#include "genlayer.h"

void gl_buf_free(gl_buf* b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

void gl_buf_append(gl_buf* b, const void* p, size_t n) {
  if (b->oom || n == 0) return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 64;
    while (cap < b->len + n) cap *= 2;
    uint8_t* d = (uint8_t*)realloc(b->data, cap);
    if (!d) {
      b->oom = 1;
      return;
    }
    b->data = d;
    b->cap = cap;
  }
  if (p) {
    memcpy(b->data + b->len, p, n);
  } else {
    memset(b->data + b->len, 0, n);
  }
  b->len += n;
}

static void put_uleb(gl_buf* b, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  do {
    uint8_t c = v & 0x7f;
    v >>= 7;
    if (v) c |= 0x80;
    tmp[n++] = c;
  } while (v);
  gl_buf_append(b, tmp, n);
}

/* A header whose value may not fit 61 bits: (value << 3) | type, value given little-endian. */
static void put_big_header(gl_buf* b, const uint8_t* le, size_t n, unsigned type) {
  uint8_t w[40];
  size_t len = n + 1;
  memset(w, 0, sizeof(w));
  /* shift left by 3 */
  unsigned carry = 0;
  for (size_t i = 0; i < n; ++i) {
    unsigned x = ((unsigned)le[i] << 3) | carry;
    w[i] = (uint8_t)x;
    carry = x >> 8;
  }
  w[n] = (uint8_t)carry;
  w[0] |= (uint8_t)type;
  while (len > 1 && w[len - 1] == 0) --len;
  /* emit 7 bits at a time */
  for (;;) {
    uint8_t c = w[0] & 0x7f;
    /* shift right by 7 */
    for (size_t i = 0; i < len; ++i) {
      w[i] = (uint8_t)((w[i] >> 7) | (i + 1 < len ? (uint8_t)(w[i + 1] << 1) : 0));
    }
    while (len > 1 && w[len - 1] == 0) --len;
    int more = len > 1 || w[0] != 0;
    if (more) c |= 0x80;
    gl_buf_append(b, &c, 1);
    if (!more) break;
  }
}

static void put_header(gl_buf* b, uint64_t value, unsigned type) {
  if (value < ((uint64_t)1 << 61)) {
    put_uleb(b, (value << 3) | type);
  } else {
    uint8_t le[8];
    for (int i = 0; i < 8; ++i) le[i] = (uint8_t)(value >> (8 * i));
    put_big_header(b, le, 8, type);
  }
}

void gl_enc_null(gl_buf* b) { put_header(b, 0, 0); }
void gl_enc_bool(gl_buf* b, int v) { put_header(b, v ? 2 : 1, 0); }
void gl_enc_u64(gl_buf* b, uint64_t v) { put_header(b, v, 1); }
void gl_enc_i64(gl_buf* b, int64_t v) {
  if (v >= 0) {
    put_header(b, (uint64_t)v, 1);
  } else {
    put_header(b, (uint64_t)(-(v + 1)), 2);
  }
}
void gl_enc_u256(gl_buf* b, const uint8_t le[32]) { put_big_header(b, le, 32, 1); }
void gl_enc_bytes(gl_buf* b, const void* p, size_t n) {
  put_header(b, n, 3);
  gl_buf_append(b, p, n);
}
void gl_enc_str(gl_buf* b, const char* s, size_t n) {
  put_header(b, n, 4);
  gl_buf_append(b, s, n);
}
void gl_enc_cstr(gl_buf* b, const char* s) { gl_enc_str(b, s, strlen(s)); }
void gl_enc_address(gl_buf* b, const uint8_t addr[20]) {
  put_header(b, 3, 0);
  gl_buf_append(b, addr, 20);
}
void gl_enc_array(gl_buf* b, size_t n) { put_header(b, n, 5); }
void gl_enc_map(gl_buf* b, size_t n) { put_header(b, n, 6); }
void gl_enc_key_n(gl_buf* b, const char* k, size_t n) {
  put_uleb(b, n);
  gl_buf_append(b, k, n);
}
void gl_enc_key(gl_buf* b, const char* k) { gl_enc_key_n(b, k, strlen(k)); }
void gl_enc_raw(gl_buf* b, const gl_buf* value) {
  if (value->oom) b->oom = 1;
  gl_buf_append(b, value->data, value->len);
}

/* ---- reading ---- */

void gl_reader_init(gl_reader* r, const void* p, size_t n) {
  r->p = (const uint8_t*)p;
  r->end = r->p + n;
}

/* Reads a ULEB128 into *v; *big set when it does not fit 64 bits. Rejects non-minimal forms. */
static int read_uleb(gl_reader* r, uint64_t* v, int* big) {
  uint64_t x = 0;
  unsigned shift = 0;
  *big = 0;
  const uint8_t* start = r->p;
  for (;;) {
    if (r->p >= r->end) return GL_EDECODE;
    uint8_t c = *r->p++;
    if (shift < 64) {
      uint64_t part = (uint64_t)(c & 0x7f);
      if (shift > 57 && (part >> (64 - shift)) != 0) *big = 1;
      x |= part << shift;
    } else if (c & 0x7f) {
      *big = 1;
    }
    if (!(c & 0x80)) {
      if (c == 0 && r->p - start > 1) return GL_EDECODE; /* non-minimal */
      break;
    }
    shift += 7;
    if (shift > 7 * 64) return GL_EDECODE;
  }
  *v = x;
  return 0;
}

int gl_next(gl_reader* r, gl_item* out) {
  memset(out, 0, sizeof(*out));
  const uint8_t* start = r->p;
  uint64_t h = 0;
  int big = 0;
  int e = read_uleb(r, &h, &big);
  if (e) return e;
  unsigned type = (unsigned)(h & 7);
  uint64_t v = h >> 3;
  if (big) {
    if (type != 1 && type != 2) return GL_EDECODE;
    out->kind = type == 1 ? GL_K_UINT : GL_K_NINT;
    out->big = 1;
    out->big_start = start;
    out->big_len = (size_t)(r->p - start);
    return 0;
  }
  /* A header that fits 64 bits may still carry a value above 61 bits in its top bits. */
  switch (type) {
    case 0:
      switch (v) {
        case 0: out->kind = GL_K_NULL; return 0;
        case 1: out->kind = GL_K_FALSE; return 0;
        case 2: out->kind = GL_K_TRUE; return 0;
        case 3:
          if ((size_t)(r->end - r->p) < 20) return GL_EDECODE;
          out->kind = GL_K_ADDRESS;
          out->data = r->p;
          out->n = 20;
          r->p += 20;
          return 0;
        default: return GL_EDECODE;
      }
    case 1: out->kind = GL_K_UINT; out->u = v; return 0;
    case 2: out->kind = GL_K_NINT; out->u = v; return 0;
    case 3:
    case 4:
      if (v > (uint64_t)(r->end - r->p)) return GL_EDECODE;
      out->kind = type == 3 ? GL_K_BYTES : GL_K_STR;
      out->data = r->p;
      out->n = v;
      r->p += v;
      return 0;
    case 5: out->kind = GL_K_ARRAY; out->n = v; return v > (uint64_t)(r->end - r->p) ? GL_EDECODE : 0;
    case 6: out->kind = GL_K_MAP; out->n = v; return v > (uint64_t)(r->end - r->p) ? GL_EDECODE : 0;
    default: return GL_EDECODE;
  }
}

int gl_key(gl_reader* r, const char** s, size_t* n) {
  uint64_t len = 0;
  int big = 0;
  int e = read_uleb(r, &len, &big);
  if (e) return e;
  if (big || len > (uint64_t)(r->end - r->p)) return GL_EDECODE;
  *s = (const char*)r->p;
  *n = (size_t)len;
  r->p += len;
  return 0;
}

int gl_skip(gl_reader* r) {
  struct {
    uint64_t left;
    int is_map;
  } st[GL_MAX_DEPTH];
  int top = 0;
  gl_item it;
  for (;;) {
    if (top > 0 && st[top - 1].is_map) {
      const char* k;
      size_t kn;
      int e = gl_key(r, &k, &kn);
      if (e) return e;
    }
    int e = gl_next(r, &it);
    if (e) return e;
    if ((it.kind == GL_K_ARRAY || it.kind == GL_K_MAP) && it.n > 0) {
      if (top == GL_MAX_DEPTH) return GL_EDECODE;
      st[top].left = it.n;
      st[top].is_map = it.kind == GL_K_MAP;
      ++top;
      continue;
    }
    /* A value ended: close every container it completes. */
    while (top > 0) {
      if (--st[top - 1].left == 0) {
        --top;
      } else {
        break;
      }
    }
    if (top == 0) return 0;
  }
}

int gl_map_find(gl_reader* r, const char* key) {
  gl_item it;
  int e = gl_next(r, &it);
  if (e) return e;
  if (it.kind != GL_K_MAP) return GL_EDECODE;
  size_t want = strlen(key);
  for (uint64_t i = 0; i < it.n; ++i) {
    const char* k;
    size_t kn;
    e = gl_key(r, &k, &kn);
    if (e) return e;
    if (kn == want && memcmp(k, key, kn) == 0) return 0;
    e = gl_skip(r);
    if (e) return e;
  }
  return GL_ENOTFOUND;
}

int gl_item_u256(const gl_item* it, uint8_t le[32]) {
  memset(le, 0, 32);
  if (it->kind != GL_K_UINT) return GL_EDECODE;
  return gl_item_magnitude(it, le);
}

int gl_item_magnitude(const gl_item* it, uint8_t le[32]) {
  memset(le, 0, 32);
  if (it->kind != GL_K_UINT && it->kind != GL_K_NINT) return GL_EDECODE;
  if (!it->big) {
    for (int i = 0; i < 8; ++i) le[i] = (uint8_t)(it->u >> (8 * i));
    return 0;
  }
  /* Collect the 7-bit groups, then drop the 3 type bits. */
  uint8_t w[40];
  memset(w, 0, sizeof(w));
  size_t bit = 0;
  for (size_t i = 0; i < it->big_len; ++i) {
    unsigned g = it->big_start[i] & 0x7f;
    for (int j = 0; j < 7; ++j, ++bit) {
      if ((g >> j) & 1) {
        if (bit / 8 >= sizeof(w)) return GL_EDECODE;
        w[bit / 8] |= (uint8_t)(1u << (bit % 8));
      }
    }
  }
  for (size_t i = 0; i < 36; ++i) w[i] = (uint8_t)((w[i] >> 3) | (w[i + 1] << 5));
  for (size_t i = 32; i < 40; ++i) {
    if (w[i]) return GL_EDECODE;
  }
  memcpy(le, w, 32);
  return 0;
}
