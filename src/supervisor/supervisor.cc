// Spawn, Child, the guard's queue, holds and teardown.
#include "supervisor/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "supervisor/internal.h"

namespace genvm::supervisor {
namespace {

using Clock = std::chrono::steady_clock;

enum ChildStage : int { kStageCgroup = 1, kStageRlimit, kStageChdir, kStageExec, kStageFds };

const char* stage_name(int stage) {
  switch (stage) {
    case kStageCgroup: return "joining the run's cgroup";
    case kStageRlimit: return "setting a resource limit";
    case kStageChdir: return "changing to the working directory";
    case kStageExec: return "exec";
    case kStageFds: return "arranging file descriptors";
    default: return "starting the child";
  }
}

constexpr int kMaxChildFds = 64;

// Everything the child needs, prepared before fork: the child allocates nothing.
struct ChildPlan {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;
  int src[kMaxChildFds] = {};
  int dst[kMaxChildFds] = {};
  int nfds = 0;
  int max_target = 2;
  const int* procs_fds = nullptr;
  int nprocs = 0;
  int guard_fd = -1;
  pid_t guard_pid = -1;
  std::uint32_t cg = 0;
  const std::pair<int, rlim_t>* rlimits = nullptr;
  int nrl = 0;
  int err_fd = -1;
};

void raw_sleep_1ms() {
  timespec ts{0, 1000000L};
  nanosleep(&ts, nullptr);
}

void close_from(int from, int skip) {
  // close_range where the kernel has it (5.9+); else one close per possible fd.
  bool done = skip < from
                  ? ::syscall(SYS_close_range, static_cast<unsigned>(from), ~0U, 0U) == 0
                  : (skip == from || ::syscall(SYS_close_range, static_cast<unsigned>(from),
                                               static_cast<unsigned>(skip - 1), 0U) == 0) &&
                        ::syscall(SYS_close_range, static_cast<unsigned>(skip + 1), ~0U, 0U) == 0;
  if (done) return;
  struct rlimit rl {};
  long max = ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? static_cast<long>(rl.rlim_cur) : 65536;
  for (long fd = from; fd < max; ++fd) {
    if (fd != skip) ::close(static_cast<int>(fd));
  }
}

// Default dispositions (no handler of the parent's may run in the child); SIGPIPE ignored
// until exec, so a guard gone during the listing is EPIPE, not death.
void reset_signals_in_child() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) {
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &dfl, nullptr);
  }
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, nullptr);
}

// List our own group with the guard before exec, so no window exists in which we run
// unlisted. A full queue (EAGAIN: the pipe end is nonblocking) is retried while the guard
// lives: a stopped guard resumes, a dead or zombie one ends the wait.
void list_with_guard(int guard_fd, pid_t guard_pid, pid_t pgid, std::uint32_t cg) {
  char line[48];
  std::size_t n = 0;
  line[n++] = '+';
  n += internal::raw_fmt_u64(line + n, static_cast<std::uint64_t>(pgid));
  line[n++] = ' ';
  n += internal::raw_fmt_u64(line + n, cg);
  line[n++] = '\n';
  for (;;) {
    ssize_t w = ::write(guard_fd, line, n);
    if (w == static_cast<ssize_t>(n)) break;
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) {
      char st = internal::raw_proc_state(guard_pid);
      if (st == 0 || st == 'Z' || st == 'X') break;
      raw_sleep_1ms();
      continue;
    }
    break;
  }
  ::close(guard_fd);
}

