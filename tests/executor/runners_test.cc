// Runner contracts through the real `genvm` (issue 17 part 3): a runner of our own in C
// (contracts/echo_runner.c) packed as a runner archive at test time into a runner directory
// (GENVM_RUNNERS_DIR), and contracts — text with the comment header, a runner archive — whose
// runner graph Depends on it. The runner reports the plan's argv, environment and mapped files
// as the executor's WASI serves them. Then every bad input: each a VMError with its public code,
// and nothing written.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "executor_fixture.h"
#include "runners/runners.h"
#include "runners/zip_writer_test_util.h"

namespace genvm::exec_test {
namespace {

using runners::testing::make_zip;
using runners::testing::ZipEntry;

constexpr const char* kData = "alpha-bravo-data";

std::string to_string(const calldata::Bytes& b) { return std::string(b.begin(), b.end()); }
calldata::Bytes to_bytes(const std::string& s) { return calldata::Bytes(s.begin(), s.end()); }

class RunnersTest : public ExecutorTest {
 protected:
  void SetUp() override {
    ExecutorTest::SetUp();
    if (IsSkipped()) return;
    echo_wasm_ = to_string(read_file(contracts_ + "echo_runner.wasm"));
    if (echo_wasm_.empty()) GTEST_SKIP() << "needs echo_runner.wasm (the wasm32 C toolchain)";
    runners_dir_ = dir_ + "/runners";
    std::filesystem::create_directories(runners_dir_);
    ::setenv("GENVM_RUNNERS_DIR", runners_dir_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("GENVM_RUNNERS_DIR");
    ExecutorTest::TearDown();
  }

  // The echo runner's archive: its wasm, a data folder, and a runner.json that maps them, the
  // contract's own file (With contract) and sets argv and the environment.
  std::string echo_archive(const std::string& runner_json = "") const {
    std::string json = runner_json.empty() ? R"({"Seq": [
      {"AddEnv": {"name": "ECHO_DATA", "val": "/echo/data/a.txt"}},
      {"MapFile": {"file": "data/", "to": "/echo/data/"}},
      {"With": {"runner": "contract", "action": {"MapFile": {"file": "file", "to": "/echo/contract.py"}}}},
      {"SetArgs": ["echo", "/echo/contract.py"]},
      {"StartWasm": "echo.wasm"}]})"
                                           : runner_json;
    return make_zip({ZipEntry("runner.json", json), ZipEntry("echo.wasm", echo_wasm_), ZipEntry("data/a.txt", kData),
                     ZipEntry("data/sub/b.txt", "nested file")});
  }
  // Installs `archive` as `name:<gvm32 of its SHA-256>` (or under `hash` when given: a lie).
  std::string install(const std::string& name, const std::string& archive, std::string hash = "") {
    if (hash.empty()) hash = runners::gvm32_encode(runners::sha256(archive));
    auto folder = std::filesystem::path(runners_dir_) / name / hash.substr(0, 2);
    std::filesystem::create_directories(folder);
    std::ofstream(folder / (hash.substr(2) + ".zip"), std::ios::binary) << archive;
    return name + ":" + hash;
  }

  static std::string text_contract(const std::string& depends, const std::string& extra_env = "") {
    std::string header = "{\"Seq\": [" + extra_env + "{\"Depends\": \"" + depends + "\"}]}";
    return "# v0.1.0\n# " + header + "\nprint('the contract body')\n";
  }

  RunResult deploy_text(const std::string& code, const calldata::Address& at, std::vector<std::string> extra = {}) {
    return run(data(at, addr(0xaa), Value(Value::Map{}), true, to_bytes(code)), "wscn", std::move(extra));
  }

  // A VM error with `code`, no storage written (and nothing kept in the host).
  void expect_vm_error(const RunResult& r, const std::string& code, const calldata::Address& at) {
    ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
    ASSERT_TRUE(r.report.is_map()) << r.stderr_text;
    EXPECT_EQ(*r.report.find("kind"), Value("VmError"));
    EXPECT_EQ(public_code(r), code) << calldata::to_text(*r.report.find("data"));
    const Value* changes = r.report.find("storage_changes");
    if (changes && changes->is_array()) {
      EXPECT_TRUE(changes->as_array().empty());
    }
    bool stored = host_.with_state([&](test_host::State& s) {
      for (const auto& [key, value] : s.storage) {
        (void)value;
        if (key.first == at.bytes) return true;
      }
      return false;
    });
    EXPECT_FALSE(stored);
  }

