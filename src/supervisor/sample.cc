// What a running tree uses now: /proc by parent pid, one timer for every watched tree.
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "supervisor/internal.h"

namespace genvm::supervisor {

std::map<pid_t, TreeUsage> sample_trees(std::span<const pid_t> roots) {
  std::map<pid_t, TreeUsage> out;
  if (roots.empty()) return out;
  std::vector<internal::ProcRow> rows = internal::read_proc_table();
  std::unordered_map<pid_t, std::vector<std::size_t>> children;
  std::unordered_map<pid_t, std::size_t> by_pid;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    children[rows[i].ppid].push_back(i);
    by_pid[rows[i].pid] = i;
  }
  static const long tick_hz = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
  static const long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
  for (pid_t root : roots) {
    auto it = by_pid.find(root);
    if (it == by_pid.end()) continue;
    TreeUsage u;
    std::uint64_t ticks = 0;
    std::vector<std::size_t> stack{it->second};
    while (!stack.empty()) {
      const internal::ProcRow& r = rows[stack.back()];
      stack.pop_back();
      // cutime/cstime keep the CPU of members that already exited and were reaped.
      ticks += r.ticks;
      u.rss_bytes += r.rss_pages * static_cast<std::uint64_t>(page);
      auto c = children.find(r.pid);
      if (c != children.end()) stack.insert(stack.end(), c->second.begin(), c->second.end());
    }
    u.cpu_ms = ticks * 1000 / static_cast<std::uint64_t>(tick_hz);
    out[root] = u;
  }
  return out;
}

struct TreeWatcher::Impl {
  Millis period;
  std::mutex mu;
  std::condition_variable cv;
  struct Watch {
    pid_t root;
    std::optional<TreeUsage> peak;
  };
  std::map<int, Watch> watches;
  int next = 1;
  bool quit = false;
  std::thread thread;

  void loop() {
    std::unique_lock<std::mutex> lock(mu);
    while (!quit) {
      cv.wait_for(lock, period, [this] { return quit; });
      if (quit || watches.empty()) continue;
      std::vector<pid_t> roots;
      for (auto& [id, w] : watches) roots.push_back(w.root);
      lock.unlock();
      std::map<pid_t, TreeUsage> seen = sample_trees(roots);
      lock.lock();
      for (auto& [id, w] : watches) {
        auto it = seen.find(w.root);
        if (it == seen.end()) continue;
        if (!w.peak) w.peak = TreeUsage{};
        w.peak->cpu_ms = std::max(w.peak->cpu_ms, it->second.cpu_ms);
        w.peak->rss_bytes = std::max(w.peak->rss_bytes, it->second.rss_bytes);
      }
    }
  }
};

TreeWatcher::TreeWatcher(Millis period) : impl_(std::make_unique<Impl>()) { impl_->period = period; }

TreeWatcher::~TreeWatcher() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->quit = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

int TreeWatcher::watch(pid_t root) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  int id = impl_->next++;
  impl_->watches[id] = Impl::Watch{root, std::nullopt};
  if (!impl_->thread.joinable()) impl_->thread = std::thread([this] { impl_->loop(); });
  return id;
}

std::optional<TreeUsage> TreeWatcher::stop(int handle) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->watches.find(handle);
  if (it == impl_->watches.end()) return std::nullopt;
  std::optional<TreeUsage> peak = it->second.peak;
  impl_->watches.erase(it);
  return peak;
}

}  // namespace genvm::supervisor
