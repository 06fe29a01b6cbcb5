// ExecutionData: what the executor is told to run, read strictly from calldata.
//
//   Result<ExecutionData> d = parse_execution_data(bytes);   // one error per problem
//   calldata::Value v = execution_data_to_value(*d);          // what a host or manager sends
//
// The wire shape is the public GenVM one (calldata map, keys as in the spec's ExecutionData):
// required keys must be present, optional ones may be absent or null, and an unknown key is an
// error (a closed key set means two byte-different inputs never describe the same run). Error
// codes: "execution_data_malformed" (not calldata / not a map), "execution_data_missing"
// (a required key), "execution_data_unknown_key", "execution_data_type" (wrong kind or out of
// range); the message names the key path, e.g. "message.chain_id".
// Shared wire code: the executor reads it, hosts and the manager write it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/bigint.h"
#include "common/calldata.h"
#include "common/result.h"
#include "common/host/fee_params.h"
#include "common/host/protocol.h"

namespace genvm::host {

using calldata::Address;
using calldata::Bytes;

struct MessageData {
  Address contract_address;
  Address sender_address;
  Address origin_address;
  Address signer_address;
  BigInt chain_id;
  BigInt value;
  bool is_init = false;
  // RFC 3339 text as given; absent means the spec's default timestamp.
  std::string datetime;
};

// Present exactly when the run is nested inside another executor's run.
struct NestedExecutionData {
  std::uint32_t memory_limit = 0;
  std::vector<Address> stack;
  calldata::Value permissions;       // NestedPermissions: a u32 of bits
  StorageType state_mode = StorageType::kDefault;
  calldata::Value topmost_runner_id;  // NestedRunnerId: a string
  BigInt remaining_det_fuel;
};

struct ExecutionData {
  Bytes calldata;                // entry payload
  MessageData message;
  std::string host_data;
  std::optional<Bytes> code;     // deployment code, when supplied with the request
  std::optional<std::vector<Bytes>> leader_nondet_results;  // set: sync/validator mode
  std::vector<std::uint8_t> method_hosts;  // method id -> host index; empty: all on host 0
  std::vector<Bytes> host_hello_data;      // host index -> bytes written first
  std::vector<BigInt> bucket_totals;
  std::map<std::string, std::string> gas_data;
  std::vector<AllocationNode> message_fee_allocation;  // fee_params.h
  std::uint32_t initial_time_units_allocation = 0;
  std::vector<std::string> record_actions;
  std::optional<std::uint32_t> remaining_recursion;
  std::optional<NestedExecutionData> nested;
};

// The timestamp the spec uses when `message.datetime` is absent.
inline constexpr std::string_view kDefaultDatetime = "2024-11-26T06:42:42.424242Z";

Result<ExecutionData> parse_execution_data(std::span<const std::uint8_t> bytes);
Result<ExecutionData> execution_data_from_value(const calldata::Value& v);
// The inverse, for hosts and tests: parse(encode(d)) == d for every parsed d.
calldata::Value execution_data_to_value(const ExecutionData& d);

// The `message` part alone (MessageData), read and written as above: the run_nested envelope
// carries one too (nested_run.h). Error paths start "message.".
Result<MessageData> message_from_value(const calldata::Value& v);
calldata::Value message_to_value(const MessageData& m);

// The host index a method is routed to (host-loop.rst "Multi-Host").
std::size_t route(const ExecutionData& d, HostMethod m);

}  // namespace genvm::host
