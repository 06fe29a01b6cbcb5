#include "executor/fees/allocation.h"

#include <initializer_list>
#include <string>
#include <utility>

namespace genvm::executor::fees {

namespace {

using calldata::Value;

Error params_error(const std::string& where, const std::string& what) {
  return make_error("fee_params", where + ": " + what);
}

Status exact_keys(const Value& v, const std::string& where, std::initializer_list<std::string_view> keys) {
  if (!v.is_map()) return params_error(where, "not a map");
  for (std::string_view k : keys) {
    if (!v.find(k)) return params_error(where, "missing key " + std::string(k));
  }
  if (v.as_map().size() != keys.size()) {
    for (const auto& [k, _] : v.as_map()) {
      bool known = false;
      for (std::string_view allowed : keys) known = known || k == allowed;
      if (!known) return params_error(where, "unknown key " + k);
    }
  }
  return {};
}

bool is_u256(const BigInt& v) { return !v.is_negative() && v.bit_length() <= 256; }

Result<BigInt> u256(const Value& map, const std::string& where, std::string_view key) {
  const Value* v = map.find(key);
  std::string at = where + "." + std::string(key);
  if (!v->is_int() || !is_u256(v->as_int())) return params_error(at, "not an integer in [0, 2^256)");
  return v->as_int();
}

Result<AllocationNode> node_from(const Value& v, const std::string& where, std::size_t depth) {
  if (depth > kMaxAllocationDepth) return params_error(where, "allocation tree nested too deeply");
  if (auto s = exact_keys(v, where, {"budget", "call_key", "children", "fee_params", "on", "recipient"}); !s) {
    return s.take_error();
  }
  AllocationNode n;
  auto budget = u256(v, where, "budget");
  if (!budget) return budget.error();
  n.budget = std::move(*budget);
  const Value& key = *v.find("call_key");
  if (!key.is_null()) {
    if (!key.is_bytes() || key.as_bytes().size() != 32) return params_error(where + ".call_key", "not 32 bytes or null");
    CallKey k;
    std::copy(key.as_bytes().begin(), key.as_bytes().end(), k.begin());
    n.call_key = k;
  }
  const Value& recipient = *v.find("recipient");
  if (!recipient.is_null()) {
    if (!recipient.is_address()) return params_error(where + ".recipient", "not an address or null");
    n.recipient = recipient.as_address();
  }
  auto on = parse_on(*v.find("on"));
  if (!on) return params_error(where + ".on", on.error().message);
  n.on = *on;
  const Value& fp = *v.find("fee_params");
  if (!fp.is_map() || fp.as_map().size() != 1) {
    return params_error(where + ".fee_params", "not {\"Internal\": ...} or {\"External\": ...}");
  }
  const auto& [variant, body] = *fp.as_map().begin();
  if (variant == "Internal") {
    auto p = parse_internal_params(body);
    if (!p) return params_error(where + ".fee_params.Internal", p.error().message);
    n.fee_params = std::move(*p);
  } else if (variant == "External") {
    auto p = parse_external_params(body);
    if (!p) return params_error(where + ".fee_params.External", p.error().message);
    n.fee_params = std::move(*p);
  } else {
    return params_error(where + ".fee_params", "unknown variant " + variant);
  }
  const Value& children = *v.find("children");
  if (!children.is_array()) return params_error(where + ".children", "not an array");
  for (std::size_t i = 0; i < children.as_array().size(); ++i) {
    auto c = node_from(children.as_array()[i], where + ".children[" + std::to_string(i) + "]", depth + 1);
    if (!c) return c.error();
    n.children.push_back(std::move(*c));
  }
  return n;
}

Value bigints(const std::vector<BigInt>& v) {
  Value::Array a;
  for (const BigInt& x : v) a.push_back(x);
  return Value(std::move(a));
}

Value node_to_value(const AllocationNode& n) {
  Value::Array children;
  for (const AllocationNode& c : n.children) children.push_back(node_to_value(c));
  Value fee_params = std::holds_alternative<InternalMessageParams>(n.fee_params)
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

bool wildcard_or_equal(const std::optional<calldata::Address>& want, const calldata::Address& got) {
  return !want || *want == got;
}
bool wildcard_or_equal(const std::optional<CallKey>& want, const CallKey& got) { return !want || *want == got; }

// --- ABI encoding (big-endian 32-byte words) ---

constexpr std::size_t kWord = 32;
constexpr std::size_t kNodeHeadWords = 7;            // type, onAcceptance, parent, recipient, callKey, budget, feeParams
constexpr std::size_t kInternalParamsHeadWords = 8;  // leader, validator, appeals, budget, rotations, 3 caps

void put_word(calldata::Bytes& out, const BigInt& v) {
  std::size_t at = out.size();
  out.resize(at + kWord, 0);
  const BigInt::Limbs& limbs = v.magnitude();
  for (std::size_t i = 0; i < limbs.size() && i < 8; ++i) {
    for (std::size_t b = 0; b < 4; ++b) out[at + kWord - 1 - (i * 4 + b)] = static_cast<std::uint8_t>(limbs[i] >> (8 * b));
  }
}
void put_word(calldata::Bytes& out, std::uint64_t v) { put_word(out, BigInt(v)); }

BigInt u256_max() {
  return BigInt::from_magnitude(false, BigInt::Limbs(8, 0xffffffffu));
}

calldata::Bytes internal_params_abi(const InternalMessageParams& p) {
  calldata::Bytes out;
  put_word(out, kWord);  // abi.encode of one dynamic tuple starts with its offset
  put_word(out, p.leader_timeunits_allocation);
  put_word(out, p.validator_timeunits_allocation);
  put_word(out, p.rotations.empty() ? 0 : p.rotations.size() - 1);  // appealRounds
  put_word(out, p.execution_budget_per_round);
  put_word(out, kInternalParamsHeadWords * kWord);  // where `rotations` starts, after the head
  put_word(out, p.max_price_gen_per_time_unit);
  put_word(out, p.storage_fee_max_gas_price);
  put_word(out, p.receipt_fee_max_gas_price);
  put_word(out, p.rotations.size());
  for (const BigInt& r : p.rotations) put_word(out, r);
  return out;
}

calldata::Bytes external_params_abi(const ExternalMessageParams& p) {
  calldata::Bytes out;  // a static tuple: just its words
  put_word(out, p.gas_limit);
  put_word(out, p.max_gas_price);
  return out;
}

calldata::Bytes node_abi(const AllocationNode& n, const BigInt& parent) {
  bool internal = std::holds_alternative<InternalMessageParams>(n.fee_params);
  calldata::Bytes params = internal ? internal_params_abi(std::get<InternalMessageParams>(n.fee_params))
                                    : external_params_abi(std::get<ExternalMessageParams>(n.fee_params));
  calldata::Bytes out;
  put_word(out, internal ? 1 : 0);  // MessageType { External, Internal }
  put_word(out, internal && n.on == MessageOn::kAccepted ? 1 : 0);
  put_word(out, parent);
  out.resize(out.size() + 12, 0);  // the address, left-padded to a word
  if (n.recipient) {
    out.insert(out.end(), n.recipient->bytes.begin(), n.recipient->bytes.end());
  } else {
    out.resize(out.size() + calldata::kAddressSize, 0);
  }
  if (n.call_key) {
    out.insert(out.end(), n.call_key->begin(), n.call_key->end());
  } else {
    out.resize(out.size() + kWord, 0);  // the chain's wildcard: bytes32(0)
  }
  put_word(out, n.budget);
  put_word(out, kNodeHeadWords * kWord);  // feeParams, the one dynamic field, follows the head
  put_word(out, params.size());
  out.insert(out.end(), params.begin(), params.end());
  out.resize(out.size() + (kWord - params.size() % kWord) % kWord, 0);
  return out;
}

void flatten(const std::vector<AllocationNode>& nodes, const BigInt& parent,
             std::vector<std::pair<const AllocationNode*, BigInt>>& out) {
  for (const AllocationNode& n : nodes) {
    BigInt index(out.size());
    out.emplace_back(&n, parent);
    flatten(n.children, index, out);
  }
}

}  // namespace

Result<MessageOn> parse_on(const Value& v) {
  if (v.is_string() && v.as_string() == "finalized") return MessageOn::kFinalized;
  if (v.is_string() && v.as_string() == "accepted") return MessageOn::kAccepted;
  return params_error("on", "not \"finalized\" or \"accepted\"");
}

std::string_view on_name(MessageOn on) { return on == MessageOn::kAccepted ? "accepted" : "finalized"; }

Result<InternalMessageParams> parse_internal_params(const Value& v) {
  const std::string where = "fee_params";
  if (auto s = exact_keys(v, where,
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
    auto x = u256(v, where, f.key);
    if (!x) return x.error();
    *f.into = std::move(*x);
  }
  const Value& rotations = *v.find("rotations");
  if (!rotations.is_array()) return params_error(where + ".rotations", "not an array");
  for (const Value& r : rotations.as_array()) {
    if (!r.is_int() || !is_u256(r.as_int())) return params_error(where + ".rotations", "an entry is not a U256");
    p.rotations.push_back(r.as_int());
  }
  return p;
}

Result<ExternalMessageParams> parse_external_params(const Value& v) {
  const std::string where = "fee_params";
  if (auto s = exact_keys(v, where, {"gas_limit", "max_gas_price"}); !s) return s.take_error();
  ExternalMessageParams p;
  auto g = u256(v, where, "gas_limit");
  if (!g) return g.error();
  auto m = u256(v, where, "max_gas_price");
  if (!m) return m.error();
  p.gas_limit = std::move(*g);
  p.max_gas_price = std::move(*m);
  return p;
}

Result<std::vector<AllocationNode>> parse_allocation(const Value& v) {
  if (!v.is_array()) return params_error("message_fee_allocation", "not an array");
  std::vector<AllocationNode> out;
  for (std::size_t i = 0; i < v.as_array().size(); ++i) {
    auto n = node_from(v.as_array()[i], "message_fee_allocation[" + std::to_string(i) + "]", 1);
    if (!n) return n.error();
    out.push_back(std::move(*n));
  }
  return out;
}

Value internal_params_to_value(const InternalMessageParams& p) {
  return Value::map({
      {"execution_budget_per_round", p.execution_budget_per_round},
      {"leader_timeunits_allocation", p.leader_timeunits_allocation},
      {"max_price_gen_per_time_unit", p.max_price_gen_per_time_unit},
      {"receipt_fee_max_gas_price", p.receipt_fee_max_gas_price},
      {"rotations", bigints(p.rotations)},
      {"storage_fee_max_gas_price", p.storage_fee_max_gas_price},
      {"validator_timeunits_allocation", p.validator_timeunits_allocation},
  });
}

Value external_params_to_value(const ExternalMessageParams& p) {
  return Value::map({{"gas_limit", p.gas_limit}, {"max_gas_price", p.max_gas_price}});
}

Value allocation_to_value(const std::vector<AllocationNode>& nodes) {
  Value::Array a;
  for (const AllocationNode& n : nodes) a.push_back(node_to_value(n));
  return Value(std::move(a));
}

AllocationNode* match_internal(std::vector<AllocationNode>& nodes, MessageOn on, const calldata::Address& recipient,
                               const CallKey& call_key) {
  for (AllocationNode& n : nodes) {
    if (std::holds_alternative<InternalMessageParams>(n.fee_params) && n.on == on &&
        wildcard_or_equal(n.recipient, recipient) && wildcard_or_equal(n.call_key, call_key)) {
      return &n;
    }
  }
  return nullptr;
}

AllocationNode* match_external(std::vector<AllocationNode>& nodes, const calldata::Address& recipient,
                               const CallKey& call_key) {
  for (AllocationNode& n : nodes) {
    if (std::holds_alternative<ExternalMessageParams>(n.fee_params) && wildcard_or_equal(n.recipient, recipient) &&
        wildcard_or_equal(n.call_key, call_key)) {
      return &n;
    }
  }
  return nullptr;
}

calldata::Bytes abi_encode(const std::vector<AllocationNode>& roots) {
  std::vector<std::pair<const AllocationNode*, BigInt>> flat;
  flatten(roots, u256_max(), flat);
  std::vector<calldata::Bytes> elements;
  elements.reserve(flat.size());
  for (const auto& [node, parent] : flat) elements.push_back(node_abi(*node, parent));
  calldata::Bytes out;
  put_word(out, kWord);  // abi.encode(T[]): the offset of the array
  put_word(out, elements.size());
  // Element offsets count from just after the length word.
  std::size_t offset = elements.size() * kWord;
  for (const calldata::Bytes& e : elements) {
    put_word(out, offset);
    offset += e.size();
  }
  for (const calldata::Bytes& e : elements) out.insert(out.end(), e.begin(), e.end());
  return out;
}

}  // namespace genvm::executor::fees
