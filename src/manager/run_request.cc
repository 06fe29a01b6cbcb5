#include "manager/run_request.h"

#include "manager/public_types.h"
#include "manager/shape.h"

namespace genvm::manager {

using calldata::Value;

namespace {

Error malformed(std::string message) { return request_failure(RequestFailure::kMalformed, std::move(message)); }

// The timestamp the public MessageData takes when `datetime` is absent (abi_stub.rs).
constexpr const char* kDefaultDatetime = "2024-11-26T06:42:42.424242Z";

// Host method ids (codegen/data/host-fns.json); the table has one entry per method.
constexpr std::size_t kHostMethodCount = 9;
constexpr std::size_t kConsumeResult = 6;
constexpr std::size_t kResolveCallcontractExecutor = 7;
constexpr std::size_t kRunNested = 8;

// An integer, or the decimal string the shape already checked.
Value as_integer(const Value& v) {
  if (v.is_string()) return Value(BigInt::parse_decimal(v.as_string()).value());
  return v;
}

const Value& field_or(const Value& body, std::string_view key, const Value& fallback) {
  const Value* v = body.find(key);
  return v ? *v : fallback;
}

}  // namespace

bool RunRequest::needs_modules() const {
  return !no_modules && !is_sync && permissions.find('n') != std::string::npos;
}

void patch_legacy_method_key(Value& body) {
  if (!body.is_map()) return;
  auto it = body.as_map().find("calldata");
  if (it == body.as_map().end() || !it->second.is_bytes()) return;
  auto decoded = calldata::decode(it->second.as_bytes());
  if (!decoded || !decoded->is_map()) return;
  auto& m = decoded->as_map();
  auto method = m.find("method");
  if (method == m.end()) return;
  Value moved = std::move(method->second);
  m.erase(method);
  m[""] = std::move(moved);
  it->second = calldata::encode(*decoded);
}

Result<RunRequest> parse_run_request(const Value& body) {
  if (Status s = check(run_request_shape(), body); !s) return malformed(s.error().message);
  RunRequest r;
  r.body = body;
  patch_legacy_method_key(r.body);
  const Value& b = r.body;

  const Value& sel = *b.find("selector");
  if (sel.find("kind")->as_string() == "major") {
    r.selector.kind = ExecutorSelector::Kind::kMajor;
    r.selector.major = static_cast<std::uint32_t>(*sel.find("major")->as_int().to_uint64());
  } else {
    r.selector.kind = ExecutorSelector::Kind::kVersion;
    r.selector.version = sel.find("version")->as_string();
  }
  r.is_sync = b.find("is_sync")->as_bool();
  if (const Value* d = b.find("debug_mode")) r.debug_mode = d->as_string();
  // run.rs strict_deadline_from_request: the deadline if given, else the minutes (both capped
  // at a day; clamping the minutes first keeps the multiplication in range).
  std::uint64_t minutes = 20;
  if (const Value* m = b.find("max_execution_minutes")) minutes = *m->as_int().to_uint64();
  r.deadline = std::chrono::minutes(std::min<std::uint64_t>(minutes, 24 * 60));
  if (const Value* d = b.find("deadline"); d && !d->is_null()) r.deadline = *parse_duration(d->as_string());
  r.deadline = std::min(r.deadline, Millis(kMaxDeadline));
  r.host = b.find("host")->as_string();
  if (const Value* p = b.find("permissions")) r.permissions = p->as_string();
  if (const Value* n = b.find("no_modules")) r.no_modules = n->as_bool();
  if (const Value* o = b.find("unsafe_overrides")) {
    if (const Value* rt = o->find("reroute_to")) r.reroute_to = rt->as_string();
    if (const Value* ir = o->find("initial_recursion"); ir && !ir->is_null()) {
      r.initial_recursion = static_cast<std::uint32_t>(*ir->as_int().to_uint64());
    }
  }
  if (const Value* e = b.find("extra_args")) {
    for (const Value& a : e->as_array()) r.extra_args.push_back(a.as_string());
  }
  if (const Value* h = b.find("host_genvm_id"); h && !h->is_null()) r.host_genvm_id = h->as_string();
  r.timestamp = *parse_rfc3339(b.find("timestamp")->as_string());
  if (const Value* h = b.find("hook_cross_contract_calls")) r.hook_cross_contract_calls = h->as_bool();
  if (const Value* hh = b.find("host_hello_data"); hh && hh->as_array().size() > 1 && !hh->as_array()[1].as_bytes().empty()) {
    return malformed("host_hello_data for manager-owned host index 1 is not allowed");
  }
  return r;
}

Value manager_method_hosts(bool hook_cross_contract_calls) {
  Value::Array routes(kHostMethodCount, Value(0));
  routes[kConsumeResult] = 1;
  routes[kRunNested] = 1;
  if (!hook_cross_contract_calls) routes[kResolveCallcontractExecutor] = 1;
  return Value(std::move(routes));
}

Value to_execution_data(const RunRequest& r, DebugMode granted) {
  const Value& b = r.body;
  static const Value kEmptyArray = Value(Value::Array{});
  static const Value kEmptyMap = Value(Value::Map{});
  Value::Map d;
  d["calldata"] = *b.find("calldata");
  Value::Map message = b.find("message")->as_map();
  message["chain_id"] = as_integer(message["chain_id"]);
  message["value"] = as_integer(message["value"]);
  auto dt = message.find("datetime");
  message["datetime"] = format_rfc3339_utc(*parse_rfc3339(dt == message.end() ? kDefaultDatetime : dt->second.as_string()));
  d["message"] = Value(std::move(message));
  d["host_data"] = *b.find("host_data");
  d["code"] = *b.find("code");
  d["leader_nondet_results"] = *b.find("leader_nondet_results");
  d["host_hello_data"] = field_or(b, "host_hello_data", kEmptyArray);
  d["method_hosts"] = manager_method_hosts(r.hook_cross_contract_calls);
  Value::Array buckets;
  for (const Value& v : b.find("bucket_totals")->as_array()) buckets.push_back(as_integer(v));
  d["bucket_totals"] = Value(std::move(buckets));
  d["gas_data"] = field_or(b, "gas_data", kEmptyMap);
  d["message_fee_allocation"] = field_or(b, "message_fee_allocation", kEmptyArray);
  d["initial_time_units_allocation"] = *b.find("initial_time_units_allocation");
  d["record_actions"] = field_or(b, "record_actions", kEmptyArray);
  d["remaining_recursion"] = granted >= DebugMode::kUnsafe && r.initial_recursion ? Value(*r.initial_recursion) : Value();
  d["nested"] = Value();
  return Value(std::move(d));
}

}  // namespace genvm::manager
