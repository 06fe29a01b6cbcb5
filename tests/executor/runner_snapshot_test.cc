// The runner start-up snapshot (docs/PROTOCOLS.md, "Runner start-up snapshot") through the real
// `genvm` and the Python runners: python.wasm exports genvm_preinit, which genvm runs before
// _start under its init host, and memoises in a sealed snapshot beside the module cache
// (--module-cache). The same runs cold (GENVM_RUNNER_SNAPSHOT=0: genvm_preinit live, nothing
// stored), storing (first run with a cache) and warm (from the snapshot) must give the same
// result bytes — data, storage changes, and for an error the memory fingerprint; a snapshot file
// that is corrupt is ignored and rebuilt as it was. Needs -DGENVM_BUILD_CPYTHON=ON (skips otherwise).
#include <cstdlib>
#include <filesystem>

#include <fstream>

#include "common/json.h"
#include "executor_fixture.h"
#include "runners/runners.h"
#include "runners/zip_writer_test_util.h"

namespace genvm::exec_test {
namespace {

class RunnerSnapshotTest : public ExecutorTest {
 protected:
  void SetUp() override {
    ExecutorTest::SetUp();
    if (IsSkipped()) return;
    std::string runners_dir = binary_dir() + "/runners/cpython/installed";
    auto latest = read_file(runners_dir + "/latest.json");
    if (latest.empty()) GTEST_SKIP() << "needs the Python runners (-DGENVM_BUILD_CPYTHON=ON, target cpython_runners)";
    auto json = parse_json(std::string(latest.begin(), latest.end()));
    ASSERT_TRUE(json && json->is_object());
    const JsonValue* hash = json->find("py-genlayer");
    ASSERT_TRUE(hash && hash->is_string());
    py_genlayer_ = "py-genlayer:" + hash->text();
    ::setenv("GENVM_RUNNERS_DIR", runners_dir.c_str(), 1);
    cache_ = dir_ + "/cache";
  }
  void TearDown() override {
    ::unsetenv("GENVM_RUNNERS_DIR");
    ::unsetenv("GENVM_RUNNER_SNAPSHOT");
    ExecutorTest::TearDown();
  }
  calldata::Bytes contract(const std::string& body) const {
    std::string code = "# v0.1.0\n# { \"Depends\": \"" + py_genlayer_ + "\" }\n" + body;
    return calldata::Bytes(code.begin(), code.end());
  }
  // The snapshot files in the cache, by name.
  std::vector<std::filesystem::path> snapshots() const {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(cache_, ec))
      if (e.path().extension() == ".gvms") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }
  // One run of `d` (storage not applied), with the module cache and snapshots on or off.
  calldata::Bytes result_of(const host::ExecutionData& d, bool snapshots_on, std::vector<std::string> extra = {}) {
    if (snapshots_on) {
      ::unsetenv("GENVM_RUNNER_SNAPSHOT");
    } else {
      ::setenv("GENVM_RUNNER_SNAPSHOT", "0", 1);
    }
    extra.insert(extra.begin(), {"--module-cache", cache_});
    RunResult r = run(d, "wscn", extra, false);
    EXPECT_TRUE(r.report.is_map()) << r.stderr_text;
    EXPECT_FALSE(r.result_bytes.empty()) << r.stderr_text;
    return r.result_bytes;
  }
  std::string py_genlayer_, cache_;
};

const char* kStorage = R"(from genlayer import *


class Storage(gl.Contract):
    text: str

    def __init__(self, text: str):
        self.text = text + str(1.5 * 3)

    @gl.public.view
    def fail(self) -> str:
        raise ValueError("no " + self.text)
)";

TEST_F(RunnerSnapshotTest, ColdStoringAndWarmRunsGiveTheSameResults) {
  auto deploy = data(addr(0x60), addr(0xaa), Value::map({{"args", Value::array({"hello"})}}), true, contract(kStorage));
  calldata::Bytes cold = result_of(deploy, false);
  EXPECT_TRUE(snapshots().empty()) << "GENVM_RUNNER_SNAPSHOT=0 stored a snapshot";
  calldata::Bytes storing = result_of(deploy, true);
  ASSERT_EQ(snapshots().size(), 1u) << "the first run with a module cache stores the deterministic runner's snapshot";
  calldata::Bytes warm = result_of(deploy, true);
  EXPECT_EQ(storing, cold);
  EXPECT_EQ(warm, cold);
  auto v = decode_consumed(warm);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v->find("kind"), Value("Return")) << calldata::to_text(*v->find("data"));
  EXPECT_FALSE(v->find("storage_changes")->as_array().empty());

  // A method that raises: the error's result carries the memory fingerprint of the whole run,
  // so a restored start-up state that differed anywhere would show here.
  RunResult applied = run(deploy, "wscn", {"--module-cache", cache_});
  ASSERT_EQ(*applied.report.find("kind"), Value("Return"));
  auto failing = data(addr(0x60), addr(0xaa), call("fail"), false, std::nullopt);
  calldata::Bytes cold_error = result_of(failing, false);
  calldata::Bytes warm_error = result_of(failing, true);
  EXPECT_EQ(warm_error, cold_error);
  auto e = decode_consumed(warm_error);
  ASSERT_TRUE(e.ok());
  EXPECT_NE(*e->find("kind"), Value("Return"));
}

