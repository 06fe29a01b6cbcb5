// The run registry against real processes: `sh` stands in for the executor (the script comes
// from the request's first extra_arg), spawned, captured and killed through src/supervisor.
#ifdef GENVM_MANAGER_HAS_SUPERVISOR
#include "manager/registry.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "manager/executor_link.h"

#include "manager/test_util.h"
#include "common/sanitizers.h"

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
    auto s = reg_->submit(run_body(is_sync, extra), caller, rec_);
    EXPECT_TRUE(s.ok()) << s.error().to_string();
    return s.ok() ? s->genvm_id : 0;
  }
  bool wait_terminal(std::uint64_t id) {
    return run_until(io_, [&] { return rec_->terminal(id) != nullptr; });
  }
  std::string artifact(std::uint64_t id, std::string_view f) {
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
  std::string out = artifact(id, "stdout");
  EXPECT_EQ(out, std::string(sent.begin(), sent.end()));
  EXPECT_EQ(artifact(id, "stderr"), "oops\n");
  EXPECT_EQ(artifact(id, "genvm_log"), "{\"level\":\"info\"}\n");
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
  EXPECT_EQ(artifact(id, "stdout"), "");
  EXPECT_EQ(artifact(id, "genvm_log"), "");
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
  std::string err = artifact(id, "stderr");
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
  pid_t left = std::stoi(artifact(id, "stderr"));
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

// Runs wait for permits in FIFO order; a queued run is `queued` only in a snapshot (run.rs
// publishes no event for it), and cancelling it spawns nothing.
TEST_F(RegistryTest, PermitsQueueRunsInOrderAndCancelOfAQueuedRunSpawnsNothing) {
  make("permits: {total: 4, sync: 4, nondet: 4}\n");
  std::uint64_t a = run("exec sleep 1000");
  std::uint64_t b = run("exec sleep 1000");
  std::uint64_t c = run("exit 0");
  ASSERT_TRUE(run_until(io_, [&] { return !rec_->kinds(a).empty() && reg_->stats().queued == 2; }));
  EXPECT_EQ(rec_->kinds(a), (std::vector<std::string>{"started"}));
  EXPECT_TRUE(rec_->kinds(b).empty()) << "no queued event";
  EXPECT_EQ(Recorder::kind(*reg_->attach(reg_->boot_id(), b, nullptr)->find("snapshot")), "queued");
  EXPECT_EQ(reg_->stats().permits_in_use, 4u);

  ASSERT_TRUE(reg_->cancel(b).ok());  // queued: no process, no permit
  ASSERT_TRUE(wait_terminal(b));
  EXPECT_EQ(rec_->kinds(b), (std::vector<std::string>{"finished"}));
  EXPECT_EQ(field(*rec_->terminal(b), "cause"), Value("cancelled"));
  EXPECT_TRUE(field(*rec_->terminal(b), "metrics").is_null()) << "nothing ran";
  EXPECT_TRUE(rec_->kinds(c).empty()) << "c still waits behind a";
  ASSERT_TRUE(reg_->cancel(a).ok());
  ASSERT_TRUE(wait_terminal(c));
  EXPECT_EQ(rec_->kinds(c), (std::vector<std::string>{"started", "finished"}));
  EXPECT_EQ(reg_->stats().permits_in_use, 0u);
}

// POST /permits: a budget below the dearest run is refused; a wider one admits what waited.
TEST_F(RegistryTest, SetPermitsWidensTheBudgetAndRefusesOneBelowTheDearestRun) {
  make("permits: {total: 4, sync: 4, nondet: 6}\n");
  EXPECT_EQ(reg_->max_permits(), 6u) << "raised to the dearest run at start";
  std::uint64_t a = run("exec sleep 1000");
  std::uint64_t b = run("exec sleep 1000");
  ASSERT_TRUE(run_until(io_, [&] { return !rec_->kinds(a).empty() && reg_->stats().queued == 1; }));
  EXPECT_EQ(reg_->set_permits(5), 6u) << "refused: unchanged";
  EXPECT_EQ(reg_->set_permits(8), 8u);
  ASSERT_TRUE(run_until(io_, [&] { return !rec_->kinds(b).empty(); }));
  EXPECT_EQ(reg_->stats().permits_in_use, 8u);
  ASSERT_TRUE(reg_->cancel(a).ok());
  ASSERT_TRUE(reg_->cancel(b).ok());
  ASSERT_TRUE(wait_terminal(a) && wait_terminal(b));
}

// run.rs: the strict deadline counts from the request, so it can expire while a run waits.
TEST_F(RegistryTest, TheDeadlineAlsoEndsARunStillWaitingForPermits) {
  make("permits: {total: 4, sync: 4, nondet: 4}\n");
  std::uint64_t a = run("exec sleep 1000");
  std::uint64_t b = run("exit 0", {{"deadline", "200ms"}});
  ASSERT_TRUE(wait_terminal(b));
  EXPECT_EQ(rec_->kinds(b), (std::vector<std::string>{"finished"}));
  EXPECT_EQ(field(*rec_->terminal(b), "cause"), Value("deadline"));
  ASSERT_TRUE(reg_->cancel(a).ok());
  ASSERT_TRUE(wait_terminal(a));
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
  EXPECT_EQ(reg_->get_artifact(id, "stdout", 0, 10).error().code, "unknown_id") << "run.rs: no result yet";
  ASSERT_TRUE(reg_->cancel(id).ok());
  ASSERT_TRUE(wait_terminal(id));
  // Reads before ack are repeatable.
  ASSERT_TRUE(reg_->attach(reg_->boot_id(), id, nullptr).ok());
  ASSERT_TRUE(reg_->attach(reg_->boot_id(), id, nullptr).ok());
  ASSERT_TRUE(reg_->ack(id).ok());
  EXPECT_EQ(reg_->attach(reg_->boot_id(), id, nullptr).error().code, "unknown_id");
  EXPECT_EQ(reg_->get_artifact(id, "stdout", 0, 10).error().code, "unknown_id");
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
  std::uint64_t id = reg_->submit(run_body(true, {{"extra_args", Value::array({"exit 7"})}}), {false, "t"}, gone)->genvm_id;
  gone.reset();  // the connection went away
  auto later = std::make_shared<Recorder>();
  ASSERT_TRUE(reg_->subscribe(id, later).ok());
  ASSERT_TRUE(run_until(io_, [&] { return later->terminal(id) != nullptr; }));
  EXPECT_EQ(field(*later->terminal(id), "exit_code"), Value(7));
}

// A request the public decoder refuses starts nothing (the caller gets malformed_frame); a run
// that needs modules is refused before it exists; the policy's refusal is a failed_to_start.
TEST_F(RegistryTest, BadRequestsAreRefusedAtOnceAndPolicyRejectionsFailToStart) {
  make();
  auto refused = [&](Value body) {
    auto s = reg_->submit(body, {false, "t"}, rec_);
    return s.ok() ? std::string("accepted") : s.error().code;
  };
  Value::Map no_code = run_body(true).as_map();
  no_code.erase("code");
  EXPECT_EQ(refused(Value(no_code)), "malformed_frame");
  EXPECT_EQ(refused(run_body(true, {{"debug_mode", "verbose"}})), "malformed_frame");
  EXPECT_EQ(refused(run_body(true, {{"deadline", "10"}})), "malformed_frame");
  EXPECT_EQ(refused(run_body(true, {{"host_hello_data", Value::array({calldata::Bytes{}, calldata::Bytes{1}})}})),
            "malformed_frame");
  EXPECT_EQ(refused(run_body(false)), "modules_not_running");
  EXPECT_EQ(reg_->stats().queued + reg_->stats().running + reg_->stats().retained, 0u) << "nothing was created";

  std::uint64_t unsafe = run("exit 0", {{"debug_mode", "unsafe"}});
  std::uint64_t trusted = run("exit 0", {{"debug_mode", "unsafe"}}, true, {true, "uid:0"});
  for (auto id : {unsafe, trusted}) ASSERT_TRUE(wait_terminal(id));
  EXPECT_EQ(rec_->kinds(unsafe), (std::vector<std::string>{"failed_to_start"}));
  EXPECT_NE(field(*rec_->terminal(unsafe), "error").as_string().find("untrusted"), std::string::npos);
  EXPECT_EQ(reg_->result(unsafe), nullptr) << "run.rs keeps no result for a run that never started";
  EXPECT_EQ(reg_->get_artifact(unsafe, "stdout", 0, 1).error().code, "unknown_id");
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
  EXPECT_EQ(artifact(id, "stdout"), "safe\n") << "the executor was told the clamped level";
}

TEST_F(RegistryTest, ShutdownFinishesQueuedAndRunningRunsWithCauseShutdown) {
  make("permits: {total: 4, sync: 4, nondet: 4}\n");
  std::uint64_t running = run("exec sleep 1000");
  std::uint64_t queued = run("exec sleep 1000");
  ASSERT_TRUE(run_until(io_, [&] { return reg_->stats().queued == 1 && !rec_->kinds(running).empty(); }));
  bool done = false;
  reg_->shutdown([&] { done = true; });
  ASSERT_TRUE(run_until(io_, [&] { return done; }));
  EXPECT_EQ(field(*rec_->terminal(running), "cause"), Value("shutdown"));
  EXPECT_EQ(field(*rec_->terminal(queued), "cause"), Value("shutdown"));
  EXPECT_EQ(rec_->kinds(queued), (std::vector<std::string>{"finished"}));
  std::uint64_t late = run("exit 0");
  ASSERT_TRUE(wait_terminal(late));
  EXPECT_EQ(rec_->kinds(late), (std::vector<std::string>{"failed_to_start"}));
}

TEST_F(RegistryTest, ArtifactsArePagedWithinTheChunkCap) {
  make();
  std::uint64_t id = run("head -c 600000 /dev/zero | tr '\\0' x", {{"debug_mode", "safe"}});
  ASSERT_TRUE(wait_terminal(id));
  EXPECT_EQ(reg_->get_artifact(id, "env", 0, 1).error().code, "malformed_frame");
  auto first = reg_->get_artifact(id, "stdout", 0, 1u << 30);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->total_len, 600000u);
  EXPECT_EQ(first->data.size(), kArtifactChunkCap);
  auto tail = reg_->get_artifact(id, "stdout", 599990, 100);
  EXPECT_EQ(tail->data, std::string(10, 'x'));
  auto past = reg_->get_artifact(id, "stdout", 700000, 100);
  EXPECT_TRUE(past->data.empty());
  EXPECT_EQ(artifact(id, "stdout").size(), 600000u);
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


// Retention keeps the outcome, not the request: a run whose request carried 4 MB of code holds
// a few KiB once it has finished. Failed (about 8 MB held: the request twice, as decoded and as
// encoded for the executor's stdin) while terminal runs kept their request.
TEST_F(RegistryTest, ARetainedRunHoldsItsOutcomeNotItsRequest) {
  make();
  const std::size_t kCode = 4u << 20;
  Caller caller{false, "test", "o", "tcp:10.0.0.1"};
  std::uint64_t id = run("cat >/dev/null; printf done", {{"code", calldata::Bytes(kCode, 0x61)}}, true, caller);
  ASSERT_TRUE(wait_terminal(id));
  EXPECT_EQ(artifact(id, "stdout"), "done") << "the executor read the whole request";
  EXPECT_GT(reg_->retained_bytes(), 0u);
  EXPECT_LT(reg_->retained_bytes(), 64u * 1024) << "the retained run still holds its request";
  EXPECT_EQ(reg_->retained_bytes("tcp:10.0.0.1"), reg_->retained_bytes());
  EXPECT_EQ(reg_->stats().retained_bytes, reg_->retained_bytes());
  EXPECT_NE(reg_->prometheus().find("genvm_manager_retained_bytes "), std::string::npos);
  // A failed_to_start run keeps nothing of its request either.
  std::uint64_t bad = run("exit 0", {{"code", calldata::Bytes(kCode, 0x61)}, {"debug_mode", "unsafe"}}, true, caller);
  ASSERT_TRUE(wait_terminal(bad));
  EXPECT_LT(reg_->retained_bytes(), 2u * 64 * 1024);
  ASSERT_TRUE(reg_->ack(id).ok());
  ASSERT_TRUE(reg_->ack(bad).ok());
  EXPECT_EQ(reg_->retained_bytes(), 0u) << "ack releases what the run held";
  EXPECT_EQ(reg_->retained_bytes("tcp:10.0.0.1"), 0u);
}

// Runs never acked: over the per-peer cap the peer's oldest goes, over the total anyone's
// oldest; each eviction is a log line. Without the caps all of them stayed for the retention
// time, whatever they held.
TEST_F(RegistryTest, RetentionCapsEvictTheOldestUnackedRunsFirst) {
  make("retention: {max_bytes_per_peer: 300000, max_bytes: 350000}\n");
  Caller a{false, "a", "oa", "tcp:10.0.0.1"}, b{false, "b", "ob", "tcp:10.0.0.2"};
  auto finished = [&](const Caller& c) {
    std::uint64_t id = run("head -c 100000 /dev/zero", {}, true, c);
    EXPECT_TRUE(wait_terminal(id));
    return id;
  };
  auto kept = [&](std::uint64_t id) { return reg_->attach(reg_->boot_id(), id, nullptr).ok(); };
  std::uint64_t a1 = finished(a), a2 = finished(a);
  EXPECT_TRUE(kept(a1) && kept(a2));
  std::uint64_t a3 = finished(a);
  EXPECT_FALSE(kept(a1)) << "the peer's oldest goes first";
  EXPECT_TRUE(kept(a2) && kept(a3));
  EXPECT_LE(reg_->retained_bytes("tcp:10.0.0.1"), 300000u);
  std::string log = log_text();
  EXPECT_NE(log.find("\"event\":\"retained_run_evicted\",\"genvm_id\":" + std::to_string(a1) +
                     ",\"peer\":\"tcp:10.0.0.1\""),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("\"cap\":\"retention.max_bytes_per_peer\""), std::string::npos) << log;
  // b is under its own cap, but the total is not: the oldest of anyone's (a2) goes.
  std::uint64_t b1 = finished(b), b2 = finished(b);
  EXPECT_FALSE(kept(a2));
  EXPECT_TRUE(kept(a3) && kept(b1) && kept(b2));
  EXPECT_LE(reg_->retained_bytes(), 350000u);
  EXPECT_NE(log_text().find("\"cap\":\"retention.max_bytes\""), std::string::npos);
  // An acked run is no longer counted.
  ASSERT_TRUE(reg_->ack(a3).ok());
  EXPECT_EQ(reg_->retained_bytes("tcp:10.0.0.1"), 0u);
}


// A ReportedResult (domain.rs) with every field, `kind` the variant name.
Value reported(const char* kind) {
  Value buckets = Value::map({{"storage", 0}, {"message_receipt", 0}, {"nondet_output", 0}, {"message_fee", 0}, {"event", 0}});
  return Value::map({{"execution_hash", calldata::Bytes(32, 1)}, {"small_hash", calldata::Bytes(32, 2)}, {"kind", kind},
                     {"data", "no"}, {"backtrace", Value()}, {"wasm_store_hashes", Value::map({})},
                     {"storage_changes", Value::Array{}}, {"emissions", Value::Array{}},
                     {"nondet_disagreement", Value()}, {"nondet_results", Value::Array{}},
                     {"data_fees_remaining", Value::Array{}}, {"data_fees_consumed", buckets}, {"llm_consumption", 0}});
}

// executor_protocol genvm with a real process that speaks host connection 1: it reads its
// stdin, sends a consume_result on fd 4, waits for the acknowledgement, and reports what it
// saw. Fails if the command line leaves run.rs's shape or order.
TEST_F(RegistryTest, GenvmProtocolPassesRunRsCommandLineAndRetainsTheConsumedResult) {
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
          "os.write(3, b'{\"level\":\"warning\",\"msg\":\"hi\"}\\nnot json\\n')\n"
          "sys.stderr.buffer.write(data)\n"
          "print(' '.join(sys.argv[2:]))\n"
          "print(ack.hex())\n";
    calldata::Bytes payload{1};
    calldata::encode_to(reported("UserError"), payload);
    std::ofstream(payload_file, std::ios::binary).write(reinterpret_cast<const char*>(payload.data()),
                                                        static_cast<std::streamsize>(payload.size()));
  }
  make("", "executor: [python3, " + script + ", " + payload_file + "]\nexecutor_protocol: genvm\n");
  Value body = run_body(false, {{"no_modules", true}, {"debug_mode", "safe"}, {"host", "unix:///h.sock"},
                                {"extra_args", Value::array({"--x"})}});
  std::uint64_t id = reg_->submit(body, {false, "t"}, rec_)->genvm_id;
  ASSERT_TRUE(wait_terminal(id));
  const Value& fin = *rec_->terminal(id);
  ASSERT_EQ(Recorder::kind(fin), "finished") << calldata::to_text(fin);
  EXPECT_EQ(field(fin, "exit_code"), Value(0));
  const Value& consumed = field(fin, "consumed_result");
  ASSERT_TRUE(consumed.is_bytes()) << calldata::to_text(consumed);
  EXPECT_EQ(consumed.as_bytes()[0], 1) << "outer ResultCode byte (UserError)";
  EXPECT_EQ(artifact(id, "stdout"), "--log-fd=3 run --x --host unix:///h.sock --permissions wscn --genvm-id=" +
                                        std::to_string(id) + " --debug-mode safe --host fd://4\n00\n");
  auto expected = calldata::encode(to_execution_data(*parse_run_request(body), DebugMode::kSafe));
  EXPECT_EQ(artifact(id, "stderr"), std::string(expected.begin(), expected.end()));
  EXPECT_EQ(artifact(id, "genvm_log"),
            "{\"msg\":\"hi\",\"level\":\"warn\"}\n{\"level\":\"info\",\"message\":\"genvm log\",\"line\":\"not json\"}\n");
  const RunResult* r = reg_->result(id);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->consumed_result, consumed.as_bytes());
  ::unlink(script.c_str());
  ::unlink(payload_file.c_str());
}

