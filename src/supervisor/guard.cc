// The guard: a fork (no exec) of the supervising process that outlives it. Only raw syscalls
// run in it, because the process it was forked from may have had other threads (malloc locks
// held by a thread that no longer exists in the copy).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "supervisor/internal.h"

namespace genvm::supervisor::internal {
namespace {

// Live listed runs. Bounded by how many runs are in flight at once, not by how many ran.
constexpr int kMaxEntries = 16384;
pid_t g_pgid[kMaxEntries];
std::uint32_t g_cg[kMaxEntries];
int g_count = 0;

void handle_line(const char* line, std::size_t len) {
  if (len < 2) return;
  char op = line[0];
  std::uint64_t pgid = 0, cg = 0;
  std::size_t i = 1;
  for (; i < len && line[i] >= '0' && line[i] <= '9'; ++i) pgid = pgid * 10 + (line[i] - '0');
  if (i < len && line[i] == ' ') {
    for (++i; i < len && line[i] >= '0' && line[i] <= '9'; ++i) cg = cg * 10 + (line[i] - '0');
  }
  if (pgid <= 1) return;  // never pid 0 (our own group) or init
  int at = -1;
  for (int k = 0; k < g_count; ++k) {
    if (g_pgid[k] == static_cast<pid_t>(pgid)) {
      at = k;
      break;
    }
  }
  if (op == '+') {
    // A group is listed once however often its line arrives: one '-' strikes it.
    if (at < 0 && g_count < kMaxEntries) {
      g_pgid[g_count] = static_cast<pid_t>(pgid);
      g_cg[g_count] = static_cast<std::uint32_t>(cg);
      ++g_count;
    }
  } else if (op == '-' && at >= 0) {
    --g_count;
    g_pgid[at] = g_pgid[g_count];
    g_cg[at] = g_cg[g_count];
  }
}

void sleep_ms(long ms) {
  timespec ts{0, ms * 1000000L};
  nanosleep(&ts, nullptr);
}

[[noreturn]] void guard_main(const CgroupLayout& layout) {
  char buf[4096];
  char line[64];
  std::size_t ll = 0;
  for (;;) {
    ssize_t n = ::read(0, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '\n') {
        handle_line(line, ll);
        ll = 0;
      } else if (ll < sizeof line) {
        line[ll++] = buf[i];
      }
    }
  }
  // Every writer is gone: the supervisor exited (cleanly, with an empty list) or was killed.
  for (int k = 0; k < g_count; ++k) {
    if (g_cg[k] != 0) raw_cgroup_kill(layout, g_cg[k]);
    ::kill(-g_pgid[k], SIGKILL);
  }
  // Leave no empty cgroup behind; the killed take a moment to leave it.
  for (int tries = 0; tries < 500; ++tries) {  // up to 5 s: orphans wait for init's reaping
    bool all = true;
    for (int k = 0; k < g_count; ++k) {
      if (g_cg[k] != 0 && !raw_cgroup_remove(layout, g_cg[k])) all = false;
    }
    if (all) break;
    sleep_ms(10);
  }
  ::_exit(0);
}

}  // namespace

pid_t fork_guard(int read_fd, const CgroupLayout& layout) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = ::fork();
  if (pid != 0) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return pid;  // -1 on failure: the caller runs unguarded
  }
  // Child: default dispositions (no handler of the parent's may run here), its own session so
  // a terminal's signals miss it, nothing held but the read end.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) {
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &dfl, nullptr);
  }
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, nullptr);
  ::setsid();
  ::prctl(PR_SET_NAME, "genvm-guard", 0, 0, 0);
  if (read_fd != 0) {
    ::dup2(read_fd, 0);
  }
  if (::syscall(SYS_close_range, 1U, ~0U, 0U) != 0) {
    struct rlimit rl {};
    long max = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                   ? static_cast<long>(rl.rlim_cur)
                   : 65536;
    for (long fd = 1; fd < max; ++fd) ::close(static_cast<int>(fd));
  }
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, nullptr);
  guard_main(layout);
}

}  // namespace genvm::supervisor::internal
