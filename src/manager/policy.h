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

#include "common/debug_mode.h"

namespace genvm::manager {

struct DebugPolicy {
  DebugMode untrusted_max = DebugMode::kSafe;
  bool clamp = false;  // false: reject above untrusted_max; true: clamp to it
};

// How the caller was identified, for the log; `trusted` is what the decision uses.
struct Caller {
  bool trusted = false;
  std::string identity;  // "uid:1000", "token", "tcp:127.0.0.1", ...
};

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
