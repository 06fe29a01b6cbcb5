#include "common/host/execution_data.h"

#include <gtest/gtest.h>

namespace genvm::host {
namespace {

using calldata::Value;

Address addr(std::uint8_t fill) {
  Address a;
  a.bytes.fill(fill);
  return a;
}

// A complete, valid execution data map; tests remove or break one thing at a time.
Value::Map valid() {
  return Value::Map{
      {"calldata", calldata::encode(Value::map({{"", "get"}}))},
      {"message", Value::map({{"contract_address", addr(1)},
                              {"sender_address", addr(2)},
                              {"origin_address", addr(3)},
                              {"signer_address", addr(4)},
                              {"chain_id", 61999},
                              {"value", 0},
                              {"is_init", false},
                              {"datetime", "2025-01-02T03:04:05Z"}})},
      {"host_data", ""},
      {"code", Value()},
      {"leader_nondet_results", Value()},
      {"method_hosts", Value::array({0, 0, 0, 0, 0, 0, 1})},
      {"host_hello_data", Value::array({calldata::Bytes{1, 2}, calldata::Bytes{}})},
      {"bucket_totals", Value::array({1, 2, 3})},
      {"gas_data", Value::map({{"k", "v"}})},
      {"message_fee_allocation", Value::Array{}},
      {"initial_time_units_allocation", 100},
  };
}

Result<ExecutionData> parse(const Value::Map& m) { return parse_execution_data(calldata::encode(Value(m))); }

TEST(ExecutionData, ParsesEveryFieldOfAValidMap) {
  auto d = parse(valid());
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ(d->message.contract_address, addr(1));
  EXPECT_EQ(d->message.signer_address, addr(4));
  EXPECT_EQ(d->message.chain_id, BigInt(61999));
  EXPECT_FALSE(d->message.is_init);
  EXPECT_EQ(d->message.datetime, "2025-01-02T03:04:05Z");
  EXPECT_FALSE(d->code.has_value());
  EXPECT_FALSE(d->leader_nondet_results.has_value());
  EXPECT_EQ(d->method_hosts, (std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0, 1}));
  ASSERT_EQ(d->host_hello_data.size(), 2u);
  EXPECT_EQ(d->host_hello_data[0], (calldata::Bytes{1, 2}));
  EXPECT_EQ(d->bucket_totals.size(), 3u);
  EXPECT_EQ(d->gas_data.at("k"), "v");
  EXPECT_EQ(d->initial_time_units_allocation, 100u);
  EXPECT_TRUE(d->record_actions.empty());
  EXPECT_FALSE(d->remaining_recursion.has_value());
  EXPECT_FALSE(d->nested.has_value());
}

// Fields with a default in the public ExecutionData (domain.rs) may be absent; Option fields
// without one (code, leader_nondet_results) must be present, null or not.
TEST(ExecutionData, OptionalKeysMayBeAbsentAndDatetimeDefaults) {
  auto m = valid();
  m.erase("host_hello_data");
  m["message"].as_map().erase("datetime");
  auto d = parse(m);
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ(d->message.datetime, kDefaultDatetime);
  EXPECT_TRUE(d->host_hello_data.empty());
}

TEST(ExecutionData, EachRequiredKeyIsNamedWhenMissing) {
  for (const char* key : {"calldata", "message", "host_data", "code", "leader_nondet_results", "method_hosts",
                          "bucket_totals", "gas_data", "message_fee_allocation", "initial_time_units_allocation"}) {
    auto m = valid();
    m.erase(key);
    auto d = parse(m);
    ASSERT_FALSE(d.ok()) << key;
    EXPECT_EQ(d.error().code, "execution_data_missing") << key;
    EXPECT_NE(d.error().message.find(key), std::string::npos) << d.error().message;
  }
  auto m = valid();
  m["message"].as_map().erase("chain_id");
  auto d = parse(m);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, "execution_data_missing");
  EXPECT_NE(d.error().message.find("message.chain_id"), std::string::npos);
}

TEST(ExecutionData, UnknownKeysAreRejectedAtEveryLevel) {
  auto m = valid();
  m["surprise"] = 1;
  auto d = parse(m);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, "execution_data_unknown_key");
  EXPECT_NE(d.error().message.find("surprise"), std::string::npos);
  auto m2 = valid();
  m2["message"].as_map()["extra"] = 1;
  auto d2 = parse(m2);
  ASSERT_FALSE(d2.ok());
  EXPECT_EQ(d2.error().code, "execution_data_unknown_key");
  EXPECT_NE(d2.error().message.find("message.extra"), std::string::npos);
}

TEST(ExecutionData, WrongKindsAndRangesAreTypeErrors) {
  struct Case {
    const char* key;
    Value bad;
  };
  for (const auto& c : std::vector<Case>{{"calldata", "text"},
                                         {"host_data", 1},
                                         {"code", 5},
                                         {"leader_nondet_results", Value::array({1})},
                                         {"method_hosts", Value::array({256})},
                                         {"host_hello_data", Value::array({"x"})},
                                         {"bucket_totals", Value::array({"x"})},
                                         {"gas_data", Value::map({{"k", 1}})},
                                         {"message_fee_allocation", Value::array({1})},
                                         {"initial_time_units_allocation", -1},
                                         {"record_actions", Value::array({1})},
                                         {"remaining_recursion", BigInt(std::uint64_t(1) << 32)}}) {
    auto m = valid();
    m[c.key] = c.bad;
    auto d = parse(m);
    ASSERT_FALSE(d.ok()) << c.key;
    EXPECT_EQ(d.error().code, "execution_data_type") << c.key << ": " << d.error().to_string();
  }
  auto m = valid();
  m["message"].as_map()["value"] = -5;
  auto d = parse(m);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, "execution_data_type");
  EXPECT_NE(d.error().message.find("message.value"), std::string::npos);
}

