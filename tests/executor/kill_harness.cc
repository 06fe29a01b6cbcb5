// executor_kill_test (ctest label `kill`): SIGKILL the executor at random instants of runs that
// write storage, and check the host's side after each one.
//
//   GENVM_KILL_COUNT=1000 GENVM_KILL_SEED=42 build-executor/tests/executor/executor_kill_test
//
// Each iteration runs `counter.increment` (code from storage, one storage write) against the
// in-process TestHost over a socketpair (`--host fd://N`), kills it after a random delay drawn
// from [0, 1.5 x the fastest of five uncut runs' wall time], and then requires: either nothing was delivered and
// the host's storage is exactly what it was, or exactly one result was delivered, it decodes as
// a whole reported result, it Returned the next counter value, and only then are its storage
// changes applied (as a node would). So the counter equals the number of delivered results at
// every step. Fails if the executor wrote anything the host kept before consume_result, if a
// truncated result were accepted, or if a result were delivered twice. The seed is printed;
// delays are the only randomness.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <csignal>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "executor_fixture.h"

namespace genvm {
namespace {

using calldata::Value;
using exec_test::addr;

class KillTest : public exec_test::ExecutorTest {
 protected:
  // One genvm run against host_ over a fresh socketpair; SIGKILLed after `delay` unless it ended.
  // Returns true when the process ended by itself.
  bool run_and_kill(const std::string& data_path, std::chrono::microseconds delay) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      ADD_FAILURE() << "socketpair";
      return false;
    }
    pid_t pid = ::fork();
    if (pid == 0) {
      // The child's end must survive exec; fd 3 is free after the dup2.
      ::dup2(sv[1], 3);
      int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, 2);
      ::execl(genvm_.c_str(), genvm_.c_str(), "run", "--execution-data", data_path.c_str(), "--host", "fd://3",
              "--permissions", "wscn", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(sv[1]);
    std::thread server([&] { (void)host_.serve_connection(sv[0]); });
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    int status = 0;
    bool ended = ::waitpid(pid, &status, WNOHANG) == pid;
    if (!ended) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    server.join();  // the peer is gone: EOF ends the connection
    ::close(sv[0]);
    return ended;
  }
};

TEST_F(KillTest, HostStateChangesOnlyThroughADeliveredResult) {
  const long count = std::getenv("GENVM_KILL_COUNT") ? std::atol(std::getenv("GENVM_KILL_COUNT")) : 1000;
  const std::uint64_t seed =
      std::getenv("GENVM_KILL_SEED") ? std::strtoull(std::getenv("GENVM_KILL_SEED"), nullptr, 10) : std::random_device{}();
  std::printf("kill test: %ld kills, seed %llu (GENVM_KILL_SEED=%llu reproduces the delays)\n", count,
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);

  deploy("counter.wasm", addr(1));
  std::string data_path = dir_ + "/inc.bin";
  exec_test::write_file(data_path, calldata::encode(host::execution_data_to_value(
                                       data(addr(1), addr(0xaa), call("increment"), false, std::nullopt))));

  // Calibrate the delay range on one uncut run (no assertion on time: it only spreads the kills
  // over the whole run, from before exec to after the result).
  // The fastest of five: a loaded machine's slow outliers would push most kills past the end.
  auto per_run = std::chrono::microseconds::max();
  for (int k = 0; k < 5; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    auto whole = run(data(addr(1), addr(0xaa), call("increment"), false, std::nullopt), "wscn", {}, true);
    ASSERT_EQ(whole.exit_code, 0) << whole.stderr_text;
    per_run = std::min(per_run, std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0));
  }
  std::uniform_int_distribution<long> pick(0, per_run.count() * 3 / 2);

  // The counter value now: the calibration runs may or may not have delivered.
  auto results_now = [&] { return host_.with_state([](test_host::State& s) { return s.results.size(); }); };
  std::uint64_t counter = 0;
  {
    auto get = run(data(addr(1), addr(0xaa), call("get"), false, std::nullopt), "wscn", {}, false);
    ASSERT_TRUE(get.report.is_map());
    counter = static_cast<std::uint64_t>(get.report.find("data")->as_int().to_int64().value_or(0));
  }

  long delivered = 0, killed = 0;
  for (long i = 0; i < count; ++i) {
    auto before = host_.with_state([](test_host::State& s) { return s.storage; });
    std::size_t n_before = results_now();
    auto delay = std::chrono::microseconds(pick(rng));
    bool ended = run_and_kill(data_path, delay);
    auto results = host_.with_state([](test_host::State& s) { return s.results; });
    ASSERT_LE(results.size(), n_before + 1) << "iteration " << i << ": more than one result";
    if (results.size() == n_before) {
      ++killed;
      auto after = host_.with_state([](test_host::State& s) { return s.storage; });
      ASSERT_TRUE(after == before) << "iteration " << i << " (delay " << delay.count()
                                   << " us): storage changed without a delivered result";
      continue;
    }
    ++delivered;
    auto v = exec_test::decode_consumed(results.back());
    ASSERT_TRUE(v.ok()) << "iteration " << i << ": a delivered result does not decode (partial?)";
    ASSERT_TRUE(v->is_map() && v->find("kind") && *v->find("kind") == Value("Return"))
        << "iteration " << i << ": " << calldata::to_text(*v);
    ASSERT_EQ(*v->find("data"), Value(static_cast<std::int64_t>(counter + 1))) << "iteration " << i;
    ASSERT_EQ(v->find("execution_hash")->as_bytes().size(), 32u);
    host_.with_state([&](test_host::State& s) {
      auto st = test_host::apply_storage_changes(s, addr(1), *v->find("storage_changes"));
      EXPECT_TRUE(st.ok());
      return 0;
    });
    ++counter;
    (void)ended;
  }
  std::printf("kill test: %ld delivered, %ld killed before delivery (delays 0..%ld us)\n", delivered, killed,
              static_cast<long>(per_run.count() * 3 / 2));
  // The counter the host holds is the number of results it accepted.
  auto get = run(data(addr(1), addr(0xaa), call("get"), false, std::nullopt), "wscn", {}, false);
  ASSERT_TRUE(get.report.is_map());
  EXPECT_EQ(*get.report.find("data"), Value(static_cast<std::int64_t>(counter)));
}

}  // namespace
}  // namespace genvm
