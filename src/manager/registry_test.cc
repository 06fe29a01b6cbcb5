// The run registry against real processes: `sh` stands in for the executor (the script comes
// from the request's first extra_arg), spawned, captured and killed through src/supervisor.
#ifdef GENVM_MANAGER_HAS_SUPERVISOR
#include "manager/registry.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "manager/executor_link.h"

#include "manager/test_util.h"

namespace genvm::manager {
namespace {

using testing::run_body;
using testing::run_until;

struct Recorder : EventSink {
  std::vector<std::pair<std::uint64_t, Value>> events;
  void on_event(std::uint64_t id, const Value& e) override { events.emplace_back(id, e); }
  static std::string kind(const Value& e) { return e.as_map().begin()->first; }
  const Value::Map& body(const Value& e) { return e.as_map().begin()->second.as_map(); }
  std::vector<std::string> kinds(std::uint64_t id) const {
    std::vector<std::string> out;
    for (const auto& [i, e] : events) {
      if (i == id) out.push_back(kind(e));
    }
    return out;
  }
  const Value* terminal(std::uint64_t id) const {
    for (const auto& [i, e] : events) {
      if (i == id && (kind(e) == "finished" || kind(e) == "failed_to_start")) return &e;
    }
    return nullptr;
  }
  int terminal_count(std::uint64_t id) const {
    int n = 0;
    for (const auto& [i, e] : events) {
      if (i == id && (kind(e) == "finished" || kind(e) == "failed_to_start")) ++n;
    }
    return n;
  }
};

const Value& field(const Value& event, const char* key) {
  static const Value missing("<missing>");
  const Value* v = event.as_map().begin()->second.find(key);
  return v ? *v : missing;
}

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_path_ = ::testing::TempDir() + "manager_registry_log_" + std::to_string(::getpid()) + ".jsonl";
    log_fd_ = ::fileno(::fopen(log_path_.c_str(), "w+"));
  }
  void TearDown() override {
    reg_.reset();
    ::unlink(log_path_.c_str());
  }
  Registry& make(const std::string& yaml = "", const std::string& executor =
                                                  "executor: [sh, -c, 'eval \"$3\"', sh]\nexecutor_protocol: plain\n") {
    auto c = parse_config(executor + yaml);
    EXPECT_TRUE(c.ok()) << c.error().to_string();
    log_ = std::make_unique<Log>(log_fd_);
    reg_ = std::make_unique<Registry>(io_, *c, *log_, 64ull << 30);
    return *reg_;
  }
  std::uint64_t run(const std::string& script, Value::Map extra = {}, bool is_sync = true,
                    Caller caller = {false, "test"}) {
    extra["extra_args"] = Value::array({script});
    if (!extra.count("debug_mode")) extra["debug_mode"] = "safe";
    return reg_->submit(run_body(is_sync, extra), caller, rec_);
  }
  bool wait_terminal(std::uint64_t id) {
    return run_until(io_, [&] { return rec_->terminal(id) != nullptr; });
  }
  std::string artifact(std::uint64_t id, ArtifactField f) {
    std::string out;
    for (std::uint64_t off = 0;;) {
      auto c = reg_->get_artifact(id, f, off, 1u << 30);
      EXPECT_TRUE(c.ok());
      if (!c.ok() || c->data.empty()) return out;
      out += c->data;
      off += c->data.size();
      if (off >= c->total_len) return out;
    }
  }
  std::string log_text() {
    std::ifstream in(log_path_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  boost::asio::io_context io_;
  std::string log_path_;
  int log_fd_ = -1;
  std::unique_ptr<Log> log_;
  std::unique_ptr<Registry> reg_;
  std::shared_ptr<Recorder> rec_ = std::make_shared<Recorder>();
};

bool pid_gone(pid_t pid) {
  // Gone, or a zombie waiting for init: either way it runs no more.
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(stat)), {});
  auto close = s.rfind(')');
  return close != std::string::npos && close + 2 < s.size() && s[close + 2] == 'Z';
}

