// Spawn+wait latency of /bin/true: plain posix_spawn against the supervisor with neither the
// guard nor containment, with the guard, and with guard + containment; plus the teardown time
// of a tree whose members exit on SIGTERM. Arms are interleaved per round; the min and median
// of the per-round means are printed, then the ratios of the medians. The order of the arms
// rotates every round.
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/supervisor.h"

extern char** environ;
namespace sv = genvm::supervisor;
using Clock = std::chrono::steady_clock;

namespace {

double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

void plain_posix_spawn() {
  pid_t pid;
  char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
  if (posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, environ) != 0) std::abort();
  waitpid(pid, nullptr, 0);
}

void supervised(sv::Supervisor& sup, const sv::SpawnRequest& req) {
  auto c = sup.spawn(req);
  if (!c.ok()) {
    std::fprintf(stderr, "spawn failed: %s\n", c.error().to_string().c_str());
    std::exit(1);
  }
  c->wait();
  c->release();
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  int per_round = argc > 2 ? std::atoi(argv[2]) : 100;
  if (rounds <= 0 || per_round <= 0) {
    std::fprintf(stderr, "usage: supervisor_bench [ROUNDS] [SPAWNS_PER_ROUND]\n");
    return 2;
  }
  sv::SpawnRequest req;
  req.argv = {"/bin/true"};
  sv::SupervisorOptions bare_o, guard_o, full_o, ns_o;
  ns_o.prefer_pid_namespace = true;
  bare_o.guard = false;
  bare_o.containment = false;
  guard_o.containment = false;
  sv::Supervisor bare(bare_o), guarded(guard_o), full(full_o), ns(ns_o);
  std::printf("containment in force for the full arm: %s; for the namespace arm: %s\n",
              std::string(sv::to_string(full.containment())).c_str(), std::string(sv::to_string(ns.containment())).c_str());

  struct Arm {
    const char* name;
    std::function<void()> run;
    std::vector<double> means;
  };
  std::vector<Arm> arms = {
      {"posix_spawn", plain_posix_spawn, {}},
      {"supervisor (no guard, no cgroup)", [&] { supervised(bare, req); }, {}},
      {"supervisor + guard", [&] { supervised(guarded, req); }, {}},
      {"supervisor + guard + cgroup", [&] { supervised(full, req); }, {}},
      {"supervisor + guard + pid namespace", [&] { supervised(ns, req); }, {}},
  };
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t k = 0; k < arms.size(); ++k) {
      Arm& a = arms[(k + static_cast<std::size_t>(r)) % arms.size()];  // rotate: no arm always first
      auto t = Clock::now();
      for (int i = 0; i < per_round; ++i) a.run();
      a.means.push_back(us_since(t) / per_round);
    }
  }
  std::vector<double> medians;
  std::printf("%-36s %10s %10s\n", "arm (us per spawn+wait of /bin/true)", "min", "median");
  for (Arm& a : arms) {
    std::sort(a.means.begin(), a.means.end());
    medians.push_back(a.means[a.means.size() / 2]);
    std::printf("%-36s %10.0f %10.0f\n", a.name, a.means.front(), medians.back());
  }
  std::printf("ratios of medians: supervisor/posix_spawn %.2f, guard cost %.2f, cgroup cost %.2f, pid namespace cost %.2f, "
              "all (cgroup)/posix_spawn %.2f\n",
              medians[1] / medians[0], medians[2] / medians[1], medians[3] / medians[2], medians[4] / medians[2],
              medians[3] / medians[0]);

  // Teardown: three members that exit on SIGTERM; the grace is 10 s, so a teardown that waited
  // for zombies or for the grace would show it.
  for (sv::Supervisor* s : {&guarded, &full, &ns}) {
    std::vector<double> ms;
    for (int r = 0; r < 5; ++r) {
      sv::SpawnRequest t;
      t.argv = {"/bin/sh", "-c", "sleep 300 & sleep 300 & (sleep 300; true) & wait"};
      auto c = s->spawn(t);
      if (!c.ok()) return 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      sv::Child* cs[] = {&*c};
      auto t0 = Clock::now();
      s->terminate(cs, std::chrono::milliseconds(10000));
      ms.push_back(us_since(t0) / 1000);
      c->wait();
    }
    std::sort(ms.begin(), ms.end());
    std::printf("teardown of a SIGTERM-obeying tree (%s): min %.1f ms, median %.1f ms, max %.1f ms\n",
                std::string(sv::to_string(s->containment())).c_str(), ms.front(), ms[ms.size() / 2], ms.back());
  }
  return 0;
}
