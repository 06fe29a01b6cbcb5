// A `.py` contract through the real `genvm` and the Python runners (issue 17 parts 3 and 5):
// runners/cpython packs cpython (python.wasm, python-det.wasm, the standard library) and
// py-genlayer (the SDK, argv `py -m genlayer /contract.py`) into
// <build>/runners/cpython/installed, with latest.json naming their hashes; the contract's
// header Depends on py-genlayer by its exact id. Opt-in: only a build with
// -DGENVM_BUILD_CPYTHON=ON makes that folder; otherwise these tests skip.
#include <cstdlib>
#include <filesystem>

#include "common/json.h"
#include "executor_fixture.h"

namespace genvm::exec_test {
namespace {

class PythonRunnerTest : public ExecutorTest {
 protected:
  void SetUp() override {
    ExecutorTest::SetUp();
    if (IsSkipped()) return;
    runners_dir_ = binary_dir() + "/runners/cpython/installed";
    auto latest = read_file(runners_dir_ + "/latest.json");
    if (latest.empty()) GTEST_SKIP() << "needs the Python runners (-DGENVM_BUILD_CPYTHON=ON, target cpython_runners)";
    auto json = parse_json(std::string(latest.begin(), latest.end()));
    ASSERT_TRUE(json && json->is_object());
    const JsonValue* hash = json->find("py-genlayer");
    ASSERT_TRUE(hash && hash->is_string());
    py_genlayer_ = "py-genlayer:" + hash->text();
    ::setenv("GENVM_RUNNERS_DIR", runners_dir_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("GENVM_RUNNERS_DIR");
    ExecutorTest::TearDown();
  }
  calldata::Bytes contract(const std::string& body) const {
    std::string code = "# v0.1.0\n# { \"Depends\": \"" + py_genlayer_ + "\" }\n" + body;
    return calldata::Bytes(code.begin(), code.end());
  }
  std::string runners_dir_, py_genlayer_;
};

TEST_F(PythonRunnerTest, StorageContractDeploysAndAnswers) {
  auto code = contract(R"(from genlayer import *


class Storage(gl.Contract):
    text: str
    count: u256

    def __init__(self, text: str):
        self.text = text
        self.count = 0

    @gl.public.view
    def get(self) -> str:
        return self.text + " " + str(self.count) + " " + str(1.5 * 3)

    @gl.public.write
    def bump(self) -> None:
        self.count += 1
)");
  RunResult deployed = run(data(addr(0x50), addr(0xaa), Value::map({{"args", Value::array({"hello"})}}), true, code));
  ASSERT_TRUE(deployed.report.is_map()) << deployed.stderr_text;
  ASSERT_EQ(*deployed.report.find("kind"), Value("Return")) << calldata::to_text(*deployed.report.find("data"));
  RunResult bumped = run(data(addr(0x50), addr(0xaa), call("bump"), false, std::nullopt));
  ASSERT_EQ(*bumped.report.find("kind"), Value("Return")) << calldata::to_text(*bumped.report.find("data"));
  RunResult got = run(data(addr(0x50), addr(0xaa), call("get"), false, std::nullopt));
  ASSERT_EQ(*got.report.find("kind"), Value("Return")) << calldata::to_text(*got.report.find("data"));
  // Deterministic mode ran the float multiplication through python-det.wasm's software float.
  EXPECT_EQ(*got.report.find("data"), Value("hello 1 4.5"));
}

TEST_F(PythonRunnerTest, PythonErrorsAreContractErrors) {
  // A syntax error and an import of a missing module end the run without a Return, writing nothing.
  for (const char* body : {"def broken(:\n", "import no_such_module\n"}) {
    RunResult r = run(data(addr(0x51), addr(0xaa), Value(Value::Map{}), true, contract(body)));
    ASSERT_TRUE(r.report.is_map()) << r.stderr_text;
    EXPECT_NE(*r.report.find("kind"), Value("Return")) << body;
  }
}

// gl.eq_principle.strict_eq and gl.vm.run_nondet: each block is the runner again in a
// non-deterministic child VM (python.wasm, floats native) that unpickles the function cloudpickle
// shipped and runs it; a validator runs its own function over the leader's recorded result and
// agrees. Under the default --nondet-fuel: CPython's start-up in the child alone used to exhaust
// the 2^32 of old (the engine charges a loop region its static size per iteration, and
// CPython's eval loop is one region of tens of thousands of instructions).
TEST_F(PythonRunnerTest, NondetBlocksRunInChildVmsAndValidatorsAgree) {
  auto code = contract(R"(from genlayer import *


class Blocks(gl.Contract):
    total: u256

    def __init__(self):
        self.total = 0

    @gl.public.write
    def strict(self, x: int) -> int:
        base = int(self.total) + x

        def block() -> int:
            return base * 2 + int(0.5 * 4)

        value = gl.eq_principle.strict_eq(block)
        self.total = value
        return value

    @gl.public.view
    def custom(self, word: str) -> str:
        def leader() -> str:
            return word.upper()

        def validator(leader_value) -> bool:
            return leader_value == word.upper()

        return gl.vm.run_nondet(leader, validator)
)");
  const calldata::Address at = addr(0x52);
  RunResult deployed = run(data(at, addr(0xaa), Value(Value::Map{}), true, code));
  ASSERT_TRUE(deployed.report.is_map()) << deployed.stderr_text;
  ASSERT_EQ(*deployed.report.find("kind"), Value("Return")) << calldata::to_text(*deployed.report.find("data"));

  struct Case {
    Value entry;
    Value expected;
  };
  for (const Case& c : {Case{call("strict", {Value(20)}), Value(42)}, Case{call("custom", {Value("ok")}), Value("OK")}}) {
    auto leader_data = data(at, addr(0xaa), c.entry, false, std::nullopt);
    RunResult leader = run(leader_data, "wscn", {}, false);
    ASSERT_TRUE(leader.report.is_map()) << leader.stderr_text;
    ASSERT_EQ(*leader.report.find("kind"), Value("Return")) << calldata::to_text(*leader.report.find("data"));
    EXPECT_EQ(*leader.report.find("data"), c.expected);
    std::vector<calldata::Bytes> results;
    for (const Value& v : leader.report.find("nondet_results")->as_array()) results.push_back(v.as_bytes());
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0][0], 0) << "the leader's block did not Return";