TEST_F(RegistryTest, ExitedRunDeliversStdinAndCapturesStreamsLogAndExitCode) {
  make();
  std::uint64_t id = run("cat; echo oops >&2; echo '{\"level\":\"info\"}' >&3; exit 3");
  EXPECT_EQ(id, 1u);
  ASSERT_TRUE(wait_terminal(id));
  EXPECT_EQ(rec_->kinds(id), (std::vector<std::string>{"started", "finished"}));
  const Value& fin = *rec_->terminal(id);
  EXPECT_EQ(field(fin, "cause"), Value("exited"));
  EXPECT_EQ(field(fin, "exit_code"), Value(3));
  EXPECT_EQ(field(fin, "genvm_id"), Value(1));
  // stdin carried the calldata-encoded run request.
  auto sent = calldata::encode(run_body(true, {{"extra_args", Value::array({"cat; echo oops >&2; echo '{\"level\":\"info\"}' >&3; exit 3"})},
                                               {"debug_mode", "safe"}}));
  std::string out = artifact(id, ArtifactField::kStdout);
  EXPECT_EQ(out, std::string(sent.begin(), sent.end()));
  EXPECT_EQ(artifact(id, ArtifactField::kStderr), "oops\n");
  EXPECT_EQ(artifact(id, ArtifactField::kGenvmLog), "{\"level\":\"info\"}\n");
  const Value* sizes = fin.as_map().begin()->second.find("artifact_sizes");
  ASSERT_NE(sizes, nullptr);
  EXPECT_EQ(*sizes->find("stderr"), Value(5));
  const Value* metrics = fin.as_map().begin()->second.find("metrics");
  ASSERT_NE(metrics, nullptr);
  EXPECT_NE(metrics->find("peak_rss_bytes"), nullptr);
  EXPECT_NE(metrics->find("cpu_ms"), nullptr);
}

TEST_F(RegistryTest, DisabledCaptureReturnsNothingAndForwardsLogsToTheManagerLog) {
  make();
  std::uint64_t id = run("echo visible; echo '{\"msg\":\"forwarded-line\"}' >&3", {{"debug_mode", "disabled"}});
  ASSERT_TRUE(wait_terminal(id));
  EXPECT_EQ(field(*rec_->terminal(id), "exit_code"), Value(0));
  EXPECT_EQ(artifact(id, ArtifactField::kStdout), "");
  EXPECT_EQ(artifact(id, ArtifactField::kGenvmLog), "");
  EXPECT_NE(log_text().find("forwarded-line"), std::string::npos) << log_text();
}

TEST_F(RegistryTest, DeadlineKillsTheWholeTreeAndReportsCauseDeadline) {
  make();
  // The background sleep is a grandchild: killing only the shell would leave it running.
  std::uint64_t id = run("sleep 1000 & echo $! >&2; exec sleep 1000", {{"deadline", "200ms"}});
  ASSERT_TRUE(wait_terminal(id));
  const Value& fin = *rec_->terminal(id);
  EXPECT_EQ(field(fin, "cause"), Value("deadline"));
  EXPECT_TRUE(field(fin, "exit_code").is_null());
  std::string err = artifact(id, ArtifactField::kStderr);
  ASSERT_FALSE(err.empty());
  pid_t grandchild = std::stoi(err);
  EXPECT_TRUE(run_until(io_, [&] { return pid_gone(grandchild); }, std::chrono::seconds(10)))
      << "the deadline left pid " << grandchild << " running";
}

TEST_F(RegistryTest, LeftoversOfAnExitedExecutorAreKilled) {
  make();
  std::uint64_t id = run("sleep 1000 & echo $! >&2; exit 0");
  ASSERT_TRUE(wait_terminal(id));
  EXPECT_EQ(field(*rec_->terminal(id), "cause"), Value("exited"));
  pid_t left = std::stoi(artifact(id, ArtifactField::kStderr));
  EXPECT_TRUE(run_until(io_, [&] { return pid_gone(left); }, std::chrono::seconds(10)));
}

TEST_F(RegistryTest, CancelKillsARunningTree) {
  make();
  std::uint64_t id = run("exec sleep 1000");
  ASSERT_TRUE(run_until(io_, [&] { return rec_->kinds(id).size() == 1; }));
  ASSERT_TRUE(reg_->cancel(id).ok());
  ASSERT_TRUE(wait_terminal(id));
  EXPECT_EQ(field(*rec_->terminal(id), "cause"), Value("cancelled"));
  EXPECT_TRUE(reg_->cancel(id).ok()) << "cancelling a finished run is harmless";
  EXPECT_EQ(rec_->terminal_count(id), 1);
}

