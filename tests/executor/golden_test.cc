// Golden results: every example contract runs a fixed sequence of calls through the test host,
// and each delivered result is pinned byte for byte (the whole consume_result payload) together
// with the hashes read out of it, in tests/executor/golden/<contract>.golden.
//
// Regenerate after an intended change (then review the diff):
//   GENVM_UPDATE_GOLDEN=1 build-executor/tests/executor/executor_integration_test --gtest_filter='GoldenTest.*'
//
// Fails when any byte of any result moves: the encoding, a hash input, the order of storage
// changes or emissions, the example contracts' code (deployments store it), the startup message.
#include "executor_fixture.h"

#include <sstream>

#include "executor/sha3.h"

namespace genvm {
namespace {

using calldata::Value;
using exec_test::addr;
using exec_test::hex;
using exec_test::RunResult;

class GoldenTest : public exec_test::ExecutorTest {
 protected:
  static constexpr std::size_t kMaxHexResult = 2048;
  // One pinned step: the hashes on their own lines (a readable diff says which one moved), then
  // the whole result.
  void pin(const std::string& name, const RunResult& r) {
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.stderr_text;
    ASSERT_TRUE(r.report.is_map()) << name << ": nothing delivered";
    std::ostringstream o;
    o << "## " << name << "\n";
    o << "kind " << calldata::to_text(*r.report.find("kind")) << "\n";
    o << "data " << calldata::to_text(*r.report.find("data")) << "\n";
    o << "execution_hash " << hex(r.report.find("execution_hash")->as_bytes()) << "\n";
    o << "small_hash " << hex(r.report.find("small_hash")->as_bytes()) << "\n";
    o << "wasm_store_hashes " << calldata::to_text(*r.report.find("wasm_store_hashes")) << "\n";
    o << "storage_changes " << r.report.find("storage_changes")->as_array().size() << "\n";
    o << "emissions " << r.report.find("emissions")->as_array().size() << "\n";
    // Deployments carry the code as storage changes (tens of KB): those results are pinned by
    // their SHA3-256 and length, which moves with any byte just the same.
    if (r.result_bytes.size() <= kMaxHexResult) {
      o << "result " << hex(r.result_bytes) << "\n";
    } else {
      o << "result_sha3_256 " << hex(executor::sha3_256(r.result_bytes)) << " (" << r.result_bytes.size() << " bytes)\n";
    }
    text_ += o.str();
  }

  void compare(const std::string& contract) {
    std::string path = std::string(GENVM_SOURCE_DIR) + "/tests/executor/golden/" + contract + ".golden";
    std::string header =
        "# " + contract + ": results pinned by tests/executor/golden_test.cc. Regenerate with\n"
        "# GENVM_UPDATE_GOLDEN=1 build-executor/tests/executor/executor_integration_test --gtest_filter='GoldenTest.*'\n";
    std::string want = header + text_;
    const char* update = std::getenv("GENVM_UPDATE_GOLDEN");
    if (update && std::string(update) == "1") {
      std::ofstream f(path, std::ios::binary);
      f << want;
      ASSERT_TRUE(f.good()) << "cannot write " << path;
      std::cout << "updated " << path << "\n";
      return;
    }
    auto have = exec_test::read_file(path);
    ASSERT_FALSE(have.empty()) << "no golden file " << path << " (GENVM_UPDATE_GOLDEN=1 writes it)";
    EXPECT_EQ(std::string(have.begin(), have.end()), want)
        << "results moved; if intended, regenerate with GENVM_UPDATE_GOLDEN=1 and review the diff";
  }

  std::string text_;
};

TEST_F(GoldenTest, Counter) {
  pin("deploy", deploy("counter.wasm", addr(1)));
  pin("increment", run(data(addr(1), addr(0xaa), call("increment"), false, std::nullopt)));
  pin("add 41", run(data(addr(1), addr(0xaa), call("add", {Value(41)}), false, std::nullopt)));
  pin("get", run(data(addr(1), addr(0xaa), call("get"), false, std::nullopt)));
  compare("counter");
}

TEST_F(GoldenTest, Token) {
  pin("deploy 100", deploy("token.wasm", addr(2), Value::map({{"args", Value::array({100})}})));
  pin("transfer 30", run(data(addr(2), addr(0xaa), call("transfer", {Value(addr(0xbb)), Value(30)}), false, std::nullopt)));
  pin("balance_of bb", run(data(addr(2), addr(0xaa), call("balance_of", {Value(addr(0xbb))}), false, std::nullopt)));
  pin("transfer 1000 (user error)",
      run(data(addr(2), addr(0xbb), call("transfer", {Value(addr(0xaa)), Value(1000)}), false, std::nullopt)));
  compare("token");
}

TEST_F(GoldenTest, Events) {
  pin("deploy", deploy("events.wasm", addr(3)));
  pin("notify", run(data(addr(3), addr(0xcc), call("notify", {Value("hi")}), false, std::nullopt)));
  host_.with_state([](test_host::State& s) { s.balances[addr(3).bytes] = test_host::u256_le(100); return 0; });
  auto d = data(addr(3), addr(0xcc), call("pay", {Value(60)}), false, std::nullopt);
  d.message.value = BigInt(5);
  pin("pay 60", run(d));
  compare("events");
}

TEST_F(GoldenTest, Caller) {
  pin("deploy counter", deploy("counter.wasm", addr(4)));
  pin("counter add 7", run(data(addr(4), addr(0xaa), call("add", {Value(7)}), false, std::nullopt)));
  pin("deploy caller", deploy("caller.wasm", addr(5)));
  pin("call_get", run(data(addr(5), addr(0xaa), call("call_get", {Value(addr(4))}), false, std::nullopt)));
  compare("caller");
}

TEST_F(GoldenTest, Nondet) {
  // Only the deterministic parts: the clock block would give every leader run another value.
  pin("deploy", deploy("nondet.wasm", addr(9)));
  pin("many 3", run(data(addr(9), addr(0xaa), call("many", {Value(3)}), false, std::nullopt)));
  pin("nest 3", run(data(addr(9), addr(0xaa), call("nest", {Value(3)}), false, std::nullopt)));
  pin("boom 5 (user error)", run(data(addr(9), addr(0xaa), call("boom", {Value(5)}), false, std::nullopt)));
  compare("nondet");
}

}  // namespace
}  // namespace genvm
