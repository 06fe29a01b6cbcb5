#include "common/host/execution_data.h"

#include "common/rfc3339.h"

#include <set>
#include <utility>

namespace genvm::host {

namespace {

using calldata::Value;

Error type_error(const std::string& path, std::string_view want) {
  return make_error("execution_data_type", path + ": expected " + std::string(want));
}

// Reads the fields of one calldata map; tracks which keys were consumed so that leftovers can
// be reported as unknown.
class MapReader {
 public:
  MapReader(const Value::Map& m, std::string prefix) : m_(m), prefix_(std::move(prefix)) {}

  std::string path(std::string_view key) const { return prefix_ + std::string(key); }

  // nullptr if absent or null; the key counts as known either way.
  const Value* optional(std::string_view key) {
    seen_.insert(std::string(key));
    auto it = m_.find(std::string(key));
    if (it == m_.end() || it->second.is_null()) return nullptr;
    return &it->second;
  }

  bool has(std::string_view key) const { return m_.count(std::string(key)) != 0; }

  Result<const Value*> required(std::string_view key) {
    seen_.insert(std::string(key));
    auto it = m_.find(std::string(key));
    if (it == m_.end()) return make_error("execution_data_missing", path(key) + ": required key is absent");
    return &it->second;
  }

  Status finish() const {
    for (const auto& [k, v] : m_) {
      if (!seen_.count(k)) {
        return make_error("execution_data_unknown_key", path(k) + ": unknown key");
      }
    }
    return {};
  }