// A cancel (or shutdown) that arrives while the spawn is on the supervisor thread is held and
// applied once the run is up: the run ends `cancelled`, with one terminal event. Fails if the
// held cause is dropped (the sleep would run until the test's limit).
TEST_F(RegistryTest, CancelWhileTheSpawnIsInFlightStopsTheRunOnceItStarts) {
  make();
  std::uint64_t id = run("exec sleep 1000");
  // The only handler ready is the run's start, which hands the spawn to the supervisor thread;
  // the outcome can only be handled on this thread, so the run is now mid-spawn.
  ASSERT_EQ(io_.run_one(), 1u);
  EXPECT_TRUE(rec_->kinds(id).empty());
  ASSERT_TRUE(reg_->cancel(id).ok());
  ASSERT_TRUE(wait_terminal(id));
  EXPECT_EQ(rec_->kinds(id), (std::vector<std::string>{"started", "finished"}));
  EXPECT_EQ(field(*rec_->terminal(id), "cause"), Value("cancelled"));
  EXPECT_TRUE(field(*rec_->terminal(id), "exit_code").is_null());
  EXPECT_EQ(rec_->terminal_count(id), 1);
}

TEST_F(RegistryTest, ShutdownWhileASpawnIsInFlightEndsItWithCauseShutdown) {
  make();
  std::uint64_t id = run("exec sleep 1000");
  ASSERT_EQ(io_.run_one(), 1u);  // start: the spawn is on the supervisor thread
  bool done = false;
  reg_->shutdown([&] { done = true; });
  ASSERT_TRUE(run_until(io_, [&] { return done; }));
  ASSERT_NE(rec_->terminal(id), nullptr);
  EXPECT_EQ(field(*rec_->terminal(id), "cause"), Value("shutdown"));
  EXPECT_EQ(rec_->terminal_count(id), 1);
}

TEST_F(RegistryTest, PermitsQueueRunsInOrderAndCancelOfAQueuedRunSpawnsNothing) {
  make("permits: {total: 8, sync: 4, nondet: 8}\n");
  std::uint64_t a = run("exec sleep 1000");                 // sync: 4 of 8
  std::uint64_t b = run("exec sleep 1000", {}, /*is_sync=*/false);  // nondet: 8, must wait
  std::uint64_t c = run("exit 0");                          // sync: would fit, but FIFO
  // The spawn happens on the supervisor thread: `started` arrives after c is queued.
  ASSERT_TRUE(run_until(io_, [&] { return rec_->kinds(c).size() == 1 && !rec_->kinds(a).empty(); }));
  EXPECT_EQ(rec_->kinds(a), (std::vector<std::string>{"started"}));
  EXPECT_EQ(rec_->kinds(b), (std::vector<std::string>{"queued"}));
  EXPECT_EQ(rec_->kinds(c), (std::vector<std::string>{"queued"}));
  EXPECT_EQ(reg_->stats().permits_in_use, 4u);
  EXPECT_EQ(reg_->stats().queued, 2u);

  ASSERT_TRUE(reg_->cancel(b).ok());  // queued: no process, no permit
  ASSERT_TRUE(wait_terminal(b));
  EXPECT_EQ(rec_->kinds(b), (std::vector<std::string>{"queued", "finished"}));
  EXPECT_EQ(field(*rec_->terminal(b), "cause"), Value("cancelled"));
  // With b gone, c fits beside a.
  ASSERT_TRUE(wait_terminal(c));
  EXPECT_EQ(rec_->kinds(c), (std::vector<std::string>{"queued", "started", "finished"}));
  ASSERT_TRUE(reg_->cancel(a).ok());
  ASSERT_TRUE(wait_terminal(a));
  EXPECT_EQ(reg_->stats().permits_in_use, 0u);
}

TEST_F(RegistryTest, HostGenvmIdMakesRunIdempotent) {
  make();
  std::uint64_t a = run("exec sleep 1000", {{"host_genvm_id", "tx-1"}});
  std::uint64_t b = run("exit 0", {{"host_genvm_id", "tx-1"}});
  EXPECT_EQ(a, b);
  std::uint64_t other = run("exit 0", {{"host_genvm_id", "tx-2"}});
  EXPECT_NE(other, a);
  ASSERT_TRUE(run_until(io_, [&] { return !rec_->kinds(a).empty(); }));
  ASSERT_TRUE(reg_->cancel(a).ok());
  ASSERT_TRUE(wait_terminal(a));
  EXPECT_EQ(rec_->kinds(a), (std::vector<std::string>{"started", "finished"})) << "one execution only";
  EXPECT_EQ(field(*rec_->terminal(a), "host_genvm_id"), Value("tx-1"));
  // After ack the token is free again.
  ASSERT_TRUE(reg_->ack(a).ok());
  EXPECT_NE(run("exit 0", {{"host_genvm_id", "tx-1"}}), a);
}

