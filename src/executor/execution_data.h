// ExecutionData: what the executor is told to run, read strictly from calldata.
//
//   Result<ExecutionData> d = parse_execution_data(bytes);   // one error per problem
//   Status s = validate_entry(d->calldata, d->message.is_init); // call convention check
//   calldata::Value start = startup_message(*d, EntryKind::kMain);
//
// The wire shape is the public GenVM one (calldata map, keys as in the spec's ExecutionData):
// required keys must be present, optional ones may be absent or null, and an unknown key is an
// error (a closed key set means two byte-different inputs never describe the same run). Error
// codes: "execution_data_malformed" (not calldata / not a map), "execution_data_missing"
// (a required key), "execution_data_unknown_key", "execution_data_type" (wrong kind or out of
// range); the message names the key path, e.g. "message.chain_id". `validate_entry` returns
// "malformed_entry" errors. `parse_permissions` reads the CLI's `--permissions` letters.
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
#include "executor/host_protocol.h"

namespace genvm::executor {

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
  calldata::Value permissions;       // carried through, opaque here
  StorageType state_mode = StorageType::kDefault;
  calldata::Value topmost_runner_id;  // carried through, opaque here
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
  calldata::Value message_fee_allocation;  // an array, validated shallowly, carried through
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

// The host index a method is routed to (host-loop.rst "Multi-Host").
std::size_t route(const ExecutionData& d, HostMethod m);

// Method call convention (spec/04-contract-interface/02-abi.rst): a map with keys only from
// {"", "args", "kwargs"}, typed String/Array/Map, and no "" on deployment.
Status validate_entry(std::span<const std::uint8_t> entry, bool is_init);

// The calldata message a contract reads on stdin (spec/03-vm/01-startup.rst).
calldata::Value startup_message(const ExecutionData& d, EntryKind kind);

struct Permissions {
  bool write_storage = false;   // w
  bool send_messages = false;   // s
  bool call_others = false;     // c
  bool spawn_nondet = false;    // n
  friend bool operator==(const Permissions&, const Permissions&) = default;
};
// Letters from "wscn", each at most once, any order; "" grants nothing.
Result<Permissions> parse_permissions(std::string_view letters);

}  // namespace genvm::executor
