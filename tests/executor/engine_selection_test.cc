// Which engine `genvm run` runs a contract on (src/executor/engine_choice.h), end to end: the
// environment override, a bad value refused before the run starts, the debug log naming the
// engine of the run and of each module, the same delivered bytes on both engines, and a module
// taken from the cross-process cache running on the JIT code its entry holds.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "executor_fixture.h"

namespace genvm {
namespace {

using calldata::Value;
using exec_test::addr;
using exec_test::read_file;
using exec_test::write_file;
using exec_test::RunResult;
using exec_test::ExecutorTest;

class EngineSelectionTest : public ExecutorTest {
 protected:
  void SetUp() override {
    ExecutorTest::SetUp();
    if (const char* e = std::getenv("GENVM_ENGINE")) saved_ = e;  // the ctest _interp variants set it
  }
  void TearDown() override {
    if (saved_) ::setenv("GENVM_ENGINE", saved_->c_str(), 1);
    else ::unsetenv("GENVM_ENGINE");
    ExecutorTest::TearDown();
  }
  // genvm inherits the environment: "" unsets the override (the default engine).
  static void engine_env(const char* value) {
    if (*value) ::setenv("GENVM_ENGINE", value, 1);
    else ::unsetenv("GENVM_ENGINE");
  }
  // counter.add(41) without applying its changes, its debug log in *log.
  RunResult add(std::vector<std::string> extra, std::string* log) {
    std::string path = dir_ + "/log.jsonl";
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);  // inherited by genvm
    EXPECT_GE(fd, 0);
    extra.push_back("--log-fd");
    extra.push_back(std::to_string(fd));
    extra.push_back("--log-level=debug");
    auto r = run(data(addr(1), addr(0xaa), call("add", {Value(41)}), false, std::nullopt), "wscn", extra, false);
    ::close(fd);
    auto text = read_file(path);
    log->assign(text.begin(), text.end());
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    return r;
  }
  // The message of the first log line whose event is `event` (the field before it), "" when
  // there is none.
  static std::string line_of(const std::string& log, const std::string& event) {
    size_t at = log.find("\",\"event\":\"" + event + "\"");
    if (at == std::string::npos) return "";
    size_t begin = log.rfind("\"message\":\"", at);
    return begin == std::string::npos ? "" : log.substr(begin + 11, at - begin - 11);
  }
  static std::string run_engine_line(const std::string& log) {
    size_t at = log.find("\"engine\":\"");
    if (at == std::string::npos) return "";
    size_t end = log.find('\n', at);
    return log.substr(at, end - at);
  }
  std::optional<std::string> saved_;
};

TEST_F(EngineSelectionTest, ABadEngineValueStopsTheRunBeforeItStarts) {
  deploy("counter.wasm", addr(1));
  engine_env("wasmtime");
  std::string log;
  auto r = run(data(addr(1), addr(0xaa), call("add", {Value(41)}), false, std::nullopt), "wscn", {}, false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("GENVM_ENGINE: 'wasmtime' is not an engine (interp or jit)"), std::string::npos)
      << r.stderr_text;
  EXPECT_TRUE(r.result_bytes.empty());
}

TEST_F(EngineSelectionTest, TheConfigFileChoosesAndABadKeyIsRefused) {
  deploy("counter.wasm", addr(1));
  engine_env("");
  // A GenVM config: the shipped fee rules (a --config file must have its `fees` block) and our key.
  calldata::Bytes rules = read_file(std::string(GENVM_SOURCE_DIR) + "/src/executor/fees/default_fees.yaml");
  auto config = [&](const std::string& name, const std::string& engine_line) {
    calldata::Bytes text = rules;
    text.insert(text.end(), engine_line.begin(), engine_line.end());
    write_file(dir_ + "/" + name, text);
    return dir_ + "/" + name;
  };
  std::string log;
  add({"--config", config("interp.yaml", "engine: interp\n")}, &log);
  EXPECT_NE(run_engine_line(log).find("\"engine\":\"interp\",\"why\":\"the --config file's engine key\""), std::string::npos)
      << log;
  auto r = run(data(addr(1), addr(0xaa), call("add", {Value(41)}), false, std::nullopt), "wscn",
               {"--config", config("bad.yaml", "engine: x\n")}, false);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("engine: 'x' is not an engine"), std::string::npos) << r.stderr_text;
}

