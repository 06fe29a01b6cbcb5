// The message-fee allocation tree and the fee parameters of messages.
//
// ExecutionData.message_fee_allocation is a list of MessageAllocationNode (the public
// modules-interfaces domain/fees types, calldata-encoded with exact key sets):
//   {budget: int, call_key: bytes32 | null, children: [node...], fee_params: {"Internal": P} |
//    {"External": {gas_limit, max_gas_price}}, on: "finalized" | "accepted", recipient: addr | null}
// P = {leader_timeunits_allocation, validator_timeunits_allocation, execution_budget_per_round,
//      rotations: [int...], max_price_gen_per_time_unit, storage_fee_max_gas_price,
//      receipt_fee_max_gas_price}; every integer is a U256.
//
// An outgoing message takes the first node of the list (list order, no reordering) that fits it
// (match_internal / match_external); a null recipient or call key matches anything. The
// emission's `subtree` is abi_encode(matched.children): the chain's flat
// `abi.encode(MessageAllocationNode[])`, parents before children (pre-order), each with its
// parent's index (roots: 2^256 - 1).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "common/bigint.h"
#include "common/calldata.h"
#include "common/result.h"

namespace genvm::executor::fees {

using CallKey = std::array<std::uint8_t, 32>;

enum class MessageOn : std::uint8_t { kFinalized, kAccepted };

struct InternalMessageParams {
  BigInt leader_timeunits_allocation;
  BigInt validator_timeunits_allocation;
  BigInt execution_budget_per_round;
  std::vector<BigInt> rotations;  // rotations[0]: the first round; the rest: one per appeal
  BigInt max_price_gen_per_time_unit;
  BigInt storage_fee_max_gas_price;
  BigInt receipt_fee_max_gas_price;
  friend bool operator==(const InternalMessageParams&, const InternalMessageParams&) = default;
};

struct ExternalMessageParams {
  BigInt gas_limit;
  BigInt max_gas_price;
  friend bool operator==(const ExternalMessageParams&, const ExternalMessageParams&) = default;
};

struct AllocationNode {
  std::optional<calldata::Address> recipient;  // nullopt: any recipient
  std::optional<CallKey> call_key;             // nullopt: any method
  BigInt budget;                               // what the messages it pays for may still spend
  MessageOn on = MessageOn::kFinalized;
  std::variant<InternalMessageParams, ExternalMessageParams> fee_params;
  std::vector<AllocationNode> children;
  friend bool operator==(const AllocationNode&, const AllocationNode&) = default;
};

// Our bound (the public decoder has only the calldata nesting limit): trees deeper than this
// are refused.
inline constexpr std::size_t kMaxAllocationDepth = 64;

// Strict readers. Error code "fee_params" with the key path in the message.
Result<std::vector<AllocationNode>> parse_allocation(const calldata::Value& v);
Result<InternalMessageParams> parse_internal_params(const calldata::Value& v);
Result<ExternalMessageParams> parse_external_params(const calldata::Value& v);
Result<MessageOn> parse_on(const calldata::Value& v);

// Writers: parse(write(x)) == x.
calldata::Value allocation_to_value(const std::vector<AllocationNode>& nodes);
calldata::Value internal_params_to_value(const InternalMessageParams& p);
calldata::Value external_params_to_value(const ExternalMessageParams& p);
std::string_view on_name(MessageOn on);  // "finalized" / "accepted"

// First match in list order, or nullptr. An internal node matches an internal message with the
// same `on`; an external node matches an EthSend.
AllocationNode* match_internal(std::vector<AllocationNode>& nodes, MessageOn on,
                               const calldata::Address& recipient, const CallKey& call_key);
AllocationNode* match_external(std::vector<AllocationNode>& nodes, const calldata::Address& recipient,
                               const CallKey& call_key);

calldata::Bytes abi_encode(const std::vector<AllocationNode>& roots);

}  // namespace genvm::executor::fees
