// The run registry: every run's lifecycle from `run` to its single terminal event and, after
// that, its retained result until `ack` or the retention TTL.
//
//   Registry reg(io, config, log);            // one io_context thread drives everything
//   reg.load_manifest();                      // the executor lines (versioning.h)
//   auto s = reg.submit(body, caller, sink);  // an id now (or a request error); events follow
//
// Contract:
//  - submit() decodes the request as run.rs does (run_request.h): a bad request is an error
//    value with code malformed_frame and starts nothing; a run that needs modules
//    (RunRequest::needs_modules) takes a lease on both modules (modules.h ModuleSet::acquire),
//    held until its terminal event; without a ModuleSet (set_modules) or with a module not
//    running it is refused with code modules_not_running. At spawn the run gets one fresh
//    connection to each module as `--module-llm=fd://5 --module-web=fd://6`; a connection
//    that fails is a failed_to_start. Runs that do not need modules get no module flags.
//    Everything later (debug-mode policy, permits, version resolution,
//    spawn) reports through a failed_to_start event.
//  - Ids count from 1 per manager process; `boot_id` (random, per process) makes (boot_id, id)
//    durable. `host_genvm_id` is an idempotency key: a repeat while the first run is retained
//    answers the same id and starts nothing.
//  - Retention: a terminal run sheds its request (and everything it needed to run) and keeps
//    its last event and result until ack, `execution_retention`, or eviction by the caps in
//    config `retention` (oldest unacked first: the same peer's, then anyone's; one
//    `retained_run_evicted` log line each).
//  - Admission by permits: a run that needs modules costs `permits.nondet`, any other
//    `permits.sync` (run.rs permits_for); runs wait in FIFO order (a cheap run never overtakes
//    a dear one, so none starves). A run waiting for permits is `queued` in an attach snapshot;
//    no event announces it (run.rs publishes started, failed_to_start and finished only).
//  - The executor: <executors_dir>/<key>/bin/genvm for the line the selector resolves to at the
//    request's timestamp (unsafe_overrides.reroute_to replaces the selector from `safe` up), or
//    the configured `executor` argv. It is spawned through supervisor::Supervisor in its own
//    group (and cgroup where available) with run.rs's command line (executor_link.h), the
//    ExecutionData on stdin, host connection 1 (a socketpair: consume_result is checked and
//    becomes the finished event's consumed_result), the log fd read as run.rs reads it, and
//    stdout/stderr captured by the debug mode's capture rule. The deadline SIGKILLs the whole
//    tree; so do cancel and shutdown. When the leader exits, whatever it left behind is
//    SIGKILLed too: nothing outlives a run.
//  - run_nested on host 1 (nested_run.h) starts a child run the same way (its own group and
//    cgroup), with no permit, no events, no entry in executions(), no deadline of its own; host
//    1 is not read again until its reply is written. A stop of a run (cancel, deadline,
//    shutdown) stops its callee first; a run whose executor exits has its callee killed; a
//    run's finished event waits until its callee is reaped. stats().running counts it.
//  - Exactly one terminal event (failed_to_start or finished) per run, delivered to every sink
//    subscribed at that moment. Sinks are weak: a closed connection simply stops receiving,
//    and never affects the run.
//  - Spawning, killing and releasing happen on one helper thread that owns the Supervisor, so
//    the io_context keeps serving while a fork+exec or a cgroup teardown is in flight; every
//    state change of a run (and so every event) still happens on the io_context's thread.
//  - Not thread-safe: every call on the io_context's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/result.h"
#include "common/host/nested_run.h"
#include "manager/config.h"
#include "manager/executor_link.h"
#include "manager/log.h"
#include "manager/metrics.h"
#include "manager/modules.h"
#include "manager/policy.h"
#include "manager/protocol.h"
#include "common/rfc3339.h"
#include "manager/run_request.h"
#include "manager/versioning.h"
#include "supervisor/supervisor.h"

namespace genvm::manager {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // An `event` payload ({"started": {...}}, {"finished": {...}}, ...) for run `genvm_id`.
  virtual void on_event(std::uint64_t genvm_id, const Value& event) = 0;
};

