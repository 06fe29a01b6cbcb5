// The run request (the public `run::Request`, GenvmRunRequest in manager-api.yaml) and the
// ExecutionData the manager derives from it for the executor's stdin.
//
//   auto r = parse_run_request(body);                 // typed, strict: the public decode
//   if (!r) reply_error(malformed_frame, r.error().message);
//   Value data = to_execution_data(*r, granted_mode); // what `genvm run` reads on stdin
//
// Strict as the public derive decodes it: every required field present (code and
// leader_nondet_results too, though they may be null), defaulted ones optional, an unknown key
// anywhere is an error, every field of its Rust type (selector tagged by "kind", message a
// MessageData, debug_mode one of the five level names, deadline a duration string, timestamps
// RFC 3339, message_fee_allocation a tree of MessageAllocationNode). Two choices of ours, both
// wider than the public decoder: `message.chain_id`, `message.value` and `bucket_totals` may
// also be decimal strings (the yaml's "big integer string"); they reach the executor as
// integers. host_hello_data[1] must be empty (socket.rs: the manager owns host connection 1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/calldata.h"
#include "common/debug_mode.h"
#include "common/result.h"
#include "manager/protocol.h"
#include "common/rfc3339.h"

namespace genvm::manager {

// Which executor line runs a request (modules-interfaces ExecutorSelector).
struct ExecutorSelector {
  enum class Kind { kMajor, kVersion } kind = Kind::kMajor;
  std::uint32_t major = 0;
  std::string version;  // kVersion: a directory name, or "re:" + a pattern over manifest keys
};

struct RunRequest {
  calldata::Value body;  // the request as decoded, with the legacy "method" key patched
  ExecutorSelector selector;
  bool is_sync = false;
  std::string debug_mode = "disabled";  // a valid level name (the decode checked it)
  Millis deadline{std::chrono::minutes(20)};  // `deadline`, else max_execution_minutes; <= 24 h
  std::string host;
  std::string permissions = "wscn";
  bool no_modules = false;
  std::string reroute_to;                         // unsafe_overrides.reroute_to ("" none)
  std::optional<std::uint32_t> initial_recursion;  // unsafe_overrides.initial_recursion
  std::vector<std::string> extra_args;
  std::optional<std::string> host_genvm_id;
  UtcTime timestamp;
  bool hook_cross_contract_calls = false;

  // run.rs Request::needs_modules: an async run that may spawn nondet blocks needs the LLM and
  // web modules, unless it says it does without.
  bool needs_modules() const;
};

// Error code "malformed_frame", message naming the field ("message.chain_id: expected ...").
Result<RunRequest> parse_run_request(const calldata::Value& body);

// run.rs patch_legacy_method_key: calldata that is a map with the v0.2 key "method" gets it
// moved to the current empty key "" (overwriting one already there). Anything else is left.
void patch_legacy_method_key(calldata::Value& body);

// run.rs execution_data_from_request: the shared fields, message.datetime re-encoded in UTC
// (absent: 2024-11-26T06:42:42.424242Z), method_hosts an array of integers sending
// consume_result, run_nested and (unless hook_cross_contract_calls) resolve_callcontract_executor
// to host 1, remaining_recursion from unsafe_overrides.initial_recursion at `unsafe` and above
// (of the granted level), nested null.
calldata::Value to_execution_data(const RunRequest& request, DebugMode granted);

// run.rs execution_data_from_request's method_hosts: one entry per host method, 1 for
// consume_result, run_nested and (unless hooked) resolve_callcontract_executor, else 0.
calldata::Value manager_method_hosts(bool hook_cross_contract_calls);

}  // namespace genvm::manager
