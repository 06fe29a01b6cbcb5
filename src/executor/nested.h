// Delegated CallContract (docs/adr/015, impl-spec host-loop.rst `run_nested`, NestedRunEnvelope
// and NestedRunReply of modules-interfaces nested.rs): the envelope a caller sends through the
// host's run_nested, the reply it accepts, and what a run that is itself nested imports from
// ExecutionData.nested / remaining_recursion.
//
//   calldata::Value env = nested_envelope(call);                // what run_nested carries
//   Result<NestedOutcome> o = accept_nested_reply(reply);       // "nested_reply" when refused
//   Result<ImportedFrame> f = import_frame(execution_data, permissions_from_the_command_line);
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/bigint.h"
#include "common/calldata.h"
#include "common/result.h"
#include "common/vm_error.h"
#include "common/host/nested_run.h"
#include "executor/entry.h"
#include "executor/host_client.h"
#include "executor/sha3.h"

namespace genvm::executor {

// NestedPermissions: the bits of common/host/nested_run.h, shared with the manager. Bits unknown
// to this executor are ignored on import, so they deny rather than grant.
using host::kNestedCallOthers;
using host::kNestedDeterministic;
using host::kNestedReadStorage;
using host::kNestedRegisterRunners;
using host::kNestedSendMessages;
using host::kNestedSpawnNondet;
using host::kNestedUseBalanceForMessageFees;
using host::kNestedWriteStorage;
using host::NestedPermission;

// The fields of one NestedRunEnvelope, as the caller derives them for the callee.
struct NestedCall {
  calldata::Bytes routing_payload;       // the host's (or our own major selector), unread
  calldata::Bytes calldata;              // the callee's entry, encoded
  calldata::Value message;               // the callee's startup message (MessageData keys taken)
  std::vector<calldata::Address> stack;  // the caller's stack with the caller appended
  std::uint32_t permissions = 0;         // NestedPermission bits
  StorageType state_mode = StorageType::kDefault;
  std::uint32_t remaining_recursion = 0;
  BigInt remaining_det_fuel;
  std::uint32_t memory_limit = 0;
};
// The envelope, encoded by the shared codec (host::nested_envelope_to_value). Error code
// "nested_envelope" when the message's MessageData keys do not read as a MessageData.
Result<calldata::Value> nested_envelope(const NestedCall& call);

// The routing payload a caller mints when the host declined a callee whose ABI major this
// executor does not serve (ADR-015, "What a null resolution means"): the encoded selector
// {"kind": "major", "major": m}, for the manager to resolve.
calldata::Bytes major_selector(std::uint8_t major);

// A reply the caller folds and hands to its contract. Refused (error code "nested_reply",
// which ends the caller's run with an internal error, as the public executor's nested_run_ok):
// effect_free false, a small hash that is not 32 bytes, an InternalError, or a VmError /
// FatalVmError whose data is not a string. FatalVmError stays fatal for the caller.
struct NestedOutcome {
  ResultCode kind = ResultCode::kVmError;
  calldata::Value data;
  Digest32 small_hash{};
};
Result<NestedOutcome> accept_nested_reply(NestedReply reply);  // moves the data out

// What the top sub-VM of a run takes from ExecutionData. Not nested: the command line's
// permissions in deterministic mode, the default view, the full RAM budget, depth 0. Nested:
// the imported permission bits, state_mode, memory_limit as the RAM budget and the imported
// det fuel as a cap on what it hands on. remaining_recursion (nested or not) is clamped to
// this executor's own limit and sets the depth the top VM starts at; 0 leaves no room for
// the top VM itself (`recursion_exhausted`). Error "execution_data_type" for permission bits
// that are not a u32.
struct ImportedFrame {
  StorageType state = StorageType::kDefault;
  Permissions permissions;
  bool deterministic = true;
  std::optional<std::uint64_t> ram_budget;  // unset: the executor's default
  int depth = 0;
  bool recursion_exhausted = false;
  std::optional<BigInt> det_fuel_cap;
};
Result<ImportedFrame> import_frame(const ExecutionData& d, const Permissions& granted);

}  // namespace genvm::executor
