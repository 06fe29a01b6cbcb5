// Containment beyond process groups: a run's cgroup holds what setsid/double-fork escapes,
// and carries its pids and memory limits. Skipped where no cgroup hierarchy is writable.
#include <gtest/gtest.h>

#include "supervisor/internal.h"
#include "supervisor/test_util.h"

namespace genvm::supervisor {
namespace {

using namespace std::chrono_literals;
using testing::read_pid_file;

#define SKIP_WITHOUT_CONTAINMENT(sup)                                                        \
  if ((sup).containment() == Containment::kProcessGroup)                                     \
  GTEST_SKIP() << "no writable cgroup hierarchy here (needs root with cgroup v1 pids+memory+" \
                  "freezer, or v2 with pids+memory delegated)"

// A daemon that leaves the run's session and group: setsid, then exec.
std::string escapee_script(const std::string& pid_file) {
  return "setsid sh -c 'echo $$ > " + pid_file + "; exec sleep 300' </dev/null >/dev/null 2>&1 & sleep 300";
}

TEST(Containment, DetectionPicksAModeAndLogsIt) {
  static std::string logged;
  SupervisorOptions o;
  o.log = [](std::string_view line) { logged = std::string(line); };
  Supervisor sup(o);
  EXPECT_NE(logged.find("\"event\":\"containment\""), std::string::npos);
  EXPECT_NE(logged.find(std::string(to_string(sup.containment()))), std::string::npos) << logged;
  SupervisorOptions off;
  off.containment = false;
  EXPECT_EQ(Supervisor(off).containment(), Containment::kProcessGroup);
}

TEST(Containment, ASetsidEscapeeDiesAtTimeout) {
  Supervisor sup;
  SKIP_WITHOUT_CONTAINMENT(sup);
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  auto req = testing::shell(escapee_script(dir + "/esc"));
  req.timeout = 300ms;
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->timed_out);
  pid_t esc = read_pid_file(dir + "/esc");
  ASSERT_GT(esc, 0);
  EXPECT_TRUE(testing::wait_dead(esc, 2s)) << "the escapee outlived the run's cgroup kill";
  testing::kill_if_alive(esc);

