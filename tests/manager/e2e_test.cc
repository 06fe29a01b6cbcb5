// End to end through the manager's run registry: the real `genvm run` executes the example
// counter contract, host 0 is the in-memory test host (tests/test_host) on a unix socket, host 1
// is the manager's own socketpair, and the finished event carries the checked consume_result.
// Skips (naming what is missing) when the genvm binary or the example contracts are not built.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "manager/registry.h"
#include "manager/test_util.h"
#include "test_host.h"

namespace genvm::manager {
namespace {

using calldata::Value;

std::string binary_dir() {
  const char* env = std::getenv("GENVM_BINARY_DIR");
  return env ? env : GENVM_BINARY_DIR;
}

calldata::Address addr(std::uint8_t fill) {
  calldata::Address a;
  a.bytes.fill(fill);
  return a;
}

struct Sink : EventSink {
  std::vector<Value> events;
  void on_event(std::uint64_t, const Value& e) override { events.push_back(e); }
  const Value* terminal() const {
    for (const auto& e : events) {
      auto k = e.as_map().begin()->first;
      if (k == "finished" || k == "failed_to_start") return &e;
    }
    return nullptr;
  }
};

TEST(ManagerEndToEnd, RealGenvmRunsACounterAndTheManagerRetainsItsResult) {
  std::string genvm = binary_dir() + "/tools/genvm/genvm";
  std::string wasm = binary_dir() + "/examples/counter.wasm";
  if (::access(genvm.c_str(), X_OK) != 0 || ::access(wasm.c_str(), R_OK) != 0) {
    GTEST_SKIP() << "needs " << genvm << " and " << wasm << " (set GENVM_BINARY_DIR)";
  }
  char tmpl[] = "/tmp/genvm-mgr-e2e-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  test_host::TestHost host;
  auto uri = host.listen_unix(dir + "/host.sock");
  ASSERT_TRUE(uri.ok());

  // The line the build installs (tools/genvm-manager/CMakeLists.txt), found as the public
  // manager finds its lines: by the request's selector, in the manifest.
  std::string tools = binary_dir() + "/tools";
  auto config = parse_config("executors_dir: " + tools + "/executor\nmanifest_path: " + tools + "/data/manifest.yaml\n");
  ASSERT_TRUE(config.ok());
  boost::asio::io_context io;
  Log log(-1);
  Registry reg(io, *config, log, 64ull << 30);
  ASSERT_TRUE(reg.load_manifest().ok());

  std::ifstream f(wasm, std::ios::binary);
  calldata::Bytes code((std::istreambuf_iterator<char>(f)), {});
  Value message = Value::map({{"contract_address", addr(1)}, {"sender_address", addr(0xaa)},
                              {"origin_address", addr(0xaa)}, {"signer_address", addr(0xaa)},
                              {"chain_id", "61999"}, {"value", "0"}, {"is_init", true}});
  Value::Map fields = testing::local_fee_fields();
  fields.insert({{"message", message}, {"code", code}, {"host", *uri}, {"calldata", calldata::encode(Value::map({}))},
                 {"debug_mode", "safe"}, {"no_modules", true}});
  Value body = testing::run_body(false, std::move(fields));
  auto sink = std::make_shared<Sink>();
  ASSERT_TRUE(reg.submit(body, {false, "test"}, sink).ok());
  ASSERT_TRUE(testing::run_until(io, [&] { return sink->terminal() != nullptr; }));
  host.stop();
  const Value& fin = *sink->terminal();
  ASSERT_EQ(fin.as_map().begin()->first, "finished") << calldata::to_text(fin);
  const Value& b = fin.as_map().begin()->second;
  EXPECT_EQ(*b.find("exit_code"), Value(0)) << calldata::to_text(b) << "\nstderr: " << reg.get_artifact(1, "stderr", 0, 4096)->data;
  const Value* consumed = b.find("consumed_result");
  ASSERT_TRUE(consumed && consumed->is_bytes()) << calldata::to_text(b);
  const auto& bytes = consumed->as_bytes();
  ASSERT_GT(bytes.size(), 1u);
  EXPECT_EQ(bytes[0], 0) << "Return";
  auto report = calldata::decode(std::span<const std::uint8_t>(bytes.data() + 1, bytes.size() - 1));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(*report->find("kind"), Value("Return")) << "the variant name, as the public derive writes it";
  EXPECT_EQ(*b.find("version_major"), Value(0)) << "the installed line's version";
  EXPECT_EQ(report->find("execution_hash")->as_bytes().size(), 32u);
  // Host 0 never saw the result: in the manager deployment it goes to host 1.
  EXPECT_TRUE(host.with_state([](test_host::State& s) { return s.results.empty(); }));
  ::unlink((dir + "/host.sock").c_str());
  ::rmdir(dir.c_str());
}

// ---- Deadline faults with the real executor ----------------------------------------------

bool pid_running(pid_t pid) {
  // Gone, or a zombie waiting for init: either way it runs no more.
  if (::kill(pid, 0) != 0) return false;
  // read(2), not ifstream: a process that ends between open and read fails the read (ESRCH),
  // which ifstream would throw.
  std::string s(512, '\0');
  int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : ::read(fd, s.data(), s.size());
  if (fd >= 0) ::close(fd);
  if (n <= 0) return false;
  s.resize(static_cast<std::size_t>(n));
  auto close = s.rfind(')');
  return !(close != std::string::npos && close + 2 < s.size() && s[close + 2] == 'Z');
}

struct DeadlineFixture {
  std::string genvm = binary_dir() + "/tools/genvm/genvm";
  std::string wasm = binary_dir() + "/examples/counter.wasm";
  std::string dir;
  bool ok() const { return ::access(genvm.c_str(), X_OK) == 0 && ::access(wasm.c_str(), R_OK) == 0; }
  DeadlineFixture() {
    char tmpl[] = "/tmp/genvm-mgr-deadline-XXXXXX";
    if (::mkdtemp(tmpl)) dir = tmpl;
  }
  ~DeadlineFixture() {
    std::error_code ignored;
    if (!dir.empty()) std::filesystem::remove_all(dir, ignored);
  }
  Value body(const std::string& host_uri, const std::string& deadline) const { return body_with(wasm, host_uri, deadline); }
  // Submits `body` to a Registry whose executor command is the YAML list items `executor` (in
  // place of a manifest line) and returns the run's terminal event (null when none came within
  // run_until's limit).
  Value run_to_end(const std::string& executor, const Value& body) const {
    auto config = parse_config("executor: [" + executor + "]\nexecutor_protocol: genvm\n");
    EXPECT_TRUE(config.ok()) << config.error().to_string();
    if (!config.ok()) return Value();
    boost::asio::io_context io;
    Log log(-1);
    Registry reg(io, *config, log, 64ull << 30);
    auto sink = std::make_shared<Sink>();
    auto submitted = reg.submit(body, {false, "test"}, sink);
    EXPECT_TRUE(submitted.ok()) << submitted.error().to_string();
    if (!submitted.ok()) return Value();
    EXPECT_TRUE(testing::run_until(io, [&] { return sink->terminal() != nullptr; }));
    return sink->terminal() ? *sink->terminal() : Value();
  }
  Value body_with(const std::string& code_path, const std::string& host_uri, const std::string& deadline) const {
    std::ifstream f(code_path, std::ios::binary);
    calldata::Bytes code((std::istreambuf_iterator<char>(f)), {});
    Value message = Value::map({{"contract_address", addr(1)}, {"sender_address", addr(0xaa)},
                                {"origin_address", addr(0xaa)}, {"signer_address", addr(0xaa)},
                                {"chain_id", "61999"}, {"value", "0"}, {"is_init", true}});
    Value::Map fields = testing::local_fee_fields();
    fields.insert({{"message", message}, {"code", code}, {"host", host_uri}, {"calldata", calldata::encode(Value::map({}))},
                   {"debug_mode", "safe"}, {"deadline", deadline}, {"no_modules", true}});
    return testing::run_body(false, std::move(fields));
  }
};

const Value& finished_body(const Value& terminal) { return terminal.as_map().begin()->second; }

// A run the deadline ended: `finished` with cause deadline, no exit code of its own (it was
// killed) and no consumed result.
void expect_ended_by_deadline(const Value& fin) {
  ASSERT_TRUE(fin.is_map()) << "no terminal event";
  ASSERT_EQ(fin.as_map().begin()->first, "finished") << calldata::to_text(fin);
  EXPECT_EQ(*finished_body(fin).find("cause"), Value("deadline")) << calldata::to_text(fin);
  EXPECT_TRUE(finished_body(fin).find("exit_code")->is_null()) << calldata::to_text(fin);
  EXPECT_TRUE(finished_body(fin).find("consumed_result")->is_null()) << calldata::to_text(fin);
}

// The real `genvm run` connects to a host that never answers (a socket nobody accepts) and
// waits for it forever: the deadline kills it and the run is reported `deadline`, with no exit
// code of its own. Fails without the manager's deadline (the run would never end).
TEST(ManagerDeadline, AnExecutorWaitingOnItsHostIsKilledAtTheDeadline) {
  DeadlineFixture fx;
  if (!fx.ok()) GTEST_SKIP() << "needs " << fx.genvm << " and " << fx.wasm << " (set GENVM_BINARY_DIR)";
  ASSERT_FALSE(fx.dir.empty());
  std::string path = fx.dir + "/stall.sock";
  int stall = testing::listen_never_accept(path, 16);
  ASSERT_GE(stall, 0);

  expect_ended_by_deadline(fx.run_to_end(fx.genvm, fx.body("unix://" + path, "700ms")));
  ::close(stall);
}

// An executor that hangs before it ever connects to a host (a wrapper that sleeps before it
// execs genvm) still ends at its deadline, and the whole tree goes: the sleeping grandchild too.
TEST(ManagerDeadline, AnExecutorHangingBeforeConnectingEndsAtTheDeadlineWithItsTree) {
  DeadlineFixture fx;
  if (!fx.ok()) GTEST_SKIP() << "needs " << fx.genvm << " and " << fx.wasm << " (set GENVM_BINARY_DIR)";
  ASSERT_FALSE(fx.dir.empty());
  test_host::TestHost host;
  auto uri = host.listen_unix(fx.dir + "/host.sock");
  ASSERT_TRUE(uri.ok());
  std::string pidfile = fx.dir + "/sleeper";
  // $0 is genvm, "$@" the manager's arguments (--log-fd=3 run ...).
  Value fin = fx.run_to_end("sh, -c, 'sleep 1000 & echo $! > " + pidfile + "; wait; exec \"$0\" \"$@\"', " + fx.genvm,
                            fx.body(*uri, "700ms"));
  host.stop();
  expect_ended_by_deadline(fin);
  std::ifstream pf(pidfile);
  pid_t sleeper = 0;
  pf >> sleeper;
  ASSERT_GT(sleeper, 0) << "the wrapper never ran";
  // The kill is done by the time the finished event is out (SIGKILL of the cgroup or group).
  bool gone = !pid_running(sleeper);
  for (int i = 0; i < 500 && !gone; ++i) {  // up to 5 s
    ::usleep(10000);
    gone = !pid_running(sleeper);
  }
  EXPECT_TRUE(gone) << "the sleeping grandchild " << sleeper << " outlived the run";
  if (!gone) ::kill(sleeper, SIGKILL);
}

// A contract that loops forever (tests/executor/contracts/infinite_loop.wat) under a manager
// deadline: the executor has no timeout of its own, so only the manager's deadline ends it; the
// run is reported `deadline` and the host never receives a result. Fails without the
// manager's deadline (the run would never end) or if a partial result reached the host.
TEST(ManagerDeadline, AContractLoopingForeverIsKilledAtTheDeadlineAndDeliversNothing) {
  DeadlineFixture fx;
  std::string loop = binary_dir() + "/tests/executor/infinite_loop.wasm";
  if (!fx.ok() || ::access(loop.c_str(), R_OK) != 0) {
    GTEST_SKIP() << "needs " << fx.genvm << " and " << loop << " (set GENVM_BINARY_DIR; loop needs wat2wasm)";
  }
  ASSERT_FALSE(fx.dir.empty());
  test_host::TestHost host;
  auto uri = host.listen_unix(fx.dir + "/host.sock");
  ASSERT_TRUE(uri.ok());
  Value fin = fx.run_to_end(fx.genvm, fx.body_with(loop, *uri, "700ms"));
  host.stop();
  expect_ended_by_deadline(fin);
  EXPECT_EQ(host.with_state([](test_host::State& s) { return s.results.size(); }), 0u);
}

}  // namespace
}  // namespace genvm::manager