TEST_F(RunnerSnapshotTest, ACorruptSnapshotIsIgnoredAndRebuilt) {
  auto deploy = data(addr(0x61), addr(0xaa), Value::map({{"args", Value::array({"x"})}}), true, contract(kStorage));
  calldata::Bytes cold = result_of(deploy, false);
  calldata::Bytes storing = result_of(deploy, true);
  auto files = snapshots();
  ASSERT_EQ(files.size(), 1u);
  calldata::Bytes original = read_file(files[0].string());
  ASSERT_GT(original.size(), 1000u);
  for (std::size_t at : {std::size_t(20), original.size() / 2, original.size() - 1}) {
    calldata::Bytes broken = original;
    broken[at] ^= 0x40;
    write_file(files[0].string(), broken);
    EXPECT_EQ(result_of(deploy, true), cold) << "flipped byte " << at;
    EXPECT_EQ(read_file(files[0].string()), original) << "not rebuilt after flipping byte " << at;
  }
  // Truncated.
  write_file(files[0].string(), calldata::Bytes(original.begin(), original.begin() + original.size() / 3));
  EXPECT_EQ(result_of(deploy, true), cold);
  EXPECT_EQ(read_file(files[0].string()), original);
  EXPECT_EQ(storing, cold);
}

// Non-deterministic blocks run the runner again in metered child VMs (python.wasm, native
// floats): their start-up has its own snapshot (another module, metered), restored with the
// fuel genvm_preinit used charged; leader results must not change with it.
TEST_F(RunnerSnapshotTest, NondetBlocksFromTheSnapshotAgree) {
  auto code = contract(R"(from genlayer import *


class Blocks(gl.Contract):
    def __init__(self):
        pass

    @gl.public.write
    def twice(self, x: int) -> int:
        return gl.eq_principle.strict_eq(lambda: x * 2 + int(0.5 * 4))
)");
  auto deploy = data(addr(0x62), addr(0xaa), Value(Value::Map{}), true, code);
  RunResult deployed = run(deploy, "wscn", {"--module-cache", cache_});
  ASSERT_EQ(*deployed.report.find("kind"), Value("Return")) << deployed.stderr_text;
  auto leader = data(addr(0x62), addr(0xaa), call("twice", {Value(20)}), false, std::nullopt);
  ::setenv("GENVM_RUNNER_SNAPSHOT", "0", 1);
  RunResult first = run(leader, "wscn", {"--module-cache", cache_}, false);
  ASSERT_EQ(*first.report.find("kind"), Value("Return")) << first.stderr_text;
  calldata::Bytes cold = result_of(leader, false);
  calldata::Bytes storing = result_of(leader, true);
  EXPECT_GE(snapshots().size(), 2u) << "the deterministic and the non-deterministic runner each have one";
  calldata::Bytes warm = result_of(leader, true);
  EXPECT_EQ(storing, cold);
  EXPECT_EQ(warm, cold);
  auto v = decode_consumed(warm);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v->find("data"), Value(42));
  // Fuel for the block below what its genvm_preinit used: the snapshot is not taken, the block
  // runs out of fuel where a live start-up does, and the leader's result is the same.
  calldata::Bytes cold_starved = result_of(leader, false, {"--nondet-fuel", "1000000"});
  calldata::Bytes warm_starved = result_of(leader, true, {"--nondet-fuel", "1000000"});
  EXPECT_EQ(warm_starved, cold_starved);
  EXPECT_NE(warm_starved, cold);
}


