/* big: results as large as a test asks for (tests/node/hardening_test.sh).
 *   {"": "bytes", "args": [n]} -> n bytes (0x5a each)
 *   {"": "int", "args": [n]}   -> a positive integer whose magnitude is n bytes of 0xff (2^(8n)-1)
 * The integer is written in calldata directly: ULEB128 of (magnitude << 3 | 1). */
#include <stdlib.h>
#include <string.h>

#include "genlayer.h"

static void run(const gl_message* m) {
  if (m->is_init) gl_return(NULL);
  gl_args a;
  gl_args_open(m, 1, 1, &a);
  uint64_t n = gl_arg_u64(&a);
  gl_args_check(&a);
  if (n > 64u * 1024 * 1024) gl_user_error("at most 64 MiB");
  gl_buf out = {0};
  if (gl_method_is(m, "bytes")) {
    uint8_t* data = malloc(n ? n : 1);
    if (!data) gl_user_error("out of memory");
    memset(data, 0x5a, n);
    gl_enc_bytes(&out, data, n);
    free(data);
    gl_return(&out);
  }
  if (gl_method_is(m, "int")) {
    /* The bit stream: 3 type bits (1 = positive integer), then 8n one bits; 7 bits per byte,
     * the high bit set on every byte but the last. */
    uint64_t bits = 3 + 8 * n;
    uint64_t len = (bits + 6) / 7;
    uint8_t* enc = malloc(len);
    if (!enc) gl_user_error("out of memory");
    for (uint64_t i = 0; i < len; ++i) {
      uint8_t group = 0;
      for (int b = 0; b < 7; ++b) {
        uint64_t bit = i * 7 + (uint64_t)b;
        int one = bit == 0 || (bit >= 3 && bit < bits);
        if (one) group |= (uint8_t)(1u << b);
      }
      enc[i] = (uint8_t)(group | (i + 1 < len ? 0x80 : 0));
    }
    gl_buf_append(&out, enc, len);
    free(enc);
    gl_return(&out);
  }
  gl_user_error("unknown method");
}

GL_CONTRACT(run)
