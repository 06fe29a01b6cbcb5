/* The gl_call wrappers: request maps of spec 03-wasi_genlayer_sdk/02-gl_call.rst. wasm32 only. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "genlayer.h"
#include "gl_internal.h"

int gl_call_raw(const gl_buf* request, uint32_t* result_fd) {
  if (request->oom) return GL_ENOMEM;
  uint32_t fd = 0xffffffffu;
  uint32_t e = gl_sdk_gl_call(request->data, (uint32_t)request->len, &fd);
  if (result_fd) {
    *result_fd = fd;
  } else if (e == 0 && fd != 0xffffffffu) {
    close((int)fd);
  }
  return (int)e;
}

int gl_call_named(const char* name, const gl_buf* body, uint32_t* fd) {
  gl_buf req = {0};
  gl_enc_map(&req, 1);
  gl_enc_key(&req, name);
  gl_enc_raw(&req, body);
  int e = gl_call_raw(&req, fd);
  gl_buf_free(&req);
  return e;
}

void gl_return(const gl_buf* value) {
  gl_buf body = {0};
  if (value) {
    gl_enc_raw(&body, value);
  } else {
    gl_enc_null(&body);
  }
  gl_call_named("Return", &body, NULL);
  /* gl_call(Return) does not come back; if it does, stop anyway. */
  _exit(1);
}

void gl_user_error(const char* message) {
  gl_buf body = {0};
  gl_enc_cstr(&body, message);
  gl_call_named("UserError", &body, NULL);
  _exit(1);
}

int gl_trace(const char* message) {
  gl_buf body = {0};
  gl_enc_map(&body, 1);
  gl_enc_key(&body, "Message");
  gl_enc_cstr(&body, message);
  int e = gl_call_named("Trace", &body, NULL);
  gl_buf_free(&body);
  return e;
}

int gl_emit_event(const uint8_t (*topics)[32], size_t n, const gl_buf* blob) {
  gl_buf body = {0};
  gl_enc_map(&body, 2);
  gl_enc_key(&body, "blob");
  gl_enc_raw(&body, blob);
  gl_enc_key(&body, "topics");
  gl_enc_array(&body, n);
  for (size_t i = 0; i < n; ++i) gl_enc_bytes(&body, topics[i], 32);
  int e = gl_call_named("EmitEvent", &body, NULL);
  gl_buf_free(&body);
  return e;
}

int gl_post_message(const uint8_t address[20], const gl_buf* calldata, const uint8_t value_le[32],
                    const char* on) {
  gl_buf body = {0};
  gl_enc_map(&body, 4);
  gl_enc_key(&body, "address");
  gl_enc_address(&body, address);
  gl_enc_key(&body, "calldata");
  gl_enc_raw(&body, calldata);
  gl_enc_key(&body, "on");
  gl_enc_cstr(&body, on);
  gl_enc_key(&body, "value");
  gl_enc_u256(&body, value_le);
  int e = gl_call_named("PostMessage", &body, NULL);
  gl_buf_free(&body);
  return e;
}

int gl_deploy_contract(const gl_buf* calldata, const void* code, size_t code_len, const uint8_t value_le[32],
                       const char* on, const uint8_t salt_nonce_le[32]) {
  gl_buf body = {0};
  gl_enc_map(&body, 5);
  gl_enc_key(&body, "calldata");
  gl_enc_raw(&body, calldata);
  gl_enc_key(&body, "code");
  gl_enc_bytes(&body, code, code_len);
  gl_enc_key(&body, "on");
  gl_enc_cstr(&body, on);
  gl_enc_key(&body, "salt_nonce");
  gl_enc_u256(&body, salt_nonce_le);
  gl_enc_key(&body, "value");
  gl_enc_u256(&body, value_le);
  int e = gl_call_named("DeployContract", &body, NULL);
  gl_buf_free(&body);
  return e;
}

int gl_eth_send(const uint8_t address[20], const void* calldata, size_t len, const uint8_t value_le[32]) {
  gl_buf body = {0};
  gl_enc_map(&body, 3);
  gl_enc_key(&body, "address");
  gl_enc_address(&body, address);
  gl_enc_key(&body, "calldata");
  gl_enc_bytes(&body, calldata, len);
  gl_enc_key(&body, "value");
  gl_enc_u256(&body, value_le);
  int e = gl_call_named("EthSend", &body, NULL);
  gl_buf_free(&body);
  return e;
}