// The init host itself, with a runner of our own in C (contracts/preinit_runner.c) whose
// genvm_preinit records what it saw: the runner's own files but not the contract's, no message
// on stdin, the clock at 0; and after it the contract's file is there and random_get goes on
// from where genvm_preinit left it. The same from a snapshot (a packaged runner of any language
// gets one), and a genlayer_sdk call from genvm_preinit ends the run.
class PreinitHostTest : public ExecutorTest {
 protected:
  void SetUp() override {
    ExecutorTest::SetUp();
    if (IsSkipped()) return;
    auto wasm = read_file(contracts_ + "preinit_runner.wasm");
    if (wasm.empty()) GTEST_SKIP() << "needs preinit_runner.wasm (the wasm32 C toolchain)";
    wasm_.assign(wasm.begin(), wasm.end());
    runners_dir_ = dir_ + "/runners";
    ::setenv("GENVM_RUNNERS_DIR", runners_dir_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("GENVM_RUNNERS_DIR");
    ExecutorTest::TearDown();
  }
  // The runner archive, installed as preinit:<gvm32 of its SHA-256>; the text contract that
  // Depends on it.
  calldata::Bytes contract(const std::string& extra_actions = "") {
    std::string json = R"({"Seq": [)" + extra_actions + R"(
      {"MapFile": {"file": "data/", "to": "/echo/data/"}},
      {"With": {"runner": "contract", "action": {"MapFile": {"file": "file", "to": "/echo/contract.py"}}}},
      {"StartWasm": "preinit.wasm"}]})";
    std::string archive = runners::testing::make_zip({runners::testing::ZipEntry("runner.json", json),
                                                     runners::testing::ZipEntry("preinit.wasm", wasm_),
                                                     runners::testing::ZipEntry("data/a.txt", "runner data")});
    std::string hash = runners::gvm32_encode(runners::sha256(archive));
    auto folder = std::filesystem::path(runners_dir_) / "preinit" / hash.substr(0, 2);
    std::filesystem::create_directories(folder);
    std::ofstream(folder / (hash.substr(2) + ".zip"), std::ios::binary) << archive;
    std::string code = "# v0.1.0\n# { \"Depends\": \"preinit:" + hash + "\" }\nthe contract's own text\n";
    return calldata::Bytes(code.begin(), code.end());
  }
  std::string wasm_, runners_dir_;
};

TEST_F(PreinitHostTest, PreinitSeesTheRunnerButNotTheContractOrTheMessage) {
  auto d = data(addr(0x63), addr(0xaa), Value(Value::Map{}), true, contract());
  std::vector<calldata::Bytes> results;
  for (const char* snapshot : {"0", "1", "1"}) {  // cold, storing, warm
    ::setenv("GENVM_RUNNER_SNAPSHOT", snapshot, 1);
    RunResult r = run(d, "wscn", {"--module-cache", dir_ + "/cache"}, false);
    ASSERT_TRUE(r.report.is_map()) << r.stderr_text;
    ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data")) << r.stderr_text;
    const Value& v = *r.report.find("data");
    EXPECT_EQ(*v.find("preinit_runs"), Value(1));
    EXPECT_NE(*v.find("contract_at_preinit"), Value(0)) << "genvm_preinit could open the contract's file";
    EXPECT_EQ(*v.find("contract_now"), Value(0));
    EXPECT_EQ(*v.find("data_at_preinit"), Value(0)) << "genvm_preinit could not open the runner's own file";
    EXPECT_EQ(*v.find("stdin_at_preinit"), Value(0)) << "genvm_preinit read the message";
    EXPECT_EQ(*v.find("clock_at_preinit"), Value(0));
    EXPECT_EQ(*v.find("random_differs"), Value(1));
    results.push_back(r.result_bytes);
  }
  EXPECT_EQ(results[1], results[0]);
  EXPECT_EQ(results[2], results[0]);
  ::unsetenv("GENVM_RUNNER_SNAPSHOT");
}

// The public manager passes no --module-cache: the executor's cache folder is its config's
// cache_dir (`${exeDir}` expanded), as the public executor's; the snapshot is stored there.
TEST_F(PreinitHostTest, TheConfigsCacheDirHoldsTheSnapshot) {
  calldata::Bytes fees = read_file(std::string(GENVM_SOURCE_DIR) + "/src/executor/fees/default_fees.yaml");
  ASSERT_FALSE(fees.empty());
  const std::string config = dir_ + "/genvm.yaml";
  const std::string cache = dir_ + "/config-cache";
  {
    std::ofstream out(config, std::ios::binary);
    out << std::string(fees.begin(), fees.end()) << "\ncache_dir: " << cache << "\n";
  }
  auto d = data(addr(0x65), addr(0xaa), Value(Value::Map{}), true, contract());
  RunResult cold = run(d, "wscn", {"--config", config}, false);
  ASSERT_EQ(*cold.report.find("kind"), Value("Return")) << cold.stderr_text;
  std::size_t stored = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(cache, ec)) stored += e.path().extension() == ".gvms";
  EXPECT_EQ(stored, 1u) << "no snapshot in the config's cache_dir " << cache;
  RunResult warm = run(d, "wscn", {"--config", config}, false);
  EXPECT_EQ(warm.result_bytes, cold.result_bytes);
}

TEST_F(PreinitHostTest, AnSdkCallFromPreinitEndsTheRun) {
  auto d = data(addr(0x64), addr(0xaa), Value(Value::Map{}), true,
                contract(R"({"AddEnv": {"name": "PREINIT_CALLS_SDK", "val": "1"}},)"));
  RunResult r = run(d, "wscn", {}, false);
  ASSERT_TRUE(r.report.is_map()) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
  EXPECT_EQ(public_code(r), "invalid_contract runner malformed") << calldata::to_text(*r.report.find("data"));
}

}  // namespace
}  // namespace genvm::exec_test
