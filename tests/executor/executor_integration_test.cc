// End to end: the `genvm` binary runs the example contracts against the test host over a unix
// socket; the test reads what consume_result delivered and applies storage changes between runs
// the way a node would.
#include <csignal>
#include <thread>

#include <sys/socket.h>
#include <sys/un.h>

#include "common/module/protocol.h"
#include "executor_fixture.h"
#include "common/sanitizers.h"

namespace genvm {
namespace {

using calldata::Value;
using exec_test::addr;
using exec_test::read_file;
using exec_test::RunResult;
using exec_test::ExecutorTest;

TEST_F(ExecutorTest, CounterDeploysStoresItsCodeAndCounts) {
  deploy("counter.wasm", addr(1));
  // Later calls carry no code: it comes from the storage the deployment wrote.
  auto inc = run(data(addr(1), addr(0xaa), call("increment"), false, std::nullopt));
  ASSERT_EQ(inc.exit_code, 0) << inc.stderr_text;
  EXPECT_EQ(*inc.report.find("data"), Value(1));
  EXPECT_FALSE(inc.report.find("storage_changes")->as_array().empty());
  auto add = run(data(addr(1), addr(0xaa), call("add", {Value(41)}), false, std::nullopt));
  EXPECT_EQ(*add.report.find("data"), Value(42));
  auto get = run(data(addr(1), addr(0xaa), call("get"), false, std::nullopt));
  EXPECT_EQ(*get.report.find("data"), Value(42));
  EXPECT_EQ(get.report.find("execution_hash")->as_bytes().size(), 32u);
}

TEST_F(ExecutorTest, TokenTransfersAndReportsUserErrorsWithoutEffects) {
  deploy("token.wasm", addr(2), Value::map({{"args", Value::array({100})}}));
  auto t = run(data(addr(2), addr(0xaa), call("transfer", {Value(addr(0xbb)), Value(30)}), false, std::nullopt));
  ASSERT_EQ(t.exit_code, 0) << t.stderr_text;
  EXPECT_EQ(*t.report.find("kind"), Value("Return"));
  auto b = run(data(addr(2), addr(0xaa), call("balance_of", {Value(addr(0xbb))}), false, std::nullopt));
  EXPECT_EQ(*b.report.find("data"), Value(30));
  auto a = run(data(addr(2), addr(0xaa), call("balance_of", {Value(addr(0xaa))}), false, std::nullopt));
  EXPECT_EQ(*a.report.find("data"), Value(70));
  auto over = run(data(addr(2), addr(0xbb), call("transfer", {Value(addr(0xaa)), Value(1000)}), false, std::nullopt));
  ASSERT_EQ(over.exit_code, 0) << over.stderr_text;
  EXPECT_EQ(*over.report.find("kind"), Value("UserError"));
  EXPECT_EQ(*over.report.find("data"), Value("insufficient balance"));
  EXPECT_TRUE(over.report.find("storage_changes")->as_array().empty());
  // Error results carry the memory fingerprint of the contract instance.
  const Value* hashes = over.report.find("wasm_store_hashes");
  ASSERT_TRUE(hashes && hashes->find("contract"));
  EXPECT_EQ(hashes->find("contract")->find("memories")->as_array().size(), 1u);
}

TEST_F(ExecutorTest, EventsEmitAnEventAndPostAMessageInOrder) {
  deploy("events.wasm", addr(3));
  auto r = run(data(addr(3), addr(0xcc), call("notify", {Value("hi")}), false, std::nullopt));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return"));
  const auto& em = r.report.find("emissions")->as_array();
  ASSERT_EQ(em.size(), 2u);
  EXPECT_EQ(*em[0].find("type"), Value("EmitEvent"));
  EXPECT_EQ(*em[0].find("blob"), Value::map({{"text", "hi"}}));
  EXPECT_EQ(*em[1].find("type"), Value("PostMessage"));
  EXPECT_EQ(*em[1].find("address"), Value(addr(0xcc)));
  EXPECT_EQ(*em[1].find("on"), Value("finalized"));
}

TEST_F(ExecutorTest, MessageValuesComeFromTheContractsBalance) {
  deploy("events.wasm", addr(12));
  host_.with_state([](test_host::State& s) { s.balances[addr(12).bytes] = test_host::u256_le(100); return 0; });
  auto d = data(addr(12), addr(0xcc), call("pay", {Value(60)}), false, std::nullopt);
  d.message.value = BigInt(5);
  auto r = run(d);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("data"), Value(45));  // 100 + 5 received - 60 sent
  const auto& em = r.report.find("emissions")->as_array();
  ASSERT_EQ(em.size(), 1u);
  EXPECT_EQ(*em[0].find("value"), Value(60));
  auto poor = run(data(addr(12), addr(0xcc), call("pay", {Value(101)}), false, std::nullopt));
  EXPECT_EQ(*poor.report.find("kind"), Value("UserError"));
  EXPECT_EQ(*poor.report.find("data"), Value("insufficient contract balance"));
}

TEST_F(ExecutorTest, WithoutSendPermissionThePostIsRefused) {
  deploy("events.wasm", addr(3));
  auto r = run(data(addr(3), addr(0xcc), call("notify", {Value("hi")}), false, std::nullopt), "w");
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("UserError"));
  EXPECT_EQ(*r.report.find("data"), Value("post refused"));
  EXPECT_TRUE(r.report.find("emissions")->as_array().empty());  // the event is dropped too
}

