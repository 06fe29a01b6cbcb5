// Process supervision: a run is a child in its own session and process group (and, where the
// machine allows, its own cgroup), and nothing it forks outlives it.
//
//   Supervisor sup;                               // detects containment; starts no process
//   Result<ExecuteResult> r = sup.execute(req);   // spawn, capture, deadline, kill tree, reap
//
// Contract:
//  - spawn() forks a child that calls setsid, joins its run's cgroup, lists its group with the
//    guard, keeps only fds 0-2 plus those passed, and execs; any failure is a value
//    (`spawn_failed`), never an exception or a crash. In pid-namespace mode the child is the
//    namespace's init, which does the same for the leader it forks.
//  - The guard is one small process per Supervisor, started just before the first spawn. When
//    the Supervisor's process ends in any way (clean exit, kill -9, OOM), the guard SIGKILLs
//    every group (and cgroup) still listed; release() takes a run off that list.
//  - kill_tree never signals pid 0/1 or a group already released (its number may be reused).
//  - Tree membership ignores zombies: an orphan that died waits for init to reap it.
//  - Not thread-safe: one thread (the manager's supervisor thread) drives a Supervisor, and no Child
//    outlives the Supervisor that spawned it.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/debug_mode.h"
#include "common/result.h"

namespace genvm::supervisor {

using Millis = std::chrono::milliseconds;

// ---- Env builder -------------------------------------------------------------------------
// Layers, lowest priority first: the essential allowlist copied from `source` when present,
// then `pass_through` names (a missing name stays absent, never empty), then literal `define`
// pairs, then `path_prefixes` prepended to PATH (first entry searched first).
struct EnvOptions {
  std::vector<std::string> pass_through;
  std::vector<std::pair<std::string, std::string>> define;
  std::vector<std::string> path_prefixes;
};
std::span<const std::string_view> essential_env_names();
// `source` is an environ-style array ("NAME=VALUE", null-terminated). Returns a sorted map.
std::map<std::string, std::string> build_env(const EnvOptions& options, const char* const* source);

// ---- Capture -----------------------------------------------------------------------------
// A stream sink per capture state: kDisabled keeps nothing, kBounded keeps the last
// kBoundedStreamTailBytes (a ring), kUnbounded keeps everything.
class StreamCapture {
 public:
  explicit StreamCapture(Capture mode, std::size_t tail_bytes = kBoundedStreamTailBytes);
  void append(std::string_view bytes);
  std::string take();                  // the kept bytes, oldest first
  std::uint64_t total_bytes() const { return total_; }
  bool truncated() const { return total_ > kept_; }

 private:
  Capture mode_;
  std::size_t cap_;
  std::string buf_;       // ring storage once full (bounded), else linear
  std::size_t head_ = 0;  // next write position in the ring
  std::uint64_t total_ = 0;
  std::uint64_t kept_ = 0;
};

// JSON lines on a dedicated fd: kBounded keeps the kBoundedLogEntries newest entries.
class LogCapture {
 public:
  explicit LogCapture(Capture mode, std::size_t max_entries = kBoundedLogEntries);
  void append(std::string_view bytes);  // splits on '\n'; a partial line waits for the rest
  std::vector<std::string> take();      // a final unterminated line counts as an entry
  std::uint64_t dropped() const { return dropped_; }

 private:
  void push(std::string line);
  Capture mode_;
  std::size_t max_;
  std::string partial_;
  std::vector<std::string> ring_;
  std::size_t head_ = 0;
  std::uint64_t dropped_ = 0;
};

// ---- Tree sampling -----------------------------------------------------------------------
struct TreeUsage {
  std::uint64_t cpu_ms = 0;     // utime+stime+cutime+cstime of the root and all descendants
  std::uint64_t rss_bytes = 0;  // summed resident memory of the live members
};
// By parent pid, not group: a member that left the group (setsid) is still counted. A root
// that is gone has no entry.
std::map<pid_t, TreeUsage> sample_trees(std::span<const pid_t> roots);

// One timer (default 250 ms) for every watched tree; stop() answers the most CPU and the peak
// memory any look saw, or nothing when no look landed. Runs one background thread while any
// tree is watched.
class TreeWatcher {
 public:
  explicit TreeWatcher(Millis period = Millis(250));
  ~TreeWatcher();
  TreeWatcher(const TreeWatcher&) = delete;
  TreeWatcher& operator=(const TreeWatcher&) = delete;
  int watch(pid_t root);                     // a handle for stop()
  std::optional<TreeUsage> stop(int handle);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- Containment -------------------------------------------------------------------------
enum class Containment {
  kProcessGroup,  // session + group only: a setsid/double-fork escapee is out of reach
  kCgroupV1,      // v1 pids + memory + freezer: limits and a freeze-kill-thaw of everything
  kCgroupV2,      // a v2 cgroup with pids + memory: limits and cgroup.kill
  kPidNamespace,  // a pid namespace per run (root, no cgroup): its init's end kills everything
};
std::string_view to_string(Containment c);

struct Limits {
  std::uint64_t memory_max_bytes = 0;  // 0: none (needs a cgroup mode)
  std::uint64_t pids_max = 0;          // 0: none (needs a cgroup mode)
  std::vector<std::pair<int, rlim_t>> rlimits;  // RLIMIT_* applied in the child before exec
};

// ---- Spawn -------------------------------------------------------------------------------
struct SpawnRequest {
  std::vector<std::string> argv;                // argv[0] without '/' is looked up in env PATH
  std::map<std::string, std::string> env;       // exactly what the child sees
  std::string cwd;                              // empty: inherit
  Capture capture = Capture::kDisabled;         // kDisabled: stdout/stderr to /dev/null
  bool stdin_pipe = false;                      // else stdin is /dev/null
  int log_fd = -1;                              // child fd number of a JSON-lines log pipe
  std::vector<std::pair<int, int>> pass_fds;    // {parent fd, child fd} passed on purpose
  Limits limits;
};

struct WaitStatus {
  int exit_code = 0;  // 128 + signal when killed
  int signal = 0;     // 0 unless killed by a signal
  std::uint64_t cpu_ms = 0;        // rusage of the leader and the children it reaped
  std::uint64_t max_rss_bytes = 0;
};

class Supervisor;
class Child;
std::vector<Child*> until_groups_gone(std::span<Child* const> children, Millis grace);
namespace internal {
struct CgroupLayout;
}

// One spawned run. Move-only; the destructor closes its fds, releases it from the guard and
// removes its cgroup. It does not kill: call kill_tree/terminate first.
class Child {
 public:
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child();

