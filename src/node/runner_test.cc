// node::Runner: what running through the manager library gives the node beyond a plain
// fork/exec — the process-tree kill, the deadline and the failed_to_start path — with stand-in
// executors (shell scripts) so each mechanism is seen on its own.
#include "node/runner.h"
#include "node/test_state_dir.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace genvm::node {
namespace {

using calldata::Value;

class RunnerTest : public testing::StateDir {
 protected:
  void SetUp() override {
    StateDir::SetUp();
    ASSERT_TRUE(open_state());
  }
  std::string script(const std::string& body) {
    std::string p = dir_ + "/exe.sh";
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    ::chmod(p.c_str(), 0755);
    return p;
  }
  // Execution data the manager accepts (its MessageData complete, as the public decoder
  // requires); a stand-in executor never reads it.
  static Value data() {
    calldata::Address a;
    return Value::map({{"calldata", calldata::Bytes{}},
                       {"host_data", ""},
                       {"code", Value()},
                       {"leader_nondet_results", Value()},
                       {"initial_time_units_allocation", 0},
                       {"bucket_totals", Value::Array{}},
                       {"message", Value::map({{"contract_address", a}, {"sender_address", a}, {"origin_address", a},
                                               {"signer_address", a}, {"chain_id", 1}, {"value", 0},
                                               {"is_init", false}})}});
  }
};

bool alive(pid_t pid) {
  // A zombie waiting for a slow init to reap it is dead for our purpose.
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// Fails with a plain fork/exec (the node's former way): the grandchild the executor leaves
// behind would keep running. The manager kills the whole tree when the leader exits.
TEST_F(RunnerTest, WhatTheExecutorLeavesBehindIsKilled) {
  std::string exe = script("sleep 600 &\necho $! > " + dir_ + "/pid\nexit 3");
  Runner runner;
  auto r = runner.run(exe, data(), "wscn", *state_, 60000);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_TRUE(r->report.is_null());
  pid_t pid = 0;
  std::ifstream(dir_ + "/pid") >> pid;
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 100 && alive(pid); ++i) ::usleep(20000);  // SIGKILL delivery is async
  EXPECT_FALSE(alive(pid)) << "grandchild " << pid << " outlived the run";
  if (alive(pid)) ::kill(pid, SIGKILL);
}

// Fails without the manager's deadline: the run would never end.
TEST_F(RunnerTest, DeadlineKillsAHangingExecutor) {
  std::string exe = script("exec sleep 600");
  Runner runner;
  auto r = runner.run(exe, data(), "wscn", *state_, 300);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->timed_out);
  EXPECT_TRUE(r->report.is_null());
}

TEST_F(RunnerTest, StderrTailIsKeptForDiagnostics) {
  std::string exe = script("echo 'the executor says why' >&2\nexit 1");
  Runner runner;
  auto r = runner.run(exe, data(), "wscn", *state_, 60000);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_NE(r->stderr_text.find("the executor says why"), std::string::npos) << r->stderr_text;
}

TEST_F(RunnerTest, MissingExecutorIsAnError) {
  Runner runner;
  auto r = runner.run(dir_ + "/none", data(), "wscn", *state_, 1000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "genvm_missing");
}

}  // namespace
}  // namespace genvm::node
