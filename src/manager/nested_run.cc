#include "manager/nested_run.h"

#include <algorithm>

#include "common/host/execution_data.h"
#include "common/host/protocol.h"
#include "manager/executor_link.h"
#include "manager/public_types.h"

namespace genvm::manager {

using calldata::Value;
namespace h = genvm::host;

namespace {

Error refuse(std::string why) { return make_error("nested_run", std::move(why)); }

// run.rs check_nested_permissions: the four a call crossing a boundary never carries.
Status check_nested_permissions(std::uint32_t bits) {
  for (auto [bit, name] : {std::pair{h::kNestedSpawnNondet, "spawn_nondet"}, std::pair{h::kNestedWriteStorage, "write_storage"},
                           std::pair{h::kNestedSendMessages, "send_messages"},
                           std::pair{h::kNestedUseBalanceForMessageFees, "use_balance_for_message_fees"}}) {
    if (bits & bit) {
      return refuse(std::string("nested run envelope asserts `") + name +
                    "`, which a call crossing a major boundary never carries");
    }
  }
  return {};
}

// The routing payload: an encoded ExecutorSelector, read strictly.
Result<ExecutorSelector> routing_selector(const calldata::Bytes& payload) {
  auto v = calldata::decode(payload);
  if (!v) return refuse("routing payload is not calldata: " + v.error().to_string());
  if (Status s = check(executor_selector_shape(), *v); !s) return refuse("routing payload: " + s.error().message);
  ExecutorSelector sel;
  if (v->find("kind")->as_string() == "major") {
    sel.kind = ExecutorSelector::Kind::kMajor;
    sel.major = static_cast<std::uint32_t>(*v->find("major")->as_int().to_uint64());
  } else {
    sel.kind = ExecutorSelector::Kind::kVersion;
    sel.version = v->find("version")->as_string();
  }
  return sel;
}

// run.rs nested_effect: the first field proving the callee produced an effect or consumed a
// shared budget; nullopt when there is none.
std::optional<std::string> nested_effect(const Value& r) {
  for (const char* list : {"storage_changes", "emissions", "nondet_results"}) {
    if (!r.find(list)->as_array().empty()) return list;
  }
  if (!r.find("nondet_disagreement")->is_null()) return "nondet_disagreement";
  if (!r.find("llm_consumption")->as_int().is_zero()) return "llm_consumption";
  const Value& consumed = *r.find("data_fees_consumed");
  for (const char* bucket : {"storage", "message_receipt", "nondet_output", "message_fee", "event"}) {
    if (!consumed.find(bucket)->as_int().is_zero()) return std::string("data_fees_consumed.") + bucket;
  }
  return std::nullopt;
}

}  // namespace

Result<NestedChild> plan_nested_run(const RunRequest& caller, std::span<const std::uint8_t> envelope,
                                    std::size_t caller_depth) {
  if (caller_depth >= kMaxNestedDepth) {
    return refuse("nested run chain is " + std::to_string(caller_depth) + " delegated calls deep (our limit)");
  }
  auto value = calldata::decode(envelope);
  if (!value) return refuse("run_nested envelope is not calldata: " + value.error().to_string());
  auto env = h::nested_envelope_from_value(*value);
  if (!env) return refuse(env.error().message);
  if (env->message.is_init) return refuse("nested CallContract message cannot be an init");
  if (!env->message.value.is_zero()) return refuse("nested CallContract message value must be zero");
  std::string_view host = caller.host;
  while (!host.empty() && (host.front() == ' ' || (host.front() >= '\t' && host.front() <= '\r'))) host.remove_prefix(1);
  if (host.starts_with("fd://")) return refuse("host 0 uses fd:// and cannot be re-dialed by a nested executor");
  auto selector = routing_selector(env->routing_payload);
  if (!selector) return selector.take_error();
  if (Status s = check_nested_permissions(env->permissions); !s) return s.take_error();
  auto timestamp = parse_rfc3339(env->message.datetime);
  if (!timestamp) return refuse("nested message datetime: " + timestamp.error().message);

  NestedChild child;
  RunRequest& r = child.request;
  r.selector = *selector;
  r.is_sync = true;
  r.debug_mode = "disabled";
  r.deadline = caller.deadline;
  r.host = caller.host;
  r.permissions = (env->permissions & h::kNestedCallOthers) ? "c" : "";
  r.no_modules = true;
  r.timestamp = *timestamp;
  r.hook_cross_contract_calls = caller.hook_cross_contract_calls;

  // run.rs start_nested + execution_data_from_request, then the nested fields.
  const Value& b = caller.body;
  static const Value kEmptyMap = Value(Value::Map{});
  Value::Map d;
  d["calldata"] = env->calldata;
  d["message"] = h::message_to_value(env->message);
  d["host_data"] = *b.find("host_data");
  d["code"] = Value();
  d["leader_nondet_results"] = Value();
  Value::Array hello = b.find("host_hello_data") ? b.find("host_hello_data")->as_array() : Value::Array{};
  if (hello.size() < 2) hello.resize(2, Value(calldata::Bytes{}));
  hello[1] = calldata::Bytes{};  // the child's own manager socketpair
  d["host_hello_data"] = Value(std::move(hello));
  d["method_hosts"] = manager_method_hosts(r.hook_cross_contract_calls);
  d["bucket_totals"] = Value(Value::Array{});
  d["gas_data"] = b.find("gas_data") ? *b.find("gas_data") : kEmptyMap;
  d["message_fee_allocation"] = Value(Value::Array{});
  d["initial_time_units_allocation"] = 0;
  d["record_actions"] = Value(Value::Array{});
  d["remaining_recursion"] = std::min(env->remaining_recursion, kCrossMajorRecursion);
  Value::Array stack;
  for (const auto& a : env->stack) stack.emplace_back(a);
  d["nested"] = Value::map({
      {"memory_limit", env->memory_limit},
      {"stack", Value(std::move(stack))},
      {"permissions", env->permissions},
      {"state_mode", std::string(h::storage_type_name(env->state_mode))},
      {"topmost_runner_id", env->topmost_runner_id},
      {"remaining_det_fuel", env->remaining_det_fuel},
  });
  child.execution_data = calldata::encode(Value(std::move(d)));
  return child;
}

Result<h::NestedRunReply> nested_reply_from_consumed_result(std::span<const std::uint8_t> payload) {
  auto d = decode_reported_result(payload, "nested executor");
  if (!d) return d.take_error();
  const calldata::Bytes& small_hash = d->reported.find("small_hash")->as_bytes();
  if (d->code != ResultCode::kInternalError && small_hash.size() != 32) {
    return make_error("invalid_result", "nested executor returned an invalid small hash length");
  }
  if (auto effect = nested_effect(d->reported)) {
    return make_error("invalid_result", "nested executor reported `" + *effect +
                                            "`, which its permissions forbid");
  }
  return h::NestedRunReply{d->code, *d->reported.find("data"), small_hash, true};
}

Result<h::NestedRunReply> nested_reply_for_exit(const std::optional<calldata::Bytes>& consumed, int exit_code,
                                               int signal) {
  if (signal != 0) return make_error("nested_run", "nested executor was killed by signal " + std::to_string(signal));
  if (exit_code != 0) return make_error("nested_run", "nested executor exited with code " + std::to_string(exit_code));
  if (!consumed) return make_error("nested_run", "nested executor exited without consume_result");
  return nested_reply_from_consumed_result(*consumed);
}

h::NestedRunReply nested_internal_error() {
  return h::NestedRunReply{ResultCode::kInternalError, Value("cross-major nested run failed"), {}, false};
}

std::vector<std::uint8_t> nested_reply_frame(const h::NestedRunReply& reply) {
  calldata::Bytes body = calldata::encode(h::nested_reply_to_value(reply));
  std::vector<std::uint8_t> out;
  h::put_u32_le(out, static_cast<std::uint32_t>(body.size()));
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

}  // namespace genvm::manager