    auto validator_data = leader_data;
    validator_data.leader_nondet_results = results;
    RunResult validator = run(validator_data, "wscn", {}, false);
    ASSERT_TRUE(validator.report.is_map()) << validator.stderr_text;
    ASSERT_EQ(*validator.report.find("kind"), Value("Return")) << calldata::to_text(*validator.report.find("data"));
    EXPECT_EQ(*validator.report.find("data"), c.expected);
    EXPECT_TRUE(validator.report.find("nondet_disagreement")->is_null());
  }
}

// Recursion as CPython reports it (issue 17; docs/PROTOCOLS.md "## Python runner", Stack
// depth). Before python.wasm's C-recursion budget was lowered to fit GenVM's 1024 wasm frames,
// each of these ended the run as VMError `wasm_trap stack_overflow`.
class PythonRecursionTest : public PythonRunnerTest {
 protected:
  static constexpr const char* kContract = R"(import json
import sys

from genlayer import *


def deepest() -> int:
    depth = 0

    def down(n):
        nonlocal depth
        depth = n
        return down(n + 1)

    try:
        down(0)
    except RecursionError:
        return depth
    return -1


class Loop:
    def __eq__(self, other):
        return self == other

    def __getattr__(self, name):
        return getattr(self, name)


class Deep(gl.Contract):
    def __init__(self):
        pass

    @gl.public.view
    def python_depth(self) -> list:
        return [sys.getrecursionlimit(), deepest()]

    @gl.public.view
    def nondet_depth(self) -> int:
        return gl.eq_principle.strict_eq(deepest)

    @gl.public.view
    def c_depth(self) -> str:
        nested = []
        for _ in range(100000):
            nested = [nested]
        caught = []
        cases = (
            ("repr", lambda: repr(nested)),
            ("json", lambda: json.dumps(nested)),
            ("eq", lambda: Loop() == Loop()),
            ("getattr", lambda: Loop().missing),
        )
        for name, case in cases:
            try:
                case()
            except RecursionError:
                caught.append(name)
        del nested
        return " ".join(caught)
)";
  const calldata::Address at_ = addr(0x53);
  void deploy() {
    RunResult deployed = run(data(at_, addr(0xaa), Value(Value::Map{}), true, contract(kContract)));
    ASSERT_TRUE(deployed.report.is_map()) << deployed.stderr_text;
    ASSERT_EQ(*deployed.report.find("kind"), Value("Return")) << calldata::to_text(*deployed.report.find("data"));
  }
  // A method's Return data; a VMError's (e.g. "wasm_trap stack_overflow") in the failure message.
  Value returned(const std::string& method) {
    RunResult r = run(data(at_, addr(0xaa), call(method), false, std::nullopt), "wscn", {}, false);
    EXPECT_TRUE(r.report.is_map()) << r.stderr_text;
    if (!r.report.is_map()) return Value();
    EXPECT_EQ(*r.report.find("kind"), Value("Return")) << method << ": " << calldata::to_text(*r.report.find("data"));
    return *r.report.find("data");
  }
};

// A Python recursion to the default limit (1000) is a RecursionError the contract catches, in
// the deterministic run (python-det.wasm) and in a non-deterministic block (python.wasm); the
// run goes on after the traceback of ~1000 entries is freed (at WASI's budget of 5000 units
// freeing it recursively overflowed the 1024 frames).
TEST_F(PythonRecursionTest, PythonRecursionErrorIsCaughtAtTheDefaultLimit) {
  deploy();
  Value python = returned("python_depth");
  ASSERT_TRUE(python.is_array()) << calldata::to_text(python);
  ASSERT_EQ(python.as_array().size(), 2u);
  EXPECT_EQ(python.as_array()[0], Value(1000));
  // The recursion ran to the limit, less the frames the SDK's entry holds below the contract.
  const BigInt& det_depth = python.as_array()[1].as_int();
  EXPECT_TRUE(det_depth > BigInt(900) && det_depth < BigInt(1000)) << calldata::to_text(python);

  Value nondet = returned("nondet_depth");
  ASSERT_TRUE(nondet.is_int()) << calldata::to_text(nondet);
  EXPECT_TRUE(nondet.as_int() > BigInt(900) && nondet.as_int() < BigInt(1000)) << calldata::to_text(nondet);
}

// C recursions CPython counts raise RecursionError too: repr and json.dumps of a list nested
// 100000 deep, a recursive __eq__, a __getattr__ recursing through getattr; and freeing that
// list (CPython's trashcan) ends normally.
TEST_F(PythonRecursionTest, CRecursionIsARecursionError) {
  deploy();
  EXPECT_EQ(returned("c_depth"), Value("repr json eq getattr"));
}

}  // namespace
}  // namespace genvm::exec_test
