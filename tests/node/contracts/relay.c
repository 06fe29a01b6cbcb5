/* relay: a chain of CallContracts, one hop per address.
 *   {"": "hop", "args": [a1, a2, ..., an]} -> calls a1's hop with [a2..an] and returns what it
 *   returned plus 1; with no address it returns 0. So n relays deployed once each give n for a
 *   chain n calls deep.
 *   {"": "deep", "args": [n]} -> calls its own deep(n-1) (n VMs under the first) and returns n;
 *   deep(0) returns 0. A chain too deep ends in an error: every VM costs the spec's vm_spawn_cost
 *   of the run's RAM budget (31 fit in 4 GiB). */
#include "genlayer.h"

#define MAX_HOPS 16

/* Calls `callee` with `call` and returns its integer answer plus 1. */
static void forward(const uint8_t callee[20], gl_buf* call) {
  gl_buf result = {0};
  int e = gl_call_contract(callee, call, 0, &result);
  gl_buf_free(call);
  if (e != GL_SUCCESS) gl_user_error("call refused");
  /* [result_code][data]: 0 = Return with calldata data; pass a callee's error on as it was. */
  if (result.len < 1 || result.data[0] != 0) {
    gl_buf why = {0};
    gl_buf_append(&why, "callee failed: ", 15);
    if (result.len > 1) gl_buf_append(&why, result.data + 1, result.len - 1 > 200 ? 200 : result.len - 1);
    gl_buf_append(&why, "", 1);
    gl_user_error((const char*)why.data);
  }
  gl_reader r;
  gl_item it;
  gl_reader_init(&r, result.data + 1, result.len - 1);
  if (gl_next(&r, &it) != GL_SUCCESS || it.kind != GL_K_UINT || it.big) gl_user_error("callee returned no count");
  gl_buf out = {0};
  gl_enc_u64(&out, it.u + 1);
  gl_return(&out);
}

/* Returns 0 for an empty chain. */
static void return_zero(void) {
  gl_buf out = {0};
  gl_enc_u64(&out, 0);
  gl_return(&out);
}

/* Starts the calldata {"": method, "args": [...]}; the caller encodes the nargs arguments. */
static void begin_call(gl_buf* call, const char* method, size_t nargs) {
  gl_enc_map(call, 2);
  gl_enc_key(call, "");
  gl_enc_cstr(call, method);
  gl_enc_key(call, "args");
  gl_enc_array(call, nargs);
}

static void run(const gl_message* m) {
  if (m->is_init) gl_return(NULL);
  if (gl_method_is(m, "deep")) {
    gl_args d;
    gl_args_open(m, 1, 1, &d);
    uint64_t n = gl_arg_u64(&d);
    gl_args_check(&d);
    if (n == 0) return_zero();
    gl_buf call = {0};
    begin_call(&call, "deep", 1);
    gl_enc_u64(&call, n - 1);
    forward(m->contract_address, &call);
  }
  if (!gl_method_is(m, "hop")) gl_user_error("unknown method");
  gl_args a;
  gl_args_open(m, 0, MAX_HOPS, &a);
  uint64_t n = gl_args_count(&a);
  uint8_t hops[MAX_HOPS][20];
  for (uint64_t i = 0; i < n; ++i) gl_arg_address(&a, hops[i]);
  gl_args_check(&a);
  if (n == 0) return_zero();
  gl_buf call = {0};
  begin_call(&call, "hop", (size_t)(n - 1));
  for (uint64_t i = 1; i < n; ++i) gl_enc_address(&call, hops[i]);
  forward(hops[0], &call);
}

GL_CONTRACT(run)
