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
  std::string dir = testing::temp_dir();
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
  std::string dir = testing::temp_dir();
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