[[noreturn]] void child_main(const ChildPlan& p) {
  int err_fd = p.err_fd;
  auto fail = [&err_fd](int stage) {
    int msg[2] = {stage, errno};
    ssize_t ignored = ::write(err_fd, msg, sizeof msg);
    (void)ignored;
    ::_exit(127);
  };
  reset_signals_in_child();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::setsid();
  for (int i = 0; i < p.nprocs; ++i) {
    // "0" moves the writer itself, in v1 and v2 alike.
    if (::write(p.procs_fds[i], "0", 1) != 1) fail(kStageCgroup);
    ::close(p.procs_fds[i]);
  }
  if (p.guard_fd >= 0) list_with_guard(p.guard_fd, p.guard_pid, ::getpid(), p.cg);
  // Move every source above every target first, so no dup2 clobbers a source not yet moved.
  int hi = p.max_target + 1;
  int moved[kMaxChildFds];
  for (int i = 0; i < p.nfds; ++i) {
    moved[i] = ::fcntl(p.src[i], F_DUPFD_CLOEXEC, hi);
    if (moved[i] < 0) fail(kStageFds);
  }
  err_fd = ::fcntl(err_fd, F_DUPFD_CLOEXEC, hi);
  if (err_fd < 0) ::_exit(127);
  for (int i = 0; i < p.nfds; ++i) {
    if (::dup2(moved[i], p.dst[i]) < 0) fail(kStageFds);
  }
  for (int fd = 0; fd <= p.max_target; ++fd) {
    bool target = false;
    for (int i = 0; i < p.nfds; ++i) target = target || p.dst[i] == fd;
    if (!target) ::close(fd);
  }
  close_from(p.max_target + 1, err_fd);  // err_fd is close-on-exec
  for (int i = 0; i < p.nrl; ++i) {
    struct rlimit rl {p.rlimits[i].second, p.rlimits[i].second};
    if (::setrlimit(p.rlimits[i].first, &rl) != 0) fail(kStageRlimit);
  }
  if (p.cwd && ::chdir(p.cwd) != 0) fail(kStageChdir);
  sigaction(SIGPIPE, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(p.path, p.argv, p.envp);
  fail(kStageExec);
  ::_exit(127);
}

// ---- Pid-namespace mode: the namespace's init --------------------------------------------
// The init (pid 1 inside, our child outside) lists its own group with the guard, forks the
// leader, relays polite signals to every process in it, reaps everything, reports the leader's
// status on a pipe, and exits when nothing is left. Its exit (or its SIGKILL) makes the kernel
// SIGKILL every process left in the namespace: a setsid escapee included.

// A polite signal reaches everything in the namespace (kill(-1) from its init spares only the
// init), as it reaches everything in a run's cgroup: a setsid'd member gets its SIGTERM too.
void relay_to_namespace(int sig) {
  int saved = errno;
  ::kill(-1, sig);
  errno = saved;
}

[[noreturn]] void ns_init_main(const ChildPlan& plan, int status_fd) {
  reset_signals_in_child();
  ::setsid();
  if (plan.guard_fd >= 0) {
    // Our pid as the guard (outside) sees it: /proc is the outer namespace's procfs.
    char buf[32];
    ssize_t n = ::readlink("/proc/self", buf, sizeof buf - 1);
    pid_t outer = 0;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) outer = outer * 10 + (buf[i] - '0');
    if (outer > 1) {
      list_with_guard(plan.guard_fd, plan.guard_pid, outer, 0);
    } else {
      ::close(plan.guard_fd);
    }
  }
  ChildPlan leader_plan = plan;
  leader_plan.guard_fd = -1;  // listed through us: our group's kill ends the namespace
  leader_plan.nprocs = 0;
  pid_t leader = ::_Fork();
  if (leader == 0) child_main(leader_plan);
  if (leader < 0) {
    int msg[2] = {kStageFds, errno};
    ssize_t ignored = ::write(plan.err_fd, msg, sizeof msg);
    (void)ignored;
    ::_exit(127);
  }
  // Hold nothing but the status pipe: the leader's stdio and error pipe must see EOF when it
  // and its tree are done, not when we are.
  if (status_fd > 0) ::syscall(SYS_close_range, 0U, static_cast<unsigned>(status_fd - 1), 0U);
  ::syscall(SYS_close_range, static_cast<unsigned>(status_fd + 1), ~0U, 0U);
  struct sigaction relay {};
  relay.sa_handler = relay_to_namespace;
  relay.sa_flags = SA_RESTART;
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaction(s, &relay, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (;;) {
    int st = 0;
    struct rusage ru {};
    pid_t w = ::wait4(-1, &st, 0, &ru);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) ::_exit(0);  // ECHILD: nothing left in the namespace
    if (w == leader) {
      internal::LeaderReport rep;
      rep.wait_status = st;
      rep.cpu_ms = static_cast<std::uint64_t>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                   static_cast<std::uint64_t>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
      rep.max_rss_bytes = static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
      ssize_t ignored = ::write(status_fd, &rep, sizeof rep);
      (void)ignored;
    }
  }
}

WaitStatus decode_wait_status(int status, std::uint64_t cpu_ms, std::uint64_t max_rss) {
  WaitStatus ws;
  if (WIFSIGNALED(status)) {
    ws.signal = WTERMSIG(status);
    ws.exit_code = 128 + ws.signal;
  } else {
    ws.exit_code = WEXITSTATUS(status);
  }
  ws.cpu_ms = cpu_ms;
  ws.max_rss_bytes = max_rss;
  return ws;
}

