#include "manager/policy.h"

#include "manager/json.h"

namespace genvm::manager {

std::string_view to_string(PolicyOutcome o) {
  switch (o) {
    case PolicyOutcome::kAccepted: return "accepted";
    case PolicyOutcome::kClamped: return "clamped";
    case PolicyOutcome::kRejected: return "rejected";
  }
  return "";
}

PolicyDecision decide_debug_mode(const Caller& caller, std::string_view requested_name,
                                 const DebugPolicy& policy) {
  PolicyDecision d;
  auto parsed = parse_debug_mode(requested_name);
  if (!parsed) {
    d.reason = "unknown debug_mode \"" + std::string(requested_name.substr(0, 64)) + "\"";
    return d;
  }
  DebugMode mode = *parsed;
  d.requested = mode;
  if (caller.trusted || mode <= policy.untrusted_max) {
    d.outcome = PolicyOutcome::kAccepted;
    d.granted = mode;
    d.reason = caller.trusted ? "trusted caller" : "within the untrusted maximum";
    return d;
  }
  if (policy.clamp) {
    d.outcome = PolicyOutcome::kClamped;
    d.granted = policy.untrusted_max;
    d.reason = "untrusted caller: " + std::string(to_string(mode)) + " clamped to " +
               std::string(to_string(policy.untrusted_max));
    return d;
  }
  d.reason = "untrusted caller may not use debug_mode " + std::string(to_string(mode)) +
             " (maximum " + std::string(to_string(policy.untrusted_max)) + ")";
  return d;
}

std::string to_json(const Caller& caller, std::string_view requested_name, const PolicyDecision& d) {
  JsonWriter w;
  w.begin_object();
  w.key("event").string("debug_mode_decision");
  w.key("caller").string(caller.identity);
  w.key("trusted").boolean(caller.trusted);
  w.key("requested").string(requested_name.substr(0, 64));
  w.key("outcome").string(to_string(d.outcome));
  if (d.outcome != PolicyOutcome::kRejected) w.key("granted").string(to_string(d.granted));
  w.key("reason").string(d.reason);
  w.end_object();
  return w.take();
}

}  // namespace genvm::manager