TEST_F(EngineSelectionTest, TheLogNamesTheEngineOfTheRunAndOfEachModuleAndBothDeliverTheSameBytes) {
  deploy("counter.wasm", addr(1));
  std::string interp_log, jit_log;
  engine_env("interp");
  RunResult on_interp = add({}, &interp_log);
  EXPECT_NE(run_engine_line(interp_log).find("\"engine\":\"interp\",\"why\":\"GENVM_ENGINE=interp\""), std::string::npos)
      << interp_log;
  EXPECT_TRUE(line_of(interp_log, "engine").ends_with(" bytes: interp")) << interp_log;
  engine_env("jit");
  RunResult on_jit = add({}, &jit_log);
  EXPECT_NE(run_engine_line(jit_log).find("\"engine\":\"jit\",\"why\":\"GENVM_ENGINE=jit\""), std::string::npos) << jit_log;
  // The JIT's own note: compiled ("jit: N functions, ..."), or why the module fell back.
  EXPECT_NE(line_of(jit_log, "engine").find(": jit: "), std::string::npos) << jit_log;
  ASSERT_FALSE(on_interp.result_bytes.empty());
  EXPECT_EQ(on_interp.result_bytes, on_jit.result_bytes);
  // The default is one of the two, with its reason.
  engine_env("");
  std::string default_log;
  add({}, &default_log);
  EXPECT_NE(run_engine_line(default_log).find("\"why\":\"default: this CPU "), std::string::npos) << default_log;
}

TEST_F(EngineSelectionTest, AModuleFromTheCacheRunsOnTheJitCodeItsEntryHolds) {
  deploy("counter.wasm", addr(1));
  engine_env("jit");
  const std::string cache = dir_ + "/cache";
  std::string miss_log, hit_log;
  RunResult miss = add({"--module-cache", cache}, &miss_log);
  RunResult hit = add({"--module-cache", cache}, &hit_log);
  ASSERT_NE(hit_log.find("module cache hit"), std::string::npos) << hit_log;
  std::string miss_note = line_of(miss_log, "engine"), hit_note = line_of(hit_log, "engine");
  ASSERT_NE(miss_note.find(": jit: "), std::string::npos) << miss_log;
  if (miss_note.find("runs on the interpreter") != std::string::npos) GTEST_SKIP() << miss_note;
  // The second run mapped the code the first one compiled and stored: the same code, not compiled.
  EXPECT_EQ(miss_note.find("from the module cache"), std::string::npos) << miss_note;
  EXPECT_EQ(hit_note, miss_note + ", from the module cache");
  EXPECT_EQ(hit_log.find("module cache stored"), std::string::npos) << "a hit with code is not rewritten: " << hit_log;
  EXPECT_EQ(miss.result_bytes, hit.result_bytes);
  // The entry name carries the fusion option and the engine beside the mode bits.
  EXPECT_NE(hit_log.find("f1j1.gvmc"), std::string::npos) << hit_log;

  // An entry under the JIT's name without JIT code (here: the interpreter's entry, copied over
  // it; the seal does not cover the name): the JIT compiles, the run delivers the same bytes, and
  // the entry is rewritten with the code, which the next run maps.
  engine_env("interp");
  std::string interp_log;
  RunResult on_interp = add({"--module-cache", cache}, &interp_log);
  const size_t j0 = interp_log.find("f1j0.gvmc");
  ASSERT_NE(j0, std::string::npos) << interp_log;
  const size_t start = interp_log.rfind(cache, j0);
  ASSERT_NE(start, std::string::npos) << interp_log;
  const std::string interp_entry = interp_log.substr(start, j0 + 9 - start);
  const std::string jit_entry = interp_entry.substr(0, interp_entry.size() - 7) + "j1.gvmc";
  write_file(jit_entry, read_file(interp_entry));
  engine_env("jit");
  std::string upgrade_log, next_log;
  RunResult upgraded = add({"--module-cache", cache}, &upgrade_log);
  EXPECT_NE(upgrade_log.find("module cache hit"), std::string::npos) << upgrade_log;
  EXPECT_EQ(line_of(upgrade_log, "engine"), miss_note) << "compiled again";
  EXPECT_NE(upgrade_log.find("module cache stored " + jit_entry), std::string::npos) << upgrade_log;
  RunResult next = add({"--module-cache", cache}, &next_log);
  EXPECT_EQ(line_of(next_log, "engine"), hit_note) << next_log;
  EXPECT_EQ(upgraded.result_bytes, miss.result_bytes);
  EXPECT_EQ(next.result_bytes, miss.result_bytes);
  EXPECT_EQ(on_interp.result_bytes, miss.result_bytes);
}

}  // namespace
}  // namespace genvm
