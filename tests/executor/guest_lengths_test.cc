// Guest-supplied lengths are checked against guest memory before the executor makes a buffer
// of that size (tests/executor/contracts/guest_lengths.wat): fd_write, storage_write and
// gl_call asked for 0xffffffff bytes answer FAULT, and fd_write of 192 iovecs over one 16 MiB
// region writes at most what the guest owns, streamed. Measured as the genvm process's peak
// RSS against the bytes the guest asked for (4 GiB, then 3 GiB).
#include "executor_fixture.h"
#include "common/sanitizers.h"

namespace genvm {
namespace {

using calldata::Value;
using exec_test::addr;
using exec_test::read_file;

constexpr std::uint64_t kAsked = 0xffffffffull;     // the largest single length
constexpr std::uint64_t kGuestMemory = 257 * 65536;  // the contract's memory
// Peak RSS may be at most this fraction of the bytes asked for: the guest's own 16 MiB, the
// engine and the host buffers of one run fit, a 4 GiB (or 3 GiB) copy does not.
constexpr std::uint64_t kRatio = 32;
// ASan's shadow memory and quarantine add RSS of their own (the executor under test is built with
// it too), so the bounds are checked outside ASan only; outcomes and output sizes under both.
#if GENVM_ADDRESS_SANITIZER
constexpr bool kRssIsMeasured = false;
#else
constexpr bool kRssIsMeasured = true;
#endif

class GuestLengthsTest : public exec_test::ExecutorTest {
 protected:
  exec_test::RunResult run_contract(const calldata::Address& at, std::vector<std::string> extra) {
    auto code = read_file(contracts_ + "guest_lengths.wasm");
    EXPECT_FALSE(code.empty()) << "missing guest_lengths.wasm (target genvm_executor_test_contracts)";
    return run(data(at, addr(0xaa), Value(Value::Map{}), true, code), "wscn", std::move(extra));
  }
};

TEST_F(GuestLengthsTest, HugeLengthsFaultWithoutAllocatingAndOutputIsDiscarded) {
  auto r = run_contract(addr(1), {});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  // exit_code 0: every answer was as expected (else 100 * step + the answer).
  EXPECT_EQ(public_code(r), "exit_code 0") << r.stderr_text.substr(0, 2000);
  RecordProperty("peak_rss_bytes", std::to_string(r.peak_rss_bytes));
  if (kRssIsMeasured) {
    EXPECT_LT(r.peak_rss_bytes, kAsked / kRatio) << "peak RSS " << r.peak_rss_bytes;
  }
  EXPECT_LT(r.stderr_text.size(), std::size_t{1} << 20) << "debug mode disabled: the output is discarded";
}

TEST_F(GuestLengthsTest, KeptOutputIsStreamedAndCappedAtGuestMemory) {
  auto r = run_contract(addr(2), {"--debug-mode", "safe"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text.substr(0, 2000);
  EXPECT_EQ(public_code(r), "exit_code 0");
  // 192 x 16 MiB asked: 3 GiB; written: the guest's memory once, in pieces.
  RecordProperty("peak_rss_bytes", std::to_string(r.peak_rss_bytes));
  if (kRssIsMeasured) {
    EXPECT_LT(r.peak_rss_bytes, 192ull * 16 * 1024 * 1024 / kRatio) << "peak RSS " << r.peak_rss_bytes;
  }
  EXPECT_GE(r.stderr_text.size(), kGuestMemory);
  EXPECT_LT(r.stderr_text.size(), kGuestMemory + (std::size_t{1} << 20));
}

}  // namespace
}  // namespace genvm