TEST_F(RegistryTest, AckRefusesUnfinishedRunsAndForgetsFinishedOnes) {
  make();
  std::uint64_t id = run("exec sleep 1000");
  auto early = reg_->ack(id);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().code, "not_finished");
  EXPECT_EQ(reg_->get_artifact(id, ArtifactField::kStdout, 0, 10).error().code, "not_finished");
  ASSERT_TRUE(reg_->cancel(id).ok());
  ASSERT_TRUE(wait_terminal(id));
  // Reads before ack are repeatable.
  ASSERT_TRUE(reg_->attach(reg_->boot_id(), id, nullptr).ok());
  ASSERT_TRUE(reg_->attach(reg_->boot_id(), id, nullptr).ok());
  ASSERT_TRUE(reg_->ack(id).ok());
  EXPECT_EQ(reg_->attach(reg_->boot_id(), id, nullptr).error().code, "unknown_id");
  EXPECT_EQ(reg_->get_artifact(id, ArtifactField::kStdout, 0, 10).error().code, "unknown_id");
  EXPECT_EQ(reg_->ack(id).error().code, "unknown_id");
}

TEST_F(RegistryTest, AttachChecksBootIdAndReturnsTheLatestEvent) {
  make();
  std::uint64_t id = run("exit 0");
  EXPECT_EQ(reg_->attach(reg_->boot_id() + 1, id, nullptr).error().code, "boot_id_mismatch");
  EXPECT_EQ(reg_->attach(reg_->boot_id(), 999, nullptr).error().code, "unknown_id");
  auto other = std::make_shared<Recorder>();
  auto snap = reg_->attach(reg_->boot_id(), id, other);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(Recorder::kind(*snap->find("snapshot")), "queued");
  ASSERT_TRUE(wait_terminal(id));
  EXPECT_EQ(other->terminal_count(id), 1) << "an attached sink gets the terminal event too";
  auto after = reg_->attach(reg_->boot_id(), id, nullptr);
  EXPECT_EQ(Recorder::kind(*after->find("snapshot")), "finished");
}

TEST_F(RegistryTest, ARetainedResultExpiresAfterTheRetentionTime) {
  make("execution_retention: 50ms\n");
  std::uint64_t id = run("exit 0");
  ASSERT_TRUE(wait_terminal(id));
  ASSERT_TRUE(run_until(io_, [&] { return !reg_->attach(reg_->boot_id(), id, nullptr).ok(); }));
  EXPECT_EQ(reg_->attach(reg_->boot_id(), id, nullptr).error().code, "unknown_id");
}

TEST_F(RegistryTest, DroppedSinkDoesNotAffectTheRun) {
  make();
  auto gone = std::make_shared<Recorder>();
  std::uint64_t id = reg_->submit(run_body(true, {{"extra_args", Value::array({"exit 7"})}}), {false, "t"}, gone);
  gone.reset();  // the connection went away
  auto later = std::make_shared<Recorder>();
  ASSERT_TRUE(reg_->subscribe(id, later).ok());
  ASSERT_TRUE(run_until(io_, [&] { return later->terminal(id) != nullptr; }));
  EXPECT_EQ(field(*later->terminal(id), "exit_code"), Value(7));
}

TEST_F(RegistryTest, InvalidRequestsAndPolicyRejectionsFailToStart) {
  make();
  std::uint64_t unsafe = run("exit 0", {{"debug_mode", "unsafe"}});
  std::uint64_t unknown = run("exit 0", {{"debug_mode", "verbose"}});
  std::uint64_t trusted = run("exit 0", {{"debug_mode", "unsafe"}}, true, {true, "uid:0"});
  Value::Map no_code = run_body(true).as_map();
  no_code.erase("code");
  std::uint64_t missing = reg_->submit(Value(no_code), {false, "t"}, rec_);
  std::uint64_t owned = run("exit 0", {{"host_hello_data", Value::array({calldata::Bytes{}, calldata::Bytes{1}})}});
  std::uint64_t bad_deadline = run("exit 0", {{"deadline", "10"}});
  for (auto id : {unsafe, unknown, trusted, missing, owned, bad_deadline}) ASSERT_TRUE(wait_terminal(id));
  for (auto id : {unsafe, unknown, missing, owned, bad_deadline}) {
    EXPECT_EQ(rec_->kinds(id), (std::vector<std::string>{"failed_to_start"})) << id;
  }
  EXPECT_NE(field(*rec_->terminal(unsafe), "error").as_string().find("untrusted"), std::string::npos);
  EXPECT_NE(field(*rec_->terminal(missing), "error").as_string().find("\"code\""), std::string::npos);
  EXPECT_EQ(rec_->kinds(trusted), (std::vector<std::string>{"started", "finished"}));
  std::string log = log_text();
  EXPECT_NE(log.find("\"outcome\":\"rejected\""), std::string::npos);
  EXPECT_NE(log.find("\"caller\":\"uid:0\",\"trusted\":true,\"requested\":\"unsafe\",\"outcome\":\"accepted\""),
            std::string::npos)
      << log;
}

