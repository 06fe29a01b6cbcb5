// Faulty leader results (spec 03-wasi_genlayer_sdk/03-schemas.rst, "Validity Of A Proposed
// Result" and "Derived-Outcome Namespace"): a present but invalid entry is replaced by its
// derived VM error, which the validator block compares and the contract continues from; fewer
// entries than the run needs still end the run (seed 001, impl-spec 03-consensus).
//
// Contract tests/executor/contracts/gl_probe.c, method "echo": one RunNondet block whose
// validator votes true iff the entry it was handed equals its data byte for byte, and whose
// caller returns the entry it got. So each case shows the exact bytes on both sides: the
// contract's result, and the vote (a disagreement when the block saw anything else).
#include "executor_fixture.h"

namespace genvm::exec_test {
namespace {

class NondetFaultsTest : public ExecutorTest {
 protected:
  void SetUp() override {
    ExecutorTest::SetUp();
    if (IsSkipped()) return;
    if (::access((contracts_ + "gl_probe.wasm").c_str(), R_OK) != 0) GTEST_SKIP() << "needs gl_probe.wasm";
    deploy_code(read_file(contracts_ + "gl_probe.wasm"), kContract);
  }
  // A validator (or, with --sync, sync) run of echo(expected) over `leader`.
  RunResult echo(const calldata::Bytes& expected, std::vector<calldata::Bytes> leader,
                 std::vector<std::string> extra = {}) {
    auto d = data(kContract, addr(0xaa), call("echo", {Value(expected)}), false, std::nullopt);
    d.leader_nondet_results = std::move(leader);
    return run(d, "wscn", std::move(extra), false);
  }
  static calldata::Bytes entry(std::uint8_t code, std::span<const std::uint8_t> data) {
    calldata::Bytes e(1 + data.size());  // sized up front (GCC 12 array-bounds false positive)
    e[0] = code;
    std::copy(data.begin(), data.end(), e.begin() + 1);
    return e;
  }
  static calldata::Bytes text_entry(std::uint8_t code, std::string_view s) {
    return entry(code, calldata::Bytes(s.begin(), s.end()));
  }
  static calldata::Bytes derived(std::string_view code) { return text_entry(2, code); }
  static Value returned(const RunResult& r) {
    return r.report.is_map() && *r.report.find("kind") == Value("Return") ? *r.report.find("data") : Value("<none>");
  }
  const calldata::Address kContract = addr(0x51);
};

// Fails if a faulty entry still ends the run, if the block or the contract sees anything but
// the derived VM error (or sees it with a detail), or if the vote is not the block's.
TEST_F(NondetFaultsTest, EachFaultyEntryIsReplacedByItsDerivedVmErrorOnBothSides) {
  const calldata::Bytes good = entry(0, calldata::encode(Value(42)));
  calldata::Bytes trailing = good;
  trailing.push_back(0);
  calldata::Bytes truncated = entry(0, calldata::encode(Value("a string")));
  truncated.pop_back();
  struct Case {
    const char* name;
    calldata::Bytes proposed;
    std::string derived_code;
  };
  // uses_this_error parameters: the first 6 GVM32 characters of SHA3-256 of the proposed code,
  // computed independently with Python's hashlib (sha3_256) and a spec-written GVM32 encoder.
  std::vector<Case> cases = {
      {"empty", {}, "leader_fault nondet_output absent"},
      {"code byte 9", entry(9, calldata::encode(Value(42))), "leader_fault nondet_output malformed"},
      {"InternalError code", text_entry(3, "x"), "leader_fault nondet_output malformed"},
      {"FatalVmError code", text_entry(4, "exit_code 1"), "leader_fault nondet_output malformed"},
      {"trailing calldata", trailing, "leader_fault nondet_output malformed"},
      {"truncated calldata", truncated, "leader_fault nondet_output malformed"},
      {"UserError not calldata", entry(1, calldata::Bytes{0xff}), "leader_fault nondet_output malformed"},
      {"VM error with a detail", text_entry(2, "exit_code 1 # why"), "leader_fault nondet_output malformed"},
      {"VM error outside the trie", text_entry(2, "no_such_code"), "leader_fault nondet_output malformed"},
      {"VM error missing its parameter", text_entry(2, "exit_code"), "leader_fault nondet_output malformed"},
      {"VM error not UTF-8", entry(2, calldata::Bytes{0xff, 0xfe}), "leader_fault nondet_output malformed"},
      {"derived prefix without a space", text_entry(2, "leader_fault nondet_outputs"),
       "leader_fault nondet_output malformed"},
      {"derived code proposed", text_entry(2, "leader_fault nondet_output absent"),
       "leader_fault nondet_output uses_this_error x3fa7v"},
      {"derived namespace root proposed", text_entry(2, "leader_fault nondet_output"),
       "leader_fault nondet_output uses_this_error wt1gmh"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const calldata::Bytes want = derived(c.derived_code);
    // The block is told to expect exactly the derived bytes: it agrees, and the contract
    // returns the same bytes, so neither side saw the proposal or a detail.
    auto v = echo(want, {c.proposed});
    ASSERT_EQ(v.exit_code, 0) << v.stderr_text;
    EXPECT_EQ(returned(v), Value(want)) << calldata::to_text(*v.report.find("data"));
    EXPECT_TRUE(v.report.find("nondet_disagreement")->is_null());
    // Told to expect the proposal itself, the block disagrees: it was handed the derived
    // value, not the proposal (the comparison stage ran, and its vote counts).
    auto w = echo(c.proposed, {c.proposed});
    ASSERT_EQ(w.exit_code, 0) << w.stderr_text;
    EXPECT_EQ(returned(w), Value(want));
    EXPECT_EQ(*w.report.find("nondet_disagreement"), Value(0));
  }
  EXPECT_EQ(host_.with_state([](test_host::State& s) { return s.disagreements.size(); }), cases.size());
}

// Fails if a valid entry is re-encoded or replaced: it reaches both sides byte for byte.
TEST_F(NondetFaultsTest, ValidEntriesArePreservedByteForByte) {
  std::vector<calldata::Bytes> valid = {
      entry(0, calldata::encode(Value(42))),
      entry(1, calldata::encode(Value::map({{"b", 1}, {"a", Value::array({"x"})}}))),
      text_entry(2, "exit_code 3"),
      text_entry(2, "wasm_trap unreachable"),
  };
  for (const auto& e : valid) {
    SCOPED_TRACE(hex(e));
    auto v = echo(e, {e});
    ASSERT_EQ(v.exit_code, 0) << v.stderr_text;
    EXPECT_EQ(returned(v), Value(e));
    EXPECT_TRUE(v.report.find("nondet_disagreement")->is_null());
  }
}

// Every node hashes the derived value: two different malformed proposals that derive the same
// code give validators the same execution hash; a valid proposal gives another one.
TEST_F(NondetFaultsTest, ProposalsWithTheSameDerivedErrorHashAlike) {
  const calldata::Bytes want = derived("leader_fault nondet_output malformed");
  auto a = echo(want, {entry(9, calldata::encode(Value(1)))});
  auto b = echo(want, {text_entry(2, "exit_code 1 # other detail")});
  auto c = echo(want, {entry(0, calldata::encode(Value(42)))});
  ASSERT_TRUE(a.report.is_map() && b.report.is_map() && c.report.is_map());
  EXPECT_EQ(*a.report.find("execution_hash"), *b.report.find("execution_hash"));
  EXPECT_EQ(*a.report.find("small_hash"), *b.report.find("small_hash"));
  EXPECT_NE(*a.report.find("execution_hash"), *c.report.find("execution_hash"));
  // The leader's own run of the same call differs from a faulted validator's.
  auto leader = run(data(kContract, addr(0xaa), call("echo", {Value(want)}), false, std::nullopt), "wscn", {}, false);
  ASSERT_TRUE(leader.report.is_map());
  EXPECT_EQ(returned(leader), Value(entry(0, calldata::encode(Value(42)))));
  EXPECT_NE(*leader.report.find("execution_hash"), *a.report.find("execution_hash"));
}

// Sync mode: the derived value is the call's result, no block runs and no vote is cast.
TEST_F(NondetFaultsTest, SyncModeHandsTheDerivedErrorToTheContract) {
  const calldata::Bytes want = derived("leader_fault nondet_output malformed");
  // Expecting something else: in validator mode this would be a disagreement.
  auto s = echo(calldata::Bytes{1, 2, 3}, {text_entry(2, "no_such_code")}, {"--sync"});
  ASSERT_EQ(s.exit_code, 0) << s.stderr_text;
  EXPECT_EQ(returned(s), Value(want));
  EXPECT_TRUE(s.report.find("nondet_disagreement")->is_null());
  EXPECT_TRUE(host_.with_state([](test_host::State& st) { return st.disagreements; }).empty());
}

// Fewer entries than the run asks for: the run ends with `leader_fault nondet_output absent`
// (seed 001), published as a VM error with no effects, before any block runs.
TEST_F(NondetFaultsTest, AMissingEntryStillEndsTheRun) {
  for (bool sync : {false, true}) {
    SCOPED_TRACE(sync ? "sync" : "validator");
    auto v = echo(calldata::Bytes{}, {}, sync ? std::vector<std::string>{"--sync"} : std::vector<std::string>{});
    ASSERT_EQ(v.exit_code, 0) << v.stderr_text;
    ASSERT_TRUE(v.report.is_map());
    EXPECT_EQ(*v.report.find("kind"), Value("VmError"));
    EXPECT_EQ(public_code(v), "leader_fault nondet_output absent");
    EXPECT_TRUE(v.report.find("nondet_disagreement")->is_null());
  }
}

}  // namespace
}  // namespace genvm::exec_test