TEST_F(ExecutorTest, CallerReadsAnotherContractInProcess) {
  deploy("counter.wasm", addr(4));
  run(data(addr(4), addr(0xaa), call("add", {Value(7)}), false, std::nullopt));
  deploy("caller.wasm", addr(5));
  auto r = run(data(addr(5), addr(0xaa), call("call_get", {Value(addr(4))}), false, std::nullopt));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  EXPECT_EQ(*r.report.find("data"), Value(7));
  // The host was asked where the callee runs before the call.
  auto asked = host_.with_state([](test_host::State& s) { return s.resolve_requests; });
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0], addr(4));
}

TEST_F(ExecutorTest, WithoutWritePermissionStorageWritesAreRefused) {
  deploy("counter.wasm", addr(6));
  auto r = run(data(addr(6), addr(0xaa), call("increment"), false, std::nullopt), "");
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("UserError"));
  EXPECT_EQ(*r.report.find("data"), Value("storage write refused"));
}

TEST_F(ExecutorTest, SurplusLeaderResultsBecomeLeaderFaultExtra) {
  deploy("counter.wasm", addr(9));
  auto d = data(addr(9), addr(0xaa), call("increment"), false, std::nullopt);
  d.leader_nondet_results = std::vector<calldata::Bytes>{{0, 0x29}};
  auto r = run(d);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
  // The run would have returned 1: buffer 00 09, sha3 -> GVM32 prefix (python3 reference).
  EXPECT_EQ(*r.report.find("data"), Value("leader_fault nondet_output extra bn7zt1"));
  EXPECT_TRUE(r.report.find("storage_changes")->as_array().empty());
}

TEST_F(ExecutorTest, LockedSlotsRefuseWritesExceptFromUpgraders) {
  deploy("counter.wasm", addr(10));
  // Lock the counter's slot (the contract slot, sha3(root ‖ 01000000)) and name 0xee upgrader.
  executor::SlotId counter = executor::indirection_slot(executor::kRootSlot, executor::kRootOffsetContract);
  // Sized up front: GCC 12 misreads an insert after a 4-byte vector as out of bounds.
  calldata::Bytes locked(4 + 32, 0);
  locked[0] = 1;
  std::copy(counter.begin(), counter.end(), locked.begin() + 4);
  calldata::Bytes upgraders(4 + 20, 0xee);
  upgraders[0] = 1;
  upgraders[1] = upgraders[2] = upgraders[3] = 0;
  host_.with_state([&](test_host::State& s) {
    s.storage[{addr(10).bytes, executor::indirection_slot(executor::kRootSlot, executor::kRootOffsetLockedSlots)}] = locked;
    s.storage[{addr(10).bytes, executor::indirection_slot(executor::kRootSlot, executor::kRootOffsetUpgraders)}] = upgraders;
    return 0;
  });
  auto refused = run(data(addr(10), addr(0xaa), call("increment"), false, std::nullopt));
  ASSERT_EQ(refused.exit_code, 0) << refused.stderr_text;
  EXPECT_EQ(*refused.report.find("data"), Value("storage write refused"));
  auto allowed = run(data(addr(10), addr(0xee), call("increment"), false, std::nullopt));
  EXPECT_EQ(*allowed.report.find("data"), Value(1));
}