TEST_F(RegistryTest, ClampedRunRunsAtTheConfiguredMaximum) {
  make("debug_mode: {untrusted_max: safe, on_untrusted_above_max: clamp}\n");
  std::uint64_t id = run("echo \"$2\"", {{"debug_mode", "unsafe-tracing"}});
  ASSERT_TRUE(wait_terminal(id));
  EXPECT_EQ(artifact(id, ArtifactField::kStdout), "safe\n") << "the executor was told the clamped level";
}

TEST_F(RegistryTest, ShutdownFinishesQueuedAndRunningRunsWithCauseShutdown) {
  make("permits: {total: 4, sync: 4, nondet: 4}\n");
  std::uint64_t running = run("exec sleep 1000");
  std::uint64_t queued = run("exec sleep 1000");
  ASSERT_TRUE(run_until(io_, [&] { return rec_->kinds(queued).size() == 1; }));
  bool done = false;
  reg_->shutdown([&] { done = true; });
  ASSERT_TRUE(run_until(io_, [&] { return done; }));
  EXPECT_EQ(field(*rec_->terminal(running), "cause"), Value("shutdown"));
  EXPECT_EQ(field(*rec_->terminal(queued), "cause"), Value("shutdown"));
  EXPECT_EQ(rec_->kinds(queued), (std::vector<std::string>{"queued", "finished"}));
  std::uint64_t late = run("exit 0");
  ASSERT_TRUE(wait_terminal(late));
  EXPECT_EQ(rec_->kinds(late), (std::vector<std::string>{"failed_to_start"}));
}

TEST_F(RegistryTest, ArtifactsArePagedWithinTheChunkCap) {
  make();
  std::uint64_t id = run("head -c 600000 /dev/zero | tr '\\0' x", {{"debug_mode", "safe"}});
  ASSERT_TRUE(wait_terminal(id));
  auto first = reg_->get_artifact(id, ArtifactField::kStdout, 0, 1u << 30);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->total_len, 600000u);
  EXPECT_EQ(first->data.size(), kArtifactChunkCap);
  auto tail = reg_->get_artifact(id, ArtifactField::kStdout, 599990, 100);
  EXPECT_EQ(tail->data, std::string(10, 'x'));
  auto past = reg_->get_artifact(id, ArtifactField::kStdout, 700000, 100);
  EXPECT_TRUE(past->data.empty());
  EXPECT_EQ(artifact(id, ArtifactField::kStdout).size(), 600000u);
}

