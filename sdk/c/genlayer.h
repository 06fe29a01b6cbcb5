/* genlayer.h: the C SDK for GenVM contracts (clang --target=wasm32-wasi).
 *
 * A contract is a WASI command. It reads its startup message (a calldata map) on stdin, acts,
 * and ends with gl_return() or gl_user_error(), which never come back (a contract function
 * that returns without either ends with UserError "<function> returned without gl_return or
 * gl_user_error", not a silent null). GL_CONTRACT(fn) writes main() for you:
 *
 *   static void run(const gl_message* msg) {
 *     gl_buf out = {0};
 *     gl_enc_u64(&out, 42);
 *     gl_return(&out);
 *   }
 *   GL_CONTRACT(run)
 *
 * Calldata (spec 04-contract-interface/01-calldata): gl_buf + gl_enc_* write values; map keys
 * must be written in bytewise-sorted order by the caller. gl_reader + gl_next() read one item
 * header at a time without allocating; gl_skip() skips a whole value; nesting is bounded by
 * GL_MAX_DEPTH. Storage: gl_storage_read/_write over the genlayer_sdk imports, plus the
 * spec's default slot derivation (SHA3-256 of slot id and offset). gl_call wrappers build the
 * request maps of spec 03-wasi_genlayer_sdk/02-gl_call.rst.
 *
 * Errors: functions returning int give 0 on success and a GL_E* / gl_call error code otherwise.
 */
#ifndef GENLAYER_SDK_H
#define GENLAYER_SDK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- genlayer_sdk imports (spec 03-wasi_genlayer_sdk/index.rst) ---- */
enum {
  GL_SUCCESS = 0,
  GL_OVERFLOW = 1,
  GL_INVAL = 2,
  GL_FAULT = 3,
  GL_ILSEQ = 4,
  GL_IO = 5,
  GL_FORBIDDEN = 6,
  GL_INBALANCE = 7,
  /* SDK-side errors, above the import codes */
  GL_EDECODE = 100, /* calldata malformed or of an unexpected kind */
  GL_ENOMEM = 101,
  GL_ENOTFOUND = 102,
  GL_EMODULE = 103 /* the LLM or web module refused: {"error": ...} (see gl_module_answer) */
};

#if defined(__wasm__)
#define GL_IMPORT(name) __attribute__((import_module("genlayer_sdk"), import_name(#name)))
#else
/* Native builds (the SDK's own tests) only use the calldata and hashing parts. */
#define GL_IMPORT(name)
#endif
GL_IMPORT(storage_read) uint32_t gl_sdk_storage_read(const uint8_t* slot, uint32_t index, uint8_t* buf, uint32_t len);
GL_IMPORT(storage_write) uint32_t gl_sdk_storage_write(const uint8_t* slot, uint32_t index, const uint8_t* buf, uint32_t len);
GL_IMPORT(get_balance) uint32_t gl_sdk_get_balance(const uint8_t* address, uint8_t* result);
GL_IMPORT(get_self_balance) uint32_t gl_sdk_get_self_balance(uint8_t* result);
GL_IMPORT(gl_call) uint32_t gl_sdk_gl_call(const uint8_t* request, uint32_t request_len, uint32_t* result_fd);

/* ---- calldata writing ---- */
typedef struct {
  uint8_t* data;
  size_t len;
  size_t cap;
  int oom; /* set when an append failed; the buffer content is then incomplete */
} gl_buf;

void gl_buf_free(gl_buf* b);
void gl_buf_append(gl_buf* b, const void* p, size_t n); /* p NULL: n zero bytes */
void gl_enc_null(gl_buf* b);
void gl_enc_bool(gl_buf* b, int v);
void gl_enc_u64(gl_buf* b, uint64_t v);
void gl_enc_i64(gl_buf* b, int64_t v);
void gl_enc_u256(gl_buf* b, const uint8_t le[32]); /* unsigned 256-bit, little-endian */
void gl_enc_bytes(gl_buf* b, const void* p, size_t n);
void gl_enc_str(gl_buf* b, const char* s, size_t n);
void gl_enc_cstr(gl_buf* b, const char* s);
void gl_enc_address(gl_buf* b, const uint8_t addr[20]);
void gl_enc_array(gl_buf* b, size_t n); /* then n values */
void gl_enc_map(gl_buf* b, size_t n);   /* then n (key, value) pairs, keys sorted */
void gl_enc_key(gl_buf* b, const char* k);
void gl_enc_key_n(gl_buf* b, const char* k, size_t n);
void gl_enc_raw(gl_buf* b, const gl_buf* value); /* splice an encoded value */

