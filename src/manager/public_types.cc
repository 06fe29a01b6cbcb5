#include "manager/public_types.h"

#include "common/debug_mode.h"
#include "manager/protocol.h"
#include "common/rfc3339.h"

namespace genvm::manager {

using calldata::Value;
namespace s = shape;

namespace {

// Ours, wider than num_bigint::BigInt's decode: a decimal string is accepted too, because
// manager-api.yaml describes these fields as "big integer string".
const Shape& bigint_or_decimal() {
  static const Shape& sh = s::custom(s::any(), "an integer", [](const Value& v) -> std::optional<std::string> {
    if (v.is_int()) return std::nullopt;
    if (v.is_string() && BigInt::parse_decimal(v.as_string()).ok()) return std::nullopt;
    return "expected an integer or a decimal string";
  });
  return sh;
}

const Shape& rfc3339_string() {
  static const Shape& sh = s::custom(s::string(), "an RFC 3339 timestamp", [](const Value& v) -> std::optional<std::string> {
    auto t = parse_rfc3339(v.as_string());
    if (!t) return t.error().message;
    return std::nullopt;
  });
  return sh;
}

const Shape& duration_string() {
  static const Shape& sh = s::custom(s::string(), "a duration string", [](const Value& v) -> std::optional<std::string> {
    auto d = parse_duration(v.as_string());
    if (!d) return d.error().message;
    return std::nullopt;
  });
  return sh;
}

// genvm_common::DebugMode: the five kebab-case names.
const Shape& debug_mode_name() {
  static const Shape& sh = s::custom(s::string(), "a debug mode", [](const Value& v) -> std::optional<std::string> {
    if (!parse_debug_mode(v.as_string()).ok()) {
      return "expected one of disabled, safe, safe-unbounded, unsafe, unsafe-tracing";
    }
    return std::nullopt;
  });
  return sh;
}

const Shape& selector() {
  static const Shape& sh = s::tagged("kind", {{"major", {{"major", s::u32()}}}, {"version", {{"version", s::string()}}}});
  return sh;
}

const Shape& message_data() {
  static const Shape& sh = s::record({{"contract_address", s::address()},
                                      {"sender_address", s::address()},
                                      {"origin_address", s::address()},
                                      {"signer_address", s::address()},
                                      {"chain_id", bigint_or_decimal()},
                                      {"value", bigint_or_decimal()},
                                      {"is_init", s::boolean()},
                                      {"datetime", rfc3339_string(), false}});
  return sh;
}

const Shape& on() {
  static const Shape& sh = s::external({{"finalized", nullptr}, {"accepted", nullptr}});
  return sh;
}

const Shape& internal_message_params() {
  static const Shape& sh = s::record({{"leader_timeunits_allocation", s::u256()},
                                      {"validator_timeunits_allocation", s::u256()},
                                      {"execution_budget_per_round", s::u256()},
                                      {"rotations", s::array_of(s::u256())},
                                      {"max_price_gen_per_time_unit", s::u256()},
                                      {"storage_fee_max_gas_price", s::u256()},
                                      {"receipt_fee_max_gas_price", s::u256()}});
  return sh;
}

const Shape& external_message_params() {
  static const Shape& sh = s::record({{"gas_limit", s::u256()}, {"max_gas_price", s::u256()}});
  return sh;
}

const Shape& message_allocation_node() {
  static Shape& self = s::later();
  static const Shape& params = s::external({{"Internal", &internal_message_params()}, {"External", &external_message_params()}});
  static const Shape& sh = s::record({{"recipient", s::optional(s::address())},
                                      {"call_key", s::optional(s::bytes_of(32))},
                                      {"budget", s::u256()},
                                      {"on", on()},
                                      {"fee_params", params},
                                      {"children", s::array_of(self)}});
  static const bool linked = (s::set(self, sh), true);
  (void)linked;
  return sh;
}

const Shape& unsafe_overrides() {
  static const Shape& sh =
      s::record({{"reroute_to", s::string(), false}, {"initial_recursion", s::optional(s::u32()), false}});
  return sh;
}

// domain.rs ExecutionEmission, tagged by "type".
const Shape& execution_emission() {
  static const Shape& sh = s::tagged(
      "type",
      {{"EthSend",
        {{"address", s::address()},
         {"calldata", s::bytes()},
         {"value", s::u256()},
         {"message_fee", s::u256()},
         {"receipt_fee", s::u256()},
         {"fee_params", external_message_params()}}},
       {"PostMessage",
        {{"call_key", s::bytes_of(32)},
         {"address", s::address()},
         {"calldata", s::any()},
         {"value", s::u256()},
         {"on", on()},
         {"message_fee", s::u256()},
         {"receipt_fee", s::u256()},
         {"fee_params", internal_message_params()},
         {"subtree", s::bytes()},
         {"use_balance", s::boolean()}}},
       {"DeployContract",
        {{"calldata", s::any()},
         {"code", s::bytes()},
         {"value", s::u256()},
         {"on", on()},
         {"salt_nonce", s::u256()},
         {"message_fee", s::u256()},
         {"receipt_fee", s::u256()},
         {"fee_params", internal_message_params()},
         {"subtree", s::bytes()},
         {"use_balance", s::boolean()}}},
       {"EmitEvent",
        {{"topics", s::array_of(s::bytes())},
         {"blob", s::map_of(s::any())},
         {"storage_fee", s::u256()}}}});
  return sh;
}

const Shape& result_code() {
  static const Shape& sh = s::external({{kResultCodeNames[0], nullptr},
                                        {kResultCodeNames[1], nullptr},
                                        {kResultCodeNames[2], nullptr},
                                        {kResultCodeNames[3], nullptr},
                                        {kResultCodeNames[4], nullptr}});
  return sh;
}

}  // namespace

const Shape& run_request_shape() {
  static const Shape& sh = s::record({
      {"selector", selector()},
      {"message", message_data()},
      {"is_sync", s::boolean()},
      {"debug_mode", debug_mode_name(), false},
      {"max_execution_minutes", s::u64(), false},
      {"bucket_totals", s::array_of(bigint_or_decimal())},
      {"host_data", s::string()},
      {"timestamp", rfc3339_string()},
      {"host", s::string()},
      {"extra_args", s::array_of(s::string()), false},
      {"calldata", s::bytes()},
      {"code", s::optional(s::bytes())},
      {"permissions", s::string(), false},
      {"no_modules", s::boolean(), false},
      {"unsafe_overrides", unsafe_overrides(), false},
      {"leader_nondet_results", s::optional(s::array_of(s::bytes()))},
      {"gas_data", s::map_of(s::string()), false},
      {"message_fee_allocation", s::array_of(message_allocation_node()), false},
      {"initial_time_units_allocation", s::u32()},
      {"record_actions", s::array_of(s::string()), false},
      {"host_genvm_id", s::optional(s::string()), false},
      {"deadline", s::optional(duration_string()), false},
      {"host_hello_data", s::array_of(s::bytes()), false},
      {"hook_cross_contract_calls", s::boolean(), false},
  });
  return sh;
}

const Shape& executor_selector_shape() { return selector(); }

const Shape& reported_result_shape() {
  static const Shape& frame = s::record({{"module_name", s::string()}, {"func", s::u32()}});
  static const Shape& fingerprint = s::record({{"memories", s::array_of(s::bytes_of(32))}});
  static const Shape& buckets = s::record({{"storage", s::u256()},
                                           {"message_receipt", s::u256()},
                                           {"nondet_output", s::u256()},
                                           {"message_fee", s::u256()},
                                           {"event", s::u256()}});
  static const Shape& sh = s::record({
      {"execution_hash", s::bytes()},
      {"small_hash", s::bytes()},
      {"kind", result_code()},
      {"data", s::any()},
      {"backtrace", s::optional(s::array_of(frame))},
      {"wasm_store_hashes", s::map_of(fingerprint)},
      {"storage_changes", s::array_of(s::tuple({&s::bytes_of(36), &s::bytes()}))},
      {"emissions", s::array_of(execution_emission())},
      {"nondet_disagreement", s::optional(s::u32())},
      {"nondet_results", s::array_of(s::bytes())},
      {"data_fees_remaining", s::array_of(s::u256())},
      {"data_fees_consumed", buckets},
      {"llm_consumption", s::u256()},
  });
  return sh;
}

}  // namespace genvm::manager
