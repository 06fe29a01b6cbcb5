#include "common/host/fee_params.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

namespace genvm::host {

namespace {

using calldata::Value;

Error type_error(const std::string& path, std::string_view want) {
  return make_error("execution_data_type", path + ": expected " + std::string(want));
}

// A record: exactly `keys`, each present (null counts as present).
Status exact_keys(const Value& v, const std::string& path, std::initializer_list<std::string_view> keys) {
  if (!v.is_map()) return type_error(path, "a map");
  for (std::string_view k : keys) {
    if (!v.find(k)) return make_error("execution_data_missing", path + "." + std::string(k) + ": required key is absent");
  }
  for (const auto& [k, _] : v.as_map()) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
      return make_error("execution_data_unknown_key", path + "." + k + ": unknown key");
    }
  }
  return {};
}

bool is_u256(const BigInt& v) { return !v.is_negative() && v.bit_length() <= 256; }

Result<BigInt> u256(const Value& v, const std::string& path) {
  if (!v.is_int() || !is_u256(v.as_int())) return type_error(path, "an unsigned 256-bit integer");
  return v.as_int();
}

Result<AllocationNode> node_from(const Value& v, const std::string& path, std::size_t depth) {
  if (depth > kMaxAllocationDepth) return type_error(path, "an allocation tree at most 64 deep");
  if (auto s = exact_keys(v, path, {"budget", "call_key", "children", "fee_params", "on", "recipient"}); !s) {
    return s.take_error();
  }
  AllocationNode n;
  auto budget = u256(*v.find("budget"), path + ".budget");
  if (!budget) return budget.error();
  n.budget = std::move(*budget);
  if (const Value& key = *v.find("call_key"); !key.is_null()) {
    if (!key.is_bytes() || key.as_bytes().size() != 32) return type_error(path + ".call_key", "32 bytes or null");
    CallKey k;
    std::copy(key.as_bytes().begin(), key.as_bytes().end(), k.begin());
    n.call_key = k;
  }
  if (const Value& recipient = *v.find("recipient"); !recipient.is_null()) {
    if (!recipient.is_address()) return type_error(path + ".recipient", "an address or null");
    n.recipient = recipient.as_address();
  }
  auto on = parse_on(*v.find("on"), path + ".on");
  if (!on) return on.error();
  n.on = *on;
  const Value& fp = *v.find("fee_params");
  if (!fp.is_map() || fp.as_map().size() != 1) {
    return type_error(path + ".fee_params", "{\"Internal\": ...} or {\"External\": ...}");
  }
  const auto& [variant, body] = *fp.as_map().begin();
  if (variant == "Internal") {
    auto p = parse_internal_params(body, path + ".fee_params.Internal");
    if (!p) return p.error();
    n.fee_params = std::move(*p);
  } else if (variant == "External") {
    auto p = parse_external_params(body, path + ".fee_params.External");
    if (!p) return p.error();
    n.fee_params = std::move(*p);
  } else {
    return type_error(path + ".fee_params", "the variant Internal or External, not " + variant);
  }
  const Value& children = *v.find("children");
  if (!children.is_array()) return type_error(path + ".children", "an array");
  for (std::size_t i = 0; i < children.as_array().size(); ++i) {
    auto c = node_from(children.as_array()[i], path + ".children[" + std::to_string(i) + "]", depth + 1);
    if (!c) return c.error();
    n.children.push_back(std::move(*c));
  }
  return n;
}

Value node_to_value(const AllocationNode& n) {
  Value::Array children;
  for (const AllocationNode& c : n.children) children.push_back(node_to_value(c));
  Value fee_params =
      std::holds_alternative<InternalMessageParams>(n.fee_params)
          ? Value::map({{"Internal", internal_params_to_value(std::get<InternalMessageParams>(n.fee_params))}})
          : Value::map({{"External", external_params_to_value(std::get<ExternalMessageParams>(n.fee_params))}});
  return Value::map({
      {"budget", n.budget},
      {"call_key", n.call_key ? Value(calldata::Bytes(n.call_key->begin(), n.call_key->end())) : Value()},
      {"children", Value(std::move(children))},
      {"fee_params", std::move(fee_params)},
      {"on", std::string(on_name(n.on))},
      {"recipient", n.recipient ? Value(*n.recipient) : Value()},
  });
}

}  // namespace

Result<MessageOn> parse_on(const Value& v, const std::string& path) {
  if (v.is_string() && v.as_string() == "finalized") return MessageOn::kFinalized;
  if (v.is_string() && v.as_string() == "accepted") return MessageOn::kAccepted;
  return type_error(path, "\"finalized\" or \"accepted\"");
}

std::string_view on_name(MessageOn on) { return on == MessageOn::kAccepted ? "accepted" : "finalized"; }

