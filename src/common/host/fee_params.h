// The fee parameters of messages and the message-fee allocation tree, as ExecutionData and the
// emissions carry them (the public modules-interfaces domain/fees types, calldata-encoded as
// their derive does: records with exactly their keys, externally tagged enums).
//
//   MessageAllocationNode = {budget: int, call_key: bytes32 | null, children: [node...],
//                            fee_params: {"Internal": InternalMessageParams} |
//                                        {"External": ExternalMessageParams},
//                            on: "finalized" | "accepted", recipient: address | null}
//   InternalMessageParams = {leader_timeunits_allocation, validator_timeunits_allocation,
//                            execution_budget_per_round, rotations: [int...],
//                            max_price_gen_per_time_unit, storage_fee_max_gas_price,
//                            receipt_fee_max_gas_price}
//   ExternalMessageParams = {gas_limit, max_gas_price}
// Every integer is a U256. Readers are strict: a missing or unknown key, a wrong kind, an
// integer out of range is an error with the key path in its message (codes as ExecutionData's:
// "execution_data_missing", "execution_data_unknown_key", "execution_data_type").
//
//   Result<std::vector<AllocationNode>> t = parse_allocation(v, "message_fee_allocation");
//   calldata::Value back = allocation_to_value(*t);      // parse(back) == *t
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/bigint.h"
#include "common/calldata.h"
#include "common/result.h"

namespace genvm::host {

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

// Our bound (the public decoder has only the calldata nesting limit): deeper trees are refused.
inline constexpr std::size_t kMaxAllocationDepth = 64;

// `path` names the value in error messages ("message_fee_allocation", "fee_params").
Result<std::vector<AllocationNode>> parse_allocation(const calldata::Value& v, const std::string& path);
Result<InternalMessageParams> parse_internal_params(const calldata::Value& v, const std::string& path);
Result<ExternalMessageParams> parse_external_params(const calldata::Value& v, const std::string& path);
Result<MessageOn> parse_on(const calldata::Value& v, const std::string& path);

// The fee data our own hosts send (genvm-node, the test fixtures), since the executor's default
// fee rules need it from every host: the constants those rules read, at the public test suite's
// values (1 per receipt byte, per changed slot and per storage page or event word; 0 for the
// rest), four buckets of `total` each, and one wildcard allocation node per kind of message
// (internal finalized, internal accepted, external) with budget `total` and the smallest
// fee parameters (rotations [0], 1 for every other field).
struct HostFees {
  std::vector<BigInt> bucket_totals;
  std::map<std::string, std::string> gas_data;
  std::vector<AllocationNode> message_fee_allocation;
};
HostFees local_host_fees(const BigInt& total);

calldata::Value allocation_to_value(const std::vector<AllocationNode>& nodes);
calldata::Value internal_params_to_value(const InternalMessageParams& p);
calldata::Value external_params_to_value(const ExternalMessageParams& p);
std::string_view on_name(MessageOn on);  // "finalized" / "accepted"

}  // namespace genvm::host