/* ---- calldata reading ---- */
#define GL_MAX_DEPTH 64

typedef enum {
  GL_K_NULL,
  GL_K_FALSE,
  GL_K_TRUE,
  GL_K_ADDRESS,
  GL_K_UINT, /* value in u (if !big) */
  GL_K_NINT, /* value -(u)-1 (if !big) */
  GL_K_BYTES,
  GL_K_STR,
  GL_K_ARRAY, /* n items follow */
  GL_K_MAP    /* n (key, value) pairs follow; read keys with gl_key */
} gl_kind;

typedef struct {
  gl_kind kind;
  uint64_t n;          /* length (bytes, str, array, map) */
  uint64_t u;          /* integer magnitude (see kind) when !big */
  int big;             /* integer wider than 64 bits */
  const uint8_t* data; /* bytes / str / address payload */
  const uint8_t* big_start; /* ULEB128 of a big integer's header */
  size_t big_len;
} gl_item;

typedef struct {
  const uint8_t* p;
  const uint8_t* end;
} gl_reader;

void gl_reader_init(gl_reader* r, const void* p, size_t n);
int gl_next(gl_reader* r, gl_item* out);
int gl_key(gl_reader* r, const char** s, size_t* n);
int gl_skip(gl_reader* r);
/* r at a map header: finds `key` and leaves r at its value. */
int gl_map_find(gl_reader* r, const char* key);
/* Integer item as unsigned 256-bit little-endian; GL_EDECODE if negative or wider. */
int gl_item_u256(const gl_item* it, uint8_t le[32]);
/* Integer item's magnitude m (the value is m, or -m-1 for GL_K_NINT) as 256-bit little-endian;
 * GL_EDECODE if not an integer or wider. */
int gl_item_magnitude(const gl_item* it, uint8_t le[32]);

/* ---- storage ---- */
typedef struct {
  uint8_t b[32];
} gl_slot;

int gl_storage_read(const gl_slot* slot, uint32_t index, void* buf, uint32_t len);
int gl_storage_write(const gl_slot* slot, uint32_t index, const void* buf, uint32_t len);
uint64_t gl_storage_read_u64(const gl_slot* slot, uint32_t index);
int gl_storage_write_u64(const gl_slot* slot, uint32_t index, uint64_t v);
/* Variable-length strings and bytes as the spec's default derivation stores them
 * (04-contract-interface/03-storage.rst): the length as u32 little-endian at `offset` in
 * `slot`, the content from index 0 of the indirection slot gl_slot_derive(slot, offset).
 * Read: out gets the content (appended; caller frees), GL_ENOMEM when it does not fit. */
int gl_storage_write_bytes(const gl_slot* slot, uint32_t offset, const void* data, uint32_t len);
int gl_storage_read_bytes(const gl_slot* slot, uint32_t offset, gl_buf* out);
/* The default derivation: out = sha3_256(slot || offset as u32 little-endian). */
void gl_slot_derive(const gl_slot* slot, uint32_t offset, gl_slot* out);
/* A mapping entry: out = sha3_256(slot || key). */
void gl_slot_of_key(const gl_slot* slot, const void* key, size_t key_len, gl_slot* out);
/* The slot of this contract's data: derived from the root slot at offset 1 ("contract"). */
void gl_contract_slot(gl_slot* out);
void gl_sha3_256(const void* p, size_t n, uint8_t out[32]);

