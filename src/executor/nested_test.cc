#include "executor/nested.h"

#include <gtest/gtest.h>

#include "executor/vm.h"

namespace genvm::executor {
namespace {

using calldata::Value;

NestedReply good_reply() {
  NestedReply r;
  r.kind = ResultCode::kReturn;
  r.data = Value(7);
  r.small_hash = calldata::Bytes(32, 9);
  r.effect_free = true;
  return r;
}

TEST(NestedReplyTest, AcceptsEveryOutcomeKindAndKeepsTheHash) {
  for (ResultCode k : {ResultCode::kReturn, ResultCode::kUserError, ResultCode::kVmError, ResultCode::kFatalVmError}) {
    NestedReply r = good_reply();
    r.kind = k;
    if (k == ResultCode::kVmError || k == ResultCode::kFatalVmError) r.data = Value("exit_code 1");
    auto o = accept_nested_reply(r);
    ASSERT_TRUE(o.ok()) << o.error().to_string();
    EXPECT_EQ(o->kind, k);
    EXPECT_EQ(o->data, r.data);
    Digest32 nines;
    nines.fill(9);
    EXPECT_EQ(o->small_hash, nines);
  }
}

// The public executor's nested_run_ok refusals, each with its message.
TEST(NestedReplyTest, RefusesWhatTheCallerCannotFold) {
  struct Case {
    NestedReply reply;
    std::string message;
  };
  std::vector<Case> cases;
  {
    NestedReply r = good_reply();
    r.effect_free = false;
    cases.push_back({r, "nested CallContract result contains effects"});
  }
  for (std::size_t n : {0u, 31u, 33u}) {
    NestedReply r = good_reply();
    r.small_hash = calldata::Bytes(n, 1);
    cases.push_back({r, "nested CallContract small hash has length " + std::to_string(n) + ", expected 32"});
  }
  {
    NestedReply r = good_reply();
    r.kind = ResultCode::kVmError;
    cases.push_back({r, "nested CallContract VM error is not a string"});
    r.kind = ResultCode::kFatalVmError;
    cases.push_back({r, "nested CallContract fatal VM error is not a string"});
    r.kind = ResultCode::kInternalError;
    cases.push_back({r, "nested executor returned an internal error"});
  }
  for (const auto& c : cases) {
    auto o = accept_nested_reply(c.reply);
    ASSERT_FALSE(o.ok()) << c.message;
    EXPECT_EQ(o.error().code, "nested_reply");
    EXPECT_EQ(o.error().message, c.message);
  }
}

TEST(NestedEnvelopeTest, HasExactlyTheEnvelopeFieldsWithViewNamesAndMessageData) {
  NestedCall c;
  c.routing_payload = {1, 2};
  c.calldata = {3};
  c.message = Value::map({{"contract_address", calldata::Address{}}, {"sender_address", calldata::Address{}},
                          {"origin_address", calldata::Address{}}, {"signer_address", calldata::Address{}},
                          {"chain_id", 1}, {"value", 0}, {"is_init", false}, {"datetime", "2024-11-26T06:42:42Z"},
                          // startup-message keys that are not MessageData stay out
                          {"entry_kind", 0}, {"entry_data", calldata::Bytes{}}, {"stack", Value::Array{}}});
  c.stack = {calldata::Address{}};
  c.permissions = 19;
  c.remaining_recursion = 5;
  c.remaining_det_fuel = BigInt(77);
  c.memory_limit = 1024;
  for (auto [t, name] : {std::pair{StorageType::kDefault, "Default"}, std::pair{StorageType::kLatestFinal, "LatestFinal"},
                         std::pair{StorageType::kLatestNonFinal, "LatestNonFinal"}}) {
    c.state_mode = t;
    Value e = *nested_envelope(c);
    ASSERT_TRUE(e.is_map());
    std::vector<std::string> keys;
    for (const auto& [k, v] : e.as_map()) keys.push_back(k);
    EXPECT_EQ(keys, (std::vector<std::string>{"calldata", "memory_limit", "message", "permissions",
                                              "remaining_det_fuel", "remaining_recursion", "routing_payload",
                                              "stack", "state_mode", "topmost_runner_id"}));
    EXPECT_EQ(*e.find("state_mode"), Value(name));
    EXPECT_EQ(e.find("message")->as_map().size(), 8u);
    EXPECT_EQ(*e.find("topmost_runner_id"), Value("contract"));
    EXPECT_EQ(*e.find("routing_payload"), Value(calldata::Bytes{1, 2}));
  }
}

TEST(NestedEnvelopeTest, AMajorSelectorIsTheTaggedMapEncoded) {
  EXPECT_EQ(major_selector(3), calldata::encode(Value::map({{"kind", "major"}, {"major", 3}})));
}

TEST(ImportFrameTest, ATopLevelRunKeepsItsCommandLine) {
  ExecutionData d;
  Permissions p{true, true, true, true};
  auto f = import_frame(d, p);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->permissions, p);
  EXPECT_TRUE(f->deterministic);
  EXPECT_EQ(f->state, StorageType::kDefault);
  EXPECT_EQ(f->depth, 0);
  EXPECT_FALSE(f->ram_budget.has_value());
  EXPECT_FALSE(f->det_fuel_cap.has_value());
  EXPECT_FALSE(f->recursion_exhausted);
}

TEST(ImportFrameTest, RemainingRecursionIsClampedAndSetsTheDepth) {
  ExecutionData d;
  for (auto [given, depth] : {std::pair{6u, kMaxVmDepth - 6}, std::pair{512u, 0}, std::pair{100000u, 0},
                              std::pair{1u, kMaxVmDepth - 1}}) {
    d.remaining_recursion = given;
    auto f = import_frame(d, {});
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(f->depth, depth) << given;
    EXPECT_FALSE(f->recursion_exhausted);
  }
  d.remaining_recursion = 0;
  EXPECT_TRUE(import_frame(d, {})->recursion_exhausted);
}

TEST(ImportFrameTest, ANestedRunTakesItsImportsByMeaning) {
  ExecutionData d;
  NestedExecutionData n;
  n.memory_limit = 4096;
  n.state_mode = StorageType::kLatestNonFinal;
  n.remaining_det_fuel = BigInt(5);
  // Every bit set, plus unknown ones: unknown bits grant nothing.
  n.permissions = Value(0xffffffffu);
  d.nested = n;
  auto f = import_frame(d, {});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->permissions, (Permissions{true, true, true, true, true}));  // register_runners too
  EXPECT_TRUE(f->deterministic);
  EXPECT_EQ(f->state, StorageType::kLatestNonFinal);
  EXPECT_EQ(f->ram_budget, std::optional<std::uint64_t>(4096));
  EXPECT_EQ(f->det_fuel_cap, std::optional<BigInt>(BigInt(5)));
  // The command line grants nothing to a nested run.
  d.nested->permissions = Value(static_cast<std::uint32_t>(kNestedDeterministic | kNestedCallOthers));
  f = import_frame(d, Permissions{true, true, true, true});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->permissions, (Permissions{false, false, true, false}));
  d.nested->permissions = Value(static_cast<std::uint32_t>(kNestedReadStorage));
  EXPECT_FALSE(import_frame(d, {})->deterministic);
  for (const Value& bad : {Value("x"), Value(-1), Value(std::uint64_t(1) << 32)}) {
    d.nested->permissions = bad;
    auto e = import_frame(d, {});
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().code, "execution_data_type");
  }
}

}  // namespace
}  // namespace genvm::executor