struct Submitted {
  std::uint64_t genvm_id = 0;
  bool repeated = false;  // an earlier run with the same host_genvm_id
  Value snapshot;         // its latest event ({"queued": ...} for a new run)
};

struct ArtifactChunk {
  std::uint64_t total_len = 0;
  std::string data;
};

// A finished run's retained result (run.rs SingleGenVMContextDone): what GET /genvm/{id}
// answers. A run that failed to start has none.
struct RunResult {
  UtcTime finished_at;
  std::string stdout_data, stderr_data;
  std::deque<std::string> genvm_log;  // JSON objects
  Value metrics;
  std::optional<calldata::Bytes> consumed_result;
  std::uint32_t version_major = 0, version_minor = 0;
};

// One entry of /status "executions".
struct ExecutionStatus {
  std::uint64_t genvm_id = 0;
  std::optional<UtcTime> finished_at;  // set once a result is retained
  std::string version;                 // the resolved line's key; "" before resolution
  UtcTime started_at, strict_deadline;
};

struct RegistryStats {
  std::uint64_t permits_total = 0, permits_in_use = 0, per_sync = 0, per_nondet = 0;
  std::size_t queued = 0, running = 0, retained = 0;
  std::uint64_t retained_bytes = 0;  // what the retained runs hold (retention caps)
};

class Registry {
 public:
  Registry(boost::asio::io_context& io, const Config& config, Log& log,
           std::uint64_t mem_available_bytes = read_mem_available_bytes());
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  std::uint64_t boot_id() const { return boot_id_; }

  // The modules runs needing them connect to (nullptr: none, every such run is refused). Not
  // owned; it must outlive the registry. Several registries may share one ModuleSet.
  void set_modules(ModuleSet* modules) { modules_ = modules; }
  ModuleSet* modules() const { return modules_; }

  // Reads config.manifest_path (empty: no lines). reload_manifest() is the same, for POST
  // /manifest/reload; on failure the manifest in use stays.
  Status load_manifest();
  Status reload_manifest() { return load_manifest(); }

  // See the contract above. The sink is subscribed to the run (also on a repeat).
  Result<Submitted> submit(const Value& body, const Caller& caller, std::shared_ptr<EventSink> sink);

  // {"snapshot": <latest event>}; errors unknown_id / boot_id_mismatch.
  Result<Value> attach(std::uint64_t boot_id, std::uint64_t genvm_id, std::shared_ptr<EventSink> sink);
  // Same without a boot id (the HTTP adapter): the latest event, or unknown_id.
  Result<Value> subscribe(std::uint64_t genvm_id, std::shared_ptr<EventSink> sink);
  Status cancel(std::uint64_t genvm_id);  // unknown_id; a terminal run is left as it is
  Status ack(std::uint64_t genvm_id);     // unknown_id, not_finished
  // run.rs get_artifact: unknown_id unless the run has a retained result (so also before it
  // finished), then malformed_frame for a field other than stdout, stderr, genvm_log.
  Result<ArtifactChunk> get_artifact(std::uint64_t genvm_id, std::string_view field, std::uint64_t offset,
                                     std::uint32_t max_len) const;
  const RunResult* result(std::uint64_t genvm_id) const;  // nullptr: unknown or no result yet
  bool is_terminal(std::uint64_t genvm_id) const;
  // The Caller::owner that started the run (nullptr: unknown id). A repeated host_genvm_id
  // from a caller that may not use the run (policy.h may_use_run) is refused.
  const std::string* owner(std::uint64_t genvm_id) const;
  // What terminal runs not yet acked hold, as config `retention` caps it: in all, or of one
  // peer (Caller::peer). A terminal run keeps its outcome, never its request.
  std::uint64_t retained_bytes() const { return retained_total_; }
  std::uint64_t retained_bytes(const std::string& peer) const;

  // The permit budget (GET/POST /permits). set_permits refuses (and answers the unchanged
  // budget) a value below the dearest run's cost; lowering it never stops a running run.
  std::uint64_t max_permits() const { return permits_total_; }
  std::uint64_t set_permits(std::uint64_t permits);

