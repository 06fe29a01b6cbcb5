#include "manager/policy.h"

#include "common/json.h"

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

bool may_use_run(const Caller& caller, std::string_view owner, RunOwnership mode) {
  return mode == RunOwnership::kShared || caller.trusted || caller.owner == owner;
}

bool is_reserved_executor_flag(std::string_view arg) {
  static constexpr std::string_view kReserved[] = {
      "--debug-mode", "--host",   "--permissions",    "--genvm-id", "--sync",   "--module-llm", "--module-web",
      "--module-cache", "--config", "--execution-data", "--log-fd"};
  std::string_view name = arg.substr(0, arg.find('='));
  for (std::string_view r : kReserved) {
    if (name == r) return true;
  }
  return false;
}

std::optional<std::string> refuse_extra_args(const Caller& caller, const std::vector<std::string>& args,
                                             const ExtraArgsPolicy& policy) {
  auto shown = [](const std::string& a) { return "\"" + a.substr(0, 64) + "\""; };
  for (const auto& a : args) {
    if (is_reserved_executor_flag(a)) return "extra_args may not set " + shown(a) + ": the manager owns that flag";
  }
  if (caller.trusted) return std::nullopt;
  for (const auto& a : args) {
    bool allowed = false;
    for (const auto& p : policy.untrusted_allowed) {
      if (p.ends_with('*') ? a.starts_with(std::string_view(p).substr(0, p.size() - 1)) : a == p) allowed = true;
    }
    if (!allowed) return "untrusted caller may not pass extra_args " + shown(a) + " (not in extra_args.untrusted_allowed)";
  }
  return std::nullopt;
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