// Lines resolved from a manifest to <executors_dir>/<key>/bin/genvm, each a stand-in that
// prints how it was called. Fails if the selector, the manifest rules or the reroute gate is
// ignored.
class VersionedRegistryTest : public RegistryTest {
 protected:
  void SetUp() override {
    RegistryTest::SetUp();
    root_ = ::testing::TempDir() + "mgr_lines_" + std::to_string(::getpid());
    for (const char* key : {"v0.1.0", "v0.2.0-x", "v0.9.0-late"}) {
      std::string bin = root_ + "/executor/" + key + "/bin";
      std::filesystem::create_directories(bin);
      std::ofstream(bin + "/genvm") << "#!/bin/sh\necho \"" << key << " $*\"\n";
      std::filesystem::permissions(bin + "/genvm", std::filesystem::perms::owner_all);
    }
    std::ofstream(root_ + "/manifest.yaml") << "executor_versions:\n"
                                               "  v0.1.0: {available_after: 2024-01-01T00:00:00Z}\n"
                                               "  v0.2.0-x: {available_after: 2024-01-01T00:00:00Z}\n"
                                               "  v0.9.0-late: {available_after: 2030-01-01T00:00:00Z}\n";
    make("executors_dir: " + root_ + "/executor\nmanifest_path: " + root_ + "/manifest.yaml\n", "");
    ASSERT_TRUE(reg_->load_manifest().ok());
  }
  void TearDown() override {
    RegistryTest::TearDown();
    std::filesystem::remove_all(root_);
  }
  // The line that ran (the stand-in's first word), or the failure.
  std::string line_of(Value selector, Value::Map extra = {}) {
    extra["selector"] = std::move(selector);
    if (!extra.count("debug_mode")) extra["debug_mode"] = "safe";
    std::uint64_t id = reg_->submit(run_body(true, extra), {true, "t"}, rec_)->genvm_id;
    EXPECT_TRUE(wait_terminal(id));
    const Value& t = *rec_->terminal(id);
    if (Recorder::kind(t) != "finished") return "failed: " + field(t, "error").as_string();
    std::string out = artifact(id, "stdout");
    last_minor_ = field(t, "version_minor");
    return out.substr(0, out.find(' '));
  }
  std::string root_;
  Value last_minor_;
};

