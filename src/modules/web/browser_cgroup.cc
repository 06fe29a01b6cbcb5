#include "modules/web/browser_cgroup.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace genvm::web {

namespace {

constexpr const char* kPrefix = "genvm-web-";

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f) return false;
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// This process's cgroup path in the hierarchy whose /proc/self/cgroup line has `controllers`
// ("memory" for v1, "" for the v2 line "0::PATH"); empty when there is none.
std::string own_cgroup(const std::string& controllers) {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    auto a = line.find(':');
    auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string names = line.substr(a + 1, b - a - 1);
    bool match = controllers.empty() ? names.empty() : false;
    if (!controllers.empty()) {
      std::stringstream ss(names);
      for (std::string n; std::getline(ss, n, ',');) match = match || n == controllers;
    }
    if (match) return line.substr(b + 1);
  }
  return {};
}

// Removes the empty cgroups of modules that are gone (a module killed by SIGKILL leaves its
// browser's cgroup behind once its processes have ended).
void sweep_stale(const std::string& base) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!name.starts_with(kPrefix)) continue;
    long long pid = std::atoll(name.c_str() + std::strlen(kPrefix));
    if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    ::rmdir(it->path().c_str());  // fails, and is left, while processes remain
  }
}

}  // namespace

Result<std::unique_ptr<BrowserCgroup>> BrowserCgroup::create(std::uint64_t limit_bytes, const std::string& fs_root) {
  static std::atomic<int> counter{0};
  std::string name = kPrefix + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  std::string why;
  // v1: the memory controller's own hierarchy.
  if (std::string own = own_cgroup("memory"); !own.empty()) {
    std::string base = fs_root + "/memory" + (own == "/" ? "" : own);
    if (exists(base + "/memory.limit_in_bytes")) {
      sweep_stale(base);
      std::string dir = base + "/" + name;
      if (::mkdir(dir.c_str(), 0755) != 0) {
        why = "mkdir " + dir + ": " + std::strerror(errno);
      } else {
        std::unique_ptr<BrowserCgroup> cg(new BrowserCgroup(dir, false));
        if (write_file(dir + "/memory.limit_in_bytes", std::to_string(limit_bytes))) return cg;
        why = "cannot write " + dir + "/memory.limit_in_bytes";
      }
    }
  }
  // v2: the unified hierarchy, where the parent delegates the memory controller.
  if (exists(fs_root + "/cgroup.controllers")) {
    std::string own = own_cgroup("");
    std::string base = fs_root + (own == "/" ? "" : own);
    std::ifstream controllers(base + "/cgroup.subtree_control");
    std::string enabled((std::istreambuf_iterator<char>(controllers)), std::istreambuf_iterator<char>());
    if (enabled.find("memory") == std::string::npos) (void)write_file(base + "/cgroup.subtree_control", "+memory");
    if (exists(base + "/cgroup.subtree_control")) {
      sweep_stale(base);
      std::string dir = base + "/" + name;
      if (::mkdir(dir.c_str(), 0755) != 0) {
        why = "mkdir " + dir + ": " + std::strerror(errno);
      } else {
        std::unique_ptr<BrowserCgroup> cg(new BrowserCgroup(dir, true));
        if (exists(dir + "/memory.max") && write_file(dir + "/memory.max", std::to_string(limit_bytes))) return cg;
        why = "the memory controller is not delegated to " + base;
      }
    }
  }
  return make_error("cgroup", why.empty() ? "no writable memory cgroup (v1 or v2)" : why);
}

std::uint64_t BrowserCgroup::oom_kills() const {
  std::ifstream f(dir_ + (v2_ ? "/memory.events" : "/memory.oom_control"));
  std::string key;
  std::uint64_t value = 0;
  while (f >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return 0;
}

BrowserCgroup::~BrowserCgroup() {
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (::rmdir(dir_.c_str()) == 0 || errno == ENOENT) return;
    // Something is still listed: what the browser's group kill did not reach, or processes the
    // kernel has not finished ending.
    std::ifstream procs(procs_path());
    for (long long pid; procs >> pid;) {
      if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace genvm::web