  // POST /contract/detect-version (versioning.rs detect_major_spec): the newest major open at
  // `deployment`, then that line's `genvm parse-version-pattern` with `code` on stdin decides
  // (never above it). `done` runs on the io thread; errors as the public handler words them.
  void detect_version(std::string code, const UtcTime& deployment, std::function<void(Result<std::uint32_t>)> done);

  // No new runs; queued runs finish with cause `shutdown`, running trees are SIGKILLed and
  // finish with cause `shutdown`; `done` runs (on the io thread) once every run is terminal.
  void shutdown(std::function<void()> done);
  bool shutting_down() const { return shutting_down_; }

  RegistryStats stats() const;
  std::vector<ExecutionStatus> executions() const;
  std::string prometheus() const;  // the /metrics body
  supervisor::Containment containment() const;

 private:
  struct Run;
  void start(const std::shared_ptr<Run>& run, const Caller& caller);
  void pump();
  void spawn(const std::shared_ptr<Run>& run);
  void read_stream(const std::shared_ptr<Run>& run, int which);
  void read_host1(const std::shared_ptr<Run>& run);
  bool on_host1_output(const std::shared_ptr<Run>& run, HostOneParser::Output out);  // false: stop reading
  void serve_nested(const std::shared_ptr<Run>& caller, const calldata::Bytes& envelope);
  void end_nested(const std::shared_ptr<Run>& child, Result<host::NestedRunReply> reply);
  void on_leader_exit(const std::shared_ptr<Run>& run);
  void stop_run(const std::shared_ptr<Run>& run, const char* cause);
  void maybe_finalize(const std::shared_ptr<Run>& run);
  void finalize(const std::shared_ptr<Run>& run);
  void fail_to_start(const std::shared_ptr<Run>& run, const std::string& error);
  void finish_without_process(const std::shared_ptr<Run>& run, const char* cause);
  void publish(const std::shared_ptr<Run>& run, Value event);
  void terminal(const std::shared_ptr<Run>& run, Value event, const std::string& outcome);
  void forget(std::uint64_t id);
  static void shed(Run& run);
  static std::uint64_t held_bytes(const Run& run);
  void enforce_retention_caps(const std::string& peer);
  void check_shutdown_done();
  Result<std::vector<std::string>> executor_command(const std::shared_ptr<Run>& run);

  // The supervisor and every Child live on a thread of their own (registry.cc): a fork+exec,
  // a cgroup freeze/kill/thaw or rmdir there never stalls other connections on io_.
  class Spawner;
  struct SpawnOutcome;
  struct Helper;
  void on_spawned(const std::shared_ptr<Run>& run, const std::shared_ptr<SpawnOutcome>& out);
  void on_reaped(const std::shared_ptr<Run>& run, std::optional<supervisor::WaitStatus> ws);
  void end_helper(const std::shared_ptr<Helper>& h, Result<std::uint32_t> outcome);

  boost::asio::io_context& io_;
  Config config_;
  Log& log_;
  std::uint64_t boot_id_;
  std::uint64_t next_id_ = 1;
  std::uint64_t next_helper_id_ = 1;
  Manifest manifest_;
  ModuleSet* modules_ = nullptr;
  std::map<std::uint64_t, std::shared_ptr<Run>> runs_;
  std::map<std::string, std::uint64_t> by_host_id_;
  std::list<std::uint64_t> retained_order_;  // terminal runs, oldest first
  std::uint64_t retained_total_ = 0;
  std::map<std::string, std::uint64_t> retained_by_peer_;
  std::deque<std::shared_ptr<Run>> queue_;
  std::uint64_t permits_total_;
  std::uint64_t permits_used_ = 0;
  std::size_t running_ = 0;
  bool shutting_down_ = false;
  std::function<void()> shutdown_done_;
  supervisor::Containment containment_ = supervisor::Containment::kProcessGroup;
  std::unique_ptr<Spawner> spawner_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // expires with the registry
  std::unique_ptr<supervisor::TreeWatcher> watcher_;
  std::map<std::string, std::uint64_t> outcomes_;
  std::map<std::string, std::uint64_t> nested_outcomes_;  // run_nested replies, by result kind
  Histogram duration_seconds_;
  Histogram peak_rss_bytes_;
};

}  // namespace genvm::manager
