// Kill tree, teardown, spawn hygiene and the seam, with real processes.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>

#include <sstream>

#include "supervisor/test_util.h"

namespace genvm::supervisor {
namespace {

using namespace std::chrono_literals;
using testing::read_pid_file;
using testing::shell;

SupervisorOptions groups_only() {
  SupervisorOptions o;
  o.containment = false;  // prove the process-group mechanism alone
  return o;
}

TEST(KillTree, TimeoutReapsABackgroundedGrandchild) {
  // Fails with a kill of the leader's pid alone: the backgrounded sleep would be orphaned.
  Supervisor sup(groups_only());
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  auto req = shell("sleep 300 & echo $! > " + dir + "/gc; wait");
  req.timeout = 300ms;
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->signal, SIGTERM);
  pid_t gc = read_pid_file(dir + "/gc");
  ASSERT_GT(gc, 0);
  EXPECT_TRUE(testing::wait_dead(gc, 2s));
  testing::kill_if_alive(gc);
}

TEST(KillTree, AGrandchildIgnoringSigtermDiesAfterTheGrace) {
  // Fails without the SIGKILL escalation, and without escalating after the leader (which
  // dies on the SIGTERM) is gone.
  Supervisor sup(groups_only());
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  auto req = shell("(trap '' TERM; exec sleep 300) & echo $! > " + dir + "/gc; wait");
  req.timeout = 200ms;
  req.grace = 400ms;
  auto start = std::chrono::steady_clock::now();
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  pid_t gc = read_pid_file(dir + "/gc");
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->signal, SIGTERM);
  EXPECT_TRUE(testing::wait_dead(gc, 2s));
  // Lower bound only: it took the grace to need the SIGKILL.
  EXPECT_GE(std::chrono::steady_clock::now() - start, 600ms);
  testing::kill_if_alive(gc);
}

TEST(KillTree, ServerAndWaitWhoseServerIgnoresSigtermDoesNotHangTheTeardown) {
  // nx#8286: the shell dies on SIGTERM, the server ignores it and keeps the group alive.
  // A teardown that waited for the leader alone would never SIGKILL the server.
  Supervisor sup(groups_only());
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  SpawnRequest req;
  req.argv = {"/bin/sh", "-c", "(trap '' TERM; exec sleep 300) & echo $! > " + dir + "/srv; wait"};
  req.env = testing::base_env();
  auto c = sup.spawn(req);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  pid_t srv = read_pid_file(dir + "/srv");
  ASSERT_GT(srv, 0);
  Child* children[] = {&*c};
  sup.terminate(children, 300ms);
  EXPECT_TRUE(testing::dead(srv));
  EXPECT_FALSE(c->tree_alive());
  WaitStatus ws = c->wait();
  EXPECT_EQ(ws.signal, SIGTERM);
  testing::kill_if_alive(srv);
}

TEST(KillTree, TeardownOfMembersThatExitOnSigtermEndsWithoutWaitingTheGrace) {
  // Generous bound (the figure is in docs/BENCHMARKS.md): the grace is 10 s, so finishing in
  // under 5 s proves the teardown ended when the group was gone. Fails if zombies counted as
  // members (orphans wait for a slow init) or if the wait ran to the grace.
  Supervisor sup(groups_only());
  auto req = shell("sleep 300 & sleep 300 & (sleep 300; true) & wait");
  req.timeout = 200ms;
  req.grace = 10s;
  auto start = std::chrono::steady_clock::now();
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(KillTree, LeftRunningWhenTheLeaderExitsAndAMemberRemainsAndTheMemberIsKilled) {
  Supervisor sup(groups_only());
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  auto req = shell("sleep 300 >/dev/null 2>&1 & echo $! > " + dir + "/d; exit 0");
  req.capture = Capture::kBounded;
  req.grace = 500ms;
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_TRUE(r->left_running);
  pid_t d = read_pid_file(dir + "/d");
  EXPECT_TRUE(testing::wait_dead(d, 2s));
  testing::kill_if_alive(d);
}

TEST(Spawn, TheChildSeesOnlyStdioPlusThePassedFds) {
  // An fd leaked on purpose (no close-on-exec) must not reach the child: fails without the
  // close_range (or its fallback) in the child.
  int leaked = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(leaked, 0);
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  Supervisor sup;
  SpawnRequest req;
  req.argv = {testing::self_exe()};
  req.env = {{"GENVM_SUPERVISOR_HELPER", "fds"}};
  req.capture = Capture::kBounded;
  req.pass_fds = {{p[0], 5}};
  auto c = sup.spawn(req);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = ::read(c->stdout_fd(), buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  c->wait();
  EXPECT_EQ(out, "0 1 2 5 ");
  ::close(leaked);
  ::close(p[0]);
  ::close(p[1]);
}

TEST(Spawn, TheEnvHoldsExactlyTheBuiltSet) {
  Supervisor sup;
  EnvOptions o;
  o.define = {{"GENVM_X", "1"}, {"GENVM_Y", "two words"}};
  ExecuteRequest req;
  req.argv = {"/usr/bin/env"};
  req.env = build_env(o, environ);
  req.capture = Capture::kUnbounded;
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  std::string expected;
  for (const auto& [k, v] : req.env) expected += k + "=" + v + "\n";
  EXPECT_EQ(r->stdout_data, expected);
}

TEST(Spawn, AMissingCommandIsASpawnFailedValue) {
  Supervisor sup;
  ExecuteRequest req;
  req.argv = {"genvm-no-such-command-xyz"};
  req.env = testing::base_env();
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->spawn_failed);
  EXPECT_EQ(r->exit_code, 127);
  EXPECT_NE(r->error.find("not found"), std::string::npos) << r->error;
}

TEST(Spawn, AFailureInTheChildBeforeExecIsASpawnFailedValue) {
  Supervisor sup;
  auto req = shell("true");
  req.cwd = "/no/such/dir";
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->spawn_failed);
  EXPECT_NE(r->error.find("working directory"), std::string::npos) << r->error;
  SpawnRequest exec_fail;
  exec_fail.argv = {"/proc/self/stat"};  // exists, not executable as a program
  auto c = sup.spawn(exec_fail);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, "spawn_failed");
}

