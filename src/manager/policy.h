// Debug-mode admission policy: who may run at which debug level.
//
//   PolicyDecision d = decide_debug_mode(caller, requested_name, policy);
//
// Rules (spec: manager-api GenvmRunRequest.debug_mode; seeds: "Enforcement"):
//  - an unknown level name is rejected, never downgraded;
//  - a trusted caller gets what it asks for;
//  - an untrusted caller gets any level up to `untrusted_max` (default `safe`: every level above
//    it is privileged); above that the request is rejected, or, when the operator chose
//    clamping, lowered to `untrusted_max`.
// `untrusted_max` can never be `unsafe` or above (config validation refuses it): those levels
// break consensus determinism, and the spec says the manager MUST NOT grant them to an
// untrusted caller.
// Pure: no I/O. The caller logs the decision (to_json()).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/debug_mode.h"

namespace genvm::manager {

struct DebugPolicy {
  DebugMode untrusted_max = DebugMode::kSafe;
  bool clamp = false;  // false: reject above untrusted_max; true: clamp to it
};

// How the caller was identified, for the log; `trusted` is what the decision uses.
struct Caller {
  Caller(bool trusted = false, std::string identity = {}, std::string owner = {}, std::string peer = {})
      : trusted(trusted), identity(std::move(identity)), owner(std::move(owner)), peer(std::move(peer)) {}
  bool trusted = false;
  std::string identity;  // "uid:1000", "token", "tcp:127.0.0.1", ...
  // Who a run it starts belongs to (server.h "Trust"): "token:<digest>" when the request bore
  // a bearer token, else "uid:<n>" on the unix socket, else "conn:<n>", its connection alone.
  std::string owner;
  // The machine or user behind the connection, which no request can choose: "tcp:<address>"
  // or "uid:<n>" (config `connections.max_per_peer`, `retention.max_bytes_per_peer`).
  std::string peer;
};

// Who may act on (cancel, ack, read, attach to, repeat the host_genvm_id of) a run (config
// `ownership`). kShared, the default and the public manager's model (a trusted local
// deployment): every caller, from any connection. kPerCaller, for a manager shared by parties
// that do not trust each other: a trusted caller always, any other only on its own runs.
enum class RunOwnership { kShared, kPerCaller };
bool may_use_run(const Caller& caller, std::string_view owner, RunOwnership mode);

// ---- extra_args (GenvmRunRequest.extra_args) ------------------------------------------------
// Flags the manager sets itself, or that no request may choose (the module cache, the config
// file, descriptors, the input file). `genvm` refuses a flag given twice; the manager refuses
// these from every caller before a run exists, so a request never takes the last word on its
// own debug mode, host, permissions or cache.
bool is_reserved_executor_flag(std::string_view arg);  // "--debug-mode", "--debug-mode=x", ...

struct ExtraArgsPolicy {
  // What an untrusted caller may pass: each entry an exact argument, or a prefix ending in '*'
  // ("--nondet-fuel=*"; "*" alone: any argument that is not reserved). Default: none.
  std::vector<std::string> untrusted_allowed;
};

// The refusal of `args` for `caller` (a reason naming the first bad argument), or nullopt.
std::optional<std::string> refuse_extra_args(const Caller& caller, const std::vector<std::string>& args,
                                             const ExtraArgsPolicy& policy);

enum class PolicyOutcome { kAccepted, kClamped, kRejected };
std::string_view to_string(PolicyOutcome o);

struct PolicyDecision {
  PolicyOutcome outcome = PolicyOutcome::kRejected;
  std::optional<DebugMode> requested;  // none when the name was unknown
  DebugMode granted = DebugMode::kDisabled;  // meaningful unless rejected
  std::string reason;                  // why, for the log and the failed_to_start error
};

PolicyDecision decide_debug_mode(const Caller& caller, std::string_view requested_name,
                                 const DebugPolicy& policy);

// One JSON object (no newline): {"event":"debug_mode_decision","caller":...,...}.
std::string to_json(const Caller& caller, std::string_view requested_name, const PolicyDecision& d);

}  // namespace genvm::manager
