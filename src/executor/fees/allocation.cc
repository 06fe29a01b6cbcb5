#include "executor/fees/allocation.h"

#include <utility>

namespace genvm::executor::fees {

namespace {

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