TEST_F(ExecutorTest, AnotherAbiMajorIsRefused) {
  deploy("counter.wasm", addr(11));
  host_.with_state([&](test_host::State& s) {
    s.storage[{addr(11).bytes, executor::kRootSlot}][0] = 7;  // the major byte
    return 0;
  });
  auto r = run(data(addr(11), addr(0xaa), call("get"), false, std::nullopt));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
  EXPECT_EQ(*r.report.find("data"), Value("invalid_contract major_mismatch"));
}

TEST_F(ExecutorTest, MalformedEntryIsAVmErrorResult) {
  auto r = run(data(addr(7), addr(0xaa), Value::map({{"bogus", 1}}), false, std::nullopt));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
  EXPECT_EQ(*r.report.find("data"), Value("malformed_entry"));
}

TEST_F(ExecutorTest, NonWasmCodeIsAnInvalidContract) {
  auto r = run(data(addr(8), addr(0xaa), Value(Value::Map{}), true, calldata::Bytes{'h', 'i'}));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
  // Not wasm, so text: without a comment header it names no runner (04-runners.rst).
  EXPECT_EQ(*r.report.find("data"), Value("invalid_contract runner absent"));
}

TEST_F(ExecutorTest, BadExecutionDataExitsTwoWithOneLine) {
  {
    std::ofstream f(dir_ + "/data.bin", std::ios::binary);
    f << "garbage";
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    std::string err = dir_ + "/stderr.txt";
    FILE* f = std::freopen(err.c_str(), "w", stderr);
    (void)f;
    std::string data = dir_ + "/data.bin";
    ::execl(genvm_.c_str(), genvm_.c_str(), "run", "--execution-data", data.c_str(), "--host", uri_.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  auto err = read_file(dir_ + "/stderr.txt");
  std::string text(err.begin(), err.end());
  EXPECT_NE(text.find("execution_data_malformed"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
}

// ---- Consensus: RunNondet through examples/nondet.c ----

class ConsensusTest : public ExecutorTest {
 protected:
  void SetUp() override {
    ExecutorTest::SetUp();
    if (IsSkipped()) return;
    if (::access((examples_ + "nondet.wasm").c_str(), R_OK) != 0) GTEST_SKIP() << "needs examples/nondet.wasm";
    deploy("nondet.wasm", kContract);
  }
  host::ExecutionData nd(Value entry, std::optional<std::vector<calldata::Bytes>> leader = std::nullopt) {
    auto d = data(kContract, addr(0xaa), std::move(entry), false, std::nullopt);
    d.leader_nondet_results = std::move(leader);
    return d;
  }
  static std::vector<calldata::Bytes> entries(const RunResult& r) {
    std::vector<calldata::Bytes> out;
    for (const Value& v : r.report.find("nondet_results")->as_array()) out.push_back(v.as_bytes());
    return out;
  }
  static calldata::Bytes entry_of(std::uint8_t code, const calldata::Bytes& data) {
    calldata::Bytes e(1 + data.size());  // sized up front (GCC 12 array-bounds false positive)
    e[0] = code;
    std::copy(data.begin(), data.end(), e.begin() + 1);
    return e;
  }
  static calldata::Bytes text_bytes(std::string_view s) { return calldata::Bytes(s.begin(), s.end()); }
  const calldata::Address kContract = addr(9);
};

// Fails if a validator computed its blocks itself instead of taking the leader's entries: the
// clock block gives every run another value (leader2 below shows it).
TEST_F(ConsensusTest, LeaderResultsFedToAValidatorAgreeWithTheSameExecutionHash) {
  auto leader = run(nd(call("run", {Value(5)})));
  ASSERT_EQ(leader.exit_code, 0) << leader.stderr_text;
  ASSERT_EQ(*leader.report.find("kind"), Value("Return")) << calldata::to_text(*leader.report.find("data"));
  auto results = entries(leader);
  ASSERT_EQ(results.size(), 5u);
  // Block 1 and 3 double their call index: [Return][calldata 2*i].
  EXPECT_EQ(results[3], entry_of(0, calldata::encode(Value(6))));
  EXPECT_TRUE(leader.report.find("nondet_disagreement")->is_null());

  auto validator = run(nd(call("run", {Value(5)}), results));
  ASSERT_EQ(validator.exit_code, 0) << validator.stderr_text;
  ASSERT_EQ(*validator.report.find("kind"), Value("Return")) << calldata::to_text(*validator.report.find("data"));
  EXPECT_TRUE(validator.report.find("nondet_disagreement")->is_null());
  EXPECT_EQ(*validator.report.find("data"), *leader.report.find("data"));
  EXPECT_EQ(*validator.report.find("execution_hash"), *leader.report.find("execution_hash"));
  // A validator publishes no nondet results of its own.
  EXPECT_TRUE(validator.report.find("nondet_results")->as_array().empty());
  EXPECT_TRUE(host_.with_state([](test_host::State& s) { return s.disagreements; }).empty());

  // A second leader reads another clock: its hash differs, so agreement above came from
  // reusing the leader's values, not from both sides computing the same thing.
  auto leader2 = run(nd(call("run", {Value(5)})));
  ASSERT_EQ(*leader2.report.find("kind"), Value("Return"));
  EXPECT_NE(*leader2.report.find("execution_hash"), *leader.report.find("execution_hash"));
}

// Fails if the validator block's vote is ignored or the call_no counter is off by one.
TEST_F(ConsensusTest, AValidatorWhoseCheckFailsReportsThatCallNo) {
  auto leader = run(nd(call("run", {Value(5)})));
  ASSERT_EQ(*leader.report.find("kind"), Value("Return"));
  auto results = entries(leader);
  ASSERT_EQ(results.size(), 5u);
  results[3] = entry_of(0, calldata::encode(Value(7)));  // well formed, but not 2*3
  auto v = run(nd(call("run", {Value(5)}), results));
  ASSERT_EQ(v.exit_code, 0) << v.stderr_text;
  ASSERT_EQ(*v.report.find("kind"), Value("Return"));
  EXPECT_EQ(*v.report.find("nondet_disagreement"), Value(3));
  EXPECT_EQ(host_.with_state([](test_host::State& s) { return s.disagreements; }), std::vector<std::uint32_t>{3});
  // The contract continued from the leader's value, as the leader did.
  EXPECT_EQ(v.report.find("data")->as_array()[3], Value(7));
}

TEST_F(ConsensusTest, SyncModeUsesTheEntriesWithoutAVote) {
  auto leader = run(nd(call("run", {Value(2)})));
  ASSERT_EQ(*leader.report.find("kind"), Value("Return"));
  auto results = entries(leader);
  ASSERT_EQ(results.size(), 2u);
  results[1] = entry_of(0, calldata::encode(Value(7)));  // a validator would reject this
  auto s = run(nd(call("run", {Value(2)}), results), "wscn", {"--sync"});
  ASSERT_EQ(s.exit_code, 0) << s.stderr_text;
  ASSERT_EQ(*s.report.find("kind"), Value("Return"));
  EXPECT_TRUE(s.report.find("nondet_disagreement")->is_null());
  EXPECT_EQ(s.report.find("data")->as_array()[1], Value(7));
  // Entries are still checked in sync mode: a missing one ends the run. (A faulty one is
  // replaced by its derived VM error: tests/executor/nondet_faults_test.cc.)
  results.pop_back();
  auto bad = run(nd(call("run", {Value(2)}), results), "wscn", {"--sync"});
  EXPECT_EQ(public_code(bad), "leader_fault nondet_output absent");
}

// Too few or too many entries are the run's result (seed 001, 05-result.rst); an entry that
// is present but invalid is replaced by its derived VM error and compared like a proposal
// (03-schemas.rst): examples/nondet.c's "run" then fails its own block check. The exact bytes
// each side sees are pinned in tests/executor/nondet_faults_test.cc.
TEST_F(ConsensusTest, TamperedLeaderDataGivesItsExactPublicCode) {
  auto leader = run(nd(call("run", {Value(3)})));
  ASSERT_EQ(*leader.report.find("kind"), Value("Return"));
  const auto good = entries(leader);
  ASSERT_EQ(good.size(), 3u);
  auto extra = good;
  extra.push_back(good[1]);
  struct Case {
    const char* name;
    std::vector<calldata::Bytes> results;
    std::string code;  // exact public code, or a prefix ending in ' ' for parametric codes
  };
  std::vector<Case> cases = {
      {"absent", {good[0], good[1]}, "leader_fault nondet_output absent"},
      {"extra entries", extra, "leader_fault nondet_output extra "},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto v = run(nd(call("run", {Value(3)}), c.results));
    ASSERT_EQ(v.exit_code, 0) << v.stderr_text;
    // Fatal at the top is published as VMError (kind 2).
    EXPECT_EQ(*v.report.find("kind"), Value("VmError"));
    if (c.code.back() == ' ') {
      EXPECT_EQ(public_code(v).rfind(c.code, 0), 0u) << public_code(v);
      EXPECT_EQ(public_code(v).size(), c.code.size() + 6) << public_code(v);
    } else {
      EXPECT_EQ(public_code(v), c.code);
    }
    EXPECT_TRUE(v.report.find("storage_changes")->as_array().empty());
  }
  // A faulty entry no longer ends the run: the block rejects the derived error (a
  // disagreement at that call_no) and the contract sees a failed block. (The last entry, so
  // that none is left over: a surplus would make the result `extra`.)
  auto faulty = good;
  faulty[2] = entry_of(9, calldata::encode(Value(4)));
  auto v = run(nd(call("run", {Value(3)}), faulty));
  ASSERT_EQ(v.exit_code, 0) << v.stderr_text;
  EXPECT_EQ(*v.report.find("kind"), Value("UserError"));
  EXPECT_EQ(*v.report.find("data"), Value("block failed"));
  EXPECT_EQ(*v.report.find("nondet_disagreement"), Value(2));
}

// Fails if the cap is removed or off by one (4096 must still pass).
TEST_F(ConsensusTest, MoreThan4096NondetBlocksIsTheLimitCode) {
  auto at_limit = run(nd(call("many", {Value(4096)})));
  ASSERT_EQ(at_limit.exit_code, 0) << at_limit.stderr_text;
  ASSERT_EQ(*at_limit.report.find("kind"), Value("Return")) << calldata::to_text(*at_limit.report.find("data"));
  EXPECT_EQ(entries(at_limit).size(), 4096u);
  auto over = run(nd(call("many", {Value(4097)})));
  ASSERT_EQ(over.exit_code, 0) << over.stderr_text;
  EXPECT_EQ(*over.report.find("kind"), Value("VmError"));
  EXPECT_EQ(public_code(over), "out_of nondet_blocks");
}

TEST_F(ConsensusTest, ALoopingBlockIsStoppedByItsFuel) {
  auto r = run(nd(call("loop")), "wscn", {"--nondet-fuel", "2000000"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  // The contract returns the leader's buffer: [VMError][bare code].
  EXPECT_EQ(*r.report.find("data"), Value(entry_of(2, text_bytes("wasm_trap out_of_fuel"))));
  EXPECT_EQ(entries(r), std::vector<calldata::Bytes>{entry_of(2, text_bytes("wasm_trap out_of_fuel"))});
}

// Fails if wasm_store_hashes stopped hashing the failing VM's memory (the two error values are
// equal; only one byte of memory tells the runs apart).
TEST_F(ConsensusTest, ErrorFingerprintsRepeatAndFollowOneByteOfMemory) {
  auto first = run(nd(call("boom", {Value(5)})));
  ASSERT_EQ(*first.report.find("kind"), Value("UserError"));
  const Value hashes = *first.report.find("wasm_store_hashes");
  ASSERT_EQ(hashes.find("contract")->find("memories")->as_array().size(), 1u);
  // 99 repeats; 19 under ASan, which checks each run's memory use (the same in every repeat).
  const int repeats = kAddressSanitizer ? 19 : 99;
  for (int i = 0; i < repeats; ++i) {
    auto again = run(nd(call("boom", {Value(5)})));
    ASSERT_EQ(*again.report.find("wasm_store_hashes"), hashes) << "repeat " << i;
    ASSERT_EQ(*again.report.find("execution_hash"), *first.report.find("execution_hash"));
  }
  // Same error value, one byte of memory different: the fingerprint and the hash differ.
  auto other = run(nd(call("boom", {Value(6)})));
  ASSERT_EQ(*other.report.find("kind"), Value("UserError"));
  EXPECT_EQ(*other.report.find("data"), *first.report.find("data"));
  EXPECT_NE(*other.report.find("wasm_store_hashes"), hashes);
  EXPECT_NE(*other.report.find("execution_hash"), *first.report.find("execution_hash"));
}

// Fails if anything reached the host's state before consume_result.
TEST_F(ConsensusTest, SigkillInsideANondetBlockLeavesTheHostStateUnchanged) {
  auto before = host_.with_state([](test_host::State& s) { return std::make_pair(s.storage, s.results.size()); });
  auto bytes = calldata::encode(host::execution_data_to_value(nd(call("loop"))));
  {
    std::ofstream f(dir_ + "/data.bin", std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  int log[2];
  ASSERT_EQ(::pipe(log), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(log[0]);
    std::string fd = std::to_string(log[1]);
    std::string data_path = dir_ + "/data.bin";
    ::execl(genvm_.c_str(), genvm_.c_str(), "run", "--execution-data", data_path.c_str(), "--host", uri_.c_str(),
            "--permissions", "wscn", "--debug-mode", "safe-unbounded", "--log-fd", fd.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(log[1]);
  // Wait (without a clock) until the block's own trace line says it is running.
  std::string seen;
  char buf[256];
  while (seen.find("loop block started") == std::string::npos) {
    ssize_t n = ::read(log[0], buf, sizeof(buf));
    if (n <= 0) break;
    seen.append(buf, static_cast<std::size_t>(n));
  }
  ASSERT_NE(seen.find("loop block started"), std::string::npos) << seen;
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(log[0]);
  EXPECT_TRUE(WIFSIGNALED(status));
  host_.drain();
  auto after = host_.with_state([](test_host::State& s) { return std::make_pair(s.storage, s.results.size()); });
  EXPECT_EQ(after.first, before.first);
  EXPECT_EQ(after.second, before.second);  // nothing delivered
}

TEST_F(ConsensusTest, RunNondetNeedsTheSpawnNondetPermission) {
  auto r = run(nd(call("run", {Value(1)})), "wsc");
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("data"), Value("RunNondet refused"));
}

TEST_F(ConsensusTest, SandboxesNestAndFoldTheirSmallHashes) {
  auto flat = run(nd(call("nest", {Value(0)})));
  ASSERT_EQ(*flat.report.find("kind"), Value("Return")) << calldata::to_text(*flat.report.find("data"));
  auto r = run(nd(call("nest", {Value(10)})));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  EXPECT_EQ(*r.report.find("data"), Value(10));
  // Sandboxes are deterministic: a rerun folds the same small hashes into the same hash.
  auto again = run(nd(call("nest", {Value(10)})));
  EXPECT_EQ(*again.report.find("execution_hash"), *r.report.find("execution_hash"));
}

// Every sub-VM costs the spec's vm_spawn_cost (128 MiB) while it lives, so at the 4 GiB budget
// nesting ends in out_of memory at 31 VMs, long before vm_recursion (512) could: as in the public
// executor, whose supervisor::spawn charges it. Fails if the spawn cost is not charged (40 would
// return 40) or charged for VMs that have ended (the 10-deep rerun would fail).
TEST_F(ConsensusTest, NestedSandboxesArePaidTheSpawnCostAndEndInOutOfMemory) {
  auto r = run(nd(call("nest", {Value(40)})));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  EXPECT_EQ(*r.report.find("data"), Value("out_of memory"));
  auto ok = run(nd(call("nest", {Value(29)})));
  ASSERT_EQ(*ok.report.find("kind"), Value("Return")) << calldata::to_text(*ok.report.find("data"));
  EXPECT_EQ(*ok.report.find("data"), Value(29));
}

// A one-connection LLM module: reads the hello and one request and answers Ok {consumed_gen 3,
// "hello"}, or (answers = false) closes the connection under the request, as a killed module does.
class FakeModule {
 public:
  explicit FakeModule(const std::string& path, bool answers = true) : path_(path), answers_(answers) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
    ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 && ::listen(fd_, 1) == 0;
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeModule() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    ::unlink(path_.c_str());
  }
  bool ok() const { return ok_; }
  calldata::Bytes hello;    // the calldata of the frames received (read after the run)
  calldata::Bytes request;

 private:
  static bool read_all(int fd, std::uint8_t* p, std::size_t n) {
    while (n) {
      ssize_t r = ::read(fd, p, n);
      if (r <= 0) return false;
      p += r;
      n -= static_cast<std::size_t>(r);
    }
    return true;
  }
  void serve() {
    int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    // The module wire (common/module/protocol.h): the hello, then one request, one answer.
    auto hello_frame = module::read_frame(c);
    auto request_frame = hello_frame.ok() && *hello_frame ? module::read_frame(c) : hello_frame;
    if (request_frame.ok() && *request_frame) {
      hello = **hello_frame;
      request = **request_frame;
      if (!answers_) {
        ::close(c);
        return;
      }
      auto answer = module::answer_value(module::Answer::ok(Value::map({{"consumed_gen", 3}, {"data", "hello"}})));
      [[maybe_unused]] auto sent = module::write_frame(c, calldata::encode(answer));
    }
    // Wait for the executor to close its end.
    std::uint8_t b;
    while (::read(c, &b, 1) > 0) {
    }
    ::close(c);
  }
  std::string path_;
  bool answers_;
  int fd_ = -1;
  bool ok_ = false;
  std::thread thread_;
};

TEST_F(ConsensusTest, PromptsGoToTheLlmModuleInLengthPrefixedFrames) {
  FakeModule module(dir_ + "/llm.sock");
  ASSERT_TRUE(module.ok());
  auto r = run(nd(call("prompt")), "wscn", {"--module-llm", "unix://" + dir_ + "/llm.sock"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  // The contract reads the module result encoding (03-schemas.rst); the run counts the spend.
  EXPECT_EQ(*r.report.find("data"), Value(entry_of(0, calldata::encode(Value::map({{"ok", "hello"}})))));
  EXPECT_EQ(*r.report.find("llm_consumption"), Value(3));
  auto hello = calldata::decode(module.hello);
  ASSERT_TRUE(hello.ok());
  EXPECT_EQ(*hello->find("role"), Value("Leader"));
  auto req = calldata::decode(module.request);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(*req->find("Prompt")->find("payload")->find("prompt"), Value("hi"));
}

// A module that is gone is the contract's error, not the end of the run (03-schemas.rst "Module
// Error Format"): it dies under the request, or was never there to connect to. Fails if a broken
// module connection ends the run (the public executor's internal error).
TEST_F(ConsensusTest, AModuleThatDiesMidCallIsTheContractsModuleError) {
  const Value unavailable = Value::map(
      {{"error", Value::map({{"causes", Value::array({"MODULE_UNAVAILABLE"})}, {"ctx", Value::map({{"module", "llm"}})}})}});
  {
    FakeModule module(dir_ + "/llm.sock", /*answers=*/false);
    ASSERT_TRUE(module.ok());
    auto r = run(nd(call("prompt")), "wscn", {"--module-llm", "unix://" + dir_ + "/llm.sock"});
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
    ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
    EXPECT_EQ(*r.report.find("data"), Value(entry_of(0, calldata::encode(unavailable))));
    EXPECT_EQ(*r.report.find("llm_consumption"), Value(0));
    EXPECT_NE(r.stderr_text.find("module_unavailable"), std::string::npos) << r.stderr_text;
  }
  auto r = run(nd(call("prompt")), "wscn", {"--module-llm", "unix://" + dir_ + "/nobody.sock"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  EXPECT_EQ(*r.report.find("data"), Value(entry_of(0, calldata::encode(unavailable))));
}

TEST_F(ConsensusTest, WithoutAModulePromptsAreRefused) {
  auto r = run(nd(call("prompt")));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  // The block's leader got error_forbidden (6) and ended with a UserError saying so.
  EXPECT_EQ(*r.report.find("data"), Value(entry_of(1, calldata::encode(Value("module refused 6")))));
}

}  // namespace
}  // namespace genvm
