// Helpers shared by the supervisor's tests: real processes, polled through /proc.
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "supervisor/supervisor.h"

extern char** environ;

namespace genvm::supervisor::testing {

// 0 when there is no such process, else its state letter.
inline char proc_state(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close = s.rfind(')');
  if (close == std::string::npos || close + 2 >= s.size()) return 0;
  return s[close + 2];
}

// Dead = gone or a zombie (an orphan waits for a slow init to reap it).
inline bool dead(pid_t pid) {
  char st = proc_state(pid);
  return st == 0 || st == 'Z' || st == 'X';
}

inline bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

inline bool wait_dead(pid_t pid, std::chrono::milliseconds limit) {
  return wait_until([pid] { return dead(pid); }, limit);
}

// A fresh directory for one test's files, removed with everything in it when the test's scope
// ends (hundreds of these were left in /tmp before). A forked copy of the test that ends with
// _exit never runs the destructor; one that returns normally does not remove its parent's dir.
class ScopedTempDir {
 public:
  ScopedTempDir() : owner_(::getpid()) {
    std::string t = "/tmp/genvm-supervisor-test-XXXXXX";
    if (::mkdtemp(t.data()) != nullptr) path = t;
  }
  ~ScopedTempDir() {
    if (!path.empty() && ::getpid() == owner_) {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;
  std::string path;  // empty when mkdtemp failed (the test's own file checks then fail)

 private:
  pid_t owner_;
};

// The pid a shell wrote into `path` (polls until the file holds a full line).
inline pid_t read_pid_file(const std::string& path, std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  pid_t pid = 0;
  wait_until(
      [&] {
        std::ifstream f(path);
        std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        if (text.find('\n') == std::string::npos) return false;  // not fully written yet
        pid = static_cast<pid_t>(std::atol(text.c_str()));
        return pid > 0;
      },
      limit);
  return pid;
}

inline std::map<std::string, std::string> base_env() { return build_env({}, environ); }

inline ExecuteRequest shell(const std::string& script) {
  ExecuteRequest r;
  r.argv = {"/bin/sh", "-c", script};
  r.env = base_env();
  return r;
}

inline std::string self_exe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

inline void kill_if_alive(pid_t pid) {
  if (pid > 1 && !dead(pid)) ::kill(pid, SIGKILL);
}

// Runs `body` in a forked copy of this test process (a "manager" to kill -9); returns its pid.
// `body` reports through `report_fd` (the write end of a pipe the parent reads).
inline pid_t fork_manager(const std::function<void(int report_fd)>& body, int& read_fd) {
  int p[2];
  if (::pipe(p) != 0) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    body(p[1]);
    ::_exit(0);
  }
  ::close(p[1]);
  read_fd = p[0];
  return pid;
}

// Reads one "\n"-terminated line from fd (blocking).
inline std::string read_line(int fd) {
  std::string s;
  char c;
  while (::read(fd, &c, 1) == 1 && c != '\n') s += c;
  return s;
}

inline void write_line(int fd, const std::string& s) {
  std::string l = s + "\n";
  ssize_t ignored = ::write(fd, l.data(), l.size());
  (void)ignored;
}

}  // namespace genvm::supervisor::testing