  pid_t pid() const { return pid_; }
  pid_t pgid() const { return pid_; }  // the leader of its own session and group
  // Pollable: readable once the leader exited. (With a pid namespace, the pipe on which the
  // namespace's init reports the leader's status.)
  int pidfd() const { return status_fd_ >= 0 ? status_fd_ : pidfd_; }
  int stdin_fd() const { return stdin_; }
  int stdout_fd() const { return stdout_; }
  int stderr_fd() const { return stderr_; }
  int log_fd() const { return log_; }
  void close_stdin();
  // Close one of the parent ends above and forget it (after EOF).
  void close_fd(int fd);
  bool contained() const { return cgroup_id_ != 0; }

  // Signal every member: the group, and with containment everything in the cgroup (SIGKILL
  // there is race-free: freeze-kill-thaw in v1, cgroup.kill in v2). No-op once released.
  void kill_tree(int sig);
  // A member that is not a zombie is left (group by /proc, or the cgroup is non-empty).
  bool tree_alive() const;
  std::optional<WaitStatus> try_wait();  // reaps the leader if it exited
  WaitStatus wait();                      // blocks for the leader
  bool leader_reaped() const { return reaped_.has_value(); }
  bool oom_killed() const;  // the memory limit killed something in the run (ask before release())
  // Done with the group: the guard stops listing it (deferred while held). Idempotent.
  void release();
  bool released() const { return released_; }