int gl_eth_call(const uint8_t address[20], const void* calldata, size_t len, gl_buf* out) {
  gl_buf body = {0};
  gl_enc_map(&body, 2);
  gl_enc_key(&body, "address");
  gl_enc_address(&body, address);
  gl_enc_key(&body, "calldata");
  gl_enc_bytes(&body, calldata, len);
  uint32_t fd = 0;
  int e = gl_call_named("EthCall", &body, &fd);
  gl_buf_free(&body);
  if (e) return e;
  return gl_read_fd(fd, out);
}

int gl_call_contract(const uint8_t address[20], const gl_buf* calldata, uint32_t state, gl_buf* out) {
  gl_buf body = {0};
  gl_enc_map(&body, 3);
  gl_enc_key(&body, "address");
  gl_enc_address(&body, address);
  gl_enc_key(&body, "calldata");
  gl_enc_raw(&body, calldata);
  gl_enc_key(&body, "state");
  gl_enc_u64(&body, state);
  uint32_t fd = 0;
  int e = gl_call_named("CallContract", &body, &fd);
  gl_buf_free(&body);
  if (e) return e;
  return gl_read_fd(fd, out);
}

int gl_sandbox(const gl_buf* calldata, int allow_write_storage, int allow_send_messages, gl_buf* out) {
  gl_buf body = {0};
  gl_enc_map(&body, 5);
  gl_enc_key(&body, "allow_register_runners");
  gl_enc_bool(&body, 0);
  gl_enc_key(&body, "allow_send_messages");
  gl_enc_bool(&body, allow_send_messages);
  gl_enc_key(&body, "allow_write_storage");
  gl_enc_bool(&body, allow_write_storage);
  gl_enc_key(&body, "data");
  gl_enc_bytes(&body, calldata->data, calldata->len);
  gl_enc_key(&body, "runner");
  gl_enc_cstr(&body, "contract");
  uint32_t fd = 0;
  int e = gl_call_named("Sandbox", &body, &fd);
  gl_buf_free(&body);
  if (e) return e;
  return gl_read_fd(fd, out);
}

/* ---- the module gl_calls (their request maps and answer reader are gl_modules.c's) ---- */

static const char* gl_call_code_name(int e) {
  switch (e) {
    case GL_OVERFLOW: return "overflow";
    case GL_INVAL: return "inval: the request is malformed";
    case GL_FAULT: return "fault";
    case GL_ILSEQ: return "ilseq";
    case GL_IO: return "io";
    case GL_FORBIDDEN: return "forbidden: outside a non-deterministic block, or the executor has no such module";
    case GL_INBALANCE: return "inbalance";
    case GL_EDECODE: return "the answer is malformed";
    case GL_ENOMEM: return "out of memory";
    default: return "error";
  }
}

/* Sends a request built by `built` (its gl_enc_* result) and reads the answer into *out. */
static int module_call(const char* what, gl_buf* req, int built, gl_module_answer* out) {
  memset(out, 0, sizeof(*out));
  int e = built;
  uint32_t fd = 0;
  if (e == GL_SUCCESS) e = gl_call_raw(req, &fd);
  gl_buf_free(req);
  if (e == GL_SUCCESS) e = gl_read_fd(fd, &out->raw);
  if (e == GL_SUCCESS) e = gl_module_answer_parse(out);
  if (e != GL_SUCCESS && e != GL_EMODULE) {
    snprintf(out->error, sizeof(out->error), "%s refused (%d %s)", what, e, gl_call_code_name(e));
  }
  return e;
}

int gl_exec_prompt_images(const char* prompt, const char* response_format, const gl_image* images, size_t n_images,
                          gl_module_answer* out) {
  gl_buf req = {0};
  int built = gl_enc_exec_prompt(&req, prompt, response_format, images, n_images);
  return module_call("ExecPrompt", &req, built, out);
}

int gl_exec_prompt(const char* prompt, const char* response_format, gl_module_answer* out) {
  return gl_exec_prompt_images(prompt, response_format, NULL, 0, out);
}

int gl_exec_prompt_template(const gl_prompt_template* t, gl_module_answer* out) {
  gl_buf req = {0};
  int built = gl_enc_exec_prompt_template(&req, t);
  return module_call("ExecPromptTemplate", &req, built, out);
}

int gl_web_render(const char* url, const char* mode, const char* wait_after_loaded, gl_module_answer* out) {
  gl_buf req = {0};
  int built = gl_enc_web_render(&req, url, mode, wait_after_loaded);
  return module_call("WebRender", &req, built, out);
}

int gl_web_request(const char* method, const char* url, const gl_header* headers, size_t n_headers,
                   const void* body, size_t body_len, gl_module_answer* out) {
  gl_buf req = {0};
  int built = gl_enc_web_request(&req, method, url, headers, n_headers, body, body_len);
  return module_call("WebRequest", &req, built, out);
}