 private:
  const Value::Map& m_;
  std::string prefix_;
  std::set<std::string> seen_;
};

Result<Address> as_address(const Value& v, const std::string& path) {
  if (!v.is_address()) return type_error(path, "an address");
  return v.as_address();
}

Result<Bytes> as_bytes(const Value& v, const std::string& path) {
  if (!v.is_bytes()) return type_error(path, "bytes");
  return v.as_bytes();
}

Result<std::string> as_string(const Value& v, const std::string& path) {
  if (!v.is_string()) return type_error(path, "a string");
  return v.as_string();
}

Result<BigInt> as_int(const Value& v, const std::string& path) {
  if (!v.is_int()) return type_error(path, "an integer");
  return v.as_int();
}

Result<BigInt> as_u256(const Value& v, const std::string& path) {
  if (!v.is_int()) return type_error(path, "an integer");
  if (v.as_int().is_negative() || v.as_int().bit_length() > 256) {
    return type_error(path, "an unsigned 256-bit integer");
  }
  return v.as_int();
}

Result<std::uint32_t> as_u32(const Value& v, const std::string& path) {
  if (!v.is_int()) return type_error(path, "an integer");
  auto u = v.as_int().to_uint64();
  if (!u || *u > 0xffffffffu) return type_error(path, "an unsigned 32-bit integer");
  return static_cast<std::uint32_t>(*u);
}

Result<const Value::Array*> as_array(const Value& v, const std::string& path) {
  if (!v.is_array()) return type_error(path, "an array");
  return &v.as_array();
}

Result<const Value::Map*> as_map(const Value& v, const std::string& path) {
  if (!v.is_map()) return type_error(path, "a map");
  return &v.as_map();
}

Result<std::vector<Bytes>> as_bytes_array(const Value& v, const std::string& path) {
  auto arr = as_array(v, path);
  if (!arr) return arr.take_error();
  std::vector<Bytes> out;
  out.reserve((*arr)->size());
  for (std::size_t i = 0; i < (*arr)->size(); ++i) {
    auto b = as_bytes((**arr)[i], path + "[" + std::to_string(i) + "]");
    if (!b) return b.take_error();
    out.push_back(std::move(*b));
  }
  return out;
}

// NestedStorageType: its variant name.
Result<StorageType> as_storage_type(const Value& v, const std::string& path) {
  std::optional<StorageType> t = v.is_string() ? parse_storage_type_name(v.as_string()) : std::nullopt;
  if (!t) return type_error(path, "a storage view name (\"Default\", \"LatestFinal\" or \"LatestNonFinal\")");
  return *t;
}

#define GENVM_TRY_ASSIGN(dst, expr)      \
  do {                                   \
    auto genvm_r_ = (expr);              \
    if (!genvm_r_) return genvm_r_.take_error(); \
    dst = std::move(*genvm_r_);          \
  } while (0)

#define GENVM_TRY_REQUIRED(var, reader, key)     \
  const Value* var = nullptr;                    \
  GENVM_TRY_ASSIGN(var, (reader).required(key))

Result<MessageData> parse_message(const Value& v) {
  const std::string p = "message";
  auto m = as_map(v, p);
  if (!m) return m.take_error();
  MapReader r(**m, "message.");
  MessageData out;
  for (auto [key, field] : {std::pair{"contract_address", &MessageData::contract_address},
                            std::pair{"sender_address", &MessageData::sender_address},
                            std::pair{"origin_address", &MessageData::origin_address},
                            std::pair{"signer_address", &MessageData::signer_address}}) {
    GENVM_TRY_REQUIRED(f, r, key);
    GENVM_TRY_ASSIGN(out.*field, as_address(*f, r.path(key)));
  }
  {
    GENVM_TRY_REQUIRED(f, r, "chain_id");
    GENVM_TRY_ASSIGN(out.chain_id, as_int(*f, r.path("chain_id")));
  }
  {
    GENVM_TRY_REQUIRED(f, r, "value");
    GENVM_TRY_ASSIGN(out.value, as_u256(*f, r.path("value")));
  }
  {
    GENVM_TRY_REQUIRED(f, r, "is_init");
    if (!f->is_bool()) return type_error(r.path("is_init"), "a bool");
    out.is_init = f->as_bool();
  }
  // Absent: the public default. Present: an RFC 3339 string (null is not), kept as the same
  // instant in UTC as chrono prints it (AutoSi), so every node hands the contract the same text.
  if (r.has("datetime")) {
    GENVM_TRY_REQUIRED(f, r, "datetime");
    std::string text;
    GENVM_TRY_ASSIGN(text, as_string(*f, r.path("datetime")));
    auto t = parse_rfc3339(text);
    if (!t) return type_error(r.path("datetime"), "an RFC 3339 timestamp (" + t.error().message + ")");
    out.datetime = format_rfc3339_utc(*t);
  } else {
    out.datetime = std::string(kDefaultDatetime);
  }
  if (auto s = r.finish(); !s) return s.take_error();
  return out;
}

Result<NestedExecutionData> parse_nested(const Value& v) {
  auto m = as_map(v, "nested");
  if (!m) return m.take_error();
  MapReader r(**m, "nested.");
  NestedExecutionData out;
  {
    GENVM_TRY_REQUIRED(f, r, "memory_limit");
    GENVM_TRY_ASSIGN(out.memory_limit, as_u32(*f, r.path("memory_limit")));
  }
  {
    GENVM_TRY_REQUIRED(f, r, "stack");
    const Value::Array* arr = nullptr;
    GENVM_TRY_ASSIGN(arr, as_array(*f, r.path("stack")));
    for (std::size_t i = 0; i < arr->size(); ++i) {
      Address a;
      GENVM_TRY_ASSIGN(a, as_address((*arr)[i], r.path("stack") + "[" + std::to_string(i) + "]"));
      out.stack.push_back(a);
    }
  }
  {
    // NestedPermissions: a u32 of bits (the executor clears the ones it does not know).
    GENVM_TRY_REQUIRED(f, r, "permissions");
    std::uint32_t bits = 0;
    GENVM_TRY_ASSIGN(bits, as_u32(*f, r.path("permissions")));
    out.permissions = bits;
  }
  {
    GENVM_TRY_REQUIRED(f, r, "state_mode");
    GENVM_TRY_ASSIGN(out.state_mode, as_storage_type(*f, r.path("state_mode")));
  }
  {
    // NestedRunnerId: a transparent string.
    GENVM_TRY_REQUIRED(f, r, "topmost_runner_id");
    if (!f->is_string()) return type_error(r.path("topmost_runner_id"), "a runner id string");
    out.topmost_runner_id = *f;
  }
  {
    GENVM_TRY_REQUIRED(f, r, "remaining_det_fuel");
    GENVM_TRY_ASSIGN(out.remaining_det_fuel, as_u256(*f, r.path("remaining_det_fuel")));
  }
  if (auto s = r.finish(); !s) return s.take_error();
  return out;
}

}  // namespace

Result<ExecutionData> parse_execution_data(std::span<const std::uint8_t> bytes) {
  auto v = calldata::decode(bytes);
  if (!v) {
    return make_error("execution_data_malformed", "not calldata: " + v.error().to_string());
  }
  return execution_data_from_value(*v);
}

Result<ExecutionData> execution_data_from_value(const Value& v) {
  if (!v.is_map()) return make_error("execution_data_malformed", "execution data must be a calldata map");
  MapReader r(v.as_map(), "");
  ExecutionData d;
  {
    GENVM_TRY_REQUIRED(f, r, "calldata");
    GENVM_TRY_ASSIGN(d.calldata, as_bytes(*f, "calldata"));
  }
  {
    GENVM_TRY_REQUIRED(f, r, "message");
    GENVM_TRY_ASSIGN(d.message, parse_message(*f));
  }
  {
    GENVM_TRY_REQUIRED(f, r, "host_data");
    GENVM_TRY_ASSIGN(d.host_data, as_string(*f, "host_data"));
  }
  // Option<T> fields with no default: the key is required, its value may be null.
  {
    GENVM_TRY_REQUIRED(f, r, "code");
    if (!f->is_null()) {
      Bytes b;
      GENVM_TRY_ASSIGN(b, as_bytes(*f, "code"));
      d.code = std::move(b);
    }
  }
  {
    GENVM_TRY_REQUIRED(f, r, "leader_nondet_results");
    if (!f->is_null()) {
      std::vector<Bytes> b;
      GENVM_TRY_ASSIGN(b, as_bytes_array(*f, "leader_nondet_results"));
      d.leader_nondet_results = std::move(b);
    }
  }
  {
    // A Vec<u8> on the public side: an array of small integers (bytes are not a Vec<u8>).
    GENVM_TRY_REQUIRED(f, r, "method_hosts");
    if (f->is_array()) {
      for (std::size_t i = 0; i < f->as_array().size(); ++i) {
        std::uint32_t u = 0;
        std::string p = "method_hosts[" + std::to_string(i) + "]";
        GENVM_TRY_ASSIGN(u, as_u32(f->as_array()[i], p));
        if (u > 255) return type_error(p, "a host index below 256");
        d.method_hosts.push_back(static_cast<std::uint8_t>(u));
      }
    } else {
      return type_error("method_hosts", "an array of host indices");
    }
  }
  if (const Value* f = r.optional("host_hello_data")) {
    GENVM_TRY_ASSIGN(d.host_hello_data, as_bytes_array(*f, "host_hello_data"));
  }
  {
    GENVM_TRY_REQUIRED(f, r, "bucket_totals");
    const Value::Array* arr = nullptr;
    GENVM_TRY_ASSIGN(arr, as_array(*f, "bucket_totals"));
    for (std::size_t i = 0; i < arr->size(); ++i) {
      BigInt b;
      GENVM_TRY_ASSIGN(b, as_int((*arr)[i], "bucket_totals[" + std::to_string(i) + "]"));
      d.bucket_totals.push_back(std::move(b));
    }
  }
  {
    GENVM_TRY_REQUIRED(f, r, "gas_data");
    const Value::Map* m = nullptr;
    GENVM_TRY_ASSIGN(m, as_map(*f, "gas_data"));
    for (const auto& [k, val] : *m) {
      std::string s;
      GENVM_TRY_ASSIGN(s, as_string(val, "gas_data." + k));
      d.gas_data.emplace(k, std::move(s));
    }
  }
  {
    GENVM_TRY_REQUIRED(f, r, "message_fee_allocation");
    GENVM_TRY_ASSIGN(d.message_fee_allocation, parse_allocation(*f, "message_fee_allocation"));
  }
  {
    GENVM_TRY_REQUIRED(f, r, "initial_time_units_allocation");
    GENVM_TRY_ASSIGN(d.initial_time_units_allocation, as_u32(*f, "initial_time_units_allocation"));
  }
  if (const Value* f = r.optional("record_actions")) {
    const Value::Array* arr = nullptr;
    GENVM_TRY_ASSIGN(arr, as_array(*f, "record_actions"));
    for (std::size_t i = 0; i < arr->size(); ++i) {
      std::string s;
      GENVM_TRY_ASSIGN(s, as_string((*arr)[i], "record_actions[" + std::to_string(i) + "]"));
      d.record_actions.push_back(std::move(s));
    }
  }
  if (const Value* f = r.optional("remaining_recursion")) {
    std::uint32_t u = 0;
    GENVM_TRY_ASSIGN(u, as_u32(*f, "remaining_recursion"));
    d.remaining_recursion = u;
  }
  if (const Value* f = r.optional("nested")) {
    NestedExecutionData n;
    GENVM_TRY_ASSIGN(n, parse_nested(*f));
    d.nested = std::move(n);
  }
  if (auto s = r.finish(); !s) return s.take_error();
  return d;
}

Result<MessageData> message_from_value(const Value& v) { return parse_message(v); }

Value message_to_value(const MessageData& m) {
  return Value::map({
      {"contract_address", m.contract_address},
      {"sender_address", m.sender_address},
      {"origin_address", m.origin_address},
      {"signer_address", m.signer_address},
      {"chain_id", m.chain_id},
      {"value", m.value},
      {"is_init", m.is_init},
      {"datetime", m.datetime},
  });
}

Value execution_data_to_value(const ExecutionData& d) {
  auto bytes_array = [](const std::vector<Bytes>& v) {
    Value::Array a;
    for (const auto& b : v) a.emplace_back(b);
    return Value(std::move(a));
  };
  Value::Map m;
  m["calldata"] = d.calldata;
  m["message"] = message_to_value(d.message);
  m["host_data"] = d.host_data;
  m["code"] = d.code ? Value(*d.code) : Value();
  m["leader_nondet_results"] = d.leader_nondet_results ? bytes_array(*d.leader_nondet_results) : Value();
  Value::Array hosts;
  for (std::uint8_t h : d.method_hosts) hosts.emplace_back(h);
  m["method_hosts"] = std::move(hosts);
  m["host_hello_data"] = bytes_array(d.host_hello_data);
  Value::Array buckets;
  for (const auto& b : d.bucket_totals) buckets.emplace_back(b);
  m["bucket_totals"] = std::move(buckets);
  Value::Map gas;
  for (const auto& [k, v] : d.gas_data) gas[k] = v;
  m["gas_data"] = std::move(gas);
  m["message_fee_allocation"] = allocation_to_value(d.message_fee_allocation);
  m["initial_time_units_allocation"] = d.initial_time_units_allocation;
  Value::Array actions;
  for (const auto& a : d.record_actions) actions.emplace_back(a);
  m["record_actions"] = std::move(actions);
  m["remaining_recursion"] = d.remaining_recursion ? Value(*d.remaining_recursion) : Value();
  if (d.nested) {
    Value::Array stack;
    for (const auto& a : d.nested->stack) stack.emplace_back(a);
    m["nested"] = Value::Map{
        {"memory_limit", d.nested->memory_limit},
        {"stack", std::move(stack)},
        {"permissions", d.nested->permissions},
        {"state_mode", std::string(storage_type_name(d.nested->state_mode))},
        {"topmost_runner_id", d.nested->topmost_runner_id},
        {"remaining_det_fuel", d.nested->remaining_det_fuel},
    };
  } else {
    m["nested"] = Value();
  }
  return Value(std::move(m));
}

std::size_t route(const ExecutionData& d, HostMethod m) {
  auto i = static_cast<std::size_t>(m);
  return i < d.method_hosts.size() ? d.method_hosts[i] : 0;
}

}  // namespace genvm::host
