// Determinism: one storage-writing run repeated 100 times against the same host state gives
// byte-identical results (and so identical execution hashes, small hashes, storage changes).
// Fails if anything that differs between processes leaks into a result: host addresses, time,
// unordered iteration, uninitialized bytes, the random seed.
#include "executor_fixture.h"
#include "common/sanitizers.h"

namespace genvm {
namespace {

using calldata::Value;
using exec_test::addr;
using exec_test::hex;

class DeterminismTest : public exec_test::ExecutorTest {};

TEST_F(DeterminismTest, AStorageWritingRunRepeatedGivesIdenticalBytes) {
  // Under ASan, which checks each run's memory use (the same in every repeat), 20 repeats; the
  // main build's 100 are what test determinism.
  const int repeats = [] {
    const char* env = std::getenv("GENVM_DETERMINISM_RUNS");
    return env ? std::atoi(env) : (kAddressSanitizer ? 20 : 100);
  }();
  deploy("token.wasm", addr(2), Value::map({{"args", Value::array({100})}}));
  auto d = data(addr(2), addr(0xaa), call("transfer", {Value(addr(0xbb)), Value(30)}), false, std::nullopt);
  // apply=false: the host state stays as the deployment left it, so every run is the same run.
  auto first = run(d, "wscn", {}, false);
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  ASSERT_EQ(*first.report.find("kind"), Value("Return")) << calldata::to_text(*first.report.find("data"));
  // Two balances change: the run does write storage.
  ASSERT_FALSE(first.report.find("storage_changes")->as_array().empty());
  for (int i = 1; i < repeats; ++i) {
    auto again = run(d, "wscn", {}, false);
    ASSERT_EQ(again.exit_code, 0) << "run " << i << ": " << again.stderr_text;
    ASSERT_EQ(hex(again.result_bytes), hex(first.result_bytes)) << "run " << i << " differs";
  }
}

}  // namespace
}  // namespace genvm