std::string resolve_command(const std::string& name, const std::map<std::string, std::string>& env) {
  if (name.find('/') != std::string::npos) return name;
  auto it = env.find("PATH");
  std::string path = it != env.end() ? it->second : "/usr/local/bin:/usr/bin:/bin";
  std::istringstream in(path);
  std::string dir;
  while (std::getline(in, dir, ':')) {
    std::string cand = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st;
    if (::stat(cand.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(cand.c_str(), X_OK) == 0) return cand;
  }
  return {};
}

bool write_text(const std::string& path, const std::string& text) {
  return internal::raw_write_file(path.c_str(), text.c_str());
}

std::vector<pid_t> live_pgrps() {
  std::vector<pid_t> out;
  for (const internal::ProcRow& r : internal::read_proc_table()) {
    if (r.state != 'Z' && r.state != 'X') out.push_back(r.pgrp);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A pipe write that can meet a reader that is gone: EPIPE, never a SIGPIPE that kills us.
ssize_t write_no_sigpipe(int fd, const char* data, std::size_t len) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ssize_t w = ::write(fd, data, len);
  int saved = errno;
  if (w < 0 && errno == EPIPE) {
    timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);  // consume the one we raised
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return w;
}

void close_and_reset(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Every guard this process forked (any Supervisor's): they are our children, never a run's
// descendants, so adopted_descendants() skips them. An entry stays until its guard is reaped.
std::mutex g_guards_mutex;
std::set<pid_t> g_guards;

void register_guard(pid_t pid) {
  std::lock_guard<std::mutex> lock(g_guards_mutex);
  g_guards.insert(pid);
}

void forget_guard(pid_t pid) {
  std::lock_guard<std::mutex> lock(g_guards_mutex);
  g_guards.erase(pid);
}

bool is_guard(pid_t pid) {
  std::lock_guard<std::mutex> lock(g_guards_mutex);
  return g_guards.count(pid) != 0;
}

}  // namespace

std::string_view to_string(Containment c) {
  switch (c) {
    case Containment::kProcessGroup: return "process-group";
    case Containment::kCgroupV1: return "cgroup-v1";
    case Containment::kCgroupV2: return "cgroup-v2";
    case Containment::kPidNamespace: return "pid-namespace";
  }
  return "unknown";
}

// ---- Supervisor ---------------------------------------------------------------------------

Supervisor::Supervisor(SupervisorOptions options)
    : options_(options), layout_(std::make_unique<internal::CgroupLayout>()) {
  std::string& why = why_;
  if (options_.containment) {
    internal::detect_containment(*layout_, why);
  } else {
    layout_->mode = Containment::kProcessGroup;
    why = "containment off by request";
  }
  mode_ = layout_->mode;
  internal::sweep_stale_cgroups(*layout_);
  int refusal = 0;
  if (options_.containment && (options_.prefer_pid_namespace || mode_ == Containment::kProcessGroup)) {
    if (internal::pid_namespace_available(&refusal)) {
      own_pidns_fd_ = ::open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
      if (own_pidns_fd_ < 0) refusal = errno;
    }
    if (own_pidns_fd_ >= 0) {
      layout_->mode = Containment::kProcessGroup;  // no run cgroups in this mode
      mode_ = Containment::kPidNamespace;
      why += options_.prefer_pid_namespace ? "; pid namespace per run by request" : "; pid namespace per run";
    } else if (options_.prefer_pid_namespace) {
      pidns_refusal_ = refusal != 0 ? refusal : EPERM;
      why += std::string("; a pid namespace was asked for but unshare(CLONE_NEWPID) failed: ") +
             std::strerror(refusal) + (refusal == EPERM ? " (needs CAP_SYS_ADMIN)" : "");
    }
  }
  // Orphans of a run are reparented here rather than to init, so none is out of sight.
  if (options_.adopt_orphans && ::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    why += std::string("; PR_SET_CHILD_SUBREAPER failed: ") + std::strerror(errno);
    options_.adopt_orphans = false;
  }
  if (options_.log) {
    std::string line = "{\"event\":\"containment\",\"mode\":\"" + std::string(to_string(mode_)) +
                       "\",\"why\":\"" + why + "\"}";
    options_.log(line);
  }
}

Supervisor::~Supervisor() {
  flush_guard();
  if (guard_fd_ >= 0) {
    ::close(guard_fd_);  // EOF: the guard kills what is still listed and exits
    guard_fd_ = -1;
    for (int i = 0; i < 200 && guard_pid_ > 0; ++i) {  // reap it, bounded: it may be stopped
      if (::waitpid(guard_pid_, nullptr, WNOHANG) != 0) {
        forget_guard(guard_pid_);
        break;
      }
      std::this_thread::sleep_for(Millis(5));
    }
  }
  retry_cgroup_removals();
  if (own_pidns_fd_ >= 0) ::close(own_pidns_fd_);
}

void Supervisor::start_guard() {
  guard_started_ = true;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return;  // best effort: runs go unguarded
  if (options_.guard_pipe_bytes > 0) ::fcntl(p[1], F_SETPIPE_SZ, static_cast<int>(options_.guard_pipe_bytes));
  pid_t pid = internal::fork_guard(p[0], *layout_);
  ::close(p[0]);
  if (pid < 0) {
    ::close(p[1]);
    if (options_.log) options_.log("{\"event\":\"guard_failed\",\"why\":\"fork\"}");
    return;
  }
  ::fcntl(p[1], F_SETFL, O_NONBLOCK);  // a stopped guard must never block the loop
  guard_fd_ = p[1];
  guard_pid_ = pid;
  register_guard(pid);
}

bool Supervisor::guard_alive() {
  if (guard_fd_ < 0 || guard_pid_ <= 0) return false;
  int status = 0;
  pid_t r = ::waitpid(guard_pid_, &status, WNOHANG);
  if (r == guard_pid_ || (r < 0 && errno == ECHILD)) {
    // It exited (killed, the OOM killer): handed to no later spawn.
    forget_guard(guard_pid_);
    guard_pid_ = -1;
    close_and_reset(guard_fd_);
    guard_queue_.clear();
    if (options_.log) options_.log("{\"event\":\"guard_gone\"}");
    return false;
  }
  return true;
}

void Supervisor::give_up_guard() {
  // Its list is stale (it missed our lines): kill it with the list, so it never kills at our
  // clean exit a group whose release it never got.
  if (guard_pid_ > 0) {
    ::kill(guard_pid_, SIGKILL);
    ::waitpid(guard_pid_, nullptr, 0);
    forget_guard(guard_pid_);
  }
  guard_pid_ = -1;
  close_and_reset(guard_fd_);
  guard_queue_.clear();
  if (options_.log) options_.log("{\"event\":\"guard_given_up\"}");
}

void Supervisor::queue_guard_line(char op, pid_t pgid, std::uint32_t cg) {
  if (guard_fd_ < 0 || pgid <= 1) return;
  guard_queue_ += op;
  guard_queue_ += std::to_string(pgid);
  guard_queue_ += ' ';
  guard_queue_ += std::to_string(cg);
  guard_queue_ += '\n';
}

void Supervisor::flush_guard() {
  if (guard_queue_.empty()) return;
  if (!guard_alive()) return;
  std::size_t off = 0;
  auto last_progress = Clock::now();
  const std::string& q = guard_queue_;
  while (off < q.size()) {
    // Pieces of at most PIPE_BUF ending at a line: atomic, so a child's own line never lands
    // inside one of ours.
    std::size_t len = std::min<std::size_t>(PIPE_BUF, q.size() - off);
    if (off + len < q.size()) {
      std::size_t nl = q.rfind('\n', off + len - 1);
      len = nl + 1 - off;
    }
    ssize_t w = write_no_sigpipe(guard_fd_, q.data() + off, len);
    if (w > 0) {
      off += static_cast<std::size_t>(w);
      last_progress = Clock::now();
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) {
      // A full pipe is a guard that is behind, not a dead one: wait for it, bounded.
      if (Clock::now() - last_progress > options_.guard_stall) {
        give_up_guard();
        return;
      }
      pollfd pfd{guard_fd_, POLLOUT, 0};
      ::poll(&pfd, 1, 10);
      continue;
    }
    give_up_guard();  // EPIPE: the guard is gone
    return;
  }
  guard_queue_.clear();
}

Supervisor::Hold Supervisor::hold(std::span<Child* const> children) {
  Hold h;
  h.sup_ = this;
  for (Child* c : children) {
    if (c && !c->released_ && c->pid_ > 1) {
      ++holds_[c->pid_];
      h.pgids_.push_back(c->pid_);
    }
  }
  return h;
}

Supervisor::Hold::~Hold() {
  if (!sup_) return;
  bool queued = false;
  for (pid_t pgid : pgids_) {
    auto it = sup_->holds_.find(pgid);
    if (it == sup_->holds_.end() || --it->second > 0) continue;
    sup_->holds_.erase(it);
    auto d = sup_->deferred_release_.find(pgid);
    if (d != sup_->deferred_release_.end()) {
      sup_->queue_guard_line('-', pgid, d->second);
      sup_->deferred_release_.erase(d);
      queued = true;
    }
  }
  if (queued) sup_->flush_guard();
}

void Supervisor::release_child(Child& c) {
  if (holds_.count(c.pid_)) {
    deferred_release_[c.pid_] = c.cgroup_id_;
    return;
  }
  queue_guard_line('-', c.pid_, c.cgroup_id_);
}

void Supervisor::remove_cgroup(std::uint32_t id) {
  if (id == 0) return;
  if (!internal::raw_cgroup_remove(*layout_, id) &&
      std::find(cgroups_to_remove_.begin(), cgroups_to_remove_.end(), id) == cgroups_to_remove_.end()) {
    cgroups_to_remove_.push_back(id);
  }
}

void Supervisor::retry_cgroup_removals() {
  std::vector<std::uint32_t> left;
  for (std::uint32_t id : cgroups_to_remove_) {
    if (!internal::raw_cgroup_remove(*layout_, id)) left.push_back(id);
  }
  cgroups_to_remove_.swap(left);
}

Result<Child> Supervisor::spawn(const SpawnRequest& req) {
  if (req.argv.empty()) return make_error("spawn_failed", "empty argv");
  if (req.pass_fds.size() + 4 > static_cast<std::size_t>(kMaxChildFds)) {
    return make_error("spawn_failed", "too many fds to pass");
  }
  retry_cgroup_removals();
  std::string path = resolve_command(req.argv[0], req.env);
  if (path.empty()) return make_error("spawn_failed", req.argv[0] + ": command not found");

  std::vector<std::string> env_strings;
  for (const auto& [k, v] : req.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  for (const std::string& a : req.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  // Parent-side fds to close on every failure path.
  std::vector<int> cleanup;
  auto fail = [&cleanup](std::string message) -> Result<Child> {
    for (int fd : cleanup) ::close(fd);
    return make_error("spawn_failed", std::move(message));
  };
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) return fail(std::string("open /dev/null: ") + std::strerror(errno));
  cleanup.push_back(devnull);
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, log[2] = {-1, -1}, errp[2] = {-1, -1};
  auto make_pipe = [&cleanup](int* p) {
    if (::pipe2(p, O_CLOEXEC) != 0) return false;
    cleanup.push_back(p[0]);
    cleanup.push_back(p[1]);
    return true;
  };
  bool capture = req.capture != Capture::kDisabled;
  if ((req.stdin_pipe && !make_pipe(in)) || (capture && !make_pipe(out)) || (capture && !make_pipe(err)) ||
      (req.log_fd >= 0 && !make_pipe(log)) || !make_pipe(errp)) {
    return fail(std::string("pipe: ") + std::strerror(errno));
  }
  const bool pidns = mode_ == Containment::kPidNamespace;
  int status[2] = {-1, -1};
  if (pidns && !make_pipe(status)) {
    return fail(std::string("pipe: ") + std::strerror(errno));
  }

  ChildPlan plan;
  plan.path = path.c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.cwd = req.cwd.empty() ? nullptr : req.cwd.c_str();
  auto add_fd = [&plan](int src, int dst) {
    plan.src[plan.nfds] = src;
    plan.dst[plan.nfds] = dst;
    ++plan.nfds;
    plan.max_target = std::max(plan.max_target, dst);
  };
  add_fd(req.stdin_pipe ? in[0] : devnull, 0);
  add_fd(capture ? out[1] : devnull, 1);
  add_fd(capture ? err[1] : devnull, 2);
  if (req.log_fd >= 0) add_fd(log[1], req.log_fd);
  for (const auto& [src, dst] : req.pass_fds) add_fd(src, dst);
  plan.err_fd = errp[1];

  // Limits without a cgroup: memory becomes RLIMIT_AS (per process, not per run); pids have no
  // per-run equivalent for root and are not enforced.
  std::vector<std::pair<int, rlim_t>> rlimits = req.limits.rlimits;
  std::uint32_t cg = 0;
  std::vector<int> procs_fds;
  if (mode_ == Containment::kCgroupV1 || mode_ == Containment::kCgroupV2) {
    cg = ++next_cgroup_;
    const internal::CgroupLayout& l = *layout_;
    std::vector<std::string> dirs;
    char buf[320];
    if (mode_ == Containment::kCgroupV2) {
      internal::raw_cgroup_dir(buf, sizeof buf, l.pids, l.prefix, cg);
      dirs.push_back(buf);
    } else {
      for (const char* base : {l.pids, l.memory, l.freezer}) {
        internal::raw_cgroup_dir(buf, sizeof buf, base, l.prefix, cg);
        dirs.push_back(buf);
      }
    }
    bool ok = true;
    for (const std::string& d : dirs) ok = ok && (::mkdir(d.c_str(), 0755) == 0 || errno == EEXIST);
    const std::string& pids_dir = dirs[0];
    const std::string& mem_dir = mode_ == Containment::kCgroupV2 ? dirs[0] : dirs[1];
    if (ok && req.limits.pids_max > 0) ok = write_text(pids_dir + "/pids.max", std::to_string(req.limits.pids_max));
    if (ok && req.limits.memory_max_bytes > 0) {
      std::string file = mode_ == Containment::kCgroupV2 ? "/memory.max" : "/memory.limit_in_bytes";
      ok = write_text(mem_dir + file, std::to_string(req.limits.memory_max_bytes));
      if (ok && mode_ == Containment::kCgroupV2) write_text(mem_dir + "/memory.swap.max", "0");
    }
    for (const std::string& d : dirs) {
      if (!ok) break;
      int fd = ::open((d + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) {
        ok = false;
        break;
      }
      procs_fds.push_back(fd);
      cleanup.push_back(fd);
    }
    if (!ok) {
      std::string why = std::strerror(errno);
      remove_cgroup(cg);
      return fail("creating the run's cgroup: " + why);
    }
  } else if (req.limits.memory_max_bytes > 0) {
    rlimits.emplace_back(RLIMIT_AS, static_cast<rlim_t>(req.limits.memory_max_bytes));
  }
  plan.procs_fds = procs_fds.data();
  plan.nprocs = static_cast<int>(procs_fds.size());
  plan.rlimits = rlimits.data();
  plan.nrl = static_cast<int>(rlimits.size());
  plan.cg = cg;

  // The guard starts just before the first spawn; a dead guard is handed to no later spawn.
  if (options_.guard && !guard_started_) start_guard();
  flush_guard();  // our queued releases go before this child's line
  if (guard_alive()) {
    plan.guard_fd = guard_fd_;
    plan.guard_pid = guard_pid_;
  }

  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // no handler of ours runs in the child
  pid_t pid = -1;
  int fork_errno = 0;
  if (pidns) {
    // Our children go to a new namespace for this one fork, then back to ours.
    if (::unshare(CLONE_NEWPID) == 0) {
      pid = ::fork();
      if (pid == 0) ns_init_main(plan, status[1]);
      fork_errno = errno;
      ::setns(own_pidns_fd_, CLONE_NEWPID);
    } else {
      fork_errno = errno;
    }
  } else {
    pid = ::fork();
    if (pid == 0) child_main(plan);
    fork_errno = errno;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) {
    remove_cgroup(cg);
    return fail(std::string("fork: ") + std::strerror(fork_errno));
  }

  // Close the child's ends; keep ours.
  ::close(errp[1]);
  for (int fd : {devnull, in[0], out[1], err[1], log[1]}) {
    if (fd >= 0) ::close(fd);
  }
  for (int fd : procs_fds) ::close(fd);
  if (pidns) {
    ::close(status[1]);
    ::fcntl(status[0], F_SETFL, O_NONBLOCK);
  }
  int report[2] = {0, 0};
  std::size_t got = 0;
  while (got < sizeof report) {
    ssize_t r = ::read(errp[0], reinterpret_cast<char*>(report) + got, sizeof report - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  ::close(errp[0]);

  Child c;
  c.sup_ = this;
  c.pid_ = pid;
  c.cgroup_id_ = cg;
  c.stdin_ = in[1];
  c.stdout_ = out[0];
  c.stderr_ = err[0];
  c.log_ = log[0];
  c.status_fd_ = status[0];
  c.pidns_ = pidns;
  if (got == sizeof report) {
    // The child listed itself (perhaps) and failed before exec: reap it, unlist it, report.
    c.wait();
    c.release();
    flush_guard();
    std::string what = req.argv[0] + ": " + stage_name(report[0]) + ": " + std::strerror(report[1]);
    return make_error("spawn_failed", what);  // c's destructor closes its fds and cgroup
  }
  c.pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  return c;
}

std::vector<pid_t> Supervisor::adopted_descendants(pid_t leader) {
  const pid_t self = ::getpid();
  std::vector<internal::ProcRow> rows = internal::read_proc_table();
  std::map<pid_t, std::vector<const internal::ProcRow*>> by_parent;
  for (const internal::ProcRow& r : rows) by_parent[r.ppid].push_back(&r);
  std::vector<pid_t> live;
  std::vector<pid_t> todo = {self};
  // A pid table is finite and parent links form a tree, but a pid read twice in a racing scan
  // must not loop: each row is visited once.
  std::set<pid_t> seen;
  while (!todo.empty()) {
    pid_t parent = todo.back();
    todo.pop_back();
    auto it = by_parent.find(parent);
    if (it == by_parent.end()) continue;
    for (const internal::ProcRow* r : it->second) {
      if (r->pid == self || !seen.insert(r->pid).second) continue;
      if (parent == self && is_guard(r->pid)) continue;
      if (r->state == 'Z' || r->state == 'X') {
        // An orphan that died here is ours to reap (the leader is its Child's to reap).
        if (parent == self && r->pid != leader) ::waitpid(r->pid, nullptr, WNOHANG);
        continue;
      }
      live.push_back(r->pid);
      todo.push_back(r->pid);
    }
  }
  return live;
}

void Supervisor::terminate(std::span<Child* const> children, Millis grace) {
  Hold h = hold(children);
  for (Child* c : children) c->kill_tree(SIGTERM);
  std::vector<Child*> left = until_groups_gone(children, grace);
  for (Child* c : left) c->kill_tree(SIGKILL);
  while (!left.empty()) {  // SIGKILL cannot be ignored; re-sent in case of a fork in between
    left = until_groups_gone(left, Millis(500));
    for (Child* c : left) c->kill_tree(SIGKILL);
  }
}

// ---- Child --------------------------------------------------------------------------------

Child::Child(Child&& o) noexcept { *this = std::move(o); }

Child& Child::operator=(Child&& o) noexcept {
  if (this == &o) return *this;
  std::swap(sup_, o.sup_);
  std::swap(pid_, o.pid_);
  std::swap(pidfd_, o.pidfd_);
  std::swap(stdin_, o.stdin_);
  std::swap(stdout_, o.stdout_);
  std::swap(stderr_, o.stderr_);
  std::swap(log_, o.log_);
  std::swap(cgroup_id_, o.cgroup_id_);
  std::swap(released_, o.released_);
  std::swap(reaped_, o.reaped_);
  std::swap(group_gone_, o.group_gone_);
  std::swap(status_fd_, o.status_fd_);
  std::swap(pidns_, o.pidns_);
  std::swap(init_reaped_, o.init_reaped_);
  return *this;
}

Child::~Child() {
  if (sup_ && pid_ > 0) {
    release();
    sup_->flush_guard();
    sup_->remove_cgroup(cgroup_id_);
  }
  close_all();
}

void Child::close_all() {
  for (int* fd : {&pidfd_, &stdin_, &stdout_, &stderr_, &log_, &status_fd_}) close_and_reset(*fd);
  if (pidns_ && !init_reaped_ && pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == pid_) init_reaped_ = true;
}

void Child::close_stdin() { close_and_reset(stdin_); }

void Child::close_fd(int fd) {
  if (fd < 0) return;
  for (int* f : {&stdin_, &stdout_, &stderr_, &log_}) {
    if (*f == fd) {
      ::close(fd);
      *f = -1;
    }
  }
}

void Child::kill_tree(int sig) {
  if (!sup_ || released_ || pid_ <= 1) return;  // never pid 0 (our group) or init
  if (pidns_) {
    // The namespace's init is our child: its number is ours until we reap it. SIGKILL ends
    // the namespace; a polite signal is relayed to the leader's group.
    if (!init_reaped_) ::kill(pid_, sig);
    return;
  }
  if (cgroup_id_ != 0) {
    if (sig == SIGKILL) {
      internal::raw_cgroup_kill(*sup_->layout_, cgroup_id_);
    } else {
      internal::raw_cgroup_signal(*sup_->layout_, cgroup_id_, sig);
    }
  }
  if (!group_gone_) ::kill(-pid_, sig);
}

bool Child::tree_alive_given(const std::vector<pid_t>* live) const {
  if (!sup_ || pid_ <= 1) return false;
  if (pidns_) {  // the namespace lives exactly as long as its init
    if (!init_reaped_ && ::waitpid(pid_, nullptr, WNOHANG) == pid_) init_reaped_ = true;
    return !init_reaped_;
  }
  // Every member of the group is in the run's cgroup (and so is any escapee): the cgroup,
  // which lists no zombie, is the whole answer.
  if (cgroup_id_ != 0) return !internal::raw_cgroup_empty(*sup_->layout_, cgroup_id_);
  if (group_gone_) return false;
  if (::kill(-pid_, 0) != 0 && errno == ESRCH) {  // no member at all, cheap
    if (reaped_) group_gone_ = true;
    return false;
  }
  // Members exist, but a zombie is not one: an orphan that died waits for init to reap it.
  std::vector<pid_t> scanned;
  if (!live) {
    scanned = live_pgrps();
    live = &scanned;
  }
  return std::binary_search(live->begin(), live->end(), pid_);
}

bool Child::tree_alive() const { return tree_alive_given(nullptr); }

std::optional<WaitStatus> Child::try_wait() {
  if (reaped_) return reaped_;
  if (pid_ <= 0) return std::nullopt;
  if (pidns_) {
    internal::LeaderReport rep;
    ssize_t n = ::read(status_fd_, &rep, sizeof rep);
    if (n < 0) return std::nullopt;  // EAGAIN: the leader runs
    // EOF without a report: the init was killed before the leader ended (SIGKILL of the
    // namespace), so the leader died of that SIGKILL too.
    reaped_ = n == static_cast<ssize_t>(sizeof rep) ? decode_wait_status(rep.wait_status, rep.cpu_ms, rep.max_rss_bytes)
                                                     : decode_wait_status(SIGKILL, 0, 0);
    close_and_reset(status_fd_);
    return reaped_;
  }
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) {
    return std::nullopt;
  }
  int status = 0;
  struct rusage ru {};
  if (::wait4(pid_, &status, WNOHANG, &ru) != pid_) return std::nullopt;
  // Is the group empty now that its leader is reaped? ESRCH says so at once (no member, not
  // even a zombie); the number may then be reused, so an empty group is never signalled
  // again. A group with members keeps its number: tree_alive tells live ones from zombies.
  if (::kill(-pid_, 0) != 0 && errno == ESRCH) group_gone_ = true;
  WaitStatus ws;
  if (WIFSIGNALED(status)) {
    ws.signal = WTERMSIG(status);
    ws.exit_code = 128 + ws.signal;
  } else {
    ws.exit_code = WEXITSTATUS(status);
  }
  auto ms = [](const timeval& t) {
    return static_cast<std::uint64_t>(t.tv_sec) * 1000 + static_cast<std::uint64_t>(t.tv_usec) / 1000;
  };
  ws.cpu_ms = ms(ru.ru_utime) + ms(ru.ru_stime);
  ws.max_rss_bytes = static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
  reaped_ = ws;
  return reaped_;
}

WaitStatus Child::wait() {
  for (;;) {
    if (auto ws = try_wait()) return *ws;
    if (pid_ <= 0) return WaitStatus{};
    if (pidns_) {
      pollfd p{status_fd_, POLLIN, 0};
      ::poll(&p, 1, -1);
      continue;
    }
    siginfo_t info{};
    // Block until it exits, without reaping (try_wait reaps after its group check).
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0 && errno != EINTR) {
      return WaitStatus{};
    }
  }
}

bool Child::oom_killed() const {
  if (!sup_ || cgroup_id_ == 0) return false;
  const internal::CgroupLayout& l = *sup_->layout_;
  char dir[320];
  const char* base = l.mode == Containment::kCgroupV2 ? l.pids : l.memory;
  if (!internal::raw_cgroup_dir(dir, sizeof dir, base, l.prefix, cgroup_id_)) return false;
  std::string file = std::string(dir) + (l.mode == Containment::kCgroupV2 ? "/memory.events" : "/memory.oom_control");
  std::ifstream in(file);
  std::string key;
  std::uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "oom_kill" && value > 0) return true;
  }
  return false;
}

void Child::release() {
  if (!sup_ || released_ || pid_ <= 1) return;
  released_ = true;
  sup_->release_child(*this);
  // Its cgroup goes as soon as it is empty (now, or on a later spawn's retry): a released run
  // is no longer ours to kill, and a kill -9 of us must not leave the directory behind.
  if (reaped_ && cgroup_id_ != 0) {
    sup_->remove_cgroup(cgroup_id_);
    cgroup_id_ = 0;
  }
}

std::vector<Child*> until_groups_gone(std::span<Child* const> children, Millis grace) {
  auto deadline = Clock::now() + grace;
  std::vector<Child*> left(children.begin(), children.end());
  for (;;) {
    std::optional<std::vector<pid_t>> live;  // one /proc scan per turn, only if one is asked
    std::vector<Child*> still;
    for (Child* c : left) {
      bool needs_scan = c->cgroup_id_ == 0 && !c->group_gone_ && c->pid_ > 1 && ::kill(-c->pid_, 0) == 0;
      if (needs_scan && !live) live = live_pgrps();
      if (c->tree_alive_given(needs_scan ? &*live : nullptr)) still.push_back(c);
    }
    left.swap(still);
    if (left.empty() || Clock::now() >= deadline) return left;
    std::this_thread::sleep_for(Millis(20));
  }
}

}  // namespace genvm::supervisor
