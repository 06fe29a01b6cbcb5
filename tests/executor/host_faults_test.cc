// Host faults are not consensus (issue 19): when the host cannot give a run what its budget
// allows (here: an address-space limit makes the memory's mmap fail), the run ends in an
// InternalError, never in a deterministic result other validators would vote on; a refusal by
// the budget itself stays the VMError the spec gives it.
#include <sys/stat.h>

#include <fstream>

#include "executor_fixture.h"
#include "common/sanitizers.h"

namespace genvm {
namespace {

using calldata::Value;
using exec_test::addr;
using exec_test::read_file;
using exec_test::RunResult;

class HostFaultsTest : public exec_test::ExecutorTest {
 protected:
  // From here on genvm runs under `ulimit -v kib` (RLIMIT_AS, set in the child before exec).
  void limit_address_space(unsigned long kib) {
    const std::string wrapper = dir_ + "/genvm-limited";
    std::ofstream(wrapper) << "#!/bin/sh\nulimit -v " << kib << " || exit 97\nexec '" << genvm_ << "' \"$@\"\n";
    ASSERT_EQ(::chmod(wrapper.c_str(), 0700), 0);
    genvm_ = wrapper;
  }
  RunResult deploy_under_limit(const calldata::Bytes& code, const calldata::Address& at) {
    return run(data(at, addr(0xaa), Value(Value::Map{}), true, code));
  }
};

// Today's budget is 4 GiB - 1 per run, so a memory reserves ~4 GiB of address space; under a
// 1 GiB address-space limit that mmap fails. Before the fix: VMError "out_of memory wasm_memory"
// (4/4 validators agreed and the node committed it).
TEST_F(HostFaultsTest, AFailedMemoryMapIsAnInternalErrorNotOutOfMemory) {
#if GENVM_ADDRESS_SANITIZER
  GTEST_SKIP() << "under ASan genvm reserves terabytes of shadow memory, so an address-space limit "
                  "stops ASan itself; the make test build runs this";
#endif
  auto counter = read_file(examples_ + "counter.wasm");
  ASSERT_FALSE(counter.empty());
  RunResult free_run = deploy_under_limit(counter, addr(1));
  ASSERT_EQ(*free_run.report.find("kind"), Value("Return")) << free_run.stderr_text;

  limit_address_space(1u << 20);
  RunResult r = deploy_under_limit(counter, addr(2));
  ASSERT_NE(r.exit_code, 97) << "ulimit -v refused";
  ASSERT_TRUE(r.report.is_map()) << r.stderr_text;
  EXPECT_EQ(*r.report.find("kind"), Value("InternalError")) << calldata::to_text(r.report);
  EXPECT_NE(calldata::to_text(*r.report.find("data")).find("cannot reserve address space"), std::string::npos)
      << calldata::to_text(r.report);

  // The budget's own refusal comes first and is unchanged under the same limit.
  auto bomb = read_file(contracts_ + "memory_bomb.wasm");
  ASSERT_FALSE(bomb.empty()) << "target genvm_executor_test_contracts";
  RunResult b = deploy_under_limit(bomb, addr(3));
  EXPECT_EQ(*b.report.find("kind"), Value("VmError")) << calldata::to_text(b.report);
  EXPECT_EQ(public_code(b), "out_of memory wasm_memory");
}

}  // namespace
}  // namespace genvm