/* ---- the startup message and entry ---- */
typedef struct {
  uint8_t contract_address[20];
  uint8_t sender_address[20];
  uint8_t origin_address[20];
  uint8_t value[32]; /* little-endian */
  int is_init;
  uint32_t entry_kind;
  const uint8_t* entry_data; /* calldata: {"": method, "args": [...], "kwargs": {...}} */
  size_t entry_len;
  const char* method; /* NULL on deployment or when absent */
  size_t method_len;
  int has_args;
  gl_reader args; /* at the "args" array header when has_args */
  int has_kwargs;
  gl_reader kwargs; /* at the "kwargs" map header when has_kwargs */
  /* consensus_stage (entry_kind 2): the leader's [code][data] in a validator's block (the
   * startup message's entry_stage_data {"leader_result": bytes}), else NULL */
  const uint8_t* stage_data;
  size_t stage_len;
} gl_message;

/* 1 if the entry names `name`. */
int gl_method_is(const gl_message* m, const char* name);
/* Parses the executor's startup message (GL_CONTRACT does it for you). The message points into
 * `data`, which must outlive it. 0, or GL_EDECODE / a reader error. */
int gl_message_parse(const void* data, size_t len, gl_message* m);

/* ---- arguments ----
 * Typed reads of the call's "args" and "kwargs". A wrong count, a missing argument or a value
 * of another kind records one message naming the argument, what was expected and what came
 * ("argument 2 of transfer: expected an address, got a string"); later reads then return zero
 * values. gl_args_check ends the call with that message as its UserError.
 *
 *   gl_args a;
 *   gl_args_open(m, 2, 2, &a);
 *   uint8_t to[20];
 *   gl_arg_address(&a, to);
 *   uint64_t amount = gl_arg_u64(&a);
 *   gl_args_check(&a);
 *
 *   if (gl_kwarg_open(m, "memo", &a)) { size_t n; const char* memo = gl_arg_str(&a, &n); ... }
 */
typedef struct {
  gl_reader r;
  uint64_t count;
  uint64_t next;
  int failed;
  char method[48];
  char keyword[48];
  char error[256];
} gl_args;
/* The positional arguments; their count must lie in [min, max]. */
void gl_args_open(const gl_message* m, uint64_t min, uint64_t max, gl_args* a);
/* Keyword argument `name` as a list of one: 1 when present, 0 when absent (no error). */
int gl_kwarg_open(const gl_message* m, const char* name, gl_args* a);
uint64_t gl_args_count(const gl_args* a);
uint64_t gl_arg_u64(gl_args* a);
int64_t gl_arg_i64(gl_args* a);
int gl_arg_bool(gl_args* a);
void gl_arg_u256(gl_args* a, uint8_t le[32]);
void gl_arg_address(gl_args* a, uint8_t out[20]);
/* Strings and bytes point into the message (not NUL-terminated). */
const char* gl_arg_str(gl_args* a, size_t* len);
const uint8_t* gl_arg_bytes(gl_args* a, size_t* len);
/* Any value, as its encoded calldata (to store or forward as is). */
const uint8_t* gl_arg_value(gl_args* a, size_t* len);
/* NULL, or the first problem met. */
const char* gl_args_error(const gl_args* a);
/* Ends the call with UserError gl_args_error(a) when there was a problem (wasm32 only). */
void gl_args_check(const gl_args* a);

typedef void (*gl_entry_fn)(const gl_message* msg);
int gl_run_entry(gl_entry_fn fn);
#define GL_CONTRACT(fn) \
  int main(void) { return gl_run_entry(fn); }

/* ---- gl_call wrappers ---- */
/* Terminate the VM. `value` is an encoded calldata value (NULL: null). */
__attribute__((noreturn)) void gl_return(const gl_buf* value);
__attribute__((noreturn)) void gl_user_error(const char* message);
/* Debug trace (emitted at debug levels safe-unbounded and above). */
int gl_trace(const char* message);
/* topics: n 32-byte topics (n <= 4); blob: an encoded calldata map. */
int gl_emit_event(const uint8_t (*topics)[32], size_t n, const gl_buf* blob);
/* calldata: an encoded call-convention map; on: "finalized" or "accepted". */
int gl_post_message(const uint8_t address[20], const gl_buf* calldata, const uint8_t value_le[32], const char* on);
int gl_deploy_contract(const gl_buf* calldata, const void* code, size_t code_len, const uint8_t value_le[32],
                       const char* on, const uint8_t salt_nonce_le[32]);