TEST(Spawn, ExitCodesAndSignalsAreMirrored) {
  Supervisor sup;
  auto r = sup.execute(shell("exit 3"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->signal, 0);
  r = sup.execute(shell("kill -9 $$"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->signal, 9);
  EXPECT_EQ(r->exit_code, 137);
}

TEST(Spawn, ResourceLimitsApplyInTheChild) {
  Supervisor sup;
  auto req = shell("ulimit -n");
  req.capture = Capture::kBounded;
  req.limits.rlimits = {{RLIMIT_NOFILE, 77}};
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_data, "77\n");
}

TEST(Spawn, TheChildRunsInItsOwnSessionAndGroup) {
  Supervisor sup;
  auto req = shell("ps -o pid=,pgid=,sid= -p $$");
  req.capture = Capture::kBounded;
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok());
  std::istringstream in(r->stdout_data);
  long pid = 0, pgid = 0, sid = 0;
  in >> pid >> pgid >> sid;
  EXPECT_GT(pid, 0);
  EXPECT_EQ(pid, pgid);
  EXPECT_EQ(pid, sid);
}

std::size_t open_fds() {
  std::size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
  }
  return n;
}

TEST(Spawn, RunsLeaveNoFdOpenInTheSupervisor) {
  // Every pipe end and the pidfd are closed with the Child (a leaked pidfd per run would
  // exhaust a long-lived manager's fds).
  Supervisor sup;
  ASSERT_TRUE(sup.execute(shell("true")).ok());  // the guard's pipe is opened once, here
  std::size_t before = open_fds();
  for (int i = 0; i < 10; ++i) {
    auto req = shell("echo x; echo y >&2");
    req.capture = Capture::kBounded;
    req.log_fd = 3;
    ASSERT_TRUE(sup.execute(req).ok());
  }
  EXPECT_EQ(open_fds(), before);
}

TEST(Seam, AnInvalidRequestIsOneClearError) {
  Supervisor sup;
  ExecuteRequest req;
  auto r = sup.execute(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "invalid_request");
  req = shell("true");
  req.log_fd = 1;
  EXPECT_EQ(validate(req).error().message, "log_fd must be -1 or >= 3 (0-2 are stdio)");
  req.log_fd = -1;
  req.env["A=B"] = "x";
  EXPECT_FALSE(validate(req).ok());
}

TEST(Seam, AnInvalidResultIsRefusedNamingTheField) {
  ExecuteResult ok;
  EXPECT_TRUE(validate(ok).ok());
  ExecuteResult r;
  r.exit_code = 300;
  EXPECT_EQ(validate(r).error().message, "exit_code is 300 (expected 0..255)");
  r = {};
  r.signal = 9;
  r.exit_code = 0;
  EXPECT_EQ(validate(r).error().code, "invalid_result");
  r.exit_code = 137;
  EXPECT_TRUE(validate(r).ok());
  r = {};
  r.spawn_failed = true;
  EXPECT_FALSE(validate(r).ok());  // 127 and an error are required
  r.exit_code = 127;
  r.error = "x: command not found";
  EXPECT_TRUE(validate(r).ok());
  r.timed_out = true;
  EXPECT_FALSE(validate(r).ok());
  r = {};
  r.capture = Capture::kDisabled;
  r.stdout_data = "leak";
  EXPECT_FALSE(validate(r).ok());
  r.capture = Capture::kBounded;
  r.logs.assign(kBoundedLogEntries + 1, "{}");
  EXPECT_FALSE(validate(r).ok());
}

TEST(Seam, ResultJsonIsOneLineWithEscapes) {
  ExecuteResult r;
  r.capture = Capture::kBounded;
  r.stdout_data = "a\"b\n\x01\xff";
  std::string j = to_json(r);
  EXPECT_EQ(j.find('\n'), std::string::npos);
  EXPECT_NE(j.find("\"stdout\":\"a\\\"b\\n\\u0001\\u00ff\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"capture\":\"bounded\""), std::string::npos);
}

}  // namespace
}  // namespace genvm::supervisor
