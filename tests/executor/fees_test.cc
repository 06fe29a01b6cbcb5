// Fees end to end (impl-spec 04-fees.rst; docs/PROTOCOLS.md "### Fees"): the real genvm binary
// running tests/executor/contracts/fee_probe.c against the test host with the fixture's fee
// data (common/host/fee_params.h local_host_fees: storage page, event word, receipt byte and
// changed slot at 1, the rest 0; four buckets of 10^18; a wildcard allocation node per kind).
// Expected amounts are worked out here from the default rules' definitions, not by the meter.
#include "executor_fixture.h"

#include <set>

#include "executor/fees/allocation.h"

namespace genvm {
namespace {

using calldata::Value;
using exec_test::addr;
using exec_test::RunResult;

const BigInt kTotal = *BigInt::parse_decimal("1000000000000000000");

// An ABI `bytes` field of n bytes: offset word, length word, data padded to 32.
std::uint64_t abi_bytes(std::uint64_t n) { return 64 + (n + 31) / 32 * 32; }

// What every run pays at start with the fixture's constants: the receipts' fixed part
// (7 + 32 changed slots) on bucket 0, the nondet outputs' (32 receipt bytes) on bucket 0.
constexpr std::uint64_t kReceiptStart = 39;
constexpr std::uint64_t kNondetStart = 32;

// The default rules' funding floor of an internal message with the fixture's node
// (genPerTimeUnit 0, the governance validator table), for rotations [0]:
// time units (0 + 1) * (leader + 5 * validator), leader rounds 1.
BigInt floor_one_round(std::int64_t leader, std::int64_t validator, std::int64_t budget, std::int64_t price) {
  BigInt time_units = BigInt(leader + 5 * validator);
  return (price > 0 ? BigInt(price) * time_units : time_units) + BigInt(budget);
}

Value internal_params(std::int64_t leader = 1, std::int64_t validator = 1, std::int64_t budget = 1,
                      Value::Array rotations = {0}, std::int64_t price = 1) {
  return Value::map({{"execution_budget_per_round", budget},
                     {"leader_timeunits_allocation", leader},
                     {"max_price_gen_per_time_unit", price},
                     {"receipt_fee_max_gas_price", 1},
                     {"rotations", Value(std::move(rotations))},
                     {"storage_fee_max_gas_price", 1},
                     {"validator_timeunits_allocation", validator}});
}

std::set<std::string> keys_of(const Value& m) {
  std::set<std::string> k;
  for (const auto& [key, _] : m.as_map()) k.insert(key);
  return k;
}

class FeesTest : public exec_test::ExecutorTest {
 protected:
  void SetUp() override {
    ExecutorTest::SetUp();
    if (IsSkipped()) return;
    if (::access((contracts_ + "fee_probe.wasm").c_str(), R_OK) != 0) GTEST_SKIP() << "needs fee_probe.wasm";
    code_ = exec_test::read_file(contracts_ + "fee_probe.wasm");
  }

  host::ExecutionData probe(const std::string& method, Value::Array args) {
    return data(kSelf, addr(0xaa), call(method, std::move(args)), false, std::nullopt);
  }
  // fee_probe "calls" with these gl_call requests.
  host::ExecutionData calls(std::initializer_list<Value> requests) {
    Value::Array reqs;
    for (const Value& r : requests) reqs.emplace_back(calldata::encode(r));
    return probe("calls", {Value(std::move(reqs))});
  }
  void deploy_probe() { deploy_code(code_, kSelf); }

  static Value post(Value::Map extra = {}) {
    Value::Map body{{"address", addr(0x77)}, {"calldata", Value::map({{"", "ping"}})}, {"value", 0}, {"on", "finalized"}};
    for (auto& [k, v] : extra) body[k] = v;
    return Value::map({{"PostMessage", Value(std::move(body))}});
  }
  // Gives the contract the root permission can_use_balance_for_message_fees (bit 1: its value,
  // storage.h) and a balance.
  void allow_balance_fees(std::uint64_t balance) {
    host_.with_state([&](test_host::State& s) {
      calldata::Bytes& root = s.storage[{kSelf.bytes, test_host::Slot{}}];
      if (root.size() < 69) root.resize(69, 0);
      root[37] |= 2;
      s.balances[kSelf.bytes] = test_host::u256_le(balance);
      return 0;
    });
  }

