// The run request decoded as run.rs decodes `Request`, and the ExecutionData derived from it
// as execution_data_from_request builds it.
#include "manager/run_request.h"

#include <gtest/gtest.h>

#include "manager/test_util.h"

namespace genvm::manager {
namespace {

using calldata::Bytes;
using calldata::Value;
using testing::run_body;

std::string refusal(const Value& body) {
  auto r = parse_run_request(body);
  if (r.ok()) return "accepted";
  EXPECT_EQ(r.error().code, "malformed_frame");
  return r.error().message;
}

Value without(Value body, const char* key) {
  body.as_map().erase(key);
  return body;
}

TEST(ManagerRunRequest, TheMinimalRequestTakesEveryPublicDefault) {
  auto r = parse_run_request(run_body(true));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->selector.kind, ExecutorSelector::Kind::kMajor);
  EXPECT_EQ(r->selector.major, 0u);
  EXPECT_EQ(r->debug_mode, "disabled");
  EXPECT_EQ(r->deadline, std::chrono::minutes(20));
  EXPECT_EQ(r->permissions, "wscn");
  EXPECT_FALSE(r->no_modules);
  EXPECT_TRUE(r->extra_args.empty());
  EXPECT_FALSE(r->host_genvm_id);
  EXPECT_EQ(format_rfc3339_utc(r->timestamp), "2026-01-01T00:00:00Z");
}

TEST(ManagerRunRequest, EveryRequiredFieldMustBePresentEvenTheNullableOnes) {
  for (const char* key : {"selector", "message", "is_sync", "bucket_totals", "host_data", "timestamp", "host",
                          "calldata", "code", "leader_nondet_results", "initial_time_units_allocation"}) {
    EXPECT_EQ(refusal(without(run_body(true), key)), std::string("value: missing field \"") + key + "\"");
  }
  EXPECT_EQ(refusal(run_body(true, {{"surprise", 1}})), "value: unknown field \"surprise\"");
  Value msg = testing::message_data();
  msg.as_map().erase("is_init");
  EXPECT_EQ(refusal(run_body(true, {{"message", msg}})), "message: missing field \"is_init\"");
}

TEST(ManagerRunRequest, FieldsHaveThePublicTypes) {
  struct Case {
    const char* key;
    Value value;
    const char* message;
  };
  for (const auto& c : std::vector<Case>{
           {"selector", Value::map({}), "selector: missing field \"kind\""},
           {"selector", Value::map({{"kind", "major"}, {"major", -1}}), "selector.major: expected an integer in u32"},
           {"selector", Value::map({{"kind", "latest"}}), "selector.kind: expected one of major, version"},
           {"debug_mode", "verbose", "debug_mode: expected one of disabled, safe, safe-unbounded, unsafe, unsafe-tracing"},
           {"debug_mode", Value(), "debug_mode: expected a string"},
           {"deadline", "30", "deadline: duration \"30\": must end with ms, s, m, or h"},
           {"deadline", "10d", "deadline: duration \"10d\": must end with ms, s, m, or h"},
           {"timestamp", "2026-01-01", "timestamp: \"2026-01-01\" is not an RFC 3339 timestamp: the date and time must be separated by T"},
           {"is_sync", 1, "is_sync: expected a bool"},
           {"max_execution_minutes", -5, "max_execution_minutes: expected an integer in u64"},
           {"initial_time_units_allocation", BigInt(1) + BigInt(UINT32_MAX), "initial_time_units_allocation: expected an integer in u32"},
           {"extra_args", Value::array({1}), "extra_args[0]: expected a string"},
           {"host_hello_data", Value::array({Bytes{}, Bytes{1}}), "host_hello_data for manager-owned host index 1 is not allowed"},
           {"unsafe_overrides", Value::map({{"reroute", ""}}), "unsafe_overrides: unknown field \"reroute\""},
           {"message_fee_allocation", Value::array({Value::map({})}), "message_fee_allocation[0]: missing field \"recipient\""},
       }) {
    EXPECT_EQ(refusal(run_body(true, {{c.key, c.value}})), c.message) << c.key;
  }
  // A nullable deadline and host_genvm_id are absent values, not errors.
  EXPECT_EQ(refusal(run_body(true, {{"deadline", Value()}, {"host_genvm_id", Value()}})), "accepted");
}

TEST(ManagerRunRequest, DeadlineOverridesMinutesAndADayIsTheMost) {
  EXPECT_EQ(parse_run_request(run_body(true, {{"max_execution_minutes", 3}}))->deadline, std::chrono::minutes(3));
  EXPECT_EQ(parse_run_request(run_body(true, {{"max_execution_minutes", 3}, {"deadline", ".5s"}}))->deadline, Millis(500));
  EXPECT_EQ(parse_run_request(run_body(true, {{"max_execution_minutes", UINT64_MAX}}))->deadline, std::chrono::hours(24));
  EXPECT_EQ(parse_run_request(run_body(true, {{"deadline", "100h"}}))->deadline, std::chrono::hours(24));
}

TEST(ManagerRunRequest, ModulesAreNeededByAsyncRunsThatMaySpawnNondetBlocks) {
  auto needs = [](bool is_sync, Value::Map extra) { return parse_run_request(run_body(is_sync, std::move(extra)))->needs_modules(); };
  EXPECT_TRUE(needs(false, {}));
  EXPECT_FALSE(needs(true, {}));
  EXPECT_FALSE(needs(false, {{"permissions", "wsc"}}));
  EXPECT_FALSE(needs(false, {{"no_modules", true}}));
}

TEST(ManagerRunRequest, TheLegacyMethodKeyIsMovedToTheEmptyKey) {
  Value legacy = Value::map({{"method", "get"}, {"args", Value::array({1})}});
  auto r = parse_run_request(run_body(true, {{"calldata", calldata::encode(legacy)}}));
  ASSERT_TRUE(r.ok());
  Value patched = *calldata::decode(r->body.find("calldata")->as_bytes());
  EXPECT_EQ(patched, Value::map({{"", "get"}, {"args", Value::array({1})}}));
  // Not calldata, or not a map: left as it is.
  Value body = run_body(true, {{"calldata", Bytes{0xff}}});
  patch_legacy_method_key(body);
  EXPECT_EQ(*body.find("calldata"), Value(Bytes{0xff}));
}

TEST(ManagerRunRequest, ExecutionDataIsWhatRunRsBuilds) {
  Value msg = testing::message_data(true);
  msg.as_map()["chain_id"] = "61999";  // the yaml's string form becomes an integer
  msg.as_map()["datetime"] = "2025-01-01T01:00:00.250+01:00";
  auto r = parse_run_request(run_body(false, {{"message", msg},
                                               {"bucket_totals", Value::array({"7", 8})},
                                               {"unsafe_overrides", Value::map({{"initial_recursion", 3}})},
                                               {"extra_args", Value::array({"--x"})}}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  Value d = to_execution_data(*r, DebugMode::kSafe);
  const auto& m = d.as_map();
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"bucket_totals", "calldata", "code", "gas_data", "host_data",
                                            "host_hello_data", "initial_time_units_allocation",
                                            "leader_nondet_results", "message", "message_fee_allocation",
                                            "method_hosts", "nested", "record_actions", "remaining_recursion"}));
  EXPECT_EQ(*d.find("message")->find("chain_id"), Value(61999));
  EXPECT_EQ(*d.find("message")->find("datetime"), Value("2025-01-01T00:00:00.250Z"));
  EXPECT_EQ(*d.find("bucket_totals"), Value::array({7, 8}));
  EXPECT_EQ(*d.find("method_hosts"), Value::array({0, 0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_TRUE(d.find("remaining_recursion")->is_null()) << "honoured from unsafe only";
  EXPECT_TRUE(d.find("nested")->is_null());
  EXPECT_EQ(*d.find("gas_data"), Value::map({}));
  EXPECT_EQ(*to_execution_data(*r, DebugMode::kUnsafe).find("remaining_recursion"), Value(3));

  auto hooked = parse_run_request(run_body(true, {{"hook_cross_contract_calls", true}}));
  Value h = to_execution_data(*hooked, DebugMode::kDisabled);
  EXPECT_EQ(*h.find("method_hosts"), Value::array({0, 0, 0, 0, 0, 0, 1, 0, 1})) << "resolve goes to host 0";
  EXPECT_EQ(*h.find("message")->find("datetime"), Value("2024-11-26T06:42:42.424242Z")) << "the public default";
}

}  // namespace
}  // namespace genvm::manager
