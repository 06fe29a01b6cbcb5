// run_nested on host 1: the manager's half of a delegated CallContract (impl-spec host-loop.rst
// `run_nested`, docs/adr 015; public run.rs start_nested, nested_reply_from_consumed_result,
// nested_internal_error). Pure: the registry spawns and reaps the child (registry.cc), these
// functions decide what it runs and what the caller is told.
//
//   auto child = plan_nested_run(caller_request, envelope_bytes, caller_depth);
//   if (!child) reply = nested_internal_error();           // and log child.error()
//   ... run child->request with child->execution_data on stdin ...
//   reply = nested_reply_for_exit(consumed, exit_code, signal).value_or(nested_internal_error());
//   write(host1, nested_reply_frame(reply));
//
// Bounds (each a build constant, none configurable: a contract chooses the envelope, so a
// tunable bound would let two honest nodes disagree, ADR-015): an envelope above
// kMaxNestedEnvelopeBytes closes host 1; a chain more than kMaxNestedDepth delegated calls deep
// is refused with the internal-error reply; remaining_recursion is clamped to
// kCrossMajorRecursion. One child per caller at a time (the caller is blocked in its call and
// host 1 is not read until the reply is written).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/calldata.h"
#include "common/result.h"
#include "common/host/nested_run.h"
#include "common/host/wire.h"
#include "manager/run_request.h"

namespace genvm::manager {

// run.rs CROSS_MAJOR_RECURSION: the recursion budget a delegated callee gets at most.
inline constexpr std::uint32_t kCrossMajorRecursion = 6;
// Ours: delegated hops per chain the manager serves, whatever the executors report. An honest
// chain never reaches it (each hop spends at least one unit of a budget clamped to 6).
inline constexpr std::size_t kMaxNestedDepth = kCrossMajorRecursion;
// Ours (the public read is bounded by the u32 prefix only): the host-protocol slice bound.
inline constexpr std::uint32_t kMaxNestedEnvelopeBytes = host::kMaxHostSlice;

struct NestedChild {
  // What the executor command line is built from (executor_args): the routing selector, the
  // caller's host, permissions "c" or "", --sync, no extra args, the message's datetime as the
  // timestamp lines are resolved at.
  RunRequest request;
  calldata::Bytes execution_data;  // encoded, for the child's stdin
};

// start_nested. `caller_depth`: delegated hops above the caller (0 for a top-level run).
// Refused (error code "nested_run", message saying why): an envelope that does not decode, an
// init message or a non-zero value, a caller whose host 0 is fd:// (a child cannot re-dial it),
// a routing payload that is not an ExecutorSelector, permission bits a delegated call never
// carries (spawn_nondet, write_storage, send_messages, use_balance_for_message_fees), a chain
// at kMaxNestedDepth.
Result<NestedChild> plan_nested_run(const RunRequest& caller, std::span<const std::uint8_t> envelope,
                                    std::size_t caller_depth);

// nested_reply_from_consumed_result: the child's [code][ReportedResult], decoded strictly; a
// 32-byte small hash unless InternalError; no effect of any kind (storage changes, emissions,
// a nondet disagreement or results, LLM or data-fee consumption). FatalVmError stays fatal.
// Error code "invalid_result".
Result<host::NestedRunReply> nested_reply_from_consumed_result(std::span<const std::uint8_t> payload);

// The child ended: it must have exited 0 (not by a signal) after a consume_result.
Result<host::NestedRunReply> nested_reply_for_exit(const std::optional<calldata::Bytes>& consumed, int exit_code,
                                                  int signal);

// What every failure answers: InternalError "cross-major nested run failed", no small hash,
// effect_free false (the caller's executor refuses it and ends with an internal error).
host::NestedRunReply nested_internal_error();

// The reply as host 1 writes it: a u32 LE length and the calldata (no status byte).
std::vector<std::uint8_t> nested_reply_frame(const host::NestedRunReply& reply);

}  // namespace genvm::manager
