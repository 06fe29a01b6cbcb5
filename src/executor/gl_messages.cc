// gl_call handlers for what a contract emits: events and messages (spec 03-wasi_genlayer_sdk/
// 02-gl_call.rst). Each is recorded in the run's emissions in call order, in the shape of the
// public domain.rs ExecutionEmission (tagged by "type"), with its fees paid as it is emitted
// (impl-spec 04-fees.rst; docs/PROTOCOLS.md "### Fees"). A message's value is reserved from the
// contract's balance (INBALANCE when the balance does not cover it). Emissions reach the host
// only with a Return result (result.h: publish()). A successful one answers, like every gl_call
// without data, the public "no file" descriptor (no_fd).
#include <algorithm>

#include "executor/vm_state.h"

namespace genvm::executor {

using calldata::Value;
using wasm::Trap;

namespace {

// Bounds on a balance-funded message's own fee_params (02-gl_call.rst, "Balance-funded fees"):
// prices and budgets below 2^96, counts below 2^32, so the metered floor fits in a U256.
constexpr std::size_t kFeePriceBits = 96;
constexpr std::size_t kFeeCountBits = 32;

bool balance_params_acceptable(const fees::InternalMessageParams& p) {
  if (p.rotations.empty()) return false;  // appealRounds would be -1
  // The chain refuses a zero price cap at reveal (FeeValueMustBeNonZero).
  if (p.max_price_gen_per_time_unit.is_zero() || p.storage_fee_max_gas_price.is_zero() ||
      p.receipt_fee_max_gas_price.is_zero()) {
    return false;
  }
  for (const BigInt* price : {&p.max_price_gen_per_time_unit, &p.storage_fee_max_gas_price,
                              &p.receipt_fee_max_gas_price, &p.execution_budget_per_round}) {
    if (price->bit_length() > kFeePriceBits) return false;
  }
  if (p.leader_timeunits_allocation.bit_length() > kFeeCountBits ||
      p.validator_timeunits_allocation.bit_length() > kFeeCountBits) {
    return false;
  }
  return std::all_of(p.rotations.begin(), p.rotations.end(),
                     [](const BigInt& r) { return r.bit_length() <= kFeeCountBits; });
}

}  // namespace

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
  if (!ctx_.fees) return internal(make_error("fees", "the run has no fee meter"));
  // The event's size: its blob as calldata, and its topic count.
  auto fee = ctx_.fees->charge_event(calldata::encode(*blob).size(), topics->as_array().size());
  if (!fee) return fee_failure(fee.error());
  ctx_.emissions.push_back(
      Value::map({{"type", "EmitEvent"}, {"topics", *topics}, {"blob", *blob}, {"storage_fee", std::move(*fee)}}));
  return no_fd(g);
}

