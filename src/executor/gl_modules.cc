// The module gl_calls (02-gl_call.rst WebRender, WebRequest, ExecPrompt, ExecPromptTemplate):
// the contract's request is read with the wire's own payload readers, sent to the module as
// the public executor sends it, and the module's answer handed back in the spec's module result
// encoding (03-schemas.rst): {"ok": result} or {"error": the module's user error}. A module that
// is gone (it could not be reached, or its connection broke mid-call: killed, stopped) is the
// contract's {"error": {"causes": ["MODULE_UNAVAILABLE"], "ctx": {"module": "llm"|"web"}}}, and
// so is every later call to it in the run; the public executor ends the run instead (a
// departure: the contract decides, and nothing depends on where the module died). A module
// FatalError or an answer of the wrong shape ends the run with an internal error, as the public
// executor's module errors do. docs/PROTOCOLS.md, ## Executor behaviour, "Modules", lists every
// choice.
#include <algorithm>

#include "common/module/protocol.h"
#include "executor/module_client.h"
#include "executor/u256.h"
#include "executor/vm_state.h"

namespace genvm::executor {

using calldata::Value;
using wasm::Trap;

namespace {

// internal-constants.json top_limits: the RAM a web call needs left before it is sent.
constexpr std::uint64_t kWebRequestMinSpace = 65536;
constexpr std::uint64_t kWebRenderMinSpace = 134217728;

const BigInt& u256_max() {
  static const BigInt max = *BigInt::parse_decimal(
      "115792089237316195423570985008687907853269984665640564039457584007913129639935");
  return max;
}

calldata::Bytes module_result(const char* key, Value v) { return calldata::encode(Value::map({{key, std::move(v)}})); }

}  // namespace

std::optional<Trap> VmState::module_call_failed(GlCall& g, const char* module, const Error& e) {
  if (module_call_error(e) != ModuleCallError::kGone) return module_failure(e);
  log(LogLevel::kWarn, "module_unavailable", std::string(module) + ": " + e.to_string());
  Value error = Value::map({{"causes", Value::array({"MODULE_UNAVAILABLE"})}, {"ctx", Value::map({{"module", module}})}});
  return give_fd(g, module_result("error", std::move(error)));
}

std::optional<Trap> VmState::module_failure(const Error& e) {
  log(LogLevel::kError, "module_error", e.to_string());
  return internal(e);
}

std::optional<Trap> VmState::gl_web(GlCall& g) {
  if (frame_.deterministic) return answer(g, kForbidden);
  if (!ctx_.module_web || !ctx_.module_web->configured()) return answer(g, kForbidden);  // "module availability"
  bool render = g.method == "WebRender";
  module::WebMessage message;
  if (render) {
    auto p = module::parse_render_payload(g.body);
    if (!p) return answer(g, kInval);
    message.payload = std::move(*p);
  } else {
    auto p = module::parse_request_payload(g.body);
    if (!p) return answer(g, kInval);
    message.payload = std::move(*p);
  }
  // The module may answer with at most 3/4 of the RAM the run has left (the public
  // executor's space_left_with_overhead); too little left is this sub-VM's OOM.
  std::uint64_t left = ctx_.ram->left();
  if (left < (render ? kWebRenderMinSpace : kWebRequestMinSpace)) return end_vm_error(VmError::out_of().memory());
  message.size_limit = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, UINT32_MAX) * 3 / 4);
  auto reply = ctx_.module_web->call(module::web_message_value(message));
  if (!reply) return module_call_failed(g, "web", reply.error());
  if (reply->kind != module::AnswerKind::kOk) return settle_refusal(g, std::move(*reply));
  auto checked = module::check_render_answer(reply->value);
  if (!checked) return module_failure(checked.error());
  if (render) return give_fd(g, module_result("ok", std::move(reply->value)));
  // A Request is answered {"response": Response}; the contract gets {"ok": Response}
  // (03-schemas.rst "WebRequest Response").
  const Value* response = reply->value.find("response");
  if (!response) return module_failure(make_error("module_protocol", "a Request was not answered with a response"));
  return give_fd(g, module_result("ok", *response));
}

std::optional<Trap> VmState::settle_refusal(GlCall& g, module::Answer reply) {
  if (reply.kind == module::AnswerKind::kUserError) return give_fd(g, module_result("error", std::move(reply.value)));
  return module_failure(make_error("module_fatal", reply.value.is_string() ? reply.value.as_string() : ""));
}

Result<BigInt> VmState::llm_fuel_left() {
  auto host = ctx_.host->remaining_fuel_as_gen();
  if (!host) return host.take_error();
  BigInt left = u256_to_bigint(*host);
  // A nested run may not hand on more than its chain had left.
  if (ctx_.imported_det_fuel && *ctx_.imported_det_fuel < left) left = *ctx_.imported_det_fuel;
  return left;
}

std::optional<Trap> VmState::gl_llm(GlCall& g) {
  if (frame_.deterministic) return answer(g, kForbidden);
  if (!ctx_.module_llm || !ctx_.module_llm->configured()) return answer(g, kForbidden);
  module::LlmMessage message;
  std::optional<bool> expect_bool;  // a template's answer kind; a prompt's is free
  if (g.method == "ExecPrompt") {
    auto p = module::parse_prompt_payload(g.body);
    if (!p || p->images.size() > 2) return answer(g, kInval);
    message.payload = std::move(*p);
  } else {
    auto p = module::parse_template_payload(g.body);
    if (!p) return answer(g, kInval);
    expect_bool = p->expects_bool();
    message.payload = std::move(*p);
  }
  auto fuel = llm_fuel_left();
  if (!fuel) return internal(fuel.error());
  message.remaining_fuel_as_gen = std::move(*fuel);
  auto reply = ctx_.module_llm->call(module::llm_message_value(message));
  if (!reply) return module_call_failed(g, "llm", reply.error());
  if (reply->kind != module::AnswerKind::kOk) return settle_refusal(g, std::move(*reply));
  auto prompt = module::parse_prompt_answer(reply->value);
  if (!prompt) return module_failure(prompt.error());
  // The host is told what the module spent (host-loop.rst reads a u64: larger amounts are
  // reported as u64::MAX), then 2^256-1, the module's "out of time", ends the run.
  const BigInt& spent = prompt->consumed_gen;
  std::uint64_t reported = spent.to_uint64().value_or(UINT64_MAX);
  if (auto s = ctx_.host->consume_fuel(reported); !s) return internal(s.error());
  if (spent == u256_max()) return end(ResultCode::kFatalVmError, Value(VmError(VmError::timeout()).to_string()));
  ctx_.llm_consumption = std::min(ctx_.llm_consumption + spent, u256_max());
  // What a nested run imported is one budget with its chain: the spend comes off it (the public
  // executor's DetFuelBudget::consume, saturating at 0).
  if (ctx_.imported_det_fuel) {
    *ctx_.imported_det_fuel = *ctx_.imported_det_fuel > spent ? *ctx_.imported_det_fuel - spent : BigInt(0);
  }
  if (expect_bool && prompt->data.is_bool() != *expect_bool) {
    return module_failure(make_error("module_protocol", std::string("template answer is not ") +
                                                            (*expect_bool ? "a bool" : "text")));
  }
  if (expect_bool && !*expect_bool && !prompt->data.is_string()) {
    return module_failure(make_error("module_protocol", "template answer is not text"));
  }
  return give_fd(g, module_result("ok", std::move(prompt->data)));
}

}  // namespace genvm::executor