  // The control: with process groups alone the same escapee survives, so this test fails
  // when the cgroup kill is removed.
  SupervisorOptions o;
  o.containment = false;
  Supervisor groups(o);
  auto req2 = testing::shell(escapee_script(dir + "/esc2"));
  req2.timeout = 300ms;
  ASSERT_TRUE(groups.execute(req2).ok());
  pid_t esc2 = read_pid_file(dir + "/esc2");
  ASSERT_GT(esc2, 0);
  EXPECT_FALSE(testing::dead(esc2));
  testing::kill_if_alive(esc2);
}

TEST(Containment, ASetsidEscapeeDiesWithAKill9OfTheSupervisor) {
  // Fails without the guard's cgroup kill: the escapee is in no listed group.
  Supervisor probe;
  SKIP_WITHOUT_CONTAINMENT(probe);
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  int rd = -1;
  pid_t mgr = testing::fork_manager(
      [&](int fd) {
        Supervisor sup;
        SpawnRequest req;
        req.argv = {"/bin/sh", "-c", escapee_script(dir + "/esc")};
        req.env = testing::base_env();
        auto c = sup.spawn(req);
        testing::write_line(fd, c.ok() ? "spawned" : c.error().to_string());
        ::pause();
      },
      rd);
  ASSERT_EQ(testing::read_line(rd), "spawned");
  pid_t esc = read_pid_file(dir + "/esc");
  ASSERT_GT(esc, 0);
  ::kill(mgr, SIGKILL);
  ::waitpid(mgr, nullptr, 0);
  EXPECT_TRUE(testing::wait_dead(esc, 2s));
  testing::kill_if_alive(esc);
  ::close(rd);
}

TEST(Containment, AForkBombIsHeldByThePidsLimit) {
  // 60 background sleeps against a limit of 10: the shell's fork fails ("Cannot fork") and
  // the run never holds more than 10 processes. Fails without pids.max (60 would run).
  Supervisor sup;
  SKIP_WITHOUT_CONTAINMENT(sup);
  SpawnRequest req;
  req.argv = {"/bin/sh", "-c", "i=0; while [ $i -lt 60 ]; do sleep 300 & i=$((i+1)); done; wait"};
  req.env = testing::base_env();
  req.limits.pids_max = 10;
  req.capture = Capture::kBounded;
  auto c = sup.spawn(req);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  std::size_t most = 0;
  auto count = [&] {
    std::size_t n = 0;
    for (const auto& row : internal::read_proc_table()) {
      if (row.pgrp == c->pgid() && row.state != 'Z') ++n;
    }
    most = std::max(most, n);
    return n;
  };
  // Until the shell gave up (or, without a limit, finished its loop) and its sleeps settle.
  testing::wait_until([&] { count(); return c->try_wait().has_value(); }, 3s);
  std::this_thread::sleep_for(100ms);
  count();
  EXPECT_LE(most, 10u);
  EXPECT_GE(most, 5u);  // the limit held them, it did not stop the shell from starting
  Child* cs[] = {&*c};
  sup.terminate(cs, 200ms);
  std::string err;
  char buf[512];
  ssize_t n;
  while ((n = ::read(c->stderr_fd(), buf, sizeof buf)) > 0) err.append(buf, static_cast<std::size_t>(n));
  EXPECT_NE(err.find("fork"), std::string::npos) << err;
}

TEST(Containment, AMemoryHogIsKilledByTheMemoryLimitAndReportedSo) {
  Supervisor sup;
  SKIP_WITHOUT_CONTAINMENT(sup);
  ExecuteRequest req;
  req.argv = {testing::self_exe()};
  req.env = {{"GENVM_SUPERVISOR_HELPER", "hog"}, {"GENVM_SUPERVISOR_HELPER_ARG", "256"}};
  req.limits.memory_max_bytes = 64ull << 20;
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->signal, SIGKILL);
  EXPECT_TRUE(r->oom_killed);
  // The control: the same hog without the limit exits 0 and is not reported.
  req.limits.memory_max_bytes = 0;
  r = sup.execute(req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_FALSE(r->oom_killed);
}

TEST(Containment, NoRunCgroupIsLeftBehind) {
  Supervisor sup;
  SKIP_WITHOUT_CONTAINMENT(sup);
  auto req = testing::shell("sleep 300 & wait");
  req.timeout = 300ms;
  ASSERT_TRUE(sup.execute(req).ok());
  ASSERT_TRUE(sup.execute(testing::shell("true")).ok());
  // Run cgroups are named genvm-<pid>-<supervisor>-<run> under the hierarchy's parent dir.
  internal::CgroupLayout l;
  std::string why;
  internal::detect_containment(l, why);
  std::string cmd = "ls " + std::string(l.pids) + " | grep -c '^genvm-" + std::to_string(::getpid()) + "-' || true";
  std::string listing;
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[64] = {};
  if (p) {
    if (std::fgets(buf, sizeof buf, p)) listing = buf;
    ::pclose(p);
  }
  EXPECT_EQ(listing, "0\n");
}

}  // namespace
}  // namespace genvm::supervisor