  std::string echo_wasm_, runners_dir_;
};

TEST_F(RunnersTest, TextContractRunsThroughItsRunner) {
  std::string id = install("echo", echo_archive());
  std::string code = text_contract(id, R"({"AddEnv": {"name": "GREETING", "val": "hi ${ECHO_DATA}"}},)");
  RunResult r = deploy_text(code, addr(0x31));
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  const Value& v = *r.report.find("data");
  ASSERT_TRUE(v.is_map()) << calldata::to_text(v);
  EXPECT_EQ(*v.find("args"), Value::array({"echo", "/echo/contract.py"}));
  // The contract's own file (the whole code blob, header included) through With contract.
  EXPECT_EQ(*v.find("contract"), Value(to_bytes(code)));
  EXPECT_EQ(*v.find("data"), Value(to_bytes(kData)));
  // ${ECHO_DATA} is unset when the contract's AddEnv runs (before Depends): interpolated empty.
  EXPECT_EQ(*v.find("env"), Value::array({"GREETING=hi ", "ECHO_DATA=/echo/data/a.txt"}));
  EXPECT_EQ(*v.find("listing"), Value::array({".", "..", "a.txt", "sub"}));
  EXPECT_EQ(*v.find("missing"), Value(44));  // ENOENT
  EXPECT_EQ(*v.find("size"), Value(static_cast<std::int64_t>(std::string(kData).size())));
  EXPECT_EQ(*v.find("tail"), Value(to_bytes("data")));

  // A later call reads the code back from storage and runs it through the runner again.
  RunResult call_r = run(data(addr(0x31), addr(0xaa), call("file", {"/echo/data/sub/b.txt"}), false, std::nullopt));
  ASSERT_TRUE(call_r.report.is_map()) << call_r.stderr_text;
  EXPECT_EQ(*call_r.report.find("kind"), Value("Return")) << calldata::to_text(*call_r.report.find("data"));
  EXPECT_EQ(*call_r.report.find("data"), Value(to_bytes("nested file")));
  // Lexical `..` and `.` stay inside the tree; a file is no folder.
  RunResult up = run(data(addr(0x31), addr(0xaa), call("file", {"/echo/data/sub/../../data/./a.txt"}), false, std::nullopt));
  EXPECT_EQ(*up.report.find("data"), Value(to_bytes(kData)));
  RunResult through_file = run(data(addr(0x31), addr(0xaa), call("file", {"/echo/data/a.txt/x"}), false, std::nullopt));
  EXPECT_EQ(*through_file.report.find("kind"), Value("UserError"));
}

TEST_F(RunnersTest, MapFileGlCallMapsARunnersFilesAtRunTime) {
  std::string id = install("echo", echo_archive());
  std::string extra = install("extra", make_zip({ZipEntry("runner.json", "{\"SetArgs\": []}"),
                                                 ZipEntry("notes/one.txt", "first"), ZipEntry("notes/two.txt", "second")}));
  ASSERT_EQ(*deploy_text(text_contract(id), addr(0x37)).report.find("kind"), Value("Return"));
  auto map = [&](Value::Array args) {
    return run(data(addr(0x37), addr(0xaa), call("map", std::move(args)), false, std::nullopt));
  };
  // A folder of another packaged runner, loaded by the call.
  RunResult r = map({extra, "notes/", "/extra/", "/extra/two.txt"});
  EXPECT_EQ(*r.report.find("data"), Value(to_bytes("second"))) << calldata::to_text(*r.report.find("data"));
  // A file of the contract's own archive, and of a runner the plan already loaded.
  r = map({"contract", "file", "/again/contract.py", "/again/contract.py"});
  EXPECT_EQ(*r.report.find("data"), Value(to_bytes(text_contract(id))));
  r = map({id, "data/a.txt", "/copy.txt", "/copy.txt"});
  EXPECT_EQ(*r.report.find("data"), Value(to_bytes(kData)));
  // Bad requests end the sub-VM with the VM error of the MapFile action.
  EXPECT_EQ(public_code(map({extra, "notes/none.txt", "/x.txt", "/x.txt"})), "invalid_contract runner malformed");
  EXPECT_EQ(public_code(map({extra, "notes/one.txt", "/vm/x.txt", "/vm/x.txt"})), "invalid_contract runner malformed");
  EXPECT_EQ(public_code(map({"extra:latest", "notes/one.txt", "/x.txt", "/x.txt"})), "invalid_contract runner malformed");
  EXPECT_EQ(public_code(map({"not an id", "notes/one.txt", "/x.txt", "/x.txt"})), "invalid_contract runner malformed");
}