TEST_F(VersionedRegistryTest, TheSelectorPicksTheLineAndTheEventsCarryItsVersion) {
  auto major = [](int m) { return Value::map({{"kind", "major"}, {"major", m}}); };
  auto version = [](const char* v) { return Value::map({{"kind", "version"}, {"version", v}}); };
  EXPECT_EQ(line_of(major(0)), "v0.2.0-x") << "v0.9.0-late has not opened at 2026";
  EXPECT_EQ(last_minor_, Value(2));
  EXPECT_EQ(line_of(major(0), {{"timestamp", "2031-01-01T00:00:00Z"}}), "v0.9.0-late");
  EXPECT_EQ(line_of(major(3)), "v0.2.0-x") << "an unserved major falls back to the newest open line";
  EXPECT_EQ(line_of(version("v0.1.0")), "v0.1.0");
  EXPECT_EQ(line_of(version("re:^v0\\.1")), "v0.1.0");
  EXPECT_EQ(line_of(version("re:^v7")), "failed: no line matches version selector `^v7`");
  EXPECT_EQ(line_of(version("../executor/v0.1.0")), "failed: version `../executor/v0.1.0` is not an executor directory name");
  EXPECT_NE(line_of(version("v0.4.4")).find("failed:"), std::string::npos) << "an exact name must exist";
  EXPECT_EQ(line_of(major(0), {{"timestamp", "2023-01-01T00:00:00Z"}}),
            "failed: no compatible version found for major 0 and no line is available at all");
  Value reroute = Value::map({{"reroute_to", "v0.1.0"}});
  EXPECT_EQ(line_of(major(0), {{"unsafe_overrides", reroute}}), "v0.1.0") << "honoured from safe";
  std::uint64_t id = reg_->submit(run_body(true, {{"unsafe_overrides", reroute}}), {true, "t"}, rec_)->genvm_id;
  ASSERT_TRUE(wait_terminal(id));
  EXPECT_EQ(field(*rec_->terminal(id), "version_minor"), Value(2)) << "ignored with debugging disabled";
  auto status = reg_->executions();
  ASSERT_FALSE(status.empty());
  EXPECT_EQ(status.back().version, "v0.2.0-x");
}

