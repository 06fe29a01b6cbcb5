// The runner start-up snapshot (docs/PROTOCOLS.md, "Runner start-up snapshot") through the real
// `genvm` and the Python runners: python.wasm exports genvm_preinit, which genvm runs before
// _start under its init host, and memoises in a sealed snapshot beside the module cache
// (--module-cache). The same runs cold (GENVM_RUNNER_SNAPSHOT=0: genvm_preinit live, nothing
// stored), storing (first run with a cache) and warm (from the snapshot) must give the same
// result bytes — data, storage changes, and for an error the memory fingerprint; a snapshot file
// that is corrupt is ignored and rebuilt as it was. Needs -DGENVM_BUILD_CPYTHON=ON (skips otherwise).
#include <cstdlib>
#include <filesystem>

#include "common/json.h"
#include "executor_fixture.h"

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
  calldata::Bytes result_of(const host::ExecutionData& d, bool snapshots_on) {
    if (snapshots_on) {
      ::unsetenv("GENVM_RUNNER_SNAPSHOT");
    } else {
      ::setenv("GENVM_RUNNER_SNAPSHOT", "0", 1);
    }
    RunResult r = run(d, "wscn", {"--module-cache", cache_}, false);
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
}

}  // namespace
}  // namespace genvm::exec_test