TEST_F(RunnersTest, RegisterRunnerNeedsItsPermissionAndServesMapFile) {
  std::string id = install("echo", echo_archive());
  ASSERT_EQ(*deploy_text(text_contract(id), addr(0x38)).report.find("kind"), Value("Return"));
  std::string code = make_zip({ZipEntry("runner.json", "{\"SetArgs\": []}"), ZipEntry("lib/x.txt", "custom bytes")});
  auto reg = [&](const std::string& blob, const std::string& permissions) {
    return run(data(addr(0x38), addr(0xaa), call("register", {Value(to_bytes(blob)), "lib/", "/custom/", "/custom/x.txt"}),
                    false, std::nullopt),
               permissions);
  };
  RunResult r = reg(code, "wscnu");
  ASSERT_TRUE(r.report.find("data")->is_array()) << calldata::to_text(*r.report.find("data"));
  std::string expected_id = runners::custom_runner_id(code);
  EXPECT_EQ(*r.report.find("data"), Value::array({Value(expected_id), Value(to_bytes("custom bytes"))}));
  // Without the permission letter u: FORBIDDEN (6), nothing registered.
  EXPECT_EQ(*reg(code, "wscn").report.find("data"), Value(6));
  // A runner that is not one ends the sub-VM.
  EXPECT_EQ(public_code(reg("PK\3\4 cut", "wscnu")), "invalid_contract runner malformed");
  // A custom runner this sub-VM did not register is not mapped.
  RunResult other = run(data(addr(0x38), addr(0xaa), call("map", {expected_id, "lib/", "/c/", "/c/x.txt"}), false, std::nullopt));
  EXPECT_EQ(public_code(other), "invalid_contract runner malformed");
}

TEST_F(RunnersTest, ArchiveContractRunsThroughItsRunner) {
  std::string id = install("echo", echo_archive());
  std::string code = make_zip({ZipEntry("runner.json", "{\"Depends\": \"" + id + "\"}"), ZipEntry("file", "zip body")});
  RunResult r = deploy_text(code, addr(0x32));
  ASSERT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
  EXPECT_EQ(*r.report.find("data")->find("contract"), Value(to_bytes("zip body")));
}

TEST_F(RunnersTest, LinkWasmModulesAreLinkedByNameAndInitialised) {
  std::string helper = to_string(read_file(contracts_ + "link_helper.wasm"));
  std::string main_wasm = to_string(read_file(contracts_ + "link_main.wasm"));
  if (helper.empty() || main_wasm.empty()) GTEST_SKIP() << "needs wat2wasm";
  std::string json = R"({"Seq": [{"LinkWasm": "helper.wasm"}, {"StartWasm": "main.wasm"}]})";
  std::string id = install("linked", make_zip({ZipEntry("runner.json", json), ZipEntry("helper.wasm", helper),
                                               ZipEntry("main.wasm", main_wasm)}));
  RunResult r = deploy_text(text_contract(id), addr(0x35));
  ASSERT_TRUE(r.report.is_map()) << r.stderr_text;
  EXPECT_EQ(public_code(r), "exit_code 42");
  // The same module without a name section cannot be linked.
  std::string plain = install("plainlink", make_zip({ZipEntry("runner.json", json),
                                                     ZipEntry("helper.wasm", std::string("\0asm\1\0\0\0", 8)),
                                                     ZipEntry("main.wasm", main_wasm)}));
  expect_vm_error(deploy_text(text_contract(plain), addr(0x36)), "invalid_contract wasm linking", addr(0x36));
}

