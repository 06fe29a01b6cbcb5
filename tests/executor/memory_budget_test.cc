// One RAM budget per run (issue 19 item 5; docs/PROTOCOLS.md, "Memory model of a run"), with the
// contract tests/executor/contracts/memory_budget.c: sandboxes share their caller's budget, and
// what storage reads, storage writes and a return value cost the executor in host memory is a
// small constant factor of what the run is charged. Peak RSS is the genvm process's (wait4);
// bench/memory_budget.sh measures the same at larger sizes.
#include <fcntl.h>

#include <cstdio>
#include <cstdlib>

#include "common/host/wire.h"
#include "executor_fixture.h"
#include "common/sanitizers.h"

namespace genvm {
namespace {

using calldata::Value;
using exec_test::addr;
using exec_test::read_file;
using exec_test::RunResult;

constexpr std::uint64_t kMiB = std::uint64_t(1) << 20;
// What the executor costs besides a run's bytes: the binary, the engine, the first pages of
// the contract, a 1 MiB storage chunk (measured at about 25 MiB; the bound leaves room).
constexpr std::uint64_t kBaseline = 64 * kMiB;
// Host memory per byte the run's budget held at its peak (docs/PROTOCOLS.md, "Memory model of a
// run": measured at most 1.1; a run before this fix reached 4.7 to 28 per byte it was charged).
constexpr double kHostPerCharged = 1.25;
// ASan's shadow memory and quarantine add to a process's RSS by rules of their own, so the RSS
// bounds are checked in the make test build; under ASan only the outcomes and charges are.
#if GENVM_ADDRESS_SANITIZER
constexpr bool kRssIsMeasured = false;
#else
constexpr bool kRssIsMeasured = true;
#endif

// The sizes the tests run at. GENVM_MEMORY_BENCH=1 (bench, docs/BENCHMARKS.md) takes the issue's
// sizes instead and touches the nested levels' memory, so their RSS is measured too. Under ASan,
// where RSS is not measured, an eighth of the sizes takes the same paths (charges, outcomes,
// the delivered result) in an eighth of the time: the 64 MiB storage write alone took two
// minutes there.
struct Sizes {
  std::uint64_t read, write, ret;
  bool touch_nested;
};
Sizes sizes() {
  const char* bench = std::getenv("GENVM_MEMORY_BENCH");
  if (bench && std::string(bench) == "1") return {1024 * kMiB, 256 * kMiB, 100 * kMiB, true};
  if (!kRssIsMeasured) return {32 * kMiB, 8 * kMiB, 8 * kMiB, false};
  return {256 * kMiB, 64 * kMiB, 64 * kMiB, false};
}

class MemoryBudgetTest : public exec_test::ExecutorTest {
 protected:
  void SetUp() override {
    ExecutorTest::SetUp();
    if (IsSkipped()) return;
    code_ = read_file(contracts_ + "memory_budget.wasm");
    ASSERT_FALSE(code_.empty()) << "missing memory_budget.wasm (target genvm_executor_test_contracts)";
    deploy_code(code_, addr(1));
  }
  // One call, its --log-fd lines read back for the run's own accounting (ram_peak).
  RunResult call_contract(const std::string& method, Value::Array args) {
    std::string path = dir_ + "/log.jsonl";
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);  // inherited by genvm
    EXPECT_GE(fd, 0);
    RunResult r = run(data(addr(1), addr(0xaa), call(method, std::move(args)), false, std::nullopt), "wscn",
                      {"--log-fd", std::to_string(fd)});
    ::close(fd);
    auto text = read_file(path);
    std::string log(text.begin(), text.end());
    auto at = log.find("\"ram_peak\":");
    ram_peak_ = at == std::string::npos ? 0 : std::stoull(log.substr(at + 11));
    RecordProperty("peak_rss_bytes", std::to_string(r.peak_rss_bytes));
    RecordProperty("ram_peak_bytes", std::to_string(ram_peak_));
    std::printf("memory_budget %s: peak RSS %llu, budget peak %llu\n", method.c_str(),
                static_cast<unsigned long long>(r.peak_rss_bytes), static_cast<unsigned long long>(ram_peak_));
    return r;
  }
  // Peak RSS is within the constant factor of what the budget held.
  void expect_host_cost_bounded(const RunResult& r) {
    ASSERT_GT(ram_peak_, 0u) << "the result log line carries ram_peak";
    if (!kRssIsMeasured) return;
    EXPECT_LT(double(r.peak_rss_bytes), kHostPerCharged * double(ram_peak_) + double(kBaseline))
        << "peak RSS " << r.peak_rss_bytes << ", budget peak " << ram_peak_;
  }
  static std::string kind(const RunResult& r) {
    const Value* k = r.report.is_map() ? r.report.find("kind") : nullptr;
    return k && k->is_string() ? k->as_string() : "<nothing delivered>";
  }
  static std::string data_text(const RunResult& r) {
    const Value* d = r.report.is_map() ? r.report.find("data") : nullptr;
    if (!d) return "<none>";
    std::string t = calldata::to_text(*d);
    return t.size() > 200 ? t.substr(0, 200) + "..." : t;
  }
  calldata::Bytes code_;
  std::uint64_t ram_peak_ = 0;
};

// Before: each sandbox had a budget of its own, so three nested levels of 1.5 GiB each all got
// their memory (4 levels answered, 5.2 GB RSS). Now the caller's use counts: the third level is
// refused, and the reservations of the levels stay within the one budget.
TEST_F(MemoryBudgetTest, NestedSandboxesShareTheCallersBudget) {
  const std::uint64_t per_level = 1536 * kMiB;
  RunResult r = call_contract("nest", {Value(3), Value(per_level), Value(sizes().touch_nested ? 1 : 0)});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(kind(r), "Return") << data_text(r);
  EXPECT_EQ(*r.report.find("data"), Value(2)) << "levels that got 1.5 GiB of one 4 GiB budget";
  EXPECT_GE(ram_peak_, 2 * per_level);
  expect_host_cost_bounded(r);
}

// Before: 4.7x the bytes read (a host copy of the read, the host's answer, and 100+ bytes of
// cache per 32-byte page). Now the read goes into guest memory (charged) through a 1 MiB buffer.
TEST_F(MemoryBudgetTest, AStorageReadCostsNoHostCopyOfItsSize) {
  const std::uint64_t n = sizes().read;
  RunResult r = call_contract("read", {Value(n)});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(kind(r), "Return") << data_text(r);
  EXPECT_EQ(*r.report.find("data"), Value(n));
  // The guest's own n bytes, and nothing of its size besides.
  if (kRssIsMeasured) {
    EXPECT_LT(r.peak_rss_bytes, n + kBaseline) << "peak RSS " << r.peak_rss_bytes;
  }
  expect_host_cost_bounded(r);
}

// Before: storage writes peaked at 28x their size (the page overlay, the changes, and four
// copies of them in the result's maps and encodings; 256 MiB reached 7.1 GB). Now the overlay is
// charged (256 octets a 32-byte page, spec new_storage_page), is emptied into the changes, and
// the result is encoded once: the run costs less than it is charged, and the result arrives.
TEST_F(MemoryBudgetTest, StorageWritesCostLessThanTheirChargeAndTheResultIsDelivered) {
  const std::uint64_t n = sizes().write;
  RunResult r = call_contract("write", {Value(n)});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_GE(ram_peak_, n / executor::kPageSize * 256) << "every new page is charged";
  expect_host_cost_bounded(r);
  // A page's change as the report encodes it: [key (36 octets), value (32)] with its headers.
  if (n / executor::kPageSize * 73 > host::kMaxResultBytes) {
    // The bench's 256 MiB: more than one host slice carries, so (before: lost, exit 1) the
    // contract's VM error, delivered (result.h apply_result_size_limit).
    ASSERT_EQ(kind(r), "VmError") << data_text(r);
    EXPECT_EQ(*r.report.find("data"), Value("out_of memory # result too large"));
    return;
  }
  ASSERT_EQ(kind(r), "Return") << data_text(r);
  const Value* changes = r.report.find("storage_changes");
  ASSERT_TRUE(changes && changes->is_array());
  std::uint64_t written = 0;
  for (const Value& c : changes->as_array()) written += c.as_array()[1].as_bytes().size();
  EXPECT_EQ(written, n);
}

// Before: a return value cost 7.2x its size (copies in the result's maps and an encoding each
// for both hashes and the report). Now: the guest's buffers, the charged decoded value and one
// encoding.
TEST_F(MemoryBudgetTest, AReturnValueCostsAConstantFactorOfItsCharge) {
  const std::uint64_t n = sizes().ret;
  RunResult r = call_contract("ret", {Value(n)});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(kind(r), "Return");
  ASSERT_TRUE(r.report.find("data")->is_bytes());
  EXPECT_EQ(r.report.find("data")->as_bytes().size(), n);
  expect_host_cost_bounded(r);
}

// The bytes the result limit counts for a Return of n bytes: the value's encoding, a ULEB128
// header (length << 3 | type 3) and the bytes.
std::uint64_t returned_bytes_size(std::uint64_t n) {
  std::uint64_t header = 1;
  for (std::uint64_t v = (n << 3 | 3) >> 7; v != 0; v >>= 7) ++header;
  return header + n;
}

// The one size limit (common/host/wire.h kMaxResultBytes), at its edge: a Return whose bytes are
// exactly the limit is delivered whole, one byte more is the contract's deterministic VM error,
// delivered (not a result the host refuses). A run at the limit peaks at about 1.3 GB of RSS, so
// this runs with the bench (GENVM_MEMORY_BENCH=1) only; the edge itself is result_test's
// ResultSizeLimit, and genvm-node's path node_test's AResultAboveTheManagersMessageLimitIsDelivered.
TEST_F(MemoryBudgetTest, AResultAtTheSizeLimitIsDeliveredAndOneByteMoreIsTheVmError) {
  if (!sizes().touch_nested) GTEST_SKIP() << "bench only (GENVM_MEMORY_BENCH=1): about 1.3 GB of RSS";
  std::uint64_t n = host::kMaxResultBytes - 8;
  while (returned_bytes_size(n + 1) <= host::kMaxResultBytes) ++n;
  ASSERT_EQ(returned_bytes_size(n), host::kMaxResultBytes);
  RunResult at = call_contract("ret", {Value(n)});
  ASSERT_EQ(at.exit_code, 0) << at.stderr_text;
  ASSERT_EQ(kind(at), "Return") << data_text(at);
  ASSERT_TRUE(at.report.find("data")->is_bytes());
  EXPECT_EQ(at.report.find("data")->as_bytes().size(), n);
  at = RunResult{};
  RunResult over = call_contract("ret", {Value(n + 1)});
  ASSERT_EQ(over.exit_code, 0) << over.stderr_text;
  ASSERT_EQ(kind(over), "VmError") << data_text(over);
  EXPECT_EQ(*over.report.find("data"), Value("out_of memory # result too large"));
}

}  // namespace
}  // namespace genvm