// method_hosts is a Vec<u8> in the public ExecutionData: an array of integers, never bytes;
// and it is written back the same way.
TEST(ExecutionData, MethodHostsIsAnIntegerArrayBothWays) {
  auto m = valid();
  m["method_hosts"] = Value::array({0, 1, 2});
  auto d = parse(m);
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ(d->method_hosts, (std::vector<std::uint8_t>{0, 1, 2}));
  EXPECT_EQ(*execution_data_to_value(*d).find("method_hosts"), Value::array({0, 1, 2}));
  m["method_hosts"] = calldata::Bytes{0, 1, 2};
  auto bytes = parse(m);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.error().code, "execution_data_type");
}

// message.datetime is read as chrono reads RFC 3339 and kept as the same instant printed in UTC
// with SecondsFormat::AutoSi (abi_stub.rs encode_datetime_rfc3339); null is not a timestamp.
TEST(ExecutionData, DatetimeIsReencodedInUtcThePublicWay) {
  struct Case {
    const char* in;
    const char* out;
  } cases[] = {{"2025-01-02T04:04:05+01:00", "2025-01-02T03:04:05Z"},
               {"2025-01-02T03:04:05.5Z", "2025-01-02T03:04:05.500Z"},
               {"2025-01-02t03:04:05.123456789z", "2025-01-02T03:04:05.123456789Z"},
               {"2024-11-26T06:42:42.424242Z", "2024-11-26T06:42:42.424242Z"}};
  for (const Case& c : cases) {
    auto m = valid();
    m["message"].as_map()["datetime"] = c.in;
    auto d = parse(m);
    ASSERT_TRUE(d.ok()) << c.in << ": " << d.error().to_string();
    EXPECT_EQ(d->message.datetime, c.out) << c.in;
  }
  for (Value bad : {Value(), Value("yesterday"), Value(""), Value(5), Value("2025-02-30T00:00:00Z")}) {
    auto m = valid();
    m["message"].as_map()["datetime"] = bad;
    auto d = parse(m);
    ASSERT_FALSE(d.ok()) << calldata::to_text(bad);
    EXPECT_EQ(d.error().code, "execution_data_type");
    EXPECT_NE(d.error().message.find("message.datetime"), std::string::npos);
  }
}

TEST(ExecutionData, NotCalldataOrNotAMapIsMalformed) {
  auto d = parse_execution_data(std::vector<std::uint8_t>{0xff, 0xff});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, "execution_data_malformed");
  auto d2 = parse_execution_data(calldata::encode(Value::array({1})));
  ASSERT_FALSE(d2.ok());
  EXPECT_EQ(d2.error().code, "execution_data_malformed");
}

// NestedExecutionData as the public derive encodes it (nested.rs): permissions a u32 of bits,
// state_mode the NestedStorageType variant name, topmost_runner_id a string.
TEST(ExecutionData, NestedDataIsParsedAndChecked) {
  auto m = valid();
  m["nested"] = Value::map({{"memory_limit", 1 << 20},
                            {"stack", Value::array({addr(9)})},
                            {"permissions", 17},
                            {"state_mode", "LatestNonFinal"},
                            {"topmost_runner_id", "contract"},
                            {"remaining_det_fuel", 77}});
  auto d = parse(m);
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  ASSERT_TRUE(d->nested.has_value());
  EXPECT_EQ(d->nested->stack.size(), 1u);
  EXPECT_EQ(d->nested->state_mode, StorageType::kLatestNonFinal);
  EXPECT_EQ(*execution_data_to_value(*d).find("nested")->find("state_mode"), Value("LatestNonFinal"));
  for (auto [key, bad_value] : std::vector<std::pair<const char*, Value>>{{"state_mode", 2},
                                                                         {"state_mode", "latest_final"},
                                                                         {"permissions", "wc"},
                                                                         {"permissions", BigInt(std::uint64_t(1) << 32)},
                                                                         {"topmost_runner_id", 5}}) {
    auto bad = m;
    bad["nested"].as_map()[key] = bad_value;
    auto d2 = parse(bad);
    ASSERT_FALSE(d2.ok()) << key;
    EXPECT_EQ(d2.error().code, "execution_data_type") << key;
  }
}

TEST(ExecutionData, ToValueRoundTrips) {
  auto m = valid();
  m["code"] = calldata::Bytes{0, 'a', 's', 'm'};
  m["leader_nondet_results"] = Value::array({calldata::Bytes{0, 1}});
  m["remaining_recursion"] = 12;
  auto d = parse(m);
  ASSERT_TRUE(d.ok());
  auto again = execution_data_from_value(execution_data_to_value(*d));
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ(execution_data_to_value(*again), execution_data_to_value(*d));
  EXPECT_EQ(again->remaining_recursion, 12u);
  EXPECT_EQ(*again->code, (calldata::Bytes{0, 'a', 's', 'm'}));
}

TEST(ExecutionData, RouteUsesTheTableAndFallsBackToHostZero) {
  auto d = parse(valid());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(route(*d, HostMethod::kConsumeResult), 1u);
  EXPECT_EQ(route(*d, HostMethod::kStorageRead), 0u);
  EXPECT_EQ(route(*d, HostMethod::kRunNested), 0u);  // beyond the table
  d->method_hosts.clear();
  EXPECT_EQ(route(*d, HostMethod::kConsumeResult), 0u);
}

}  // namespace
}  // namespace genvm::host
