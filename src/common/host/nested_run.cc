#include "common/host/nested_run.h"

#include <initializer_list>
#include <string_view>

namespace genvm::host {

using calldata::Value;

namespace {

// One closed map of the public derive: exactly `keys`, each present.
class Fields {
 public:
  Fields(const char* code, std::string prefix) : code_(code), prefix_(std::move(prefix)) {}
  Status open(const Value& v, std::initializer_list<std::string_view> keys) {
    if (!v.is_map()) return fail("", "a map");
    for (std::string_view k : keys) {
      if (!v.find(k)) return make_error(code_, prefix_ + std::string(k) + ": required key is absent");
    }
    for (const auto& [k, _] : v.as_map()) {
      bool known = false;
      for (std::string_view want : keys) known = known || k == want;
      if (!known) return make_error(code_, prefix_ + k + ": unknown key");
    }
    map_ = &v;
    return {};
  }
  const Value& at(std::string_view k) const { return *map_->find(k); }
  Error fail(std::string_view key, std::string_view want) const {
    return make_error(code_, prefix_ + std::string(key) + ": expected " + std::string(want));
  }
  Result<Bytes> bytes(std::string_view k) const {
    if (!at(k).is_bytes()) return fail(k, "bytes");
    return at(k).as_bytes();
  }
  Result<std::uint32_t> u32(std::string_view k) const {
    auto u = at(k).is_int() ? at(k).as_int().to_uint64() : std::nullopt;
    if (!u || *u > 0xffffffffu) return fail(k, "an unsigned 32-bit integer");
    return static_cast<std::uint32_t>(*u);
  }

 private:
  const char* code_;
  std::string prefix_;
  const Value* map_ = nullptr;
};

#define GENVM_NESTED_TRY(dst, expr)              \
  do {                                           \
    auto genvm_r_ = (expr);                      \
    if (!genvm_r_) return genvm_r_.take_error(); \
    dst = std::move(*genvm_r_);                  \
  } while (0)

}  // namespace

Value nested_envelope_to_value(const NestedRunEnvelope& e) {
  Value::Array stack;
  for (const auto& a : e.stack) stack.emplace_back(a);
  return Value::map({
      {"routing_payload", e.routing_payload},
      {"calldata", e.calldata},
      {"message", message_to_value(e.message)},
      {"stack", Value(std::move(stack))},
      {"permissions", e.permissions},
      {"state_mode", std::string(storage_type_name(e.state_mode))},
      {"topmost_runner_id", e.topmost_runner_id},
      {"remaining_recursion", e.remaining_recursion},
      {"remaining_det_fuel", e.remaining_det_fuel},
      {"memory_limit", e.memory_limit},
  });
}

Result<NestedRunEnvelope> nested_envelope_from_value(const Value& v) {
  Fields f("nested_envelope", "envelope.");
  if (auto s = f.open(v, {"routing_payload", "calldata", "message", "stack", "permissions", "state_mode",
                          "topmost_runner_id", "remaining_recursion", "remaining_det_fuel", "memory_limit"});
      !s) {
    return s.take_error();
  }
  NestedRunEnvelope e;
  GENVM_NESTED_TRY(e.routing_payload, f.bytes("routing_payload"));
  GENVM_NESTED_TRY(e.calldata, f.bytes("calldata"));
  auto message = message_from_value(f.at("message"));
  if (!message) return make_error("nested_envelope", "envelope." + message.error().message);
  e.message = std::move(*message);
  const Value& stack = f.at("stack");
  if (!stack.is_array()) return f.fail("stack", "an array of addresses");
  for (const Value& a : stack.as_array()) {
    if (!a.is_address()) return f.fail("stack", "an array of addresses");
    e.stack.push_back(a.as_address());
  }
  std::uint32_t bits = 0;
  GENVM_NESTED_TRY(bits, f.u32("permissions"));
  e.permissions = bits & kKnownNestedPermissions;  // unknown bits deny
  const Value& mode = f.at("state_mode");
  auto st = mode.is_string() ? parse_storage_type_name(mode.as_string()) : std::nullopt;
  if (!st) return f.fail("state_mode", "\"Default\", \"LatestFinal\" or \"LatestNonFinal\"");
  e.state_mode = *st;
  if (!f.at("topmost_runner_id").is_string()) return f.fail("topmost_runner_id", "a runner id string");
  e.topmost_runner_id = f.at("topmost_runner_id").as_string();
  GENVM_NESTED_TRY(e.remaining_recursion, f.u32("remaining_recursion"));
  const Value& fuel = f.at("remaining_det_fuel");
  if (!fuel.is_int() || fuel.as_int().is_negative() || fuel.as_int().bit_length() > 256) {
    return f.fail("remaining_det_fuel", "an unsigned 256-bit integer");
  }
  e.remaining_det_fuel = fuel.as_int();
  GENVM_NESTED_TRY(e.memory_limit, f.u32("memory_limit"));
  return e;
}

Value nested_reply_to_value(const NestedRunReply& r) {
  return Value::map({
      {"result", Value::map({{"kind", std::string(wire_name(r.kind))}, {"data", r.data}})},
      {"small_hash", r.small_hash},
      {"effect_free", r.effect_free},
  });
}

Result<NestedRunReply> nested_reply_from_value(Value v) {
  Fields f("nested_reply", "reply.");
  if (auto s = f.open(v, {"result", "small_hash", "effect_free"}); !s) return s.take_error();
  Fields result("nested_reply", "reply.result.");
  if (auto s = result.open(f.at("result"), {"kind", "data"}); !s) return s.take_error();
  NestedRunReply r;
  const Value& kind = result.at("kind");
  auto code = kind.is_string() ? parse_result_code_name(kind.as_string()) : Result<ResultCode>(make_error("", ""));
  if (!code) return result.fail("kind", "a result code name");
  r.kind = *code;
  GENVM_NESTED_TRY(r.small_hash, f.bytes("small_hash"));
  if (!f.at("effect_free").is_bool()) return f.fail("effect_free", "a bool");
  r.effect_free = f.at("effect_free").as_bool();
  // Checked: both maps and the field exist.
  r.data = std::move(v.as_map().find("result")->second.as_map().find("data")->second);
  return r;
}

}  // namespace genvm::host