int gl_eth_send(const uint8_t address[20], const void* calldata, size_t len, const uint8_t value_le[32]);
/* Answers are read from the result descriptor into *out (caller frees with gl_buf_free). */
int gl_eth_call(const uint8_t address[20], const void* calldata, size_t len, gl_buf* out);
/* *out receives the sub-VM result buffer: [result_code][data]. state: 0 default, 1 latest
 * final, 2 latest non-final. */
int gl_call_contract(const uint8_t address[20], const gl_buf* calldata, uint32_t state, gl_buf* out);
/* Runs this contract's code again as a sandboxed sub-VM (entry_kind 1) with `calldata` (an
 * encoded call-convention map) as its entry; *out receives [result_code][data]. */
int gl_sandbox(const gl_buf* calldata, int allow_write_storage, int allow_send_messages, gl_buf* out);

/* ---- non-deterministic blocks (RunNondet) ----
 * A block is a pair of functions of this contract. In a leader run the leader function runs in a
 * non-deterministic sub-VM and ends with gl_return / gl_user_error (or fails); its result is
 * recorded. In a validator run the validator function gets the leader's result buffer
 * ([result_code][data]) and returns 1 to agree, 0 to disagree. Either way gl_run_nondet gives
 * the caller the leader's buffer, so every node continues from the same value.
 *
 *   static const gl_nondet_block blocks[] = {{my_leader, my_validator}};
 *   GL_CONTRACT_WITH_NONDET(run, blocks)
 *   ... gl_run_nondet(0, data, len, &out);   // in run(): block 0 with `data`
 */
typedef struct {
  void (*leader)(const uint8_t* data, size_t len);
  int (*validator)(const uint8_t* data, size_t len, const uint8_t* leader_result, size_t leader_len);
} gl_nondet_block;
int gl_run_entry_nondet(gl_entry_fn fn, const gl_nondet_block* blocks, size_t n);
#define GL_CONTRACT_WITH_NONDET(fn, blocks) \
  int main(void) { return gl_run_entry_nondet(fn, blocks, sizeof(blocks) / sizeof(blocks[0])); }
/* Runs block `index` with `data`; *out receives the leader's [result_code][data]. */
int gl_run_nondet(uint32_t index, const void* data, size_t len, gl_buf* out);

/* ---- the LLM and web modules (02-gl_call.rst ExecPrompt, ExecPromptTemplate, WebRender,
 * WebRequest; answers as 03-schemas.rst "Module Result Encoding") ----
 * Only inside a non-deterministic block: elsewhere, or when the executor was given no module,
 * the executor answers GL_FORBIDDEN. Each call returns
 *   GL_SUCCESS   the module answered {"ok": X}: X is in answer->value
 *   GL_EMODULE   the module refused, {"error": E} (the modules send {causes: [..], ctx: {..}}):
 *                E is in answer->value and answer->error says it in one line, e.g.
 *                "PROMPT_TOO_LARGE (detail: 5000 bytes)"
 *   a gl_call code (GL_FORBIDDEN, GL_INVAL) or GL_EDECODE / GL_ENOMEM / GL_IO, also in
 *   answer->error.
 * A module that fails (it died mid-call, answered FatalError or nonsense) is not a refusal: the
 * executor ends the whole run with an internal error and the call never returns.
 *
 *   gl_module_answer a;
 *   if (gl_exec_prompt("What is 2+2?", "text", &a) != GL_SUCCESS) gl_user_error(a.error);
 *   size_t n;
 *   const char* text = gl_answer_str(&a, &n);
 *   ...
 *   gl_module_answer_free(&a);
 */
