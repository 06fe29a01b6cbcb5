// gl_call handlers for what a contract emits: events and messages (spec 03-wasi_genlayer_sdk/
// 02-gl_call.rst). Each is recorded in the run's emissions in call order; a message's value is
// reserved from the contract's balance when it is emitted (INBALANCE when it does not cover
// it). Emissions reach the host only with a Return result (result.h: publish()).
#include "executor/vm_state.h"

namespace genvm::executor {

using calldata::Value;
using wasm::Trap;

std::optional<Trap> VmState::gl_emit_event(GlCall& g) {
  if (!frame_.deterministic || !frame_.permissions.write_storage) return answer(g, kForbidden);
  const Value* topics = g.body.find("topics");
  const Value* blob = g.body.find("blob");
  if (!g.body.is_map() || !topics || !topics->is_array() || topics->as_array().size() > 4 || !blob ||
      !blob->is_map()) {
    return answer(g, kInval);
  }
  for (const Value& t : topics->as_array()) {
    if (!t.is_bytes() || t.as_bytes().size() != 32) return answer(g, kInval);
  }
  ctx_.emissions.push_back(Value::map({{"type", "EmitEvent"}, {"topics", *topics}, {"blob", *blob}, {"storage_fee", 0}}));
  return std::nullopt;
}

std::optional<Trap> VmState::gl_post_message(GlCall& g) {
  if (!frame_.deterministic || !frame_.permissions.send_messages) return answer(g, kForbidden);
  const Value& body = g.body;
  const Value* calldata_v = body.find("calldata");
  const Value* value = body.find("value");
  const Value* on = body.find("on");
  const Value* address = body.find("address");
  const Value* code = body.find("code");
  const Value* use_balance = body.find("use_balance");
  bool deploy = g.method == "DeployContract";
  if (!body.is_map() || !calldata_v || !value || !is_u256(*value) || !on || !on->is_string() ||
      (on->as_string() != "finalized" && on->as_string() != "accepted")) {
    return answer(g, kInval);
  }
  if (deploy ? (!code || !code->is_bytes()) : (!address || !address->is_address())) return answer(g, kInval);
  // Balance-funded fees need fee metering, which this executor does not do yet.
  if (use_balance && !(use_balance->is_bool() && !use_balance->as_bool())) return answer(g, kInval);
  if (!validate_entry(calldata::encode(*calldata_v), deploy).ok()) return answer(g, kInval);
  auto key = call_key(*calldata_v, deploy);
  if (!key) return answer(g, kInval);
  Value::Map e{{"type", g.method}, {"calldata", *calldata_v}, {"value", *value}, {"on", *on},
               {"call_key", *key}, {"message_fee", 0}, {"receipt_fee", 0}, {"use_balance", false}};
  if (deploy) {
    const Value* salt = body.find("salt_nonce");
    if (!salt || !is_u256(*salt)) return answer(g, kInval);
    e["code"] = *code;
    e["salt_nonce"] = *salt;
  } else {
    e["address"] = *address;
  }
  auto funded = spend(*value);
  if (!funded) return internal(funded.error());
  if (!*funded) return answer(g, kInbalance);
  ctx_.emissions.push_back(Value(std::move(e)));
  return std::nullopt;
}

std::optional<Trap> VmState::gl_eth_send(GlCall& g) {
  if (!frame_.deterministic || !frame_.permissions.send_messages) return answer(g, kForbidden);
  const Value* address = g.body.find("address");
  const Value* data = g.body.find("calldata");
  const Value* value = g.body.find("value");
  if (!address || !address->is_address() || !data || !data->is_bytes() || !value || !is_u256(*value)) {
    return answer(g, kInval);
  }
  auto funded = spend(*value);
  if (!funded) return internal(funded.error());
  if (!*funded) return answer(g, kInbalance);
  ctx_.emissions.push_back(Value::map({{"type", "EthSend"}, {"address", *address}, {"calldata", *data},
                                       {"value", *value}, {"message_fee", 0}, {"receipt_fee", 0}}));
  return std::nullopt;
}

}  // namespace genvm::executor
