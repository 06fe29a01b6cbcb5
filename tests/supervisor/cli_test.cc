// genvm-supervise as a user runs it: a real binary, real signals, real grandchildren.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using namespace std::chrono_literals;

char proc_state(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close = s.rfind(')');
  return close == std::string::npos || close + 2 >= s.size() ? 0 : s[close + 2];
}

bool dead(pid_t pid) {
  char st = proc_state(pid);
  return st == 0 || st == 'Z' || st == 'X';
}

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return cond();
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

pid_t read_pid_file(const std::string& path) {
  pid_t pid = 0;
  wait_until(
      [&] {
        std::string t = slurp(path);
        if (t.find('\n') == std::string::npos) return false;
        pid = static_cast<pid_t>(std::atol(t.c_str()));
        return pid > 0;
      },
      5s);
  return pid;
}

struct Cli {
  pid_t pid = -1;
  std::string out_path, err_path;
};

Cli start(const std::vector<std::string>& args, const std::string& dir) {
  Cli c;
  c.out_path = dir + "/out";
  c.err_path = dir + "/err";
  std::vector<std::string> all = {GENVM_SUPERVISE_BIN};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, c.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, c.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (posix_spawn(&c.pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) c.pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return c;
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// One test's directory, removed with its contents when the test ends (these piled up in /tmp).
class ScopedTempDir {
 public:
  ScopedTempDir() {
    std::string t = "/tmp/genvm-supervise-test-XXXXXX";
    if (::mkdtemp(t.data()) != nullptr) path = t;
  }
  ~ScopedTempDir() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  std::string path;
};

void kill_if_alive(pid_t pid) {
  if (pid > 1 && !dead(pid)) ::kill(pid, SIGKILL);
}

class SignalToSupervisor : public ::testing::TestWithParam<int> {};

TEST_P(SignalToSupervisor, ReapsTheTreeAndExits128PlusN) {
  // Fails if the supervisor forwarded the signal to its child's pid alone (the backgrounded
  // sleep would be orphaned) or exited without tearing the tree down.
  int sig = GetParam();
  ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  Cli c = start({"--no-containment", "--", "/bin/sh", "-c", "sleep 300 & echo $! > " + dir + "/gc; wait"}, dir);
  ASSERT_GT(c.pid, 0);
  pid_t gc = read_pid_file(dir + "/gc");
  ASSERT_GT(gc, 0);
  ::kill(c.pid, sig);
  EXPECT_EQ(wait_exit(c.pid), 128 + sig);
  EXPECT_TRUE(wait_until([gc] { return dead(gc); }, 2s));
  EXPECT_NE(slurp(c.out_path).find("\"interrupted_by\":" + std::to_string(sig)), std::string::npos);
  kill_if_alive(gc);
}

INSTANTIATE_TEST_SUITE_P(IntTermHup, SignalToSupervisor, ::testing::Values(SIGINT, SIGTERM, SIGHUP));

TEST(Cli, AKill9OfTheSupervisorKillsTheTreeThroughTheGuard) {
  // Fails with --no-guard (the grandchild outlives it).
  ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  Cli c = start({"--", "/bin/sh", "-c", "sleep 300 & echo $! > " + dir + "/gc; wait"}, dir);
  pid_t gc = read_pid_file(dir + "/gc");
  ASSERT_GT(gc, 0);
  ::kill(c.pid, SIGKILL);
  wait_exit(c.pid);
  EXPECT_TRUE(wait_until([gc] { return dead(gc); }, 2s));
  kill_if_alive(gc);
}

TEST(Cli, TimeoutExits124AndPrintsOneJsonObject) {
  ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  Cli c = start({"--timeout", "200ms", "--grace", "1s", "--", "/bin/sh", "-c", "echo started; sleep 300"}, dir);
  EXPECT_EQ(wait_exit(c.pid), 124);
  std::string out = slurp(c.out_path);
  EXPECT_EQ(out.find('\n'), out.size() - 1) << out;  // one line
  EXPECT_EQ(out.front(), '{');
  EXPECT_NE(out.find("\"timed_out\":true"), std::string::npos) << out;
  EXPECT_NE(out.find("\"stdout\":\"started\\n\""), std::string::npos) << out;
}

TEST(Cli, ABackgroundChildHoldingStdoutEndsWithTheLeaderNotAtTheTimeout) {
  // The leader exits at once; the backgrounded sleep keeps stdout open. Fails if the CLI reads
  // until EOF without a bound (it then reports timed_out after the 30 s timeout).
  ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  auto begin = std::chrono::steady_clock::now();
  Cli c = start({"--timeout", "30s", "--", "/bin/sh", "-c", "sleep 705 & echo $! > " + dir + "/gc; exit 0"}, dir);
  ASSERT_GT(c.pid, 0);
  EXPECT_EQ(wait_exit(c.pid), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 10s);
  std::string out = slurp(c.out_path);
  EXPECT_NE(out.find("\"exit_code\":0,"), std::string::npos) << out;
  EXPECT_NE(out.find("\"timed_out\":false"), std::string::npos) << out;
  EXPECT_NE(out.find("\"left_running\":true"), std::string::npos) << out;
  pid_t gc = read_pid_file(dir + "/gc");
  EXPECT_TRUE(wait_until([gc] { return gc > 0 && dead(gc); }, 2s)) << "the group was not ended";
  kill_if_alive(gc);
}

// A daemon as root can write: it moves itself out of the run's v1 cgroups (into their parent,
// the supervisor's own), leaves the session with setsid, closes its output and sleeps.
std::string cgroup_escapee(const std::string& dir) {
  return "setsid sh -c 'for c in pids memory freezer; do "
         "p=$(sed -n \"s/^[0-9]*:$c:\\(.*\\)/\\1/p\" /proc/self/cgroup); "
         "echo $$ > /sys/fs/cgroup/$c$(dirname $p)/cgroup.procs || exit 1; done; "
         "cat /proc/self/cgroup > " + dir + "/cg; echo $$ > " + dir + "/esc; exec sleep 306' "
         "</dev/null >/dev/null 2>&1 & sleep 0.5; exit 0";
}

TEST(Cli, ARootEscapeeThatLeftItsCgroupAndSessionIsLeftRunningAndEnded) {
  // Fails without the subreaper: the escapee is reparented to init, in no group or cgroup of
  // the run, and the report said left_running:false while it lived on.
  ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  Cli c = start({"--timeout", "20s", "--", "/bin/sh", "-c", cgroup_escapee(dir)}, dir);
  ASSERT_GT(c.pid, 0);
  EXPECT_EQ(wait_exit(c.pid), 0);
  std::string out = slurp(c.out_path);
  if (out.find("\"containment\":\"cgroup-v1\"") == std::string::npos) {
    GTEST_SKIP() << "needs cgroup v1 containment (the escapee moves between v1 hierarchies): " << out;
  }
  pid_t esc = read_pid_file(dir + "/esc");
  ASSERT_GT(esc, 0) << "the escapee did not leave its cgroups";
  EXPECT_EQ(slurp(dir + "/cg").find("genvm-"), std::string::npos) << "still in a run cgroup: " << slurp(dir + "/cg");
  EXPECT_NE(out.find("\"left_running\":true"), std::string::npos) << out;
  EXPECT_TRUE(wait_until([esc] { return dead(esc); }, 2s)) << "the escapee outlived the run";
  kill_if_alive(esc);
}

TEST(Cli, ASetsidEscapeeUnderNoContainmentIsLeftRunningAndEnded) {
  // Fails without the subreaper: process groups alone lose a setsid child whose output is
  // closed, and the report said left_running:false.
  ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  Cli c = start({"--no-containment", "--timeout", "20s", "--", "/bin/sh", "-c",
                 "setsid sh -c 'echo $$ > " + dir + "/esc; exec sleep 307' </dev/null >/dev/null 2>&1 & sleep 0.3; exit 0"},
                dir);
  ASSERT_GT(c.pid, 0);
  EXPECT_EQ(wait_exit(c.pid), 0);
  std::string out = slurp(c.out_path);
  EXPECT_NE(out.find("\"containment\":\"process-group\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"left_running\":true"), std::string::npos) << out;
  pid_t esc = read_pid_file(dir + "/esc");
  ASSERT_GT(esc, 0);
  EXPECT_TRUE(wait_until([esc] { return dead(esc); }, 2s)) << "the escapee outlived the run";
  kill_if_alive(esc);
}

TEST(Cli, APidNamespaceTheKernelRefusesIsOneLineNotAFallback) {
  // Without CAP_SYS_ADMIN (dropped from the bounding set, so root's exec gets none) the kernel
  // refuses CLONE_NEWPID; --pid-namespace then must not run the command in another mode.
  if (::access("/usr/bin/setpriv", X_OK) != 0 || ::geteuid() != 0) GTEST_SKIP() << "needs root and setpriv";
  ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  std::vector<std::string> argv = {"/usr/bin/setpriv", "--bounding-set", "-sys_admin", "--", GENVM_SUPERVISE_BIN,
                                   "--pid-namespace", "--", "/bin/sh", "-c", "touch " + dir + "/ran"};
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  std::string err_path = dir + "/err";
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  EXPECT_EQ(wait_exit(pid), 2);
  std::string err = slurp(err_path);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("--pid-namespace: the kernel refused a pid namespace"), std::string::npos) << err;
  EXPECT_NE(::access((dir + "/ran").c_str(), F_OK), 0) << "the command ran without the namespace";
}

TEST(Cli, ExitCodeMirrorsTheCommand) {
  ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  EXPECT_EQ(wait_exit(start({"--", "/bin/sh", "-c", "exit 7"}, dir).pid), 7);
  EXPECT_EQ(wait_exit(start({"--", "/bin/sh", "-c", "kill -TERM $$"}, dir).pid), 143);
  EXPECT_EQ(wait_exit(start({"--", "genvm-no-such-command"}, dir).pid), 127);
  EXPECT_NE(slurp(dir + "/out").find("\"spawn_failed\":true"), std::string::npos);
}

TEST(Cli, EnvIsTheAllowlistPlusPassAndDefine) {
  ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  ::setenv("GENVM_CLI_TEST_PASSED", "yes", 1);
  ::setenv("GENVM_CLI_TEST_HIDDEN", "no", 1);
  Cli c = start({"--pass", "GENVM_CLI_TEST_PASSED", "--define", "GENVM_D=1", "--", "/usr/bin/env"}, dir);
  EXPECT_EQ(wait_exit(c.pid), 0);
  std::string out = slurp(c.out_path);
  EXPECT_NE(out.find("GENVM_CLI_TEST_PASSED=yes"), std::string::npos);
  EXPECT_NE(out.find("GENVM_D=1"), std::string::npos);
  EXPECT_EQ(out.find("GENVM_CLI_TEST_HIDDEN"), std::string::npos);
}

TEST(Cli, BadInputIsOneClearLineAndNonZero) {
  ScopedTempDir tmp;
  const std::string& dir = tmp.path;
  for (std::vector<std::string> args : {std::vector<std::string>{"--timeout", "soon", "--", "true"},
                                        std::vector<std::string>{"--capture", "all", "--", "true"},
                                        std::vector<std::string>{"--bogus"}, std::vector<std::string>{}}) {
    Cli c = start(args, dir);
    EXPECT_NE(wait_exit(c.pid), 0);
    std::string err = slurp(c.err_path);
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_EQ(err.rfind("genvm-supervise: ", 0), 0u) << err;
  }
  Cli h = start({"--help"}, dir);
  EXPECT_EQ(wait_exit(h.pid), 0);
  EXPECT_NE(slurp(h.out_path).find("usage: genvm-supervise"), std::string::npos);
}

}  // namespace
