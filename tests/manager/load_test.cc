// genvm-manager under load, as a process: the real `genvm run` executes the example counter
// contract (executor_protocol genvm; host 0 is the in-memory test host in this process, host 1
// the manager's own), driven over one WebSocket by our Beast client with a fixed number of runs
// in flight.
//
//   GENVM_MANAGER_LOAD_RUNS       runs in the load test (default 1000)
//   GENVM_MANAGER_LOAD_IN_FLIGHT  runs in flight, also the permit budget (default 64)
//
// Skips (naming what is missing) when genvm, genvm-manager or the examples are not built.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <chrono>
#include <cstring>
#include <optional>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "manager/protocol.h"
#include "manager/test_util.h"
#include "test_host.h"

extern char** environ;

namespace genvm::manager {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using calldata::Value;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string binary_dir() {
  const char* env = std::getenv("GENVM_BINARY_DIR");
  return env ? env : GENVM_BINARY_DIR;
}

std::size_t env_count(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return static_cast<std::size_t>(std::strtoull(v, nullptr, 10));
}

// Plain read(2): /proc and cgroup files of something that just went away fail with ESRCH or
// ENODEV, which std::ifstream turns into an exception; here they read as empty.
std::string slurp(const std::string& path) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

class ScopedTempDir {
 public:
  ScopedTempDir() {
    std::string t = "/tmp/genvm-manager-load-XXXXXX";
    if (::mkdtemp(t.data()) != nullptr) path = t;
  }
  ~ScopedTempDir() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
  std::string path;
};

// ---- /proc -------------------------------------------------------------------------------
struct Proc {
  pid_t pid, ppid, pgrp;
  char state;
};

std::vector<Proc> scan_proc() {
  std::vector<Proc> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string s = slurp("/proc/" + name + "/stat");
    auto close = s.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(s.substr(close + 2));
    Proc p{static_cast<pid_t>(std::stol(name)), 0, 0, 0};
    rest >> p.state >> p.ppid >> p.pgrp;
    out.push_back(p);
  }
  return out;
}

std::string exe_of(pid_t pid) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  return ec ? std::string() : p.string();
}

std::vector<std::string> fds_of(pid_t pid) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code ec2;
    auto target = std::filesystem::read_symlink(e.path(), ec2);
    if (ec2) continue;  // closed between the listing and the readlink: not held any more
    out.push_back(e.path().filename().string() + " -> " + target.string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The run cgroup directories of manager `pid` (genvm-<pid>-*, beside nothing else: they are
// created under the manager's own cgroup in each hierarchy it is in).
std::vector<std::string> run_cgroups(pid_t pid, const std::string& cgroup_file_text) {
  std::vector<std::string> out;
  std::istringstream in(cgroup_file_text);
  std::string line;
  const std::string prefix = "genvm-" + std::to_string(pid) + "-";
  while (std::getline(in, line)) {
    auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string ctrl = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::string mount = ctrl.empty() ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup/" + ctrl;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(mount + path, ec)) {
      if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().string());
    }
  }
  return out;
}

// Members of run cgroups still listed (cgroup.procs never lists zombies).
std::vector<std::string> cgroup_members(const std::vector<std::string>& dirs) {
  std::vector<std::string> out;
  for (const auto& d : dirs) {
    std::istringstream in(slurp(d + "/cgroup.procs"));
    std::string pid;
    while (in >> pid) out.push_back(d + ": " + pid);
  }
  return out;
}

// Live (not zombie) processes in any of `groups`.
std::vector<pid_t> alive_in_groups(const std::set<pid_t>& groups) {
  std::vector<pid_t> out;
  for (const Proc& p : scan_proc()) {
    if (p.state != 'Z' && groups.count(p.pgrp)) out.push_back(p.pid);
  }
  return out;
}

// Each run's process group, from the manager's `run_started` log lines (the leader's pid is its
// group's id).
std::set<pid_t> run_groups(const std::string& log_text) {
  std::set<pid_t> out;
  std::istringstream in(log_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("\"event\":\"run_started\"") == std::string::npos) continue;
    auto k = line.find("\"pid\":");
    if (k != std::string::npos) out.insert(static_cast<pid_t>(std::atol(line.c_str() + k + 6)));
  }
  return out;
}

