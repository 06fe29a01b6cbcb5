/* listener: receives the messages another contract posts to it (the demo sends events.notify
 * from it, and events posts on_notified back: the follow-up transaction lands here).
 *   deploy: {}                                -> count 0
 *   {"": "on_notified", "args": [text]}       -> keeps text as the last notification, counts
 *                                                it, returns the new count
 *   {"": "last"}                              -> {"count": n, "text": the last text ("" before any)}
 *   {"": "#get-schema"}                       -> its methods, the GenVM ABI's schema method: a
 *                                                string holding a JSON object */
#include "genlayer.h"

/* The contract slot: the count (u64) at 0, the last text (length-prefixed bytes) at 8. */
#define COUNT_AT 0
#define TEXT_AT 8

static const char kSchema[] =
    "{\"ctor\": {\"params\": [], \"kwparams\": {}}, \"methods\": {"
    "\"on_notified\": {\"params\": [[\"text\", \"string\"]], \"kwparams\": {}, \"readonly\": false, \"ret\": \"int\"}, "
    "\"last\": {\"params\": [], \"kwparams\": {}, \"readonly\": true, \"ret\": {\"count\": \"int\", \"text\": \"string\"}}}}";

static void run(const gl_message* m) {
  gl_slot s;
  gl_contract_slot(&s);
  if (m->is_init) {
    gl_storage_write_u64(&s, COUNT_AT, 0);
    gl_return(NULL);
  }
  if (gl_method_is(m, "on_notified")) {
    gl_args a;
    gl_args_open(m, 1, 1, &a);
    size_t len = 0;
    const char* text = gl_arg_str(&a, &len);
    gl_args_check(&a);
    uint64_t count = gl_storage_read_u64(&s, COUNT_AT) + 1;
    if (gl_storage_write_u64(&s, COUNT_AT, count) != GL_SUCCESS ||
        gl_storage_write_bytes(&s, TEXT_AT, text, (uint32_t)len) != GL_SUCCESS) {
      gl_user_error("storage write refused");
    }
    gl_buf out = {0};
    gl_enc_u64(&out, count);
    gl_return(&out);
  }
  if (gl_method_is(m, "last")) {
    gl_buf text = {0};
    if (gl_storage_read_bytes(&s, TEXT_AT, &text) != GL_SUCCESS) gl_user_error("storage read refused");
    gl_buf out = {0};
    gl_enc_map(&out, 2);
    gl_enc_key(&out, "count");
    gl_enc_u64(&out, gl_storage_read_u64(&s, COUNT_AT));
    gl_enc_key(&out, "text");
    gl_enc_str(&out, (const char*)text.data, text.len);
    gl_return(&out);
  }
  if (gl_method_is(m, "#get-schema")) {
    gl_buf out = {0};
    gl_enc_cstr(&out, kSchema);
    gl_return(&out);
  }
  gl_user_error("unknown method");
}

GL_CONTRACT(run)
