#include "executor/cli.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace genvm::executor {
namespace {

Result<Command> parse(std::vector<std::string_view> args) { return parse_command_line(args); }

// The argv the public manager builds (implementation/src/manager/run.rs, build_genvm_command and
// run_genvm_process): global --log-fd=N first, extra_args right after `run`, `=` forms for
// --genvm-id and the module flags, two hosts, ExecutionData on stdin (no --execution-data).
TEST(CommandLine, TakesThePublicManagersArgvExactly) {
  auto c = parse({"--log-fd=7", "run", "--sync", "--host", "unix:///tmp/h.sock", "--permissions", "wscn",
                  "--genvm-id=42", "--debug-mode", "safe", "--host", "fd://9", "--module-llm=fd://10",
                  "--module-web=fd://11"});
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->kind, Command::Kind::kRun);
  const RunOptions& o = c->run;
  EXPECT_EQ(o.log_fd, 7);
  EXPECT_TRUE(o.sync);
  EXPECT_EQ(o.hosts, (std::vector<std::string>{"unix:///tmp/h.sock", "fd://9"}));
  EXPECT_EQ(o.permissions, (Permissions{true, true, true, true}));
  EXPECT_EQ(o.genvm_id, "42");
  EXPECT_EQ(o.debug, DebugMode::kSafe);
  EXPECT_EQ(o.module_llm, "fd://10");
  EXPECT_EQ(o.module_web, "fd://11");
  EXPECT_EQ(o.execution_data, "-");  // stdin
}

TEST(CommandLine, EveryFlagTakesEitherForm) {
  auto a = parse({"run", "--host=fd://3", "--debug-mode=unsafe", "--permissions=", "--log-fd", "5",
                  "--execution-data=/tmp/d", "--nondet-fuel=9", "--module-cache=/tmp/c", "--log-level=debug"});
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  EXPECT_EQ(a->run.hosts, (std::vector<std::string>{"fd://3"}));
  EXPECT_EQ(a->run.debug, DebugMode::kUnsafe);
  EXPECT_EQ(a->run.permissions, Permissions{});
  EXPECT_EQ(a->run.log_fd, 5);
  EXPECT_EQ(a->run.execution_data, "/tmp/d");
  EXPECT_EQ(a->run.nondet_fuel, 9u);
  EXPECT_EQ(a->run.module_cache, "/tmp/c");
  EXPECT_EQ(a->run.log_level, LogLevel::kDebug);
}

TEST(CommandLine, DefaultsAreThePublicExecutors) {
  auto c = parse({"run", "--host", "fd://3"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->run.log_fd, 2);
  EXPECT_EQ(c->run.debug, DebugMode::kDisabled);
  EXPECT_EQ(c->run.permissions, (Permissions{true, true, true, true}));
  EXPECT_EQ(c->run.execution_data, "-");
  EXPECT_FALSE(c->run.sync);
}

// One line naming the offending argument; the binary exits 2 with it.
TEST(CommandLine, RefusesUnknownFlagsRepeatsAndBadValuesInOneLine) {
  struct Case {
    std::vector<std::string_view> args;
    std::string_view says;
  } cases[] = {
      {{"--frobnicate", "run"}, "unknown argument '--frobnicate'"},
      {{"run", "--host", "fd://3", "--frobnicate=1"}, "unknown argument '--frobnicate'"},
      {{"run", "--host", "fd://3", "--debug-mode", "safe", "--debug-mode", "unsafe-tracing"}, "--debug-mode given twice"},
      {{"--log-fd=3", "run", "--host", "fd://3", "--log-fd", "4"}, "--log-fd given twice"},
      {{"run", "--host", "fd://3", "--sync", "--sync"}, "--sync given twice"},
      {{"run", "--host", "fd://3", "--sync=true"}, "--sync takes no value"},
      {{"run", "--host", "fd://3", "--debug-mode", "loud"}, "--debug-mode"},
      {{"run", "--host", "fd://3", "--permissions", "wx"}, "--permissions"},
      {{"run", "--host", "fd://3", "--genvm-id=abc"}, "--genvm-id needs an unsigned integer"},
      {{"run", "--host", "fd://3", "--log-fd=x"}, "--log-fd needs a descriptor number"},
      {{"run", "--host"}, "--host needs a value"},
      {{"run"}, "at least one --host is required"},
      {{"frob"}, "unknown command 'frob'"},
      {{}, "missing command"},
  };
  for (const Case& c : cases) {
    auto r = parse(c.args);
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_EQ(r.error().code, "bad_usage");
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  }
}

TEST(CommandLine, HelpVersionAndCheck) {
  EXPECT_EQ(parse({"--help"})->kind, Command::Kind::kHelp);
  EXPECT_EQ(parse({"run", "--help"})->kind, Command::Kind::kHelp);
  EXPECT_EQ(parse({"--version"})->kind, Command::Kind::kVersion);
  auto c = parse({"check", "x.wasm"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->kind, Command::Kind::kCheck);
  EXPECT_EQ(c->check_file, "x.wasm");
  EXPECT_FALSE(parse({"check"}).ok());
  EXPECT_FALSE(parse({"check", "a", "b"}).ok());
}

// A run without --config takes the public executor's default file, ${exeDir}/../config/genvm.yaml,
// when it exists (its cache_dir, runners_dir, fees); an explicit --config wins.
TEST(CommandLine, TheDefaultConfigIsTheFileBesideTheBinaryWhenItExists) {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "cli_test_XXXXXX").string();
  const fs::path root = ::mkdtemp(tmpl.data());
  fs::create_directories(root / "bin");
  const std::string exe_dir = (root / "bin").string();
  EXPECT_EQ(default_config_file(exe_dir), "");
  fs::create_directories(root / "config" / "genvm.yaml");  // a folder is not a config file
  EXPECT_EQ(default_config_file(exe_dir), "");
  fs::remove(root / "config" / "genvm.yaml");
  std::ofstream(root / "config" / "genvm.yaml") << "cache_dir: ${exeDir}/../.cache/\n";
  EXPECT_EQ(default_config_file(exe_dir), exe_dir + "/../config/genvm.yaml");
  fs::remove_all(root);
  // The test binary has no config beside it: a run keeps the compiled-in rules.
  auto c = parse({"run", "--host", "fd://3"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->run.fees_config, "");
  auto given = parse({"--config", "/x/genvm.yaml", "run", "--host", "fd://3"});
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->run.fees_config, "/x/genvm.yaml");
}

}  // namespace
}  // namespace genvm::executor
