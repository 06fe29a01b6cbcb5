#include "manager/executor_link.h"

#include <gtest/gtest.h>

#include "manager/test_util.h"

namespace genvm::manager {
namespace {

using calldata::Bytes;
using calldata::Value;
using testing::run_body;

Value message() {
  return Value::map({{"contract_address", calldata::Address{}}, {"sender_address", calldata::Address{}},
                     {"origin_address", calldata::Address{}}, {"signer_address", calldata::Address{}},
                     {"chain_id", "61999"}, {"value", "0"}, {"is_init", false}});
}

Value reported(int kind, std::size_t hash_len = 32) {
  return Value::map({{"kind", kind}, {"data", "x"}, {"execution_hash", Bytes(hash_len, 1)},
                     {"small_hash", Bytes(hash_len, 2)}});
}

TEST(ManagerExecutorLink, ExecutionDataConvertsTheRequest) {
  Value req = run_body(true, {{"message", message()}, {"bucket_totals", Value::array({"5", 7})},
                              {"hook_cross_contract_calls", true},
                              {"unsafe_overrides", Value::map({{"initial_recursion", 3}})}});
  auto d = to_execution_data(req, DebugMode::kSafe);
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_EQ(*d->find("message")->find("chain_id"), Value(61999));
  EXPECT_EQ(*d->find("message")->find("datetime"), Value("2026-01-01T00:00:00Z")) << "timestamp fills datetime";
  EXPECT_EQ(*d->find("bucket_totals"), Value::array({5, 7}));
  EXPECT_EQ(*d->find("method_hosts"), Value(Bytes{0, 0, 0, 0, 0, 0, 1, 0, 1})) << "hooked: resolve stays on host 0";
  EXPECT_TRUE(d->find("remaining_recursion")->is_null()) << "initial_recursion needs unsafe";
  EXPECT_EQ(*d->find("gas_data"), Value::map({}));
  EXPECT_EQ(d->find("selector"), nullptr) << "manager-only fields stay out";
  EXPECT_EQ(d->find("is_sync"), nullptr);

  auto unsafe = to_execution_data(req, DebugMode::kUnsafe);
  EXPECT_EQ(*unsafe->find("remaining_recursion"), Value(3));
  Value unhooked = run_body(false, {{"message", message()}});
  EXPECT_EQ(*to_execution_data(unhooked, DebugMode::kDisabled)->find("method_hosts"),
            Value(Bytes{0, 0, 0, 0, 0, 0, 1, 1, 1}));
}

TEST(ManagerExecutorLink, ExecutionDataRejectsBadNumbers) {
  Value::Map m = message().as_map();
  m["chain_id"] = "12a";
  EXPECT_EQ(to_execution_data(run_body(true, {{"message", Value(m)}}), DebugMode::kSafe).error().code, "invalid_request");
  EXPECT_FALSE(to_execution_data(run_body(true, {{"message", message()}, {"bucket_totals", Value::array({true})}}),
                                 DebugMode::kSafe)
                   .ok());
  EXPECT_FALSE(to_execution_data(run_body(true), DebugMode::kSafe).ok()) << "message lacks chain_id";
}

TEST(ManagerExecutorLink, RunArguments) {
  Value req = run_body(true, {{"host", "unix:///run/host.sock"}, {"permissions", "rw"},
                              {"extra_args", Value::array({"--x"})}});
  auto a = genvm_run_args(req, DebugMode::kSafeUnbounded, 42);
  EXPECT_EQ(a, (std::vector<std::string>{"--execution-data", "-", "--host", "unix:///run/host.sock", "--host",
                                         "fd://4", "--debug-mode", "safe-unbounded", "--permissions", "rw",
                                         "--genvm-id", "42", "--log-fd", "3", "--sync", "--x"}));
  auto b = genvm_run_args(run_body(false), DebugMode::kDisabled, 1);
  EXPECT_EQ(b[9], "wscn") << "permissions default to all four";
  EXPECT_EQ(std::count(b.begin(), b.end(), "--sync"), 0);
}

TEST(ManagerExecutorLink, ConsumedResultChecks) {
  Bytes map = calldata::encode(reported(0));
  auto bare = check_consumed_result(map);
  ASSERT_TRUE(bare.ok()) << bare.error().to_string();
  EXPECT_EQ((*bare)[0], 0) << "the outer byte is added from kind";
  EXPECT_EQ(Bytes(bare->begin() + 1, bare->end()), map);

  Bytes with_outer{1};
  calldata::encode_to(reported(1), with_outer);
  EXPECT_EQ(*check_consumed_result(with_outer), with_outer);

  Bytes disagree{2};
  calldata::encode_to(reported(1), disagree);
  EXPECT_EQ(check_consumed_result(disagree).error().code, "invalid_result");
  EXPECT_FALSE(check_consumed_result(calldata::encode(reported(0, 31))).ok()) << "short hash";
  EXPECT_TRUE(check_consumed_result(calldata::encode(reported(3, 0))).ok()) << "InternalError needs no hashes";
  EXPECT_FALSE(check_consumed_result(calldata::encode(reported(9))).ok());
  EXPECT_FALSE(check_consumed_result(Bytes{}).ok());
  Bytes trailing = map;
  trailing.push_back(0);
  EXPECT_FALSE(check_consumed_result(trailing).ok()) << "the map must decode completely";

  auto fatal = check_consumed_result(calldata::encode(reported(4)));
  ASSERT_TRUE(fatal.ok());
  EXPECT_EQ((*fatal)[0], 2) << "FatalVmError is published as VmError";
  auto inner = calldata::decode(std::span<const std::uint8_t>(fatal->data() + 1, fatal->size() - 1));
  EXPECT_EQ(*inner->find("kind"), Value(2));
}

TEST(ManagerExecutorLink, HostOneParserAcksResultsAndAnswersResolveWithNull) {
  HostOneParser p(1 << 20);
  Bytes map = calldata::encode(reported(0));
  Bytes msg{6};
  auto len = static_cast<std::uint32_t>(map.size());
  for (int i = 0; i < 4; ++i) msg.push_back(static_cast<std::uint8_t>(len >> (8 * i)));
  msg.insert(msg.end(), map.begin(), map.end());
  // Fed one byte at a time: nothing happens until the slice is complete.
  for (std::size_t i = 0; i + 1 < msg.size(); ++i) {
    auto o = p.feed(std::span<const std::uint8_t>(&msg[i], 1));
    EXPECT_TRUE(o.reply.empty());
    EXPECT_FALSE(o.consumed);
  }
  auto o = p.feed(std::span<const std::uint8_t>(&msg.back(), 1));
  EXPECT_EQ(o.reply, (std::vector<std::uint8_t>{0}));
  ASSERT_TRUE(o.consumed);
  EXPECT_EQ((*o.consumed)[0], 0);

  Bytes resolve(23, 0);
  resolve[0] = 7;
  auto r = p.feed(resolve);
  EXPECT_EQ(r.reply, (std::vector<std::uint8_t>{0, 1, 0, 0, 0, 0}));
  EXPECT_FALSE(r.error);

  auto bad = p.feed(Bytes{0});
  EXPECT_TRUE(bad.error) << "storage_read is host 0's";
}

TEST(ManagerExecutorLink, HostOneParserRefusesOversizedAndInvalidResults) {
  HostOneParser small(10);
  auto o = small.feed(Bytes{6, 11, 0, 0, 0});
  EXPECT_TRUE(o.error);
  EXPECT_TRUE(o.reply.empty());
  HostOneParser p(1 << 20);
  Bytes junk{6, 2, 0, 0, 0, 0xff, 0xff};
  auto j = p.feed(junk);
  EXPECT_TRUE(j.error);
  EXPECT_TRUE(j.reply.empty()) << "an invalid report gets no acknowledgement";
  EXPECT_FALSE(j.consumed);
}

}  // namespace
}  // namespace genvm::manager
