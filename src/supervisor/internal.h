// Private to src/supervisor. Everything declared "raw" here is async-signal-safe: it uses only
// syscalls and caller-provided buffers, because it runs between fork and exec in a child and
// in the guard (a fork of a possibly multithreaded process that never execs).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "supervisor/supervisor.h"

namespace genvm::supervisor::internal {

// Where a Supervisor's run cgroups live. Fixed arrays so a forked guard can use it as is.
struct CgroupLayout {
  Containment mode = Containment::kProcessGroup;
  // v1: the parent dir of run cgroups per controller; v2: `pids` is the one parent dir.
  char pids[256] = {};
  char memory[256] = {};
  char freezer[256] = {};
  char prefix[64] = {};  // "genvm-<pid>-<supervisor seq>-": unique per Supervisor
};

// Detects what this machine allows; fills `layout` (mode kProcessGroup when nothing works).
// `why` says what was found, for the log line.
void detect_containment(CgroupLayout& layout, std::string& why);

// Removes the empty run cgroups of supervisors that are gone (a kill -9 whose guard could not
// rmdir in time because init had not yet reaped the run's orphans).
void sweep_stale_cgroups(const CgroupLayout& layout);
// Run cgroup `id`'s directory under `base`.
bool raw_cgroup_dir(char* out, std::size_t n, const char* base, const char* prefix, std::uint32_t id);
std::size_t raw_fmt_u64(char* out, std::uint64_t v);
bool raw_write_file(const char* path, const char* text);
long raw_read_file(const char* path, char* buf, std::size_t n);  // bytes read, -1 on error
// SIGKILL everything in run cgroup `id` without a race against forks (v2 cgroup.kill, v1
// freeze-kill-thaw).
void raw_cgroup_kill(const CgroupLayout& layout, std::uint32_t id);
// Send `sig` to every process listed in run cgroup `id` (no freeze: for polite signals).
void raw_cgroup_signal(const CgroupLayout& layout, std::uint32_t id, int sig);
// True when the run cgroup lists no process that is not a zombie.
bool raw_cgroup_empty(const CgroupLayout& layout, std::uint32_t id);
// rmdir the run cgroup in every hierarchy; true when all are gone.
bool raw_cgroup_remove(const CgroupLayout& layout, std::uint32_t id);
// 'R', 'S', 'Z', ... of /proc/<pid>/stat, or 0 when there is no such process.
char raw_proc_state(pid_t pid);

// Forks the guard: it reads `read_fd` (lines "+<pgid> <cgroup id>\n" and "-<pgid> <cg>\n")
// and at EOF SIGKILLs every group and cgroup still listed. Returns its pid or -1.
pid_t fork_guard(int read_fd, const CgroupLayout& layout);

// True when this process may create pid namespaces (probed with a throwaway child); when
// not, `refusal` (if given) gets the errno unshare(CLONE_NEWPID) answered.
bool pid_namespace_available(int* refusal = nullptr);

// What a namespace's init reports about the leader, in one atomic pipe write.
struct LeaderReport {
  int wait_status = 0;
  std::uint32_t pad = 0;
  std::uint64_t cpu_ms = 0;
  std::uint64_t max_rss_bytes = 0;
};

// One /proc/<pid>/stat row.
struct ProcRow {
  pid_t pid = 0, ppid = 0, pgrp = 0;
  char state = 0;
  std::uint64_t ticks = 0;  // utime + stime + cutime + cstime
  std::uint64_t rss_pages = 0;
};
std::vector<ProcRow> read_proc_table();

}  // namespace genvm::supervisor::internal
