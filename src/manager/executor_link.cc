#include "manager/executor_link.h"

#include "common/vm_error.h"

namespace genvm::manager {

using calldata::Bytes;
using calldata::Value;

namespace {

Error invalid(std::string m) { return make_error("invalid_request", std::move(m)); }
Error bad_result(std::string m) { return make_error("invalid_result", std::move(m)); }

// A big integer given as a decimal string (the request's form) or already an integer.
Result<Value> big_int(const Value& v, const std::string& what) {
  if (v.is_int()) return v;
  if (v.is_string()) {
    auto b = BigInt::parse_decimal(v.as_string());
    if (!b) return invalid(what + ": not a decimal integer");
    return Value(std::move(*b));
  }
  return invalid(what + ": must be an integer or a decimal string");
}

// Host method ids (impl-spec/appendix/host-loop): consume_result 6, resolve 7, run_nested 8.
constexpr std::uint8_t kConsumeResult = 6;
constexpr std::uint8_t kResolveCallcontract = 7;

}  // namespace

Result<Value> to_execution_data(const Value& request, DebugMode granted) {
  if (!request.is_map()) return invalid("the run request must be a map");
  Value::Map d;
  auto copy = [&](const char* key, Value fallback, bool required) -> Status {
    const Value* v = request.find(key);
    if (v == nullptr) {
      if (required) return invalid(std::string("missing required field \"") + key + "\"");
      d[key] = std::move(fallback);
    } else {
      d[key] = *v;
    }
    return {};
  };
  for (const char* k : {"calldata", "host_data", "code", "leader_nondet_results", "initial_time_units_allocation"}) {
    if (auto s = copy(k, Value(), true); !s) return s.take_error();
  }
  if (auto s = copy("gas_data", Value::map({}), false); !s) return s.take_error();
  if (auto s = copy("message_fee_allocation", Value(Value::Array{}), false); !s) return s.take_error();
  if (auto s = copy("record_actions", Value(Value::Array{}), false); !s) return s.take_error();
  if (auto s = copy("host_hello_data", Value(Value::Array{}), false); !s) return s.take_error();

  const Value* msg = request.find("message");
  if (msg == nullptr || !msg->is_map()) return invalid("\"message\" must be a map");
  Value::Map m = msg->as_map();
  for (const char* k : {"chain_id", "value"}) {
    auto it = m.find(k);
    if (it == m.end()) return invalid(std::string("missing message.") + k);
    auto v = big_int(it->second, std::string("message.") + k);
    if (!v) return v.take_error();
    it->second = std::move(*v);
  }
  if (m.find("datetime") == m.end() || m.find("datetime")->second.is_null()) {
    const Value* ts = request.find("timestamp");
    if (ts != nullptr && ts->is_string()) m["datetime"] = *ts;
  }
  d["message"] = Value(std::move(m));

  const Value* buckets = request.find("bucket_totals");
  if (buckets == nullptr || !buckets->is_array()) return invalid("\"bucket_totals\" must be an array");
  Value::Array b;
  for (std::size_t i = 0; i < buckets->as_array().size(); ++i) {
    auto v = big_int(buckets->as_array()[i], "bucket_totals[" + std::to_string(i) + "]");
    if (!v) return v.take_error();
    b.push_back(std::move(*v));
  }
  d["bucket_totals"] = Value(std::move(b));

  bool hook = false;
  if (const Value* h = request.find("hook_cross_contract_calls"); h && h->is_bool()) hook = h->as_bool();
  Bytes routes(9, 0);
  routes[kConsumeResult] = 1;
  routes[kResolveCallcontract] = hook ? 0 : 1;
  routes[8] = 1;  // run_nested
  d["method_hosts"] = Value(std::move(routes));

  Value recursion;
  if (const Value* o = request.find("unsafe_overrides"); o && o->is_map() && granted >= DebugMode::kUnsafe) {
    if (const Value* r = o->find("initial_recursion"); r && r->is_int()) recursion = *r;
  }
  d["remaining_recursion"] = std::move(recursion);
  return Value(std::move(d));
}

std::vector<std::string> genvm_run_args(const Value& request, DebugMode granted, std::uint64_t genvm_id) {
  std::vector<std::string> a = {"--execution-data", "-"};
  if (const Value* h = request.find("host"); h && h->is_string()) {
    a.push_back("--host");
    a.push_back(h->as_string());
  }
  a.push_back("--host");
  a.push_back("fd://" + std::to_string(kExecutorHostOneFd));
  a.push_back("--debug-mode");
  a.push_back(std::string(to_string(granted)));
  std::string perms = "wscn";
  if (const Value* p = request.find("permissions"); p && p->is_string()) perms = p->as_string();
  a.push_back("--permissions");
  a.push_back(perms);
  a.push_back("--genvm-id");
  a.push_back(std::to_string(genvm_id));
  a.push_back("--log-fd");
  a.push_back(std::to_string(kExecutorLogFd));
  if (const Value* s = request.find("is_sync"); s && s->is_bool() && s->as_bool()) a.push_back("--sync");
  if (const Value* e = request.find("extra_args"); e && e->is_array()) {
    for (const auto& x : e->as_array()) {
      if (x.is_string()) a.push_back(x.as_string());
    }
  }
  return a;
}

Result<Bytes> check_consumed_result(std::span<const std::uint8_t> payload) {
  if (payload.empty()) return bad_result("empty consume_result");
  std::optional<std::uint8_t> outer;
  std::span<const std::uint8_t> body = payload;
  if (payload[0] <= static_cast<std::uint8_t>(ResultCode::kFatalVmError)) {
    outer = payload[0];
    body = payload.subspan(1);
  }
  auto v = calldata::decode(body);
  if (!v) return bad_result("the reported result does not decode: " + v.error().to_string());
  if (!v->is_map()) return bad_result("the reported result is not a map");
  const Value* kind = v->find("kind");
  std::optional<std::uint64_t> k = kind && kind->is_int() ? kind->as_int().to_uint64() : std::nullopt;
  if (!k || *k > static_cast<std::uint64_t>(ResultCode::kFatalVmError)) return bad_result("\"kind\" is not a result code");
  if (outer && *outer != *k) return bad_result("the outer result code disagrees with \"kind\"");
  if (*k != static_cast<std::uint64_t>(ResultCode::kInternalError)) {
    for (const char* h : {"execution_hash", "small_hash"}) {
      const Value* x = v->find(h);
      if (x == nullptr || !x->is_bytes() || x->as_bytes().size() != 32) {
        return bad_result(std::string("\"") + h + "\" must be 32 bytes");
      }
    }
  }
  Value map = std::move(*v);
  std::uint8_t code = static_cast<std::uint8_t>(*k);
  if (code == static_cast<std::uint8_t>(ResultCode::kFatalVmError)) {
    // Never published at the top: both result-code locations become VmError (spec).
    code = static_cast<std::uint8_t>(ResultCode::kVmError);
    map.as_map()["kind"] = static_cast<int>(code);
  }
  Bytes out{code};
  calldata::encode_to(map, out);
  return out;
}

HostOneParser::Output HostOneParser::feed(std::span<const std::uint8_t> bytes) {
  Output out;
  if (failed_) {
    out.error = "connection already failed";
    return out;
  }
  buf_.insert(buf_.end(), bytes.begin(), bytes.end());
  std::size_t pos = 0;
  for (;;) {
    if (pos >= buf_.size()) break;
    std::uint8_t method = buf_[pos];
    if (method == kConsumeResult) {
      if (buf_.size() - pos < 5) break;
      std::uint32_t len = static_cast<std::uint32_t>(buf_[pos + 1]) | (static_cast<std::uint32_t>(buf_[pos + 2]) << 8) |
                          (static_cast<std::uint32_t>(buf_[pos + 3]) << 16) |
                          (static_cast<std::uint32_t>(buf_[pos + 4]) << 24);
      if (len > max_) {
        failed_ = true;
        out.error = "consume_result of " + std::to_string(len) + " bytes is above the limit";
        return out;
      }
      if (buf_.size() - pos - 5 < len) break;
      auto checked = check_consumed_result(std::span<const std::uint8_t>(buf_.data() + pos + 5, len));
      pos += 5 + len;
      if (!checked) {
        // Spec: an invalid report is refused without an acknowledgement.
        failed_ = true;
        out.error = checked.error().to_string();
        return out;
      }
      out.consumed = std::move(*checked);
      out.reply.push_back(0x00);
    } else if (method == kResolveCallcontract) {
      // address (20) + state (1) + advisory major (1); answer ok + a null slice: stay in-process.
      if (buf_.size() - pos < 23) break;
      pos += 23;
      for (std::uint8_t b : {0x00, 0x01, 0x00, 0x00, 0x00, 0x00}) out.reply.push_back(b);
    } else {
      failed_ = true;
      out.error = "host 1 does not serve method " + std::to_string(method);
      return out;
    }
  }
  buf_.erase(buf_.begin(), buf_.begin() + static_cast<std::ptrdiff_t>(pos));
  return out;
}

}  // namespace genvm::manager