// ---- The manager process -----------------------------------------------------------------
class ManagerProcess {
 public:
  ManagerProcess(const std::string& bin, const std::string& dir, const std::string& yaml) {
    std::ofstream(dir + "/manager.yaml") << yaml;
    log_path = dir + "/manager.log";
    std::string port_path = dir + "/port";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, port_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::string cfg = dir + "/manager.yaml";
    std::vector<std::string> args = {bin, "--config", cfg, "--port", "0", "--print-port"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv.data(), environ) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    auto end = Clock::now() + 10s;
    while (pid > 0 && Clock::now() < end) {
      std::string p = slurp(port_path);
      if (p.find('\n') != std::string::npos) {
        port = static_cast<std::uint16_t>(std::atoi(p.c_str()));
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
  }
  ~ManagerProcess() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
  // SIGTERM and the exit status (128+signal when killed).
  int terminate() {
    ::kill(pid, SIGTERM);
    return wait();
  }
  int wait() {
    int st = 0;
    ::waitpid(pid, &st, 0);
    pid = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  pid_t pid = -1;
  std::uint16_t port = 0;
  std::string log_path;
};

// ---- The client --------------------------------------------------------------------------
class Client {
 public:
  Client(asio::io_context& io, std::uint16_t port) : ws_(io) {
    ws_.next_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    ws_.read_message_max(0);
    ws_.handshake("127.0.0.1", "/ws");
    ws_.binary(true);
    Frame hello = read();
    EXPECT_EQ(hello.method, static_cast<std::uint16_t>(Method::kHello));
  }
  void send(Method m, std::uint64_t id, const Value& payload) { ws_.write(asio::buffer(encode_frame(m, id, payload))); }
  Frame read() {
    beast::flat_buffer buf;
    ws_.read(buf);
    auto d = buf.cdata();
    auto f = decode_frame(std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(d.data()), d.size()));
    EXPECT_TRUE(f.ok());
    return f.ok() ? *f : Frame{0xFFFF, 0, Value()};
  }
  void close() {
    beast::error_code ignored;
    ws_.close(websocket::close_code::normal, ignored);
  }

 private:
  websocket::stream<tcp::socket> ws_;
};

calldata::Address addr(std::uint8_t fill) {
  calldata::Address a;
  a.bytes.fill(fill);
  return a;
}

Value counter_run(const calldata::Bytes& code, const std::string& host_uri) {
  Value message = Value::map({{"contract_address", addr(1)}, {"sender_address", addr(0xaa)},
                              {"origin_address", addr(0xaa)}, {"signer_address", addr(0xaa)},
                              {"chain_id", "61999"}, {"value", "0"}, {"is_init", true}});
  Value::Map m = testing::local_fee_fields();
  m.insert({{"selector", Value::map({{"kind", "major"}, {"major", 0}})},
               {"message", message},
               {"is_sync", false},
               {"host_data", "{}"},
               {"timestamp", "2026-01-01T00:00:00Z"},
               {"host", host_uri},
               {"calldata", calldata::encode(Value::map({}))},
               {"code", code},
               {"leader_nondet_results", Value()},
               {"initial_time_units_allocation", 1000},
               {"debug_mode", "safe"},
               {"no_modules", true}});
  return Value::map({{"run", Value(std::move(m))}});
}

std::string kind_of(const Value& event) { return event.as_map().begin()->first; }
std::uint64_t id_in(const Value& v, const char* key) {
  const Value* f = v.find(key);
  return f && f->is_int() ? f->as_int().to_uint64().value_or(0) : 0;
}

// Drives runs with `in_flight` outstanding: each finished run is acked and replaced until
// `total` were submitted; stops early once `stop_after` terminals were seen (0: never).
struct LoadDriver {
  LoadDriver(Client& client, Value req, std::size_t n, std::size_t flight)
      : c(client), request(std::move(req)), total(n), in_flight(flight) {}
  Client& c;
  Value request;
  std::size_t total, in_flight, stop_after = 0;
  std::uint64_t next_rid = 1;
  std::size_t submitted = 0, terminals = 0, ack_replies = 0;
  std::map<std::uint64_t, int> terminal_count;  // genvm id -> terminal events seen
  std::map<std::uint64_t, Value> finished;      // genvm id -> terminal event body
  std::set<std::uint64_t> ack_rids, pending_run_rids;
  std::vector<std::string> problems;

  std::optional<Value> every_other;  // set: every second run uses this request instead

  void submit() {
    std::uint64_t rid = next_rid++;
    pending_run_rids.insert(rid);
    c.send(Method::kRun, rid, every_other && submitted % 2 == 1 ? *every_other : request);
    ++submitted;
  }
  void handle(const Frame& f) {
    if (f.method == static_cast<std::uint16_t>(Method::kRun)) {
      if (!pending_run_rids.erase(f.request_id)) problems.push_back("run reply for an unknown request");
      return;
    }
    if (f.method == static_cast<std::uint16_t>(Method::kAck)) {
      if (!ack_rids.erase(f.request_id)) problems.push_back("ack reply for an unknown request");
      ++ack_replies;
      return;
    }
    if (f.method == static_cast<std::uint16_t>(Method::kError)) {
      problems.push_back("error frame: " + calldata::to_text(f.payload));
      return;
    }
    if (f.method != static_cast<std::uint16_t>(Method::kEvent)) return;
    std::string k = kind_of(f.payload);
    if (k != "finished" && k != "failed_to_start") return;
    const Value& body = f.payload.as_map().begin()->second;
    std::uint64_t gid = id_in(body, "genvm_id");
    if (++terminal_count[gid] > 1) return;  // counted, never acked twice
    ++terminals;
    finished[gid] = f.payload;
    std::uint64_t rid = next_rid++;
    ack_rids.insert(rid);
    c.send(Method::kAck, rid, Value::map({{"ack", Value::map({{"genvm_id", gid}})}}));
    if (submitted < total && (stop_after == 0 || terminals < stop_after)) submit();
  }
  void run() {
    while (submitted < std::min(total, in_flight)) submit();
    while (terminals < submitted && (stop_after == 0 || terminals < stop_after)) handle(c.read());
  }
  // Reads until the reply to a marker request: anything queued before it (a duplicate terminal
  // event, a late ack reply) has arrived by then, since one connection's frames keep their order.
  void settle() {
    std::uint64_t rid = next_rid++;
    c.send(Method::kCancel, rid, Value::map({{"cancel", Value::map({{"genvm_id", std::uint64_t{1} << 62}})}}));
    for (;;) {
      Frame f = c.read();
      if (f.request_id == rid) break;
      handle(f);
    }
  }
};

struct Fixture {
  std::string genvm, wasm, manager, manifest;
  bool ok = false;
  std::string missing;
  Fixture() {
    genvm = binary_dir() + "/tools/genvm/genvm";
    wasm = binary_dir() + "/examples/counter.wasm";
    manager = binary_dir() + "/tools/genvm-manager/genvm-manager";
    // The manager finds the executor as the public one does: the build's line in its manifest.
    manifest = binary_dir() + "/tools/data/manifest.yaml";
    for (const auto& p : {genvm, wasm, manager, manifest}) {
      if (::access(p.c_str(), R_OK) != 0) missing += p + " ";
    }
    ok = missing.empty();
  }
  std::string yaml(std::size_t permits) const {
    return "permits: {total: " + std::to_string(permits) + ", sync: 1, nondet: 1}\n"
           "execution_retention: 5m\n";
  }
  calldata::Bytes code() const {
    std::string s = slurp(wasm);
    return calldata::Bytes(s.begin(), s.end());
  }
};

// Every run gets exactly one terminal event, each a `finished` with exit 0 and the counter's
// Return as its consumed_result; afterwards nothing of any run is alive (its group, its cgroup,
// a child of the manager) and the manager holds exactly the fds it held before the load.
// Checked failing when finished runs' Children are never destroyed (their pidfds stay open).
TEST(ManagerLoad, EveryRunHasOneTerminalEventAndAResultAndNothingLeaks) {
  Fixture fx;
  if (!fx.ok) GTEST_SKIP() << "needs " << fx.missing << "(build genvm, genvm-manager, genvm_examples; or set GENVM_BINARY_DIR)";
  const std::size_t runs = env_count("GENVM_MANAGER_LOAD_RUNS", 1000);
  const std::size_t in_flight = std::max<std::size_t>(1, env_count("GENVM_MANAGER_LOAD_IN_FLIGHT", 64));
  ScopedTempDir tmp;
  ASSERT_FALSE(tmp.path.empty());
  test_host::TestHost host;
  auto uri = host.listen_unix(tmp.path + "/host.sock");
  ASSERT_TRUE(uri.ok()) << uri.error().to_string();

  ManagerProcess mgr(fx.manager, tmp.path, fx.yaml(in_flight));
  ASSERT_GT(mgr.port, 0) << slurp(mgr.log_path);
  const std::string cgroup_text = slurp("/proc/" + std::to_string(mgr.pid) + "/cgroup");
  asio::io_context io;
  Client client(io, mgr.port);
  Value request = counter_run(fx.code(), *uri);

  // One warm-up run first: the guard process and its pipe exist from the first spawn on, so the
  // fd baseline is taken after it.
  {
    LoadDriver warm(client, request, 1, 1);
    warm.run();
    warm.settle();
    ASSERT_EQ(warm.terminals, 1u) << slurp(mgr.log_path);
  }
  // The warm-up run's descriptors are released asynchronously (its Child on the supervisor
  // thread): the baseline is the first listing without a run's pidfd.
  auto has_pidfd = [](const std::vector<std::string>& fds) {
    return std::any_of(fds.begin(), fds.end(), [](const std::string& f) { return f.find("[pidfd]") != std::string::npos; });
  };
  // Two equal listings in a row: the manager is idle, nothing is being opened or closed.
  std::vector<std::string> fds_before, previous;
  for (auto end = Clock::now() + 10s; Clock::now() < end;) {
    fds_before = fds_of(mgr.pid);
    if (!has_pidfd(fds_before) && fds_before == previous) break;
    previous = fds_before;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_FALSE(has_pidfd(fds_before)) << "the warm-up run's pidfd was never closed";

  LoadDriver load(client, request, runs, in_flight);
  load.run();
  load.settle();
  EXPECT_TRUE(load.problems.empty()) << load.problems.front();
  EXPECT_EQ(load.submitted, runs);
  EXPECT_EQ(load.terminals, runs);
  EXPECT_EQ(load.terminal_count.size(), runs);
  EXPECT_EQ(load.ack_replies, runs);
  std::size_t bad = 0;
  for (const auto& [gid, n] : load.terminal_count) {
    EXPECT_EQ(n, 1) << "run " << gid << " had " << n << " terminal events";
  }
  for (const auto& [gid, ev] : load.finished) {
    const Value& b = ev.as_map().begin()->second;
    const Value* consumed = b.find("consumed_result");
    bool good = kind_of(ev) == "finished" && *b.find("cause") == Value("exited") && *b.find("exit_code") == Value(0) &&
                consumed && consumed->is_bytes() && consumed->as_bytes().size() > 1 && consumed->as_bytes()[0] == 0;
    if (!good && bad++ < 3) ADD_FAILURE() << "run " << gid << ": " << calldata::to_text(ev);
  }
  EXPECT_EQ(bad, 0u);

  // Nothing of any run is left. Zombies that init has not reaped yet run no more and are not
  // counted; they are also no longer in any cgroup.
  std::set<pid_t> groups = run_groups(slurp(mgr.log_path));
  EXPECT_EQ(groups.size(), runs + 1) << "one run_started line per run";
  const std::string manager_exe = exe_of(mgr.pid);
  std::vector<pid_t> alive;
  std::vector<std::string> in_cgroups, stray_children;
  auto end = Clock::now() + 10s;  // teardown is asynchronous; nothing is asserted about speed
  do {
    alive = alive_in_groups(groups);
    in_cgroups = cgroup_members(run_cgroups(mgr.pid, cgroup_text));
    stray_children.clear();
    int guards = 0;
    for (const Proc& p : scan_proc()) {
      if (p.ppid != mgr.pid) continue;
      // The supervisor's guard is a fork of the manager that never execs.
      if (p.state != 'Z' && exe_of(p.pid) == manager_exe && guards++ == 0) continue;
      stray_children.push_back(std::to_string(p.pid) + " " + p.state + " " + exe_of(p.pid));
    }
    if (alive.empty() && in_cgroups.empty() && stray_children.empty()) break;
    std::this_thread::sleep_for(50ms);
  } while (Clock::now() < end);
  EXPECT_TRUE(alive.empty()) << alive.size() << " processes left in the runs' groups, e.g. " << alive.front();
  EXPECT_TRUE(in_cgroups.empty()) << in_cgroups.front();
  EXPECT_TRUE(stray_children.empty()) << stray_children.front();

  // A leak is a descriptor held after the load that was not held before it. (One held before
  // and gone after is not: the baseline may still hold a warm-up socket being closed.)
  auto leaked = [&](const std::vector<std::string>& after) {
    std::vector<std::string> out;
    std::set_difference(after.begin(), after.end(), fds_before.begin(), fds_before.end(), std::back_inserter(out));
    return out;
  };
  std::vector<std::string> fds_after;
  end = Clock::now() + 10s;
  do {
    fds_after = fds_of(mgr.pid);
    if (leaked(fds_after).empty()) break;
    std::this_thread::sleep_for(50ms);
  } while (Clock::now() < end);
  EXPECT_TRUE(leaked(fds_after).empty()) << [&] {
    std::string s = "before:\n";
    for (auto& f : fds_before) s += "  " + f + "\n";
    s += "after:\n";
    for (auto& f : fds_after) s += "  " + f + "\n";
    return s;
  }();

  client.close();
  EXPECT_EQ(mgr.terminate(), 0);
  host.stop();
}

// kill -9 of the manager with runs in flight: within 2 s no process of any run is alive, in
// its group or in its cgroup. Every second run's host 0 is a socket that is never accepted, so
// those executors wait for it forever and only a kill ends them (a counter run alone finishes
// within the 2 s by itself). Checked failing with the supervisor's guard turned off.
TEST(ManagerLoad, Kill9OfTheManagerMidLoadLeavesNoExecutorAliveWithinTwoSeconds) {
  Fixture fx;
  if (!fx.ok) GTEST_SKIP() << "needs " << fx.missing << "(build genvm, genvm-manager, genvm_examples; or set GENVM_BINARY_DIR)";
  const std::size_t in_flight = std::max<std::size_t>(1, env_count("GENVM_MANAGER_LOAD_IN_FLIGHT", 64));
  ScopedTempDir tmp;
  ASSERT_FALSE(tmp.path.empty());
  test_host::TestHost host;
  auto uri = host.listen_unix(tmp.path + "/host.sock");
  ASSERT_TRUE(uri.ok()) << uri.error().to_string();
  ManagerProcess mgr(fx.manager, tmp.path, fx.yaml(in_flight));
  ASSERT_GT(mgr.port, 0) << slurp(mgr.log_path);
  const pid_t mgr_pid = mgr.pid;
  const std::string cgroup_text = slurp("/proc/" + std::to_string(mgr_pid) + "/cgroup");
  asio::io_context io;
  Client client(io, mgr.port);

  // A host that never answers: connections queue in the backlog (or block in connect).
  std::string stall_path = tmp.path + "/stall.sock";
  int stall = testing::listen_never_accept(stall_path);
  ASSERT_GE(stall, 0);

  // In the middle of the load: some runs done, the next ones submitted and running.
  LoadDriver load(client, counter_run(fx.code(), *uri), 100000, in_flight);
  load.every_other = counter_run(fx.code(), "unix://" + stall_path);
  load.stop_after = in_flight / 4 + 1;
  load.run();
  // Wait (bounded) until executors are actually alive, so the kill has something to prove.
  std::vector<pid_t> before;
  auto end = Clock::now() + 10s;
  do {
    before = alive_in_groups(run_groups(slurp(mgr.log_path)));
    if (!before.empty()) break;
    std::this_thread::sleep_for(5ms);
  } while (Clock::now() < end);
  ASSERT_FALSE(before.empty()) << "no executor alive at the moment of the kill";

  ::kill(mgr_pid, SIGKILL);
  auto killed_at = Clock::now();
  EXPECT_EQ(mgr.wait(), 128 + SIGKILL);
  std::set<pid_t> groups = run_groups(slurp(mgr.log_path));
  std::vector<pid_t> alive;
  std::vector<std::string> in_cgroups;
  do {
    alive = alive_in_groups(groups);
    in_cgroups = cgroup_members(run_cgroups(mgr_pid, cgroup_text));
    if (alive.empty() && in_cgroups.empty()) break;
    std::this_thread::sleep_for(20ms);
  } while (Clock::now() - killed_at < 2s);
  EXPECT_TRUE(alive.empty()) << alive.size() << " executor processes alive 2 s after kill -9 (of "
                             << before.size() << " before), e.g. " << alive.front();
  EXPECT_TRUE(in_cgroups.empty()) << in_cgroups.size() << " still in run cgroups, e.g. " << in_cgroups.front();
  for (pid_t p : alive) ::kill(p, SIGKILL);
  ::close(stall);
  host.stop();
}

}  // namespace
}  // namespace genvm::manager