TEST_F(RunnersTest, LatestResolvesOnlyInUnsafeDebugModes) {
  std::string id = install("echo", echo_archive());
  std::ofstream(runners_dir_ + "/latest.json") << "{\"echo\": \"" << id.substr(5) << "\"}";
  expect_vm_error(deploy_text(text_contract("echo:latest"), addr(0x33)), "invalid_contract runner malformed", addr(0x33));
  RunResult r = deploy_text(text_contract("echo:latest"), addr(0x34), {"--debug-mode", "unsafe"});
  EXPECT_EQ(*r.report.find("kind"), Value("Return")) << calldata::to_text(*r.report.find("data"));
}

TEST_F(RunnersTest, BadInputsAreVmErrorsAndWriteNothing) {
  std::string id = install("echo", echo_archive());
  std::string hash = id.substr(5);
  // A Depends on a runner that is not installed, and on a name that is not an id at all.
  std::string other_hash = runners::gvm32_encode(runners::sha256("something else"));
  expect_vm_error(deploy_text(text_contract("echo:" + other_hash), addr(0x40)), "invalid_contract runner malformed",
                  addr(0x40));
  expect_vm_error(deploy_text(text_contract("echo:not-a-hash"), addr(0x41)), "invalid_contract runner malformed",
                  addr(0x41));
  // An installed archive whose bytes are not what its hash says (echo's hash, other bytes).
  std::string liar = install("liar", echo_archive("{\"StartWasm\": \"echo.wasm\"}"), hash);
  expect_vm_error(deploy_text(text_contract(liar), addr(0x42)), "invalid_contract runner malformed", addr(0x42));
  // A contract archive cut short, and a runner archive cut short under its own (true) hash.
  std::string zip = make_zip({ZipEntry("runner.json", "{\"Depends\": \"" + id + "\"}"), ZipEntry("file", "body")});
  expect_vm_error(deploy_text(zip.substr(0, zip.size() - 7), addr(0x43)), "invalid_contract runner malformed",
                  addr(0x43));
  std::string cut = echo_archive().substr(0, 200);
  expect_vm_error(deploy_text(text_contract(install("cut", cut)), addr(0x44)), "invalid_contract runner malformed",
                  addr(0x44));
  // A malformed runner.json in the header, and in a runner.
  expect_vm_error(deploy_text("# v0.1.0\n# {\"Depends\": 7}\n", addr(0x45)), "invalid_contract runner malformed",
                  addr(0x45));
  std::string bad_json = install("badjson", echo_archive("{\"StartWasm\": \"echo.wasm\", \"Extra\": 1}"));
  expect_vm_error(deploy_text(text_contract(bad_json), addr(0x46)), "invalid_contract runner malformed", addr(0x46));
  // A plan that never reaches StartWasm.
  std::string no_start = install("nostart", echo_archive("{\"SetArgs\": [\"x\"]}"));
  expect_vm_error(deploy_text(text_contract(no_start), addr(0x47)), "invalid_contract runner malformed", addr(0x47));
  // Text without the comment header, and code that is not UTF-8.
  expect_vm_error(deploy_text("print('no header')\n", addr(0x48)), "invalid_contract runner absent", addr(0x48));
  expect_vm_error(deploy_text("# v0.1.0\n\xff\xfe\n", addr(0x49)), "invalid_contract not_utf8_text", addr(0x49));
  // A StartWasm that is not wasm.
  std::string not_wasm = install("notwasm", make_zip({ZipEntry("runner.json", "{\"StartWasm\": \"x.wasm\"}"),
                                                      ZipEntry("x.wasm", std::string("\0asm garbage", 12))}));
  expect_vm_error(deploy_text(text_contract(not_wasm), addr(0x4a)), "invalid_contract wasm validating", addr(0x4a));
}

}  // namespace
}  // namespace genvm::exec_test