TEST_F(RegistryTest, MetricsCountOutcomes) {
  make();
  std::uint64_t id = run("exit 0");
  ASSERT_TRUE(wait_terminal(id));
  std::string m = reg_->prometheus();
  EXPECT_NE(m.find("genvm_manager_runs_total{outcome=\"exited\"} 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("genvm_manager_run_duration_seconds_count 1\n"), std::string::npos) << m;
  EXPECT_NE(m.find("genvm_manager_run_peak_rss_bytes_bucket{le=\"+Inf\"} 1\n"), std::string::npos) << m;
}

// executor_protocol genvm with a real process that speaks host connection 1: it reads its
// stdin, sends a consume_result on fd 4, waits for the acknowledgement, and reports what it saw.
TEST_F(RegistryTest, GenvmProtocolDeliversExecutionDataAndRetainsTheConsumedResult) {
  std::string dir = ::testing::TempDir();
  std::string script = dir + "mgr_host1_" + std::to_string(::getpid()) + ".py";
  std::string payload_file = dir + "mgr_payload_" + std::to_string(::getpid()) + ".bin";
  {
    std::ofstream py(script);
    py << "import os, sys\n"
          "data = sys.stdin.buffer.read()\n"
          "payload = open(sys.argv[1], 'rb').read()\n"
          "os.write(4, bytes([6]) + len(payload).to_bytes(4, 'little') + payload)\n"
          "ack = os.read(4, 1)\n"
          "sys.stderr.buffer.write(data)\n"
          "print(' '.join(sys.argv[2:]))\n"
          "print(ack.hex())\n";
    calldata::Bytes map = calldata::encode(Value::map({{"kind", 1}, {"data", "no"},
                                                       {"execution_hash", calldata::Bytes(32, 1)},
                                                       {"small_hash", calldata::Bytes(32, 2)}}));
    std::ofstream(payload_file, std::ios::binary).write(reinterpret_cast<const char*>(map.data()),
                                                        static_cast<std::streamsize>(map.size()));
  }
  make("", "executor: [python3, " + script + ", " + payload_file + "]\nexecutor_protocol: genvm\n");
  Value message = Value::map({{"contract_address", calldata::Address{}}, {"sender_address", calldata::Address{}},
                              {"origin_address", calldata::Address{}}, {"signer_address", calldata::Address{}},
                              {"chain_id", "1"}, {"value", "0"}, {"is_init", false}});
  Value body = run_body(false, {{"message", message}, {"debug_mode", "safe"}, {"host", "unix:///h.sock"}});
  std::uint64_t id = reg_->submit(body, {false, "t"}, rec_);
  ASSERT_TRUE(wait_terminal(id));
  const Value& fin = *rec_->terminal(id);
  ASSERT_EQ(Recorder::kind(fin), "finished") << calldata::to_text(fin);
  EXPECT_EQ(field(fin, "exit_code"), Value(0));
  const Value& consumed = field(fin, "consumed_result");
  ASSERT_TRUE(consumed.is_bytes()) << calldata::to_text(consumed);
  EXPECT_EQ(consumed.as_bytes()[0], 1) << "outer ResultCode byte (UserError)";
  std::string out = artifact(id, ArtifactField::kStdout);
  EXPECT_EQ(out, "--execution-data - --host unix:///h.sock --host fd://4 --debug-mode safe --permissions wscn "
                 "--genvm-id " + std::to_string(id) + " --log-fd 3\n00\n");
  auto expected = calldata::encode(*to_execution_data(body, DebugMode::kSafe));
  EXPECT_EQ(artifact(id, ArtifactField::kStderr), std::string(expected.begin(), expected.end()));
  ::unlink(script.c_str());
  ::unlink(payload_file.c_str());
}

// The real `genvm run` (when built; GENVM_EXECUTOR_BIN overrides the path): it accepts our
// arguments and ExecutionData and fails only at the unreachable host 0, which shows as a
// finished run with its exit code and its one-line error in the captured stderr.
TEST_F(RegistryTest, RealGenvmExecutorIsDrivenEndToEnd) {
  const char* env = std::getenv("GENVM_EXECUTOR_BIN");
  std::string bin = env ? env : GENVM_BINARY_DIR "/tools/genvm/genvm";
  if (::access(bin.c_str(), X_OK) != 0) GTEST_SKIP() << "no genvm at " << bin << " (set GENVM_EXECUTOR_BIN)";
  make("", "executor: [" + bin + ", run]\nexecutor_protocol: genvm\n");
  Value message = Value::map({{"contract_address", calldata::Address{}}, {"sender_address", calldata::Address{}},
                              {"origin_address", calldata::Address{}}, {"signer_address", calldata::Address{}},
                              {"chain_id", "1"}, {"value", "0"}, {"is_init", false}});
  Value body = run_body(false, {{"message", message}, {"debug_mode", "safe"},
                                {"host", "unix://" + ::testing::TempDir() + "no-such-host.sock"}});
  std::uint64_t id = reg_->submit(body, {false, "t"}, rec_);
  ASSERT_TRUE(wait_terminal(id));
  const Value& fin = *rec_->terminal(id);
  ASSERT_EQ(Recorder::kind(fin), "finished") << calldata::to_text(fin);
  EXPECT_NE(field(fin, "exit_code"), Value(0));
  std::string err = artifact(id, ArtifactField::kStderr);
  EXPECT_EQ(err.find("execution_data"), std::string::npos) << "our ExecutionData was refused: " << err;
  EXPECT_EQ(err.find("unknown argument"), std::string::npos) << err;
  std::cerr << "genvm said: " << err;
}

}  // namespace
}  // namespace genvm::manager
#endif  // GENVM_MANAGER_HAS_SUPERVISOR