// The real `genvm` as the build tree installs it (tools/executor/<version>/bin/genvm and
// tools/data/manifest.yaml): resolved by major, given run.rs's command line and the
// ExecutionData on stdin, it fails only at the unreachable host 0, which shows as a finished
// run with its exit code and its one-line error in the captured stderr.
TEST_F(RegistryTest, TheInstalledGenvmLineRunsWithThePublicCommandLine) {
  std::string root = GENVM_BINARY_DIR "/tools";
  std::error_code ec;
  if (::access((root + "/data/manifest.yaml").c_str(), R_OK) != 0 ||
      std::filesystem::directory_iterator(root + "/executor", ec) == std::filesystem::directory_iterator()) {
    GTEST_SKIP() << "no executor line installed under " << root << " (build genvm-manager)";
  }
  make("executors_dir: " + root + "/executor\nmanifest_path: " + root + "/data/manifest.yaml\n", "");
  ASSERT_TRUE(reg_->load_manifest().ok());
  Value::Map fields = testing::local_fee_fields();
  fields.insert({{"debug_mode", "safe"}, {"host", "unix://" + ::testing::TempDir() + "no-such-host.sock"}});
  std::uint64_t id = reg_->submit(run_body(true, std::move(fields)), {false, "t"}, rec_)->genvm_id;
  ASSERT_TRUE(wait_terminal(id));
  const Value& fin = *rec_->terminal(id);
  ASSERT_EQ(Recorder::kind(fin), "finished") << calldata::to_text(fin);
  EXPECT_EQ(field(fin, "version_major"), Value(0));
  EXPECT_NE(field(fin, "exit_code"), Value(0));
  std::string err = artifact(id, "stderr");
  EXPECT_NE(err.find("no-such-host.sock"), std::string::npos) << "genvm got as far as host 0: " << err;
  std::cerr << "genvm said: " << err;
}

