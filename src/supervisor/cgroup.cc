// Containment detection and the async-signal-safe cgroup primitives (see internal.h).
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "supervisor/internal.h"

namespace genvm::supervisor::internal {
namespace {

constexpr long kCgroup2Magic = 0x63677270;

bool raw_append(char* out, std::size_t n, std::size_t& len, const char* s) {
  while (*s) {
    if (len + 1 >= n) return false;
    out[len++] = *s++;
  }
  out[len] = 0;
  return true;
}

bool raw_path(char* out, std::size_t n, const char* dir, const char* file) {
  std::size_t len = 0;
  out[0] = 0;
  return raw_append(out, n, len, dir) && raw_append(out, n, len, "/") && raw_append(out, n, len, file);
}

void raw_sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Calls fn(pid) for each pid listed in `procs_path`. Buffer on the stack: a pids limit keeps
// the list short, and a longer one is handled over the caller's repeated passes.
template <class Fn>
int raw_for_each_pid(const char* procs_path, Fn fn) {
  char buf[16384];
  long n = raw_read_file(procs_path, buf, sizeof buf - 1);
  if (n < 0) return -1;
  int count = 0;
  long v = 0;
  bool in = false;
  for (long i = 0; i <= n; ++i) {
    char c = i < n ? buf[i] : '\n';
    if (c >= '0' && c <= '9') {
      v = v * 10 + (c - '0');
      in = true;
    } else if (in) {
      if (v > 1) {
        fn(static_cast<pid_t>(v));
        ++count;
      }
      v = 0;
      in = false;
    }
  }
  return count;
}

// The dir whose cgroup.procs says who is in run `id` (pids for v1, the one dir for v2).
bool membership_procs(const CgroupLayout& l, std::uint32_t id, char* out, std::size_t n) {
  char dir[320];
  if (!raw_cgroup_dir(dir, sizeof dir, l.pids, l.prefix, id)) return false;
  return raw_path(out, n, dir, "cgroup.procs");
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The path of our own cgroup for a v1 controller ("memory") or v2 ("") from /proc/self/cgroup.
std::string own_cgroup(const std::string& controller) {
  std::istringstream in(read_text("/proc/self/cgroup"));
  std::string line;
  while (std::getline(in, line)) {
    auto a = line.find(':');
    auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string ctrls = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    if (controller.empty()) {
      if (line.compare(0, 3, "0::") == 0) return path;
      continue;
    }
    std::istringstream cs(ctrls);
    std::string c;
    while (std::getline(cs, c, ',')) {
      if (c == controller) return path;
    }
  }
  return {};
}

bool probe_dir(const std::string& parent, const char* const* files) {
  static std::atomic<int> seq{0};
  std::string dir = parent + "/genvm-probe-" + std::to_string(getpid()) + "-" + std::to_string(seq++);
  if (::mkdir(dir.c_str(), 0755) != 0) return false;
  bool ok = true;
  for (const char* const* f = files; *f; ++f) ok = ok && exists(dir + "/" + *f);
  ::rmdir(dir.c_str());
  return ok;
}

bool copy_to(char* out, std::size_t n, const std::string& s) {
  if (s.size() + 1 > n) return false;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return true;
}

std::string trim_slash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s == "/" ? std::string() : s;
}

}  // namespace

std::size_t raw_fmt_u64(char* out, std::uint64_t v) {
  char tmp[24];
  std::size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (std::size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  out[n] = 0;
  return n;
}

bool raw_cgroup_dir(char* out, std::size_t n, const char* base, const char* prefix, std::uint32_t id) {
  char num[24];
  raw_fmt_u64(num, id);
  std::size_t len = 0;
  out[0] = 0;
  return raw_append(out, n, len, base) && raw_append(out, n, len, "/") &&
         raw_append(out, n, len, prefix) && raw_append(out, n, len, num);
}

bool raw_write_file(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::size_t len = std::strlen(text);
  ssize_t w = ::write(fd, text, len);
  ::close(fd);
  return w == static_cast<ssize_t>(len);
}

long raw_read_file(const char* path, char* buf, std::size_t n) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  ::close(fd);
  return static_cast<long>(got);
}

char raw_proc_state(pid_t pid) {
  char path[48] = "/proc/";
  std::size_t len = 6;
  len += raw_fmt_u64(path + len, static_cast<std::uint64_t>(pid));
  std::memcpy(path + len, "/stat", 6);
  char buf[512];
  long n = raw_read_file(path, buf, sizeof buf);
  if (n <= 0) return 0;
  // The state follows the last ')' (the command name may hold one).
  long close = -1;
  for (long i = 0; i < n; ++i) {
    if (buf[i] == ')') close = i;
  }
  if (close < 0 || close + 2 >= n) return 0;
  return buf[close + 2];
}

void raw_cgroup_signal(const CgroupLayout& l, std::uint32_t id, int sig) {
  char procs[384];
  if (!membership_procs(l, id, procs, sizeof procs)) return;
  raw_for_each_pid(procs, [sig](pid_t p) { ::kill(p, sig); });
}

void raw_cgroup_kill(const CgroupLayout& l, std::uint32_t id) {
  char dir[320], path[384];
  if (l.mode == Containment::kCgroupV2) {
    if (!raw_cgroup_dir(dir, sizeof dir, l.pids, l.prefix, id)) return;
    if (raw_path(path, sizeof path, dir, "cgroup.kill") && raw_write_file(path, "1")) return;
    raw_cgroup_signal(l, id, SIGKILL);  // a kernel before 5.14: best effort
    return;
  }
  if (l.mode != Containment::kCgroupV1) return;
  // Frozen, nothing can fork between our read of the list and our signals; the SIGKILLs are
  // delivered at the thaw. Repeat while something is listed (a list longer than one read).
  char state[384], procs[384];
  if (!raw_cgroup_dir(dir, sizeof dir, l.freezer, l.prefix, id)) return;
  if (!raw_path(state, sizeof state, dir, "freezer.state")) return;
  if (!raw_path(procs, sizeof procs, dir, "cgroup.procs")) return;
  for (int pass = 0; pass < 20; ++pass) {
    bool frozen = raw_write_file(state, "FROZEN");
    for (int i = 0; frozen && i < 200; ++i) {  // FREEZING -> FROZEN, bounded at ~200 ms
      char buf[32];
      long n = raw_read_file(state, buf, sizeof buf - 1);
      if (n >= 6 && std::memcmp(buf, "FROZEN", 6) == 0) break;
      raw_sleep_ms(1);
    }
    int count = raw_for_each_pid(procs, [](pid_t p) { ::kill(p, SIGKILL); });
    raw_write_file(state, "THAWED");
    if (count <= 0) return;
    raw_sleep_ms(1);
  }
}

bool raw_cgroup_empty(const CgroupLayout& l, std::uint32_t id) {
  char procs[384];
  if (!membership_procs(l, id, procs, sizeof procs)) return true;
  int live = 0;
  int n = raw_for_each_pid(procs, [&live](pid_t p) {
    char s = raw_proc_state(p);
    if (s != 0 && s != 'Z' && s != 'X') ++live;
  });
  return n <= 0 || live == 0;
}

bool raw_cgroup_remove(const CgroupLayout& l, std::uint32_t id) {
  const char* bases[3] = {l.pids, l.memory, l.freezer};
  int count = l.mode == Containment::kCgroupV2 ? 1 : 3;
  bool all = true;
  for (int i = 0; i < count; ++i) {
    char dir[320];
    if (!raw_cgroup_dir(dir, sizeof dir, bases[i], l.prefix, id)) continue;
    if (::rmdir(dir) != 0 && errno != ENOENT) all = false;
  }
  return all;
}

void detect_containment(CgroupLayout& layout, std::string& why) {
  static std::atomic<int> seq{0};
  std::string prefix = "genvm-" + std::to_string(getpid()) + "-" + std::to_string(seq++) + "-";
  copy_to(layout.prefix, sizeof layout.prefix, prefix);
  layout.mode = Containment::kProcessGroup;

  // v2: the unified hierarchy at /sys/fs/cgroup (or /sys/fs/cgroup/unified) with pids and
  // memory delegated to the cgroup we are in.
  for (const char* mount : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
    struct statfs sf;
    if (::statfs(mount, &sf) != 0 || static_cast<long>(sf.f_type) != kCgroup2Magic) continue;
    std::string base = std::string(mount) + trim_slash(own_cgroup(""));
    std::string sub = read_text(base + "/cgroup.subtree_control");
    if (sub.find("pids") == std::string::npos || sub.find("memory") == std::string::npos) {
      raw_write_file((base + "/cgroup.subtree_control").c_str(), "+pids +memory");
      sub = read_text(base + "/cgroup.subtree_control");
    }
    const char* files[] = {"cgroup.kill", "pids.max", "memory.max", "memory.events", nullptr};
    if (sub.find("pids") != std::string::npos && sub.find("memory") != std::string::npos &&
        probe_dir(base, files) && copy_to(layout.pids, sizeof layout.pids, base)) {
      layout.mode = Containment::kCgroupV2;
      why = "cgroup v2 at " + base;
      return;
    }
    why += std::string("cgroup v2 at ") + mount + " lacks delegated pids+memory; ";
  }

  // v1: pids, memory and freezer hierarchies, each under the cgroup we are in.
  std::string pids = "/sys/fs/cgroup/pids" + trim_slash(own_cgroup("pids"));
  std::string memory = "/sys/fs/cgroup/memory" + trim_slash(own_cgroup("memory"));
  std::string freezer = "/sys/fs/cgroup/freezer" + trim_slash(own_cgroup("freezer"));
  const char* pf[] = {"pids.max", "cgroup.procs", nullptr};
  const char* mf[] = {"memory.limit_in_bytes", "memory.oom_control", nullptr};
  const char* ff[] = {"freezer.state", "cgroup.procs", nullptr};
  if (probe_dir(pids, pf) && probe_dir(memory, mf) && probe_dir(freezer, ff) &&
      copy_to(layout.pids, sizeof layout.pids, pids) &&
      copy_to(layout.memory, sizeof layout.memory, memory) &&
      copy_to(layout.freezer, sizeof layout.freezer, freezer)) {
    layout.mode = Containment::kCgroupV1;
    why += "cgroup v1 pids+memory+freezer";
    return;
  }
  why += "no writable cgroup hierarchy: process groups only";
}

void sweep_stale_cgroups(const CgroupLayout& l) {
  if (l.mode == Containment::kProcessGroup) return;
  for (const char* base : {l.pids, l.memory, l.freezer}) {
    if (!base[0]) continue;
    DIR* d = ::opendir(base);
    if (!d) continue;
    while (dirent* e = ::readdir(d)) {
      if (std::strncmp(e->d_name, "genvm-", 6) != 0) continue;
      long owner = std::atol(e->d_name + 6);
      // Only a dead owner's, and rmdir only removes an empty cgroup: never a live run's.
      if (owner <= 1 || ::kill(static_cast<pid_t>(owner), 0) == 0 || errno != ESRCH) continue;
      ::rmdir((std::string(base) + "/" + e->d_name).c_str());
    }
    ::closedir(d);
  }
}

bool pid_namespace_available(int* refusal) {
  pid_t pid = ::fork();
  // The child exits 0 on success, else with unshare's errno (all fit in an exit status).
  if (pid == 0) ::_exit(::unshare(CLONE_NEWPID) == 0 ? 0 : (errno > 0 && errno < 256 ? errno : 255));
  if (pid < 0) {
    if (refusal) *refusal = errno;
    return false;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok && refusal) *refusal = WIFEXITED(status) ? WEXITSTATUS(status) : EPERM;
  return ok;
}

std::vector<ProcRow> read_proc_table() {
  std::vector<ProcRow> rows;
  DIR* d = ::opendir("/proc");
  if (!d) return rows;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    char path[300];  // d_name is at most 255 bytes
    std::snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    char buf[1024];
    long n = raw_read_file(path, buf, sizeof buf - 1);
    if (n <= 0) continue;
    buf[n] = 0;
    char* close = std::strrchr(buf, ')');
    if (!close || close[1] == 0) continue;
    ProcRow r;
    r.pid = static_cast<pid_t>(std::atol(buf));
    // Fields after the name: 3 state, 4 ppid, 5 pgrp, ..., 14-17 times, 24 rss.
    char* p = close + 2;
    int field = 3;
    char* save = nullptr;
    for (char* tok = strtok_r(p, " ", &save); tok; tok = strtok_r(nullptr, " ", &save), ++field) {
      switch (field) {
        case 3: r.state = tok[0]; break;
        case 4: r.ppid = static_cast<pid_t>(std::atol(tok)); break;
        case 5: r.pgrp = static_cast<pid_t>(std::atol(tok)); break;
        case 14: case 15: case 16: case 17: r.ticks += std::strtoull(tok, nullptr, 10); break;
        case 24: r.rss_pages = std::strtoull(tok, nullptr, 10); break;
        default: break;
      }
      if (field >= 24) break;
    }
    rows.push_back(r);
  }
  ::closedir(d);
  return rows;
}

}  // namespace genvm::supervisor::internal
