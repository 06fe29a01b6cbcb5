// The guard: a kill -9 of the supervising process takes every listed run's tree with it.
// Each "manager" is a fork of this test process that drives a Supervisor and is then killed.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <fcntl.h>

#include <sstream>

#include "supervisor/internal.h"
#include "supervisor/test_util.h"

namespace genvm::supervisor {
namespace {

using namespace std::chrono_literals;
using testing::read_line;
using testing::read_pid_file;
using testing::write_line;

SpawnRequest background_sleeper(const std::string& pid_file) {
  SpawnRequest req;
  req.argv = {"/bin/sh", "-c", "sleep 300 & echo $! > " + pid_file + "; wait"};
  req.env = testing::base_env();
  return req;
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

TEST(Guard, ARunThatSpawnsNothingStartsNoGuardAndTheFirstSpawnStartsOne) {
  Supervisor sup;
  EXPECT_EQ(sup.guard_pid(), -1);
  auto r = sup.execute(testing::shell("true"));
  ASSERT_TRUE(r.ok());
  EXPECT_GT(sup.guard_pid(), 0);
  pid_t first = sup.guard_pid();
  r = sup.execute(testing::shell("true"));
  EXPECT_EQ(sup.guard_pid(), first);  // one per Supervisor, not one per spawn
}

TEST(Guard, AKill9OfTheSupervisorKillsTheGrandchildrenOfEveryListedRun) {
  // Fails without the guard (SupervisorOptions::guard = false leaves all three alive).
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  int rd = -1;
  pid_t mgr = testing::fork_manager(
      [&](int fd) {
        SupervisorOptions o;
        o.containment = false;  // the group mechanism alone
        Supervisor sup(o);
        std::vector<Child> kids;
        for (int i = 0; i < 3; ++i) {
          auto c = sup.spawn(background_sleeper(dir + "/gc" + std::to_string(i)));
          if (c.ok()) kids.push_back(std::move(*c));
        }
        write_line(fd, "ready");
        ::pause();
      },
      rd);
  ASSERT_EQ(read_line(rd), "ready");
  std::vector<pid_t> gcs;
  for (int i = 0; i < 3; ++i) gcs.push_back(read_pid_file(dir + "/gc" + std::to_string(i)));
  kill_and_reap(mgr);
  for (pid_t gc : gcs) {
    ASSERT_GT(gc, 0);
    EXPECT_TRUE(testing::wait_dead(gc, 2s)) << "grandchild " << gc << " outlived kill -9";
    testing::kill_if_alive(gc);
  }
  ::close(rd);
}

TEST(Guard, ARunReleasedBeforeACleanExitIsLeftAlone) {
  // The control: fails without the release (the guard would kill it at the clean exit).
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  int rd = -1;
  pid_t mgr = testing::fork_manager(
      [&](int fd) {
        Supervisor sup;
        SpawnRequest req;
        req.argv = {"/bin/sh", "-c", "sleep 300 & echo $! > " + dir + "/gc"};
        req.env = testing::base_env();
        auto c = sup.spawn(req);
        if (c.ok()) {
          c->wait();
          c->release();
          sup.flush_guard();
        }
        write_line(fd, "done");
      },  // clean exit: ~Supervisor closes the pipe
      rd);
  EXPECT_EQ(read_line(rd), "done");
  ::waitpid(mgr, nullptr, 0);
  pid_t gc = read_pid_file(dir + "/gc");
  ASSERT_GT(gc, 0);
  std::this_thread::sleep_for(500ms);
  EXPECT_FALSE(testing::dead(gc));
  testing::kill_if_alive(gc);
  ::close(rd);
}

TEST(Guard, AfterABurstOf2000ReleasesANewRunStillDiesWithAKill9) {
  // 2,000 releases in one flush overrun a small pipe (4 KiB) that a stopped guard does not
  // drain; the flush must wait for the guard (it resumes after 300 ms) instead of calling it
  // dead. Fails if a full pipe is read as a dead guard: the new run would go unguarded.
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  int rd = -1;
  pid_t mgr = testing::fork_manager(
      [&](int fd) {
        struct rlimit rl {20000, 20000};
        ::setrlimit(RLIMIT_NOFILE, &rl);
        SupervisorOptions o;
        o.containment = false;  // the queue is under test; cgroups would only slow the burst
        o.guard_pipe_bytes = 4096;
        o.guard_stall = 5000ms;
        Supervisor sup(o);
        std::vector<Child> done;
        SpawnRequest t;
        t.argv = {"/bin/true"};
        for (int i = 0; i < 2000; ++i) {
          auto c = sup.spawn(t);
          if (!c.ok()) break;
          c->wait();
          done.push_back(std::move(*c));
        }
        ::kill(sup.guard_pid(), SIGSTOP);
        pid_t g = sup.guard_pid();
        testing::wait_until([g] { return testing::proc_state(g) == 'T'; }, 2s);
        std::thread resume([g] {
          std::this_thread::sleep_for(300ms);
          ::kill(g, SIGCONT);
        });
        for (Child& c : done) c.release();
        sup.flush_guard();  // the burst
        resume.join();
        write_line(fd, sup.guard_alive() ? "alive" : "dead");
        auto c = sup.spawn(background_sleeper(dir + "/gc"));
        write_line(fd, c.ok() ? "spawned" : "failed");
        ::pause();
      },
      rd);
  EXPECT_EQ(read_line(rd), "alive");
  ASSERT_EQ(read_line(rd), "spawned");
  pid_t gc = read_pid_file(dir + "/gc");
  ASSERT_GT(gc, 0);
  kill_and_reap(mgr);
  EXPECT_TRUE(testing::wait_dead(gc, 2s));
  testing::kill_if_alive(gc);
  ::close(rd);
}

TEST(Guard, AStoppedGuardThatOverranItsQueueIsKilledSoAReleasedRunSurvivesACleanExit) {
  // The guard stays stopped past the stall limit while our releases overrun its pipe: we give
  // it up and SIGKILL it with its stale list. Fails without that SIGKILL: resumed later, the
  // guard would reach EOF with the released run still listed and kill it.
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  int rd = -1;
  pid_t mgr = testing::fork_manager(
      [&](int fd) {
        SupervisorOptions o;
        o.containment = false;  // the queue is under test
        o.guard_pipe_bytes = 4096;
        o.guard_stall = 300ms;
        Supervisor sup(o);
        SpawnRequest req;
        req.argv = {"/bin/sh", "-c", "sleep 300 & echo $! > " + dir + "/gc"};
        req.env = testing::base_env();
        auto keep = sup.spawn(req);
        std::vector<Child> filler;
        SpawnRequest t;
        t.argv = {"/bin/true"};
        for (int i = 0; i < 600; ++i) {
          auto c = sup.spawn(t);
          if (!c.ok()) break;
          c->wait();
          filler.push_back(std::move(*c));
        }
        write_line(fd, std::to_string(sup.guard_pid()));
        pid_t g = sup.guard_pid();
        ::kill(g, SIGSTOP);
        // Stopped for sure before the burst: a read racing the stop would drain one piece.
        testing::wait_until([g] { return testing::proc_state(g) == 'T'; }, 2s);
        for (Child& c : filler) c.release();
        if (keep.ok()) {
          keep->wait();
          keep->release();
        }
        sup.flush_guard();
        write_line(fd, sup.guard_alive() ? "alive" : "dead");
      },
      rd);
  pid_t guard = static_cast<pid_t>(std::atol(read_line(rd).c_str()));
  EXPECT_EQ(read_line(rd), "dead");
  ::waitpid(mgr, nullptr, 0);
  if (guard > 1 && !testing::dead(guard)) ::kill(guard, SIGCONT);  // a guard left alive resumes
  pid_t gc = read_pid_file(dir + "/gc");
  ASSERT_GT(gc, 0);
  std::this_thread::sleep_for(500ms);
  EXPECT_FALSE(testing::dead(gc));
  testing::kill_if_alive(gc);
  ::close(rd);
}

// With the guard stopped, spawns `sleep 300` runs (never reaped or released) until their own
// "+" lines overrun its 4 KiB pipe: the child whose line meets the full queue must retry. A
// thread does `then_signal` to the guard after 1.5 s (by then the queue is full and a spawn
// is waiting on that child). Reports every run's pid on one line.
void list_behind_a_full_queue(int fd, int then_signal) {
  SupervisorOptions o;
  o.containment = false;
  o.guard_pipe_bytes = 4096;
  Supervisor sup(o);
  SpawnRequest t;
  t.argv = {"/bin/sleep", "300"};
  std::vector<Child> runs;
  auto first = sup.spawn(t);  // starts the guard
  if (!first.ok()) return;
  runs.push_back(std::move(*first));
  pid_t g = sup.guard_pid();
  ::kill(g, SIGSTOP);
  testing::wait_until([g] { return testing::proc_state(g) == 'T'; }, 2s);
  std::thread later([g, then_signal] {
    std::this_thread::sleep_for(1500ms);
    ::kill(g, then_signal);
  });
  for (int i = 0; i < 500; ++i) {  // ~10 bytes a line: about 410 fill 4 KiB
    auto c = sup.spawn(t);
    if (c.ok()) runs.push_back(std::move(*c));
  }
  later.join();
  std::string pids;
  for (const Child& c : runs) pids += std::to_string(c.pid()) + " ";
  write_line(fd, pids);
  ::pause();
}

std::vector<pid_t> parse_pids(const std::string& line) {
  std::vector<pid_t> out;
  std::istringstream in(line);
  long p;
  while (in >> p) out.push_back(static_cast<pid_t>(p));
  return out;
}

TEST(Guard, AChildListingBehindAStoppedGuardsFullQueueRetriesAndDiesWithAKill9) {
  // Fails without the child's retry on EAGAIN: the line that met the full queue would be
  // dropped, that run unlisted, and it would outlive the kill -9.
  int rd = -1;
  pid_t mgr = testing::fork_manager([&](int fd) { list_behind_a_full_queue(fd, SIGCONT); }, rd);
  std::vector<pid_t> pids = parse_pids(read_line(rd));
  ASSERT_EQ(pids.size(), 501u);
  kill_and_reap(mgr);
  std::size_t alive = 0;
  testing::wait_until(
      [&] {
        alive = 0;
        for (pid_t p : pids) alive += testing::dead(p) ? 0 : 1;
        return alive == 0;
      },
      3s);
  EXPECT_EQ(alive, 0u);
  for (pid_t p : pids) testing::kill_if_alive(p);
  ::close(rd);
}

TEST(Guard, AChildListingBehindAFullQueueRunsWhenTheGuardIsKilledInstead) {
  // The retry ends when the guard is gone or a zombie (its parent, the manager, has not reaped
  // it). Hangs (spawn never returns) without the guard-state check.
  int rd = -1;
  pid_t mgr = testing::fork_manager([&](int fd) { list_behind_a_full_queue(fd, SIGKILL); }, rd);
  std::vector<pid_t> pids = parse_pids(read_line(rd));
  EXPECT_EQ(pids.size(), 501u);  // every spawn returned
  kill_and_reap(mgr);
  for (pid_t p : pids) testing::kill_if_alive(p);
  ::close(rd);
}

TEST(Guard, ADeadGuardIsHandedToNoLaterSpawn) {
  // A child that listed itself with a dead guard must not wait on it. Fails (the run fails or
  // hangs) if a dead guard is passed on.
  Supervisor sup;
  ASSERT_TRUE(sup.execute(testing::shell("true")).ok());
  pid_t g = sup.guard_pid();
  ASSERT_GT(g, 0);
  ::kill(g, SIGKILL);
  ASSERT_TRUE(testing::wait_until([&] { return testing::proc_state(g) == 'Z'; }, 2s));
  EXPECT_FALSE(sup.guard_alive());
  auto r = sup.execute(testing::shell("echo ok"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(sup.guard_pid(), -1);
}

TEST(GuardProcess, AGroupListedTwiceIsStruckByOneReleaseAndAListedOneDiesAtEof) {
  // Drives the guard directly. Fails without the dedupe (the second "+" would leave an entry
  // that kills the released group at EOF), and without the kill at EOF (the control).
  SupervisorOptions o;
  o.containment = false;
  o.guard = false;
  Supervisor sup(o);
  SpawnRequest req;
  req.argv = {"/bin/sleep", "300"};
  auto released = sup.spawn(req);
  auto listed = sup.spawn(req);
  ASSERT_TRUE(released.ok() && listed.ok());
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  internal::CgroupLayout layout;
  pid_t g = internal::fork_guard(p[0], layout);
  ASSERT_GT(g, 0);
  ::close(p[0]);
  std::string a = std::to_string(released->pgid()), b = std::to_string(listed->pgid());
  std::string lines = "+" + a + " 0\n+" + a + " 0\n+" + b + " 0\n-" + a + " 0\n";
  ASSERT_EQ(::write(p[1], lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
  ::close(p[1]);
  ::waitpid(g, nullptr, 0);
  listed->wait();
  EXPECT_EQ(listed->wait().signal, SIGKILL);
  EXPECT_FALSE(testing::dead(released->pid()));
  ::kill(released->pid(), SIGKILL);
  released->wait();
}

TEST(Guard, AReleaseUnderTwoHoldsIsWrittenOnceBothEnd) {
  // Observable as: the released run survives a kill -9 once both holds ended.
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  int rd = -1;
  pid_t mgr = testing::fork_manager(
      [&](int fd) {
        Supervisor sup;
        SpawnRequest req;
        req.argv = {"/bin/sh", "-c", "sleep 300 & echo $! > " + dir + "/gc"};
        req.env = testing::base_env();
        auto c = sup.spawn(req);
        if (c.ok()) {
          c->wait();
          Child* cs[] = {&*c};
          {
            auto h = sup.hold(cs);
            auto h2 = sup.hold(cs);
            c->release();
          }
          sup.flush_guard();
        }
        write_line(fd, "released");
        ::pause();
      },
      rd);
  EXPECT_EQ(read_line(rd), "released");
  pid_t gc = read_pid_file(dir + "/gc");
  kill_and_reap(mgr);
  std::this_thread::sleep_for(500ms);
  EXPECT_FALSE(testing::dead(gc));
  testing::kill_if_alive(gc);
  ::close(rd);
}

TEST(Guard, AHeldGroupStaysListedUntilTheLastHoldEnds) {
  // A release during a teardown's hold is deferred: a kill -9 while the hold lives still kills
  // the run. Fails if the release is written at once.
  testing::ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  int rd = -1;
  pid_t mgr = testing::fork_manager(
      [&](int fd) {
        SupervisorOptions o;
        o.containment = false;
        Supervisor sup(o);
        SpawnRequest req;
        req.argv = {"/bin/sh", "-c", "sleep 300 & echo $! > " + dir + "/gc"};
        req.env = testing::base_env();
        auto c = sup.spawn(req);
        if (c.ok()) {
          c->wait();
          Child* cs[] = {&*c};
          auto h = sup.hold(cs);
          c->release();
          sup.flush_guard();
          write_line(fd, "held");
          ::pause();
        }
      },
      rd);
  EXPECT_EQ(read_line(rd), "held");
  pid_t gc = read_pid_file(dir + "/gc");
  kill_and_reap(mgr);
  EXPECT_TRUE(testing::wait_dead(gc, 2s));
  testing::kill_if_alive(gc);
  ::close(rd);
}

}  // namespace
}  // namespace genvm::supervisor
