#include "executor/nested.h"

#include <algorithm>

#include "common/host/execution_data.h"
#include "executor/vm.h"

namespace genvm::executor {

using calldata::Value;

Result<Value> nested_envelope(const NestedCall& call) {
  // MessageData (modules-interfaces abi_stub.rs): exactly these keys of the startup message.
  Value::Map message;
  for (const char* key : {"contract_address", "sender_address", "origin_address", "signer_address", "chain_id",
                          "value", "is_init", "datetime"}) {
    if (const Value* v = call.message.find(key)) message[key] = *v;
  }
  auto m = host::message_from_value(Value(std::move(message)));
  if (!m) return make_error("nested_envelope", m.error().message);
  host::NestedRunEnvelope e;
  e.routing_payload = call.routing_payload;
  e.calldata = call.calldata;
  e.message = std::move(*m);
  e.stack = call.stack;
  e.permissions = call.permissions;
  e.state_mode = call.state_mode;
  // The callee's code is resolved by the receiving executor in its own storage layout.
  e.topmost_runner_id = "contract";
  e.remaining_recursion = call.remaining_recursion;
  e.remaining_det_fuel = call.remaining_det_fuel;
  e.memory_limit = call.memory_limit;
  return host::nested_envelope_to_value(e);
}

calldata::Bytes major_selector(std::uint8_t major) {
  return calldata::encode(Value::map({{"kind", "major"}, {"major", major}}));
}

Result<NestedOutcome> accept_nested_reply(NestedReply reply) {
  auto refuse = [](std::string why) { return make_error("nested_reply", std::move(why)); };
  if (!reply.effect_free) return refuse("nested CallContract result contains effects");
  if (reply.small_hash.size() != 32) {
    return refuse("nested CallContract small hash has length " + std::to_string(reply.small_hash.size()) +
                  ", expected 32");
  }
  NestedOutcome out;
  out.kind = reply.kind;
  out.data = std::move(reply.data);
  std::copy(reply.small_hash.begin(), reply.small_hash.end(), out.small_hash.begin());
  switch (reply.kind) {
    case ResultCode::kReturn:
    case ResultCode::kUserError:
      return out;
    case ResultCode::kVmError:
      if (!out.data.is_string()) return refuse("nested CallContract VM error is not a string");
      return out;
    case ResultCode::kFatalVmError:
      if (!out.data.is_string()) return refuse("nested CallContract fatal VM error is not a string");
      return out;
    case ResultCode::kInternalError:
      break;
  }
  return refuse("nested executor returned an internal error");
}

Result<ImportedFrame> import_frame(const ExecutionData& d, const Permissions& granted) {
  ImportedFrame f;
  f.permissions = granted;
  // A remainder minted elsewhere is not an authority to exceed this executor's own limit.
  std::uint32_t remaining = static_cast<std::uint32_t>(kMaxVmDepth);
  if (d.remaining_recursion) remaining = std::min(*d.remaining_recursion, remaining);
  f.recursion_exhausted = remaining == 0;
  f.depth = kMaxVmDepth - static_cast<int>(remaining);
  if (!d.nested) return f;
  const NestedExecutionData& n = *d.nested;
  auto bits = n.permissions.is_int() ? n.permissions.as_int().to_uint64() : std::nullopt;
  if (!bits || *bits > 0xffffffffu) {
    return make_error("execution_data_type", "nested.permissions: expected a u32 of permission bits");
  }
  auto has = [&](NestedPermission p) { return (*bits & p) != 0; };
  f.deterministic = has(kNestedDeterministic);
  f.permissions.write_storage = has(kNestedWriteStorage);
  f.permissions.send_messages = has(kNestedSendMessages);
  f.permissions.call_others = has(kNestedCallOthers);
  f.permissions.spawn_nondet = has(kNestedSpawnNondet);
  f.permissions.register_runners = has(kNestedRegisterRunners);
  f.state = n.state_mode;
  f.ram_budget = n.memory_limit;
  f.det_fuel_cap = n.remaining_det_fuel;
  return f;
}

}  // namespace genvm::executor
