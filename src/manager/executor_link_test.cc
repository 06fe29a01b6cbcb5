// The executor's command line, consume_result checks, host connection 1 and the log fd, each
// against what run.rs does.
#include "manager/executor_link.h"

#include <gtest/gtest.h>

#include "manager/test_util.h"

namespace genvm::manager {
namespace {

using calldata::Bytes;
using calldata::Value;
using testing::run_body;

// A ReportedResult (domain.rs) with every field, `kind` the variant name.
Value reported(const char* kind, std::size_t hash_len = 32) {
  Value zero_buckets = Value::map({{"storage", 0}, {"message_receipt", 0}, {"nondet_output", 0}, {"message_fee", 0}, {"event", 0}});
  return Value::map({{"execution_hash", Bytes(hash_len, 1)},
                     {"small_hash", Bytes(hash_len, 2)},
                     {"kind", kind},
                     {"data", "x"},
                     {"backtrace", Value::array({Value::map({{"module_name", "contract"}, {"func", 3}})})},
                     {"wasm_store_hashes", Value::map({{"contract", Value::map({{"memories", Value::array({Bytes(32, 9)})}})}})},
                     {"storage_changes", Value::array({Value::array({Bytes(36, 0), Bytes(32, 5)})})},
                     {"emissions", Value::Array{}},
                     {"nondet_disagreement", Value()},
                     {"nondet_results", Value::array({Bytes{1, 2}})},
                     {"data_fees_remaining", Value::array({10})},
                     {"data_fees_consumed", zero_buckets},
                     {"llm_consumption", 0}});
}

Bytes framed(std::uint8_t code, const Value& map) {
  Bytes out{code};
  calldata::encode_to(map, out);
  return out;
}

RunRequest request(Value::Map extra, bool is_sync = true) { return *parse_run_request(run_body(is_sync, std::move(extra))); }

TEST(ManagerExecutorLink, ArgumentsAreRunRsOrder) {
  auto a = executor_args(request({{"host", "unix:///run/host.sock"}, {"permissions", "wc"},
                                  {"extra_args", Value::array({"--x", "y"})}}),
                         DebugMode::kSafeUnbounded, 42, false);
  EXPECT_EQ(a, (std::vector<std::string>{"--log-fd=3", "run", "--x", "y", "--sync", "--host", "unix:///run/host.sock",
                                         "--permissions", "wc", "--genvm-id=42", "--debug-mode", "safe-unbounded",
                                         "--host", "fd://4"}));
  auto b = executor_args(request({}, /*is_sync=*/false), DebugMode::kDisabled, 1, true);
  EXPECT_EQ(b, (std::vector<std::string>{"--log-fd=3", "run", "--host", "unix:///nowhere", "--permissions", "wscn",
                                         "--genvm-id=1", "--debug-mode", "disabled", "--host", "fd://4",
                                         "--module-llm=fd://5", "--module-web=fd://6"}));
}

TEST(ManagerExecutorLink, ConsumedResultIsTheOuterByteAndAStrictReportedResult) {
  Bytes user_error = framed(1, reported("UserError"));
  auto ok = check_consumed_result(user_error);
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_EQ(*ok, user_error) << "kept byte for byte";
  EXPECT_TRUE(check_consumed_result(framed(3, reported("InternalError", 0))).ok()) << "InternalError needs no hashes";

  auto refused = [](const Bytes& b) {
    auto r = check_consumed_result(b);
    if (r.ok()) return std::string("accepted");
    EXPECT_EQ(r.error().code, "invalid_result");
    return r.error().message;
  };
  EXPECT_EQ(refused(Bytes{}), "top-level executor returned an empty result");
  EXPECT_EQ(refused(framed(5, reported("Return"))), "top-level executor returned unknown result code 5");
  EXPECT_EQ(refused(framed(2, reported("UserError"))),
            "top-level executor result code VmError disagrees with the reported UserError");
  EXPECT_EQ(refused(framed(0, reported("Return", 31))), "top-level executor returned an invalid execution_hash length");
  EXPECT_NE(refused(framed(0, reported("VMError"))).find("kind: expected one of Return"), std::string::npos)
      << "the small-hash spelling is not a variant name";
  Value numeric = reported("Return");
  numeric.as_map()["kind"] = 0;
  EXPECT_NE(refused(framed(0, numeric)).find("kind: expected one of"), std::string::npos) << "an integer kind is refused";
  EXPECT_NE(refused(calldata::encode(reported("Return"))).find("unknown result code"), std::string::npos)
      << "no payload without the outer byte";
  Bytes trailing = framed(0, reported("Return"));
  trailing.push_back(0);
  EXPECT_NE(refused(trailing).find("does not decode"), std::string::npos) << "the map must decode completely";
  Value missing = reported("Return");
  missing.as_map().erase("llm_consumption");
  EXPECT_NE(refused(framed(0, missing)).find("missing field \"llm_consumption\""), std::string::npos);
  Value extra = reported("Return");
  extra.as_map()["note"] = 1;
  EXPECT_NE(refused(framed(0, extra)).find("unknown field \"note\""), std::string::npos);
  Value bad_delta = reported("Return");
  bad_delta.as_map()["storage_changes"] = Value::array({Value::array({Bytes(35, 0), Bytes{}})});
  EXPECT_NE(refused(framed(0, bad_delta)).find("storage_changes[0]"), std::string::npos);
}

TEST(ManagerExecutorLink, EmissionsAreTheDomainRsShapes) {
  Value internal = Value::map({{"leader_timeunits_allocation", 1}, {"validator_timeunits_allocation", 2},
                               {"execution_budget_per_round", 3}, {"rotations", Value::array({4})},
                               {"max_price_gen_per_time_unit", 5}, {"storage_fee_max_gas_price", 6},
                               {"receipt_fee_max_gas_price", 7}});
  Value post = Value::map({{"type", "PostMessage"}, {"call_key", Bytes(32, 1)}, {"address", calldata::Address{}},
                           {"calldata", Value::map({})}, {"value", 0}, {"on", "finalized"}, {"message_fee", 0},
                           {"receipt_fee", 0}, {"fee_params", internal}, {"subtree", Bytes{}}, {"use_balance", false}});
  Value eth = Value::map({{"type", "EthSend"}, {"address", calldata::Address{}}, {"calldata", Bytes{}}, {"value", 0},
                          {"message_fee", 0}, {"receipt_fee", 0},
                          {"fee_params", Value::map({{"gas_limit", 1}, {"max_gas_price", 2}})}});
  Value event = Value::map({{"type", "EmitEvent"}, {"topics", Value::array({Bytes(32, 0)})}, {"blob", Value::map({})},
                            {"storage_fee", 0}});
  Value r = reported("Return");
  r.as_map()["emissions"] = Value::array({post, eth, event});
  EXPECT_TRUE(check_consumed_result(framed(0, r)).ok()) << check_consumed_result(framed(0, r)).error().to_string();
  Value no_fee = post;
  no_fee.as_map().erase("fee_params");
  r.as_map()["emissions"] = Value::array({no_fee});
  EXPECT_NE(check_consumed_result(framed(0, r)).error().message.find("emissions[0]: missing field \"fee_params\""),
            std::string::npos);
}

TEST(ManagerExecutorLink, ATopLevelFatalVmErrorIsPublishedAsVmError) {
  auto fatal = check_consumed_result(framed(4, reported("FatalVmError")));
  ASSERT_TRUE(fatal.ok());
  EXPECT_EQ(*fatal, framed(2, reported("VmError")));
}

TEST(ManagerExecutorLink, HostOneParserAcksResultsAndAnswersResolveWithNull) {
  HostOneParser p(1 << 20);
  Bytes result = framed(0, reported("Return"));
  Bytes msg{6};
  auto len = static_cast<std::uint32_t>(result.size());
  for (int i = 0; i < 4; ++i) msg.push_back(static_cast<std::uint8_t>(len >> (8 * i)));
  msg.insert(msg.end(), result.begin(), result.end());
  // Fed one byte at a time: nothing happens until the slice is complete.
  for (std::size_t i = 0; i + 1 < msg.size(); ++i) {
    auto o = p.feed(std::span<const std::uint8_t>(&msg[i], 1));
    EXPECT_TRUE(o.reply.empty());
    EXPECT_FALSE(o.consumed);
  }
  auto o = p.feed(std::span<const std::uint8_t>(&msg.back(), 1));
  EXPECT_EQ(o.reply, (std::vector<std::uint8_t>{0}));
  ASSERT_TRUE(o.consumed);
  EXPECT_EQ(*o.consumed, result);

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

TEST(ManagerExecutorLink, LogLinesAreReadAsReadLogPipeReadsThem) {
  auto json = [](std::string_view line) {
    auto e = parse_log_line(line);
    return e ? genvm_log_json(*e) : std::string("<skipped>");
  };
  EXPECT_EQ(json(R"({"level":"WARNING","msg":"m","n":1})"), R"({"msg":"m","n":1,"level":"warn"})");
  EXPECT_EQ(json(R"({"msg":"m","level":"debug"})"), R"({"msg":"m","level":"debug"})");
  EXPECT_EQ(json(R"({"msg":"m"})"), R"({"msg":"m","level":"info"})") << "no level: info";
  EXPECT_EQ(json(R"({"level":3,"msg":"m"})"), R"({"msg":"m","level":"info"})") << "a level that is not a name";
  EXPECT_EQ(json(R"({"level":"loud"})"), R"({"level":"info"})");
  EXPECT_EQ(json("  plain text \t"), R"({"level":"info","message":"genvm log","line":"plain text"})");
  EXPECT_EQ(json("[1,2]"), R"({"level":"info","message":"genvm log","line":"[1,2]"})") << "not an object";
  EXPECT_EQ(json("{broken"), R"({"level":"info","message":"genvm log","line":"{broken"})");
  EXPECT_EQ(json(""), "<skipped>");
  EXPECT_EQ(json(" \t\r"), "<skipped>");
  EXPECT_EQ(json("\xE3\x80\x80"), "<skipped>") << "Unicode white space is trimmed as Rust trims";
  EXPECT_EQ(parse_log_line(R"({"level":"Error"})")->level, "error");
}

TEST(ManagerExecutorLink, TheLogCollectorSplitsLinesBoundsEntriesAndForwardsWhenDisabled) {
  GenvmLogCollector unbounded(Capture::kUnbounded, nullptr);
  unbounded.append("{\"a\":1}\n\npart");
  unbounded.append("ial\n  \n{\"level\":\"error\"}");
  EXPECT_EQ(unbounded.items().size(), 2u) << "the last line waits for its newline";
  unbounded.finish();
  EXPECT_EQ(unbounded.artifact(),
            "{\"a\":1,\"level\":\"info\"}\n{\"level\":\"info\",\"message\":\"genvm log\",\"line\":\"partial\"}\n"
            "{\"level\":\"error\"}\n");

  // Fails if empty lines counted as entries or the bound were off: 300 entries, 128 kept.
  GenvmLogCollector bounded(Capture::kBounded, nullptr);
  for (int i = 0; i < 300; ++i) bounded.append("{\"i\":" + std::to_string(i) + "}\n\n");
  ASSERT_EQ(bounded.items().size(), kBoundedLogEntries);
  EXPECT_EQ(bounded.items().front(), "{\"i\":172,\"level\":\"info\"}");
  EXPECT_EQ(bounded.items().back(), "{\"i\":299,\"level\":\"info\"}");

  std::vector<LogEntry> forwarded;
  GenvmLogCollector disabled(Capture::kDisabled, [&](const LogEntry& e) { forwarded.push_back(e); });
  disabled.append(std::string(70 * 1024, 'x') + "\nshort\n{\"level\":\"debug\",\"m\":2}\n");
  EXPECT_TRUE(disabled.items().empty()) << "nothing is kept when capture is disabled";
  ASSERT_EQ(forwarded.size(), 2u) << "the overlong line is dropped";
  EXPECT_EQ(forwarded[0].text, "short");
  EXPECT_EQ(forwarded[1].level, "debug");
}

}  // namespace
}  // namespace genvm::manager