typedef struct {
  gl_buf raw;           /* what the executor wrote: {"ok": X} or {"error": E}, encoded */
  const uint8_t* value; /* X (or E), encoded, pointing into raw; NULL before a module answer */
  size_t value_len;
  int is_error;         /* 1: value is E */
  char error[256];      /* "" on success, else a one-line description */
} gl_module_answer;
void gl_module_answer_free(gl_module_answer* a);
/* Reads a->raw (a module result) into the other fields: GL_SUCCESS, GL_EMODULE or GL_EDECODE. */
int gl_module_answer_parse(gl_module_answer* a);
/* X as a string / bool; NULL / GL_EDECODE when X is something else. */
const char* gl_answer_str(const gl_module_answer* a, size_t* len);
int gl_answer_bool(const gl_module_answer* a, int* v);
/* X's map entry `key` (a text render's "text", a request's "status" / "body", a JSON prompt's
 * field): *it is its item (for a string or bytes, it->data / it->n). GL_ENOTFOUND, GL_EDECODE. */
int gl_answer_field(const gl_module_answer* a, const char* key, gl_item* it);

typedef struct {
  const void* data; /* PNG or JPEG bytes */
  size_t len;
} gl_image;
/* ExecPrompt. response_format "text" (NULL: text) answers a string, "json" an object (a map). At
 * most 2 images (the executor refuses more with GL_INVAL). */
int gl_exec_prompt(const char* prompt, const char* response_format, gl_module_answer* out);
int gl_exec_prompt_images(const char* prompt, const char* response_format, const gl_image* images, size_t n_images,
                          gl_module_answer* out);

/* ExecPromptTemplate: the three templates and their fields (all NUL-terminated, all required for
 * the template; a missing one is GL_INVAL before anything is sent).
 *   GL_EQ_COMPARATIVE                leader_answer, validator_answer, principle -> bool
 *   GL_EQ_NON_COMPARATIVE_LEADER     task, criteria, input                      -> string
 *   GL_EQ_NON_COMPARATIVE_VALIDATOR  task, criteria, input, output              -> bool */
typedef enum { GL_EQ_COMPARATIVE, GL_EQ_NON_COMPARATIVE_LEADER, GL_EQ_NON_COMPARATIVE_VALIDATOR } gl_template_kind;
typedef struct {
  gl_template_kind kind;
  const char* leader_answer;
  const char* validator_answer;
  const char* principle;
  const char* task;
  const char* criteria;
  const char* input;
  const char* output;
} gl_prompt_template;
int gl_exec_prompt_template(const gl_prompt_template* t, gl_module_answer* out);

/* WebRender: mode "text" (X {"text": String}), "html" (X {"response": {status, headers, body}}) or
 * "screenshot" (X {"image": PNG}); wait_after_loaded "<n>s" / "<n>ms" (NULL: "0ms"). */
int gl_web_render(const char* url, const char* mode, const char* wait_after_loaded, gl_module_answer* out);

/* WebRequest: method GET, POST, HEAD, PUT, DELETE, OPTIONS or PATCH; headers in any order (their
 * names distinct, else GL_INVAL); body NULL for none. X is {status, headers, body}. */
typedef struct {
  const char* name;
  const void* value;
  size_t len;
} gl_header;
int gl_web_request(const char* method, const char* url, const gl_header* headers, size_t n_headers,
                   const void* body, size_t body_len, gl_module_answer* out);

/* The request maps the calls above send ({"ExecPrompt": {...}} and so on), appended to *req;
 * GL_INVAL for a missing field, a bad mode or format, or repeated header names. */
int gl_enc_exec_prompt(gl_buf* req, const char* prompt, const char* response_format, const gl_image* images,
                       size_t n_images);
int gl_enc_exec_prompt_template(gl_buf* req, const gl_prompt_template* t);
int gl_enc_web_render(gl_buf* req, const char* url, const char* mode, const char* wait_after_loaded);
int gl_enc_web_request(gl_buf* req, const char* method, const char* url, const gl_header* headers, size_t n_headers,
                       const void* body, size_t body_len);

/* Raw: sends an encoded request map; if result_fd is non-NULL it receives the descriptor. */
int gl_call_raw(const gl_buf* request, uint32_t* result_fd);
int gl_read_fd(uint32_t fd, gl_buf* out);

#ifdef __cplusplus
}
#endif
#endif /* GENLAYER_SDK_H */