 private:
  friend class Supervisor;
  friend std::vector<Child*> until_groups_gone(std::span<Child* const> children, Millis grace);
  Child() = default;
  void close_all();
  bool tree_alive_given(const std::vector<pid_t>* live_pgrps) const;  // null: scan /proc if needed
  Supervisor* sup_ = nullptr;
  mutable bool group_gone_ = false;  // the group emptied: its number may be reused, never signal
  pid_t pid_ = -1;
  int pidfd_ = -1, stdin_ = -1, stdout_ = -1, stderr_ = -1, log_ = -1;
  // Pid-namespace mode: pid_ is the namespace's init (our child); the leader is its child.
  int status_fd_ = -1;
  bool pidns_ = false;
  mutable bool init_reaped_ = false;
  std::uint32_t cgroup_id_ = 0;
  bool released_ = false;
  std::optional<WaitStatus> reaped_;
};

// Children whose tree is still alive after `grace` (empty when all are gone). Polls /proc (or
// the cgroup) every 20 ms and only while one is left.
std::vector<Child*> until_groups_gone(std::span<Child* const> children, Millis grace);

// ---- The seam ----------------------------------------------------------------------------
struct ExecuteRequest {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string cwd;
  Capture capture = Capture::kDisabled;
  std::optional<Millis> timeout;  // none: no deadline
  Millis grace{2000};             // SIGTERM -> grace -> SIGKILL
  Millis drain{250};              // reading past the tree's end before calling it left_running
  // After the leader exited, how long output still held by members of its tree is read
  // before the tree is ended (left_running): `sh -c 'sleep 705 & exit 0'` holds stdout in the
  // sleep, and the run must end with the leader, not at the deadline.
  Millis linger{1000};
  int log_fd = -1;                // child fd for JSON-lines logs; -1: none
  Limits limits;
  int cancel_fd = -1;  // readable => stop now; one byte read is the signal number that asked
};

struct ExecuteResult {
  int exit_code = 0;  // the leader's; 128 + signal when killed; 127 when spawn failed
  int signal = 0;
  bool timed_out = false;
  bool spawn_failed = false;
  bool left_running = false;  // something outlived the leader or held the output past drain
  bool oom_killed = false;
  int interrupted_by = 0;     // the signal number read from cancel_fd, if that stopped it
  std::uint64_t cpu_ms = 0;
  std::uint64_t peak_rss_bytes = 0;
  std::uint64_t duration_ms = 0;
  Capture capture = Capture::kDisabled;
  std::string stdout_data, stderr_data;
  std::vector<std::string> logs;
  bool stdout_truncated = false, stderr_truncated = false;
  std::string error;  // why spawn failed
  Containment containment = Containment::kProcessGroup;
};

// The boundary checks: one clear error naming the field (code "invalid_request" /
// "invalid_result"), never a crash downstream.
Status validate(const ExecuteRequest& request);
Status validate(const ExecuteResult& result);
std::string to_json(const ExecuteResult& result);  // one line, no newline

// ---- Supervisor --------------------------------------------------------------------------
struct SupervisorOptions {
  bool containment = true;  // use a cgroup per run where the machine allows it
  // Use a pid namespace per run even where cgroups work (tests, bench); without cgroups it is
  // the automatic fallback where the machine allows it.
  bool prefer_pid_namespace = false;
  // Become a child subreaper (PR_SET_CHILD_SUBREAPER): whatever a run forks stays a
  // descendant of this process, whatever group, session or cgroup it moves itself to (an
  // orphan is reparented here, not to init). execute() then counts every descendant of this
  // process except the guards as the run's: reported as left_running, ended with the tree,
  // its zombies reaped. Meant for a process that runs one execute() at a time
  // (genvm-supervise); a process with several runs at once cannot tell whose orphan is whose.
  bool adopt_orphans = false;
  bool guard = true;
  std::size_t guard_pipe_bytes = 0;  // 0: kernel default (tests shrink it to overrun a guard)
  Millis guard_stall = Millis(1000);  // a guard that takes nothing this long is given up
  // Receives one JSON line per notable event (the containment mode in force, a guard given up).
  void (*log)(std::string_view json_line) = nullptr;
};

class Supervisor {
 public:
  explicit Supervisor(SupervisorOptions options = {});
  ~Supervisor();  // flushes the guard's queue and closes its pipe: listed groups are killed
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  Containment containment() const { return mode_; }
  // What detection found, as logged (e.g. why a pid namespace asked for is not in force).
  const std::string& containment_why() const { return why_; }
  // prefer_pid_namespace was asked and the kernel refused it: unshare(CLONE_NEWPID)'s errno
  // (the mode is then what detection found). 0 otherwise.
  int pid_namespace_refusal() const { return pidns_refusal_; }
  Result<Child> spawn(const SpawnRequest& request);
  Result<ExecuteResult> execute(const ExecuteRequest& request);

  // SIGTERM every child, wait until their trees are gone or `grace`, SIGKILL the rest and wait
  // for them too; the groups are held throughout, so a kill -9 of us mid-teardown still reaches
  // them through the guard.
  void terminate(std::span<Child* const> children, Millis grace);

  // Writes queued guard lines now (one write per call, in pieces a full pipe can take).
  void flush_guard();
  pid_t guard_pid() const { return guard_pid_; }
  bool guard_alive();

  // Holds with reference counts: a release that arrives while held is written when the last
  // hold on that group ends.
  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& o) noexcept : sup_(o.sup_), pgids_(std::move(o.pgids_)) { o.sup_ = nullptr; }
    Hold& operator=(Hold&&) = delete;
    ~Hold();

   private:
    friend class Supervisor;
    Supervisor* sup_ = nullptr;
    std::vector<pid_t> pgids_;
  };
  Hold hold(std::span<Child* const> children);

 private:
  friend class Child;
  void start_guard();
  void queue_guard_line(char op, pid_t pgid, std::uint32_t cg);
  void give_up_guard();
  void release_child(Child& c);
  void remove_cgroup(std::uint32_t id);
  void retry_cgroup_removals();
  // adopt_orphans: the live descendants of this process but the guards (the leader and its
  // tree included); reaps the zombies among our own children but `leader` on the way.
  std::vector<pid_t> adopted_descendants(pid_t leader);

  SupervisorOptions options_;
  std::string why_;
  int pidns_refusal_ = 0;
  Containment mode_ = Containment::kProcessGroup;
  std::unique_ptr<internal::CgroupLayout> layout_;
  int own_pidns_fd_ = -1;  // our pid namespace, to return to after each namespaced fork
  pid_t guard_pid_ = -1;
  int guard_fd_ = -1;  // the write end only we (and a child until it listed itself) hold
  bool guard_started_ = false;
  std::string guard_queue_;
  std::map<pid_t, int> holds_;
  std::map<pid_t, std::uint32_t> deferred_release_;
  std::uint32_t next_cgroup_ = 0;
  std::vector<std::uint32_t> cgroups_to_remove_;
};

}  // namespace genvm::supervisor