// The OS memory limit behind the executor's own RAM budget (issue 19 item 5): every run is spawned
// under executor_memory_max, here RLIMIT_AS (no cgroup), which the run's own `ulimit -v` shows;
// 0 spawns it unlimited. Before: no limit was set.
TEST_F(RegistryTest, EveryRunIsSpawnedUnderTheConfiguredMemoryLimit) {
#if GENVM_ADDRESS_SANITIZER
  GTEST_SKIP() << "an ASan build sets no RLIMIT_AS backstop (ASan's shadow needs terabytes of it)";
#endif
  make("containment: false\nexecutor_memory_max: 3221225472\n");
  std::uint64_t id = run("ulimit -v");
  ASSERT_TRUE(wait_terminal(id));
  EXPECT_EQ(artifact(id, "stdout"), "3145728\n");
  rec_ = std::make_shared<Recorder>();  // the new registry numbers its runs from 1 again
  make("containment: false\nexecutor_memory_max: 0\n");
  std::uint64_t free_run = run("ulimit -v");
  ASSERT_TRUE(wait_terminal(free_run));
  EXPECT_EQ(artifact(free_run, "stdout"), "unlimited\n");
}

}  // namespace
}  // namespace genvm::manager
#endif  // GENVM_MANAGER_HAS_SUPERVISOR