Result<InternalMessageParams> parse_internal_params(const Value& v, const std::string& path) {
  if (auto s = exact_keys(v, path,
                          {"execution_budget_per_round", "leader_timeunits_allocation", "max_price_gen_per_time_unit",
                           "receipt_fee_max_gas_price", "rotations", "storage_fee_max_gas_price",
                           "validator_timeunits_allocation"});
      !s) {
    return s.take_error();
  }
  InternalMessageParams p;
  struct Field {
    std::string_view key;
    BigInt* into;
  };
  for (Field f : {Field{"leader_timeunits_allocation", &p.leader_timeunits_allocation},
                  Field{"validator_timeunits_allocation", &p.validator_timeunits_allocation},
                  Field{"execution_budget_per_round", &p.execution_budget_per_round},
                  Field{"max_price_gen_per_time_unit", &p.max_price_gen_per_time_unit},
                  Field{"storage_fee_max_gas_price", &p.storage_fee_max_gas_price},
                  Field{"receipt_fee_max_gas_price", &p.receipt_fee_max_gas_price}}) {
    auto x = u256(*v.find(f.key), path + "." + std::string(f.key));
    if (!x) return x.error();
    *f.into = std::move(*x);
  }
  const Value& rotations = *v.find("rotations");
  if (!rotations.is_array()) return type_error(path + ".rotations", "an array");
  for (std::size_t i = 0; i < rotations.as_array().size(); ++i) {
    auto r = u256(rotations.as_array()[i], path + ".rotations[" + std::to_string(i) + "]");
    if (!r) return r.error();
    p.rotations.push_back(std::move(*r));
  }
  return p;
}

Result<ExternalMessageParams> parse_external_params(const Value& v, const std::string& path) {
  if (auto s = exact_keys(v, path, {"gas_limit", "max_gas_price"}); !s) return s.take_error();
  auto g = u256(*v.find("gas_limit"), path + ".gas_limit");
  if (!g) return g.error();
  auto m = u256(*v.find("max_gas_price"), path + ".max_gas_price");
  if (!m) return m.error();
  return ExternalMessageParams{std::move(*g), std::move(*m)};
}

Result<std::vector<AllocationNode>> parse_allocation(const Value& v, const std::string& path) {
  if (!v.is_array()) return type_error(path, "an array");
  std::vector<AllocationNode> out;
  for (std::size_t i = 0; i < v.as_array().size(); ++i) {
    auto n = node_from(v.as_array()[i], path + "[" + std::to_string(i) + "]", 1);
    if (!n) return n.error();
    out.push_back(std::move(*n));
  }
  return out;
}

Value internal_params_to_value(const InternalMessageParams& p) {
  Value::Array rotations;
  for (const BigInt& r : p.rotations) rotations.emplace_back(r);
  return Value::map({
      {"execution_budget_per_round", p.execution_budget_per_round},
      {"leader_timeunits_allocation", p.leader_timeunits_allocation},
      {"max_price_gen_per_time_unit", p.max_price_gen_per_time_unit},
      {"receipt_fee_max_gas_price", p.receipt_fee_max_gas_price},
      {"rotations", Value(std::move(rotations))},
      {"storage_fee_max_gas_price", p.storage_fee_max_gas_price},
      {"validator_timeunits_allocation", p.validator_timeunits_allocation},
  });
}

Value external_params_to_value(const ExternalMessageParams& p) {
  return Value::map({{"gas_limit", p.gas_limit}, {"max_gas_price", p.max_gas_price}});
}

HostFees local_host_fees(const BigInt& total) {
  HostFees f;
  f.bucket_totals.assign(4, total);
  f.gas_data = {{"storageUnitPrice", "1"},      {"receiptGasPerByte", "1"},   {"gasPerChangedSlot", "1"},
                {"intrinsicGas", "0"},          {"bootloaderOverhead", "0"},  {"fixedProposeReceiptGas", "0"},
                {"fixedMessageRevealGas", "0"}, {"genPerTimeUnit", "0"}};
  InternalMessageParams internal{BigInt(1), BigInt(1), BigInt(1), {BigInt(0)}, BigInt(1), BigInt(1), BigInt(1)};
  for (MessageOn on : {MessageOn::kFinalized, MessageOn::kAccepted}) {
    AllocationNode n;
    n.budget = total;
    n.on = on;
    n.fee_params = internal;
    f.message_fee_allocation.push_back(std::move(n));
  }
  AllocationNode external;
  external.budget = total;
  external.fee_params = ExternalMessageParams{BigInt(1), BigInt(1)};
  f.message_fee_allocation.push_back(std::move(external));
  return f;
}

Value allocation_to_value(const std::vector<AllocationNode>& nodes) {
  Value::Array a;
  for (const AllocationNode& n : nodes) a.push_back(node_to_value(n));
  return Value(std::move(a));
}

}  // namespace genvm::host
