// The run registry: every run's lifecycle from `run` to its single terminal event and, after
// that, its retained result until `ack` or the retention TTL.
//
//   Registry reg(io, config, log);            // one io_context thread drives everything
//   std::uint64_t id = reg.submit(body, caller, sink);  // id now; events follow through sinks
//
// Contract:
//  - Ids count from 1 per manager process; `boot_id` (random, per process) makes (boot_id, id)
//    durable. `host_genvm_id` is an idempotency key: a repeat while the first run is retained
//    answers the same id and starts nothing.
//  - Admission by permits: a sync run costs `permits.sync`, any other `permits.nondet`; runs
//    wait in FIFO order (a cheap run never overtakes a dear one, so none starves).
//  - Each run's executor is spawned through supervisor::Supervisor in its own group (and
//    cgroup where available), with its input on stdin (executor_protocol genvm: the
//    ExecutionData, `genvm run` arguments and host connection 1 on fd 4, where consume_result
//    is checked and becomes the finished event's consumed_result; plain: the run request
//    itself), a JSON-lines log pipe on fd 3 (announced as GENVM_LOG_FD=3), stdout/stderr
//    captured by the debug mode's capture rule. The deadline (request `deadline`, else `max_execution_minutes`, at most 24 h)
//    SIGKILLs the whole tree; so do cancel and shutdown. When the leader exits, whatever it
//    left behind is SIGKILLed too: nothing outlives a run.
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
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/result.h"
#include "manager/config.h"
#include "manager/log.h"
#include "manager/metrics.h"
#include "manager/policy.h"
#include "manager/protocol.h"
#include "supervisor/supervisor.h"

namespace genvm::manager {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // An `event` payload ({"queued": {...}}, {"finished": {...}}, ...) for run `genvm_id`.
  virtual void on_event(std::uint64_t genvm_id, const Value& event) = 0;
};

// The manager-level fields of a run request (everything else is the executor's business and
// reaches it untouched on stdin).
struct RunRequest {
  bool is_sync = false;
  std::string debug_mode = "disabled";
  Millis deadline{std::chrono::minutes(20)};
  std::optional<std::string> host_genvm_id;
  std::vector<std::string> extra_args;
};
// Checks the fields the spec marks required are present and the manager's own fields are
// well-formed. Error code "invalid_request".
Result<RunRequest> parse_run_request(const Value& body);

struct ArtifactChunk {
  std::uint64_t total_len = 0;
  std::string data;
};

struct RegistryStats {
  std::uint64_t permits_total = 0, permits_in_use = 0, per_sync = 0, per_nondet = 0;
  std::size_t queued = 0, running = 0, retained = 0;
};

class Registry {
 public:
  Registry(boost::asio::io_context& io, const Config& config, Log& log,
           std::uint64_t mem_available_bytes = read_mem_available_bytes());
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  std::uint64_t boot_id() const { return boot_id_; }

  // Allocates an id (or finds the one for a repeated host_genvm_id), subscribes `sink`, and
  // continues asynchronously: validation, policy, permits, spawn. Never fails: a bad request
  // becomes a failed_to_start event.
  std::uint64_t submit(const Value& body, const Caller& caller, std::shared_ptr<EventSink> sink);

  // {"snapshot": <latest event>}; errors unknown_id / boot_id_mismatch.
  Result<Value> attach(std::uint64_t boot_id, std::uint64_t genvm_id, std::shared_ptr<EventSink> sink);
  // Same without a boot id (the HTTP adapter): the latest event, or unknown_id.
  Result<Value> subscribe(std::uint64_t genvm_id, std::shared_ptr<EventSink> sink);
  Status cancel(std::uint64_t genvm_id);  // unknown_id; a terminal run is left as it is
  Status ack(std::uint64_t genvm_id);     // unknown_id, not_finished
  Result<ArtifactChunk> get_artifact(std::uint64_t genvm_id, ArtifactField field,
                                     std::uint64_t offset, std::uint32_t max_len) const;
  bool is_terminal(std::uint64_t genvm_id) const;

  // No new runs; queued runs finish with cause `shutdown`, running trees are SIGKILLed and
  // finish with cause `shutdown`; `done` runs (on the io thread) once every run is terminal.
  void shutdown(std::function<void()> done);
  bool shutting_down() const { return shutting_down_; }

  RegistryStats stats() const;
  std::string prometheus() const;  // the /metrics body
  supervisor::Containment containment() const;

 private:
  struct Run;
  void start(const std::shared_ptr<Run>& run, const Value& body, const Caller& caller);
  void pump();
  void spawn(const std::shared_ptr<Run>& run);
  void read_stream(const std::shared_ptr<Run>& run, int which);
  void read_host1(const std::shared_ptr<Run>& run);
  void on_leader_exit(const std::shared_ptr<Run>& run);
  void stop_run(const std::shared_ptr<Run>& run, const char* cause);
  void maybe_finalize(const std::shared_ptr<Run>& run);
  void finalize(const std::shared_ptr<Run>& run);
  void fail_to_start(const std::shared_ptr<Run>& run, const std::string& error);
  void finish_without_process(const std::shared_ptr<Run>& run, const char* cause);
  void publish(const std::shared_ptr<Run>& run, Value event);
  void terminal(const std::shared_ptr<Run>& run, Value event, const std::string& outcome);
  void forget(std::uint64_t id);
  void check_shutdown_done();

  // The supervisor and every Child live on a thread of their own (registry.cc): a fork+exec,
  // a cgroup freeze/kill/thaw or rmdir there never stalls other connections on io_.
  class Spawner;
  struct SpawnOutcome;
  void on_spawned(const std::shared_ptr<Run>& run, const std::shared_ptr<SpawnOutcome>& out);
  void on_reaped(const std::shared_ptr<Run>& run, std::optional<supervisor::WaitStatus> ws);

  boost::asio::io_context& io_;
  Config config_;
  Log& log_;
  std::uint64_t boot_id_;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::shared_ptr<Run>> runs_;
  std::map<std::string, std::uint64_t> by_host_id_;
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
  Histogram duration_seconds_;
  Histogram peak_rss_bytes_;
};

}  // namespace genvm::manager
