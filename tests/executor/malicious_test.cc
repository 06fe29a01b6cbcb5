// Malicious contracts (tests/executor/contracts/): each attack ends in the public result the
// spec gives it, through the real genvm binary and the test host. The mapping is written down in
// docs/PROTOCOLS.md (## Executor choices, "Malicious contracts").
#include "executor_fixture.h"

namespace genvm {
namespace {

using calldata::Value;
using exec_test::addr;
using exec_test::read_file;
using exec_test::RunResult;

class MaliciousTest : public exec_test::ExecutorTest {
 protected:
  calldata::Bytes contract(const std::string& name) {
    auto code = read_file(contracts_ + name + ".wasm");
    EXPECT_FALSE(code.empty()) << "missing " << contracts_ << name << ".wasm (target genvm_executor_test_contracts)";
    return code;
  }
  // A deployment runs _start at once: enough for the .wat attacks, which ignore their message.
  RunResult deploy_run(const std::string& name, const calldata::Address& at) {
    return run(data(at, addr(0xaa), Value(Value::Map{}), true, contract(name)));
  }
  void deploy_malicious(const calldata::Address& at) { deploy_code(contract("malicious"), at); }
  static std::int64_t as_i64(const Value& v) { return v.is_int() ? v.as_int().to_int64().value_or(-1) : -1; }
};

// The engine's call-depth limit turns unbounded recursion into a trap, not a native overflow.
TEST_F(MaliciousTest, RecursionBombIsAStackOverflowTrap) {
  auto r = deploy_run("recursion_bomb", addr(1));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
  EXPECT_EQ(public_code(r), "wasm_trap stack_overflow");
  EXPECT_TRUE(r.report.find("storage_changes")->as_array().empty());
}

// The result's backtrace (spec 05-result.rst): [{func, module_name}], most recent first,
// function indices of the module. Fails if frames were dropped, reordered or left empty.
TEST_F(MaliciousTest, ANestedTrapReportsItsBacktraceInnermostFirst) {
  auto r = deploy_run("nested_trap", addr(9));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(public_code(r), "wasm_trap unreachable");
  auto frame = [](std::int64_t func) { return Value::map({{"func", func}, {"module_name", "contract"}}); };
  // $inner (0) <- $middle (1) <- $outer (2) <- $_start (3)
  EXPECT_EQ(*r.report.find("backtrace"), Value::array({frame(0), frame(1), frame(2), frame(3)}));
}

TEST_F(MaliciousTest, ARecursionBombsBacktraceKeepsTheInnermost20Frames) {
  auto r = deploy_run("recursion_bomb", addr(10));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  const auto& bt = r.report.find("backtrace")->as_array();
  ASSERT_EQ(bt.size(), 20u);
  for (const Value& f : bt) EXPECT_EQ(*f.find("func"), Value(0));  // all $recurse
}

// A UserError ends inside gl_call: its backtrace is the contract's stack at that call.
TEST_F(MaliciousTest, AUserErrorsBacktraceIsTheStackAtTheCall) {
  deploy_malicious(addr(11));
  auto r = run(data(addr(11), addr(0xaa), call("no such method"), false, std::nullopt));
  ASSERT_EQ(*r.report.find("kind"), Value("UserError"));
  const auto& bt = r.report.find("backtrace")->as_array();
  ASSERT_GE(bt.size(), 2u);  // at least gl_user_error's caller chain down to _start
  EXPECT_LE(bt.size(), 20u);
  for (const Value& f : bt) EXPECT_EQ(*f.find("module_name"), Value("contract"));
}

// Fails if the budget were 4 GiB (65536 pages would fit) instead of the spec's 4294967295.
TEST_F(MaliciousTest, MemoryBombOverTheBudgetAtInstantiationIsOutOfWasmMemory) {
  auto r = deploy_run("memory_bomb", addr(2));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
  EXPECT_EQ(public_code(r), "out_of memory wasm_memory");
}

TEST_F(MaliciousTest, TableBombOverTheBudgetAtInstantiationIsOutOfWasmTable) {
  auto r = deploy_run("table_bomb", addr(3));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
  EXPECT_EQ(public_code(r), "out_of memory wasm_table");
}

// memory.grow past the budget evaluates to -1 and the contract carries on (spec: recoverable).
// The VM itself costs vm_spawn_cost (134217728) of the 4294967295, so 63487 pages (4160684032
// octets) is the most that fits in the 4160749567 left.
TEST_F(MaliciousTest, RuntimeMemoryGrowPastTheBudgetIsRefusedNotFatal) {
  deploy_malicious(addr(4));
  auto r = run(data(addr(4), addr(0xaa), call("grow"), false, std::nullopt));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  EXPECT_EQ(*r.report.find("data"), Value(63487));
}

// Each first write of a 32-octet region costs 256 octets of RAM: with memory at the budget, the
// writes run out within a few hundred pages. Fails if storage writes were not charged (the loop
// would write the whole slot and end in the UserError "wrote the whole slot").
TEST_F(MaliciousTest, StorageBombRunsOutOfMemory) {
  deploy_malicious(addr(5));
  auto before = host_.with_state([](test_host::State& s) { return s.storage; });
  auto r = run(data(addr(5), addr(0xaa), call("storage_bomb"), false, std::nullopt));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
  EXPECT_EQ(public_code(r), "out_of memory");
  EXPECT_TRUE(r.report.find("storage_changes")->as_array().empty());
  EXPECT_TRUE(host_.with_state([](test_host::State& s) { return s.storage; }) == before);
}

// 10 MiB of calldata is read whole by the contract (no limit of ours cuts it).
TEST_F(MaliciousTest, TenMebibytesOfCalldataRunToTheirResult) {
  deploy_malicious(addr(6));
  calldata::Bytes big(10u << 20);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 131);
  auto r = run(data(addr(6), addr(0xaa), call("size", {Value(big)}), false, std::nullopt));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  EXPECT_EQ(*r.report.find("data"), Value(std::int64_t(10) << 20));
}

// Garbage gl_call requests come back to the contract as error codes (spec: error_inval for an
// invalid request; a buffer outside memory is error_fault), never as a VM failure.
TEST_F(MaliciousTest, GlCallWithGarbageAnswersErrorCodes) {
  deploy_malicious(addr(7));
  auto r = run(data(addr(7), addr(0xaa), call("garbage"), false, std::nullopt));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  EXPECT_EQ(*r.report.find("data"), Value::array({2, 3, 2, 2}));  // inval, fault, inval, inval
}

// The executor has no timeout: an endless contract ends only when its supervisor's deadline
// kills it, and a killed run delivers nothing. genvm-supervise stands in for the manager here.
TEST_F(MaliciousTest, InfiniteLoopIsKilledAtTheDeadlineAndDeliversNothing) {
  std::string supervise = exec_test::binary_dir() + "/tools/genvm-supervise/genvm-supervise";
  if (::access(supervise.c_str(), X_OK) != 0) GTEST_SKIP() << "needs " << supervise;
  exec_test::write_file(dir_ + "/loop.bin",
                        calldata::encode(host::execution_data_to_value(
                            data(addr(8), addr(0xaa), Value(Value::Map{}), true, contract("infinite_loop")))));
  auto before = host_.with_state([](test_host::State& s) { return std::make_pair(s.storage, s.results.size()); });
  std::string out = dir_ + "/supervise.json";
  pid_t pid = ::fork();
  if (pid == 0) {
    FILE* f = std::freopen(out.c_str(), "w", stdout);
    (void)f;
    std::string data_path = dir_ + "/loop.bin";
    ::execl(supervise.c_str(), supervise.c_str(), "--timeout", "500ms", "--grace", "100ms", "--no-containment",
            "--capture", "disabled", "--", genvm_.c_str(), "run", "--execution-data", data_path.c_str(), "--host",
            uri_.c_str(), "--permissions", "wscn", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 124) << "genvm-supervise's timeout exit";
  auto after = host_.with_state([](test_host::State& s) { return std::make_pair(s.storage, s.results.size()); });
  EXPECT_EQ(after.second, before.second) << "a killed run delivered a result";
  EXPECT_TRUE(after.first == before.first);
}

}  // namespace
}  // namespace genvm