  static const Value& fees_consumed(const RunResult& r) { return *r.report.find("data_fees_consumed"); }
  static BigInt consumed(const RunResult& r, const char* rule) { return fees_consumed(r).find(rule)->as_int(); }
  static std::vector<BigInt> remaining(const RunResult& r) {
    std::vector<BigInt> out;
    for (const Value& v : r.report.find("data_fees_remaining")->as_array()) out.push_back(v.as_int());
    return out;
  }
  static const Value& emission(const RunResult& r, std::size_t i) {
    return r.report.find("emissions")->as_array().at(i);
  }
  static Value rets(const RunResult& r) { return *r.report.find("data"); }

  const calldata::Address kSelf = addr(0x31);
  calldata::Bytes code_;
};

TEST_F(FeesTest, EveryRunPaysTheStartCostsAndReportsTheBuckets) {
  deploy_probe();
  auto r = run(probe("calls", {Value(Value::Array{})}));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return"));
  EXPECT_EQ(keys_of(fees_consumed(r)),
            (std::set<std::string>{"event", "message_fee", "message_receipt", "nondet_output", "storage"}));
  EXPECT_EQ(consumed(r, "message_receipt"), BigInt(kReceiptStart));
  EXPECT_EQ(consumed(r, "nondet_output"), BigInt(kNondetStart));
  EXPECT_EQ(consumed(r, "storage"), BigInt(0));
  EXPECT_EQ(remaining(r), (std::vector<BigInt>{kTotal - BigInt(kReceiptStart + kNondetStart), kTotal, kTotal, kTotal}));
}

TEST_F(FeesTest, ADeploymentPaysForTheCodePagesItWrites) {
  auto r = deploy_code(code_, kSelf);
  // The code slot holds u32 length ‖ code; the root slot gets the major byte: one page.
  std::uint64_t pages = (4 + code_.size() + 31) / 32 + 1;
  EXPECT_EQ(consumed(r, "storage"), BigInt(pages));
}

TEST_F(FeesTest, StorageWritesPayOncePerNewPage) {
  deploy_probe();
  auto r = run(probe("write", {Value(calldata::Bytes(100, 7))}));
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  EXPECT_EQ(consumed(r, "storage"), BigInt(4));  // bytes 0..99: pages 0..3
  // Rewriting pages already written in the store costs again in a new run: the run's own
  // first writes are what is charged.
  auto again = run(probe("write", {Value(calldata::Bytes(33, 1))}));
  EXPECT_EQ(consumed(again, "storage"), BigInt(2));
}

TEST_F(FeesTest, RunningOutOfStorageFeeEndsTheRunDeterministically) {
  deploy_probe();
  auto d = probe("write", {Value(calldata::Bytes(100, 7))});
  d.bucket_totals[0] = BigInt(kReceiptStart + kNondetStart + 2);  // two pages' worth left
  auto r = run(d, "wscn", {}, false);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
  EXPECT_EQ(public_code(r), "out_of storage");
  // The pages before the one that could not be paid stay charged.
  EXPECT_EQ(consumed(r, "storage"), BigInt(2));
  EXPECT_EQ(remaining(r)[0], BigInt(0));
  EXPECT_TRUE(r.report.find("storage_changes")->as_array().empty());
  auto again = run(d, "wscn", {}, false);
  EXPECT_EQ(again.result_bytes, r.result_bytes);
}

TEST_F(FeesTest, StartCostsTheBucketsCannotPayEndTheRunAtOnce) {
  deploy_probe();
  auto d = probe("write", {Value(calldata::Bytes(1, 1))});
  d.bucket_totals[0] = BigInt(10);
  auto r = run(d, "wscn", {}, false);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(public_code(r), "out_of receipt message");  // storage's start (0) paid, the receipts' not
  EXPECT_EQ(remaining(r), (std::vector<BigInt>{BigInt(10), kTotal, kTotal, kTotal}));
  EXPECT_EQ(consumed(r, "message_receipt"), BigInt(0));
  // No buckets at all: the first rule (storage, bucket 0) cannot even take its zero.
  d.bucket_totals.clear();
  auto none = run(d, "wscn", {}, false);
  EXPECT_EQ(public_code(none), "out_of storage");
  EXPECT_TRUE(none.report.find("data_fees_remaining")->as_array().empty());
}

TEST_F(FeesTest, GasDataTheRulesCannotEvaluateKeepsTheRunFromStarting) {
  deploy_probe();
  auto d = probe("calls", {Value(Value::Array{})});
  d.gas_data.erase("intrinsicGas");
  auto r = run(d, "wscn", {}, false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(r.report.is_map());  // nothing delivered
  EXPECT_NE(r.stderr_text.find("intrinsicGas"), std::string::npos) << r.stderr_text;
  d = probe("calls", {Value(Value::Array{})});
  d.gas_data["storageUnitPrice"] = "1 +";
  r = run(d, "wscn", {}, false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("parsing gas_data constant `storageUnitPrice`"), std::string::npos) << r.stderr_text;
}

TEST_F(FeesTest, AnEventPaysForItsTopicsAndBlobWords) {
  deploy_probe();
  Value blob = Value::map({{"text", std::string(40, 'x')}});
  auto r = run(calls({Value::map({{"EmitEvent", Value::map({{"topics", Value::array({calldata::Bytes(32, 9)})},
                                                            {"blob", blob}})}})}));
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  std::uint64_t blob_size = calldata::encode(blob).size();
  BigInt fee((1 + (blob_size + 31) / 32) * 1);
  const Value& e = emission(r, 0);
  EXPECT_EQ(keys_of(e), (std::set<std::string>{"blob", "storage_fee", "topics", "type"}));
  EXPECT_EQ(*e.find("storage_fee"), Value(fee));
  EXPECT_EQ(consumed(r, "event"), fee);
}

TEST_F(FeesTest, AnAllocationMatchedMessageCarriesItsFeesAndSubtree) {
  deploy_probe();
  auto d = calls({post()});
  // The first node that fits pays: the wildcard external one does not, the second has children.
  host::AllocationNode child = d.message_fee_allocation[0];
  child.budget = BigInt(5);
  d.message_fee_allocation[0].children = {child};
  d.message_fee_allocation[0].budget = BigInt(100);
  auto r = run(d);
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  EXPECT_EQ(rets(r), Value::array({0}));
  const Value& e = emission(r, 0);
  // domain.rs ExecutionEmission::PostMessage, key for key.
  EXPECT_EQ(keys_of(e), (std::set<std::string>{"address", "call_key", "calldata", "fee_params", "message_fee", "on",
                                               "receipt_fee", "subtree", "type", "use_balance", "value"}));
  BigInt fee = floor_one_round(1, 1, 1, 0);  // 1 + 5 * 1 time units, one leader round of budget 1
  EXPECT_EQ(fee, BigInt(7));
  EXPECT_EQ(*e.find("message_fee"), Value(fee));
  calldata::Bytes subtree = executor::fees::abi_encode({child});
  EXPECT_EQ(*e.find("subtree"), Value(subtree));
  std::uint64_t calldata_len = calldata::encode(Value::map({{"", "ping"}})).size();
  BigInt receipt((abi_bytes(calldata_len) + abi_bytes(subtree.size())) * 1 + 1);
  EXPECT_EQ(*e.find("receipt_fee"), Value(receipt));
  EXPECT_EQ(*e.find("fee_params"), internal_params());
  EXPECT_EQ(*e.find("use_balance"), Value(false));
  EXPECT_EQ(consumed(r, "message_fee"), fee);
  // The receipt's bucket-0 share and its ABI size on bucket 3 both count as consumed.
  EXPECT_EQ(consumed(r, "message_receipt"), BigInt(kReceiptStart) + receipt + BigInt(abi_bytes(calldata_len) + abi_bytes(subtree.size())));
  EXPECT_EQ(remaining(r)[1], kTotal - fee);
}

TEST_F(FeesTest, ANodesBudgetShrinksWithTheMessagesItPaysFor) {
  deploy_probe();
  auto d = calls({post(), post()});
  d.message_fee_allocation[0].budget = BigInt(10);  // one message of 7 fits, a second does not
  auto r = run(d, "wscn", {}, false);
  EXPECT_EQ(public_code(r), "out_of message_fee node");
  d.message_fee_allocation[0].budget = BigInt(14);
  auto both = run(d, "wscn", {}, false);
  EXPECT_EQ(*both.report.find("kind"), Value("Return"));
  EXPECT_EQ(both.report.find("emissions")->as_array().size(), 2u);
}

TEST_F(FeesTest, MessagesNoNodeFitsOrTheBucketCannotPayEndTheRun) {
  deploy_probe();
  auto d = calls({post()});
  d.message_fee_allocation.clear();
  EXPECT_EQ(public_code(run(d, "wscn", {}, false)), "fee no_matching_node");
  d = calls({post({{"on", "accepted"}})});
  d.message_fee_allocation.erase(d.message_fee_allocation.begin() + 1);  // only "finalized" is left
  EXPECT_EQ(public_code(run(d, "wscn", {}, false)), "fee no_matching_node");
  d = calls({post()});
  d.bucket_totals[1] = BigInt(6);
  EXPECT_EQ(public_code(run(d, "wscn", {}, false)), "out_of message_fee total");
  // The rules' own VM errors: a per-round budget under the node's floor.
  d = calls({post()});
  d.gas_data["messageBudgetFloor"] = "2";
  EXPECT_EQ(public_code(run(d, "wscn", {}, false)), "fee below_minimum");
}

TEST_F(FeesTest, AcceptanceMessagesAreMatchedAndPricedAsSuch) {
  deploy_probe();
  auto d = calls({post({{"on", "accepted"}})});
  d.message_fee_allocation[1].fee_params = host::InternalMessageParams{BigInt(1), BigInt(1), BigInt(1), {BigInt(0), BigInt(0)},
                                                                        BigInt(1), BigInt(1), BigInt(1)};
  auto r = run(d);
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  // rotations [0, 0]: one appeal. Rounds 0..2: (1)(1 + 5) + 1 (1 + 7) + (1)(1 + 11) = 26 time
  // units; leader rounds 1 + 1 + 1 = 3; times 2 for the appeal re-run at acceptance.
  EXPECT_EQ(*emission(r, 0).find("message_fee"), Value((26 + 3) * 2));
  EXPECT_EQ(*emission(r, 0).find("on"), Value("accepted"));
}

TEST_F(FeesTest, ADeploymentMessageIsMatchedWithTheZeroRecipientAndTheDeployKey) {
  deploy_probe();
  Value deploy_msg = Value::map({{"DeployContract", Value::map({{"calldata", Value::map({})},
                                                                {"code", calldata::Bytes(70, 1)},
                                                                {"value", 0},
                                                                {"on", "finalized"},
                                                                {"salt_nonce", 5}})}});
  auto d = calls({deploy_msg});
  // A node for one recipient does not fit a deployment; the wildcard after it does.
  host::AllocationNode exact = d.message_fee_allocation[0];
  exact.recipient = addr(0x77);
  d.message_fee_allocation.insert(d.message_fee_allocation.begin(), exact);
  auto r = run(d);
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  const Value& e = emission(r, 0);
  EXPECT_EQ(keys_of(e), (std::set<std::string>{"calldata", "code", "fee_params", "message_fee", "on", "receipt_fee",
                                               "salt_nonce", "subtree", "type", "use_balance", "value"}));
  std::uint64_t calldata_len = calldata::encode(Value::map({})).size();
  BigInt receipt((abi_bytes(calldata_len) + abi_bytes(64) + abi_bytes(70)) * 1 + 1);
  EXPECT_EQ(*e.find("receipt_fee"), Value(receipt));
  EXPECT_EQ(*e.find("message_fee"), Value(7));
  // The exact node was skipped: its budget is whole.
  EXPECT_EQ(*e.find("subtree"), Value(executor::fees::abi_encode({})));
}

TEST_F(FeesTest, AnEthSendIsMatchedByItsSelectorAndReservesGasLimitTimesPrice) {
  deploy_probe();
  calldata::Bytes evm{0xa9, 0x05, 0x9c, 0xbb, 1, 2, 3};
  Value send = Value::map({{"EthSend", Value::map({{"address", addr(0x55)}, {"calldata", evm}, {"value", 0}})}});
  auto d = calls({send});
  host::AllocationNode& ext = d.message_fee_allocation[2];
  ext.fee_params = host::ExternalMessageParams{BigInt(21000), BigInt(3)};
  host::CallKey selector{};
  std::copy_n(evm.begin(), 4, selector.begin());
  ext.call_key = selector;
  auto r = run(d);
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  const Value& e = emission(r, 0);
  EXPECT_EQ(keys_of(e), (std::set<std::string>{"address", "calldata", "fee_params", "message_fee", "receipt_fee", "type", "value"}));
  EXPECT_EQ(*e.find("message_fee"), Value(63000));
  EXPECT_EQ(*e.find("receipt_fee"), Value(BigInt((abi_bytes(evm.size()) + abi_bytes(0)) * 1 + 1)));
  EXPECT_EQ(*e.find("fee_params"), Value::map({{"gas_limit", 21000}, {"max_gas_price", 3}}));
  // Another selector finds no node.
  ext.call_key->fill(0xee);
  EXPECT_EQ(public_code(run(d, "wscn", {}, false)), "fee no_matching_node");
}

TEST_F(FeesTest, ABalanceFundedMessagePaysFromTheContractAndOnlyItsReceiptFromTheBuckets) {
  deploy_probe();
  allow_balance_fees(100);
  auto r = run(calls({post({{"use_balance", true}, {"fee_params", internal_params(1, 1, 1, {0}, 2)}})}));
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  EXPECT_EQ(rets(r), Value::array({0}));
  const Value& e = emission(r, 0);
  BigInt metered = floor_one_round(1, 1, 1, 2);  // priced at the message's own cap: 2 * 6 + 1
  EXPECT_EQ(*e.find("message_fee"), Value(metered));
  EXPECT_EQ(*e.find("use_balance"), Value(true));
  EXPECT_EQ(*e.find("subtree"), Value(calldata::Bytes{}));
  EXPECT_EQ(*e.find("fee_params"), internal_params(1, 1, 1, {0}, 2));
  EXPECT_EQ(consumed(r, "message_fee"), BigInt(0));  // not from the sender's pool
  std::uint64_t calldata_len = calldata::encode(Value::map({{"", "ping"}})).size();
  EXPECT_EQ(*e.find("receipt_fee"), Value(BigInt((abi_bytes(calldata_len) + abi_bytes(0)) * 1 + 1)));
  // The balance covers value + fee or the call is refused (INBALANCE = 7).
  allow_balance_fees(12);
  auto poor = run(calls({post({{"use_balance", true}, {"fee_params", internal_params(1, 1, 1, {0}, 2)}})}));
  EXPECT_EQ(rets(poor), Value::array({7}));
}

TEST_F(FeesTest, BalanceFundedFieldsAreCheckedBeforeAnythingIsCharged) {
  deploy_probe();
  // Without the root permission: FORBIDDEN (6).
  auto r = run(calls({post({{"use_balance", true}, {"fee_params", internal_params()}})}));
  EXPECT_EQ(rets(r), Value::array({6}));
  allow_balance_fees(1000000);
  // INVAL (2): use_balance without fee_params, fee_params without use_balance, empty rotations,
  // a zero price cap, a budget of 2^96, a count of 2^32, a misspelt key.
  Value big_budget = internal_params();
  big_budget.as_map()["execution_budget_per_round"] = *BigInt::parse_decimal("79228162514264337593543950336");  // 2^96
  Value big_count = internal_params();
  big_count.as_map()["leader_timeunits_allocation"] = std::int64_t{1} << 32;
  Value zero_cap = internal_params();
  zero_cap.as_map()["receipt_fee_max_gas_price"] = 0;
  Value misspelt = internal_params();
  misspelt.as_map()["appeal_rounds"] = 0;
  auto bad = run(calls({post({{"use_balance", true}}), post({{"fee_params", internal_params()}}),
                        post({{"use_balance", true}, {"fee_params", internal_params(1, 1, 1, {})}}),
                        post({{"use_balance", true}, {"fee_params", zero_cap}}),
                        post({{"use_balance", true}, {"fee_params", big_budget}}),
                        post({{"use_balance", true}, {"fee_params", big_count}}),
                        post({{"use_balance", true}, {"fee_params", misspelt}}), post({{"use_balance", 1}})}));
  ASSERT_EQ(*bad.report.find("kind"), Value("Return")) << calldata::to_text(*bad.report.find("data"));
  EXPECT_EQ(rets(bad), Value::array({2, 2, 2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(consumed(bad, "message_receipt"), BigInt(kReceiptStart));
  EXPECT_TRUE(bad.report.find("emissions")->as_array().empty());
}

TEST_F(FeesTest, NondetOutputsPayForTheEntryTheContractContinuesFrom) {
  deploy_probe();
  calldata::Bytes out(40, 3);
  auto leader = run(probe("nondet", {Value(out)}));
  ASSERT_EQ(*leader.report.find("kind"), Value("Return")) << calldata::to_text(*leader.report.find("data"));
  const Value& entries = *leader.report.find("nondet_results");
  ASSERT_EQ(entries.as_array().size(), 1u);
  std::uint64_t entry_len = entries.as_array()[0].as_bytes().size();
  BigInt paid = BigInt(abi_bytes(entry_len) * 1) + BigInt(entry_len);  // gas on bucket 0, bytes on bucket 2
  EXPECT_EQ(consumed(leader, "nondet_output"), BigInt(kNondetStart) + paid);
  EXPECT_EQ(remaining(leader)[2], kTotal - BigInt(entry_len));
  // A validator pays for the leader's entry the same.
  auto d = probe("nondet", {Value(out)});
  d.leader_nondet_results = std::vector<calldata::Bytes>{entries.as_array()[0].as_bytes()};
  auto validator = run(d);
  EXPECT_EQ(consumed(validator, "nondet_output"), BigInt(kNondetStart) + paid);
  // The byte cap bucket cannot take it: out_of receipt nondet_output.
  d = probe("nondet", {Value(out)});
  d.bucket_totals[2] = BigInt(entry_len - 1);
  EXPECT_EQ(public_code(run(d, "wscn", {}, false)), "out_of receipt nondet_output");
}

TEST_F(FeesTest, ConfigFileReplacesTheCompiledInRules) {
  deploy_probe();
  std::string path = dir_ + "/genvm.yaml";
  std::string yaml =
      "modules: {llm: {address: x}, web: {address: y}}\n"
      "fees:\n"
      "  expr_prelude: ''\n"
      "  storage: {bucket_no: 0, delta_expr: '\\a = 1000'}\n"
      "  message_receipt: {bucket_no: 0, delta_expr: '\\a = 0'}\n"
      "  nondet_output: {bucket_no: 0, delta_expr: '\\a = 0'}\n"
      "  message_fee: {bucket_no: 0, delta_expr: '\\a = 0'}\n"
      "  event: {bucket_no: 0, delta_expr: '\\a = 0'}\n";
  exec_test::write_file(path, calldata::Bytes(yaml.begin(), yaml.end()));
  auto r = run(probe("write", {Value(calldata::Bytes(40, 1))}), "wscn", {"--config", path}, false);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(consumed(r, "storage"), BigInt(2000));
  EXPECT_EQ(consumed(r, "message_receipt"), BigInt(0));  // these rules have no start costs
  auto bad = run(probe("write", {Value(calldata::Bytes(1, 1))}), "wscn", {"--config", dir_ + "/absent.yaml"}, false);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.stderr_text.find("absent.yaml"), std::string::npos) << bad.stderr_text;
}

}  // namespace
}  // namespace genvm