std::optional<Trap> VmState::gl_post_message(GlCall& g) {
  if (!frame_.deterministic || !frame_.permissions.send_messages) return answer(g, kForbidden);
  const Value& body = g.body;
  const Value* calldata_v = body.find("calldata");
  const Value* value = body.find("value");
  const Value* on_v = body.find("on");
  const Value* address = body.find("address");
  const Value* code = body.find("code");
  const Value* use_balance_v = body.find("use_balance");
  const Value* fee_params_v = body.find("fee_params");
  bool deploy = g.method == "DeployContract";
  if (!body.is_map() || !calldata_v || !value || !is_u256(*value) || !on_v) return answer(g, kInval);
  auto on = host::parse_on(*on_v, "on");
  if (!on) return answer(g, kInval);
  if (deploy ? (!code || !code->is_bytes()) : (!address || !address->is_address())) return answer(g, kInval);
  const Value* salt = body.find("salt_nonce");
  if (deploy && (!salt || !is_u256(*salt))) return answer(g, kInval);
  // use_balance: optional, false when absent; fee_params: optional (null is absent).
  if (use_balance_v && !use_balance_v->is_bool()) return answer(g, kInval);
  bool use_balance = use_balance_v && use_balance_v->as_bool();
  std::optional<fees::InternalMessageParams> own_params;
  if (fee_params_v && !fee_params_v->is_null()) {
    auto p = host::parse_internal_params(*fee_params_v, "fee_params");
    if (!p) return answer(g, kInval);
    own_params = std::move(*p);
  }
  if (!validate_entry(calldata::encode(*calldata_v), deploy).ok()) return answer(g, kInval);
  // The balance-funded fields are checked before anything is spent or charged.
  if (use_balance) {
    auto allowed = ctx_.storage->can_use_balance_for_message_fees();
    if (!allowed) return internal(allowed.error());
    if (!*allowed) return answer(g, kForbidden);
    if (!own_params || !balance_params_acceptable(*own_params)) return answer(g, kInval);
  } else if (own_params) {
    return answer(g, kInval);  // fee_params without use_balance
  }
  auto key = call_key(*calldata_v, deploy);
  if (!key) return answer(g, kInval);

  Value::Map e{{"type", g.method}, {"calldata", *calldata_v}, {"value", *value}, {"on", std::string(host::on_name(*on))},
               {"use_balance", use_balance}};
  if (deploy) {
    e["code"] = *code;
    e["salt_nonce"] = *salt;
  } else {
    e["address"] = *address;
    e["call_key"] = *key;
  }
  if (!ctx_.fees) return internal(make_error("fees", "the run has no fee meter"));
  const BigInt amount = value->as_int();
  // Whether the contract's balance (less what earlier messages took) covers `need`.
  auto covers = [&](const BigInt& need) -> Result<bool> {
    auto balance = self_balance();
    if (!balance) return balance.take_error();
    return !(u256_to_bigint(*balance) < need);
  };
  const fees::ReceiptAttrs receipt_attrs{
      .is_internal = true,
      .is_deploy = deploy,
      .calldata_length = calldata::encode(*calldata_v).size(),
      .code_length = deploy ? code->as_bytes().size() : 0,
      .subtree_length = 0,
  };
  const bool on_acceptance = *on == host::MessageOn::kAccepted;

  if (use_balance) {
    // Metered from its own fee_params and paid from the contract's balance together with the
    // value; only the receipt is charged to the buckets, and it carries no subtree.
    auto fee = ctx_.fees->price_internal_message(on_acceptance, true, *own_params);
    if (!fee) return fee_failure(fee.error());
    auto receipt = ctx_.fees->price_receipt(receipt_attrs);
    if (!receipt) return fee_failure(receipt.error());
    const BigInt& metered = (*fee)[0];
    auto funded = covers(amount + metered);
    if (!funded) return internal(funded.error());
    if (!*funded) return answer(g, kInbalance);
    if (!ctx_.fees->pay_receipt(*receipt)) return end_vm_error(VmError::out_of().receipt().message());
    e["message_fee"] = metered;
    e["receipt_fee"] = (*receipt)[0];
    e["fee_params"] = host::internal_params_to_value(*own_params);
    e["subtree"] = calldata::Bytes{};
    ctx_.value_sent = u256_add(ctx_.value_sent, u256_from(amount + metered));
    ctx_.emissions.push_back(Value(std::move(e)));
    return no_fd(g);
  }

  if (!amount.is_zero()) {
    auto funded = covers(amount);
    if (!funded) return internal(funded.error());
    if (!*funded) return answer(g, kInbalance);
  }
  // Paid from the transaction's allocation: the first node that fits (a deployment is matched
  // with the zero recipient and the DEPLOY call key).
  calldata::Address recipient = deploy ? calldata::Address{} : address->as_address();
  fees::CallKey ck{};
  std::copy(key->begin(), key->end(), ck.begin());
  host::AllocationNode* node = fees::match_internal(ctx_.fee_allocation, *on, recipient, ck);
  if (!node) return end_vm_error(VmError::fee().no_matching_node());
  const auto& node_params = std::get<fees::InternalMessageParams>(node->fee_params);
  calldata::Bytes subtree = fees::abi_encode(node->children);
  fees::ReceiptAttrs attrs = receipt_attrs;
  attrs.subtree_length = subtree.size();
  auto fee = ctx_.fees->price_internal_message(on_acceptance, false, node_params);
  if (!fee) return fee_failure(fee.error());
  auto receipt = ctx_.fees->price_receipt(attrs);
  if (!receipt) return fee_failure(receipt.error());
  const BigInt& fee_total = (*fee)[0];
  if (fee_total > node->budget) return end_vm_error(VmError::out_of().message_fee().node());
  if (!ctx_.fees->pay_message(*fee, *receipt)) return end_vm_error(VmError::out_of().message_fee().total());
  node->budget = node->budget - fee_total;
  e["message_fee"] = fee_total;
  e["receipt_fee"] = (*receipt)[0];
  e["fee_params"] = host::internal_params_to_value(node_params);
  e["subtree"] = std::move(subtree);
  ctx_.value_sent = u256_add(ctx_.value_sent, u256_from(amount));
  ctx_.emissions.push_back(Value(std::move(e)));
  return no_fd(g);
}

std::optional<Trap> VmState::gl_eth_send(GlCall& g) {
  if (!frame_.deterministic || !frame_.permissions.send_messages) return answer(g, kForbidden);
  const Value* address = g.body.find("address");
  const Value* data = g.body.find("calldata");
  const Value* value = g.body.find("value");
  if (!address || !address->is_address() || !data || !data->is_bytes() || !value || !is_u256(*value)) {
    return answer(g, kInval);
  }
  if (!ctx_.fees) return internal(make_error("fees", "the run has no fee meter"));
  const BigInt amount = value->as_int();
  if (!amount.is_zero()) {
    auto balance = self_balance();
    if (!balance) return internal(balance.error());
    if (u256_to_bigint(*balance) < amount) return answer(g, kInbalance);
  }
  // An EVM call's key: its 4-byte selector, zero-padded (all zero below 4 bytes).
  fees::CallKey ck{};
  if (data->as_bytes().size() >= 4) std::copy_n(data->as_bytes().begin(), 4, ck.begin());
  host::AllocationNode* node = fees::match_external(ctx_.fee_allocation, address->as_address(), ck);
  if (!node) return end_vm_error(VmError::fee().no_matching_node());
  const auto& node_params = std::get<fees::ExternalMessageParams>(node->fee_params);
  auto fee = ctx_.fees->price_external_message(node_params);
  if (!fee) return fee_failure(fee.error());
  const BigInt& fee_total = (*fee)[0];
  if (fee_total > node->budget) return end_vm_error(VmError::out_of().message_fee().node());
  auto receipt = ctx_.fees->price_receipt({.is_internal = false,
                                           .is_deploy = false,
                                           .calldata_length = data->as_bytes().size(),
                                           .code_length = 0,
                                           .subtree_length = 0});
  if (!receipt) return fee_failure(receipt.error());
  if (!ctx_.fees->pay_message(*fee, *receipt)) return end_vm_error(VmError::out_of().message_fee().total());
  node->budget = node->budget - fee_total;
  ctx_.value_sent = u256_add(ctx_.value_sent, u256_from(amount));
  ctx_.emissions.push_back(Value::map({{"type", "EthSend"},
                                       {"address", *address},
                                       {"calldata", *data},
                                       {"value", *value},
                                       {"message_fee", fee_total},
                                       {"receipt_fee", (*receipt)[0]},
                                       {"fee_params", host::external_params_to_value(node_params)}}));
  return no_fd(g);
}

}  // namespace genvm::executor