namespace genvm::supervisor {
namespace {

using namespace std::chrono_literals;

SupervisorOptions pid_namespace_options() {
  SupervisorOptions o;
  o.prefer_pid_namespace = true;
  return o;
}

#define SKIP_WITHOUT_PID_NAMESPACE(sup)                     \
  if ((sup).containment() != Containment::kPidNamespace)    \
  GTEST_SKIP() << "cannot create pid namespaces here (needs root: unshare(CLONE_NEWPID))"

TEST(PidNamespace, TheLeadersStatusOutputAndLateGrandchildOutputPassThrough) {
  Supervisor sup(pid_namespace_options());
  SKIP_WITHOUT_PID_NAMESPACE(sup);
  auto req = testing::shell("echo $$; (sleep 0.2; echo late) & exit 3");
  req.capture = Capture::kUnbounded;
  auto r = sup.execute(req);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->containment, Containment::kPidNamespace);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->stdout_data, "2\nlate\n");  // pid 2: the leader, under our init (pid 1)
  EXPECT_FALSE(r->left_running);
  r = sup.execute(testing::shell("kill -9 $$"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->signal, SIGKILL);
}

// The escapee's pid as this (outer) namespace sees it, from the /proc entry whose NSpid ends
// with the inner pid it wrote, under the run's init.
pid_t outer_pid_of_sleeper(pid_t init) {
  for (const auto& row : internal::read_proc_table()) {
    if (row.pid == init) continue;
    std::ifstream f("/proc/" + std::to_string(row.pid) + "/status");
    std::string line;
    bool under = false, sleeper = false;
    while (std::getline(f, line)) {
      if (line.rfind("Name:", 0) == 0) sleeper = line.find("sleep") != std::string::npos;
      if (line.rfind("NSpid:", 0) == 0) under = line.find('\t', 7) != std::string::npos;  // two levels
    }
    if (under && sleeper) {
      // Same namespace as the init's children: compare the pid-namespace links.
      char a[64] = {}, b[64] = {};
      std::string pa = "/proc/" + std::to_string(row.pid) + "/ns/pid", pb = "/proc/" + std::to_string(init) + "/ns/pid_for_children";
      if (::readlink(pa.c_str(), a, sizeof a - 1) > 0 && ::readlink(pb.c_str(), b, sizeof b - 1) > 0 && std::string(a) == b) {
        return row.pid;
      }
    }
  }
  return 0;
}

TEST(PidNamespace, ASetsidEscapeeIgnoringSigtermDiesWhenTheNamespaceEnds) {
  // The escapee ignores the relayed SIGTERM; only the end of the namespace (its init
  // SIGKILLed after the grace) kills it. Fails without the namespace: the control in
  // Containment.ASetsidEscapeeDiesAtTimeout shows an escapee surviving process groups alone.
  Supervisor sup(pid_namespace_options());
  SKIP_WITHOUT_PID_NAMESPACE(sup);
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  SpawnRequest req;
  req.argv = {"/bin/sh", "-c",
              "setsid sh -c 'trap \"\" TERM; echo $$ > " + dir +
                  "/esc; exec sleep 300' </dev/null >/dev/null 2>&1 & sleep 300"};
  req.env = testing::base_env();
  auto c = sup.spawn(req);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  ASSERT_GT(testing::read_pid_file(dir + "/esc"), 0);  // inner pid: written, so it runs
  pid_t esc = 0;
  testing::wait_until([&] { return (esc = outer_pid_of_sleeper(c->pid())) > 0; }, 2s);
  ASSERT_GT(esc, 0);
  Child* cs[] = {&*c};
  sup.terminate(cs, 300ms);
  EXPECT_TRUE(testing::wait_dead(esc, 2s));
  testing::kill_if_alive(esc);
}

TEST(PidNamespace, ASetsidEscapeeDiesWithAKill9OfTheSupervisor) {
  // The guard lists the namespace's init; its SIGKILL ends the namespace.
  Supervisor probe(pid_namespace_options());
  SKIP_WITHOUT_PID_NAMESPACE(probe);
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  int rd = -1;
  pid_t mgr = testing::fork_manager(
      [&](int fd) {
        Supervisor sup(pid_namespace_options());
        SpawnRequest req;
        req.argv = {"/bin/sh", "-c", escapee_script(dir + "/esc")};
        req.env = testing::base_env();
        auto c = sup.spawn(req);
        testing::write_line(fd, c.ok() ? std::to_string(c->pid()) : std::string("0"));
        ::pause();
      },
      rd);
  pid_t init = static_cast<pid_t>(std::atol(testing::read_line(rd).c_str()));
  ASSERT_GT(init, 0);
  ASSERT_GT(testing::read_pid_file(dir + "/esc"), 0);
  pid_t esc = 0;
  testing::wait_until([&] { return (esc = outer_pid_of_sleeper(init)) > 0; }, 2s);
  ASSERT_GT(esc, 0);
  ::kill(mgr, SIGKILL);
  ::waitpid(mgr, nullptr, 0);
  EXPECT_TRUE(testing::wait_dead(esc, 2s));
  testing::kill_if_alive(esc);
  ::close(rd);
}

}  // namespace
}  // namespace genvm::supervisor
