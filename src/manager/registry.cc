#include "manager/registry.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <ctime>
#include <random>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "manager/executor_link.h"
#include "manager/json.h"

extern char** environ;

namespace genvm::manager {

namespace asio = boost::asio;
namespace sup = genvm::supervisor;
using Clock = std::chrono::steady_clock;

namespace {

// The child fd number of the executor's JSON-lines log pipe.
constexpr int kChildLogFd = kExecutorLogFd;
// After the leader exits and its tree is SIGKILLed, output still in flight is read for at most
// this long; a pipe held open beyond it belongs to something outside our reach.
constexpr Millis kDrain{1000};
// A log line longer than this (when capture is disabled and lines go to our own log) is cut:
// one runaway line must not grow the manager without bound.
constexpr std::size_t kMaxForwardedLogLine = 64 * 1024;

enum Stream { kOut = 0, kErr = 1, kLogStream = 2 };

std::string rfc3339_now() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

Error invalid(std::string message) { return make_error("invalid_request", std::move(message)); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

// What a spawn on the supervisor thread hands back: descriptors for the io thread to adopt
// (closed here unless taken, so a result dropped unread leaks nothing).
struct Registry::SpawnOutcome {
  std::string error;  // non-empty: the spawn failed
  pid_t pid = -1;
  int out = -1, err = -1, log = -1, in = -1, pidfd = -1;
  SpawnOutcome() = default;
  SpawnOutcome(const SpawnOutcome&) = delete;
  SpawnOutcome& operator=(const SpawnOutcome&) = delete;
  ~SpawnOutcome() {
    for (int* fd : {&out, &err, &log, &in, &pidfd}) close_fd(*fd);
  }
};

// The Supervisor and every Child, on one thread of their own. Jobs run in the order posted;
// results come back to the registry's io_context in the order the jobs ran, so (for one run)
// a stop's result is always handled before the reap that the kill caused.
class Registry::Spawner {
 public:
  explicit Spawner(const sup::SupervisorOptions& options)
      : sup(options), work_(asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}
  ~Spawner() {
    work_.reset();
    io_.stop();
    thread_.join();
    // The thread is gone: what it owned is ours now. Whatever still runs dies with us (the
    // guard would do it too; this does it before the Children release their groups).
    // A reaped leader's tree was killed in the same job that reaped it (and a release may still
    // be queued): signalling its group again could reach a reused number.
    for (auto& [id, child] : children) {
      if (!child.leader_reaped()) child.kill_tree(SIGKILL);
      child.release();
    }
    children.clear();
  }
  template <class F>
  void post(F&& f) {
    asio::post(io_, std::forward<F>(f));
  }
  // Supervisor thread only (or after the destructor joined it).
  sup::Supervisor sup;
  std::map<std::uint64_t, sup::Child> children;

 private:
  asio::io_context io_{1};
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
};

struct Registry::Run {
  explicit Run(asio::io_context& io) : deadline_timer(io), drain_timer(io), retention_timer(io) {}
  std::uint64_t id = 0;
  std::optional<std::string> host_genvm_id;
  // kSpawning: handed to the supervisor thread, its outcome not yet back.
  enum class State { kValidating, kQueued, kSpawning, kRunning, kDone } state = State::kValidating;
  std::vector<std::weak_ptr<EventSink>> sinks;
  Value last_event;
  RunRequest request;
  DebugMode mode = DebugMode::kDisabled;
  std::uint64_t cost = 0;
  std::vector<std::uint8_t> exec_data;
  std::vector<std::string> argv_tail;  // after the configured executor prefix

  // Host connection 1 (executor_protocol genvm): consume_result arrives here.
  std::unique_ptr<asio::posix::stream_descriptor> host1;
  std::optional<HostOneParser> host1_parser;
  std::optional<calldata::Bytes> consumed;

  // While running (the Child itself lives on the supervisor thread).
  pid_t pid = -1;
  const char* pending_cause = nullptr;  // a stop that arrived while spawning
  bool stopping = false, reaping = false;  // a job for this run is on the supervisor thread
  std::unique_ptr<asio::posix::stream_descriptor> pidfd, in;
  std::array<std::unique_ptr<asio::posix::stream_descriptor>, 3> streams;
  std::optional<sup::StreamCapture> out_cap, err_cap;
  std::optional<sup::LogCapture> log_cap;
  std::string forward_partial;  // capture disabled: a log line waiting for its '\n'
  asio::steady_timer deadline_timer, drain_timer;
  const char* cause = nullptr;  // set by whoever stopped it; null: it exited on its own
  bool leader_exited = false;
  bool drained = false;
  sup::WaitStatus wait;
  int watch_handle = -1;
  Clock::time_point started_at;

  // Once terminal.
  std::string artifacts[3];  // stdout, stderr, genvm_log
  asio::steady_timer retention_timer;

  Value tag(std::string_view kind, Value::Map extra = {}) const {
    extra["genvm_id"] = id;
    if (host_genvm_id) extra["host_genvm_id"] = *host_genvm_id;
    return Value::map({{std::string(kind), Value(std::move(extra))}});
  }
  bool open_streams() const {
    for (const auto& s : streams) {
      if (s) return true;
    }
    return false;
  }
};

Result<RunRequest> parse_run_request(const Value& body) {
  if (!body.is_map()) return invalid("the run request must be a map");
  // Required by the spec (GenvmRunRequest); their contents are the executor's to check.
  for (const char* key : {"selector", "message", "is_sync", "bucket_totals", "host_data", "timestamp", "host",
                          "calldata", "code", "leader_nondet_results", "initial_time_units_allocation"}) {
    if (body.find(key) == nullptr) return invalid(std::string("missing required field \"") + key + "\"");
  }
  RunRequest r;
  const Value* is_sync = body.find("is_sync");
  if (!is_sync->is_bool()) return invalid("\"is_sync\" must be a bool");
  r.is_sync = is_sync->as_bool();
  if (const Value* d = body.find("debug_mode"); d && !d->is_null()) {
    if (!d->is_string()) return invalid("\"debug_mode\" must be a string");
    r.debug_mode = d->as_string();
  }
  auto minutes = get_u64(body, "max_execution_minutes");
  if (!minutes) return invalid(minutes.error().message);
  if (*minutes) {
    // Anything past a day is cut to a day below, so clamping here cannot change the outcome
    // and keeps the multiplication in range.
    std::uint64_t m = std::min<std::uint64_t>(**minutes, 24 * 60);
    r.deadline = std::chrono::minutes(m);
  }
  if (const Value* d = body.find("deadline"); d && !d->is_null()) {
    if (!d->is_string()) return invalid("\"deadline\" must be a duration string");
    auto parsed = parse_duration(d->as_string());
    if (!parsed) return invalid(parsed.error().message);
    r.deadline = *parsed;
  }
  r.deadline = std::min(r.deadline, Millis(kMaxDeadline));
  if (const Value* h = body.find("host_genvm_id"); h && !h->is_null()) {
    if (!h->is_string()) return invalid("\"host_genvm_id\" must be a string");
    r.host_genvm_id = h->as_string();
  }
  if (const Value* e = body.find("extra_args")) {
    if (!e->is_array()) return invalid("\"extra_args\" must be an array of strings");
    for (const Value& a : e->as_array()) {
      if (!a.is_string()) return invalid("\"extra_args\" must be an array of strings");
      r.extra_args.push_back(a.as_string());
    }
  }
  if (const Value* hh = body.find("host_hello_data")) {
    if (!hh->is_array()) return invalid("\"host_hello_data\" must be an array of bytes");
    const auto& items = hh->as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_bytes()) return invalid("\"host_hello_data\" must be an array of bytes");
      // Index 1 is the consume_result socketpair, which the manager owns itself.
      if (i == 1 && !items[i].as_bytes().empty()) {
        return invalid("\"host_hello_data\"[1] must be empty: the manager owns host connection 1");
      }
    }
  }
  return r;
}

Registry::Registry(asio::io_context& io, const Config& config, Log& log, std::uint64_t mem_available_bytes)
    : io_(io),
      config_(config),
      log_(log),
      permits_total_(resolve_total_permits(config.permits, mem_available_bytes)),
      duration_seconds_({0.1, 0.5, 1, 5, 15, 60, 300, 1200, 3600}),
      peak_rss_bytes_({16e6, 64e6, 256e6, 1e9, 4e9, 16e9}) {
  // A write to the stdin of an executor that already died must be an error, not our death.
  ::signal(SIGPIPE, SIG_IGN);
  std::random_device rd;
  boot_id_ = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  sup::SupervisorOptions so;
  so.containment = config.containment;
  spawner_ = std::make_unique<Spawner>(so);
  containment_ = spawner_->sup.containment();  // fixed at construction; read here once
  watcher_ = std::make_unique<sup::TreeWatcher>();
  JsonWriter w;
  w.begin_object().key("event").string("manager_ready");
  w.key("boot_id").unsigned_number(boot_id_);
  w.key("permits_total").unsigned_number(permits_total_);
  w.key("containment").string(sup::to_string(containment_));
  w.end_object();
  log_.line(w.take());
}

Registry::~Registry() {
  // The spawner kills whatever still runs and destroys the Children before the Supervisor.
  // Results it already handed to io_ find the registry gone (alive_) if io_ runs on.
  spawner_.reset();
  alive_.reset();
  for (auto& [id, run] : runs_) {
    run->deadline_timer.cancel();
    run->drain_timer.cancel();
    run->retention_timer.cancel();
    run->pidfd.reset();
    run->in.reset();
    run->host1.reset();
    for (auto& st : run->streams) st.reset();
  }
  queue_.clear();
  runs_.clear();
}

sup::Containment Registry::containment() const { return containment_; }

std::uint64_t Registry::submit(const Value& body, const Caller& caller, std::shared_ptr<EventSink> sink) {
  std::optional<std::string> host_id;
  if (const Value* h = body.find("host_genvm_id"); h && h->is_string()) host_id = h->as_string();
  if (host_id) {
    auto it = by_host_id_.find(*host_id);
    if (it != by_host_id_.end()) {
      auto& run = runs_.at(it->second);
      (void)subscribe(run->id, sink);  // the repeat's caller hears the same events
      return run->id;
    }
  }
  auto run = std::make_shared<Run>(io_);
  run->id = next_id_++;
  run->host_genvm_id = host_id;
  run->last_event = run->tag("queued");
  if (sink) run->sinks.push_back(sink);
  runs_[run->id] = run;
  if (host_id) by_host_id_[*host_id] = run->id;
  // The reply carrying the id goes out before any event of this run.
  asio::post(io_, [this, run, body, caller] { start(run, body, caller); });
  return run->id;
}

void Registry::start(const std::shared_ptr<Run>& run, const Value& body, const Caller& caller) {
  if (run->state != Run::State::kValidating) return;  // cancelled before we got here
  if (shutting_down_) return fail_to_start(run, "manager is shutting down");
  auto req = parse_run_request(body);
  if (!req) return fail_to_start(run, req.error().message);
  run->request = std::move(*req);
  PolicyDecision d = decide_debug_mode(caller, run->request.debug_mode, config_.debug);
  log_.line(to_json(caller, run->request.debug_mode, d));
  if (d.outcome == PolicyOutcome::kRejected) return fail_to_start(run, d.reason);
  run->mode = d.granted;
  run->cost = run->request.is_sync ? config_.permits.sync : config_.permits.nondet;
  if (config_.executor_protocol == Config::ExecutorProtocol::kGenvm) {
    auto data = to_execution_data(body, run->mode);
    if (!data) return fail_to_start(run, data.error().message);
    run->exec_data = calldata::encode(*data);
    run->argv_tail = genvm_run_args(body, run->mode, run->id);
  } else {
    run->exec_data = calldata::encode(body);
    run->argv_tail = {"--debug-mode", std::string(to_string(run->mode))};
    for (const auto& a : run->request.extra_args) run->argv_tail.push_back(a);
  }
  run->state = Run::State::kQueued;
  queue_.push_back(run);
  pump();
  if (run->state == Run::State::kQueued) publish(run, run->tag("queued"));
}

void Registry::pump() {
  while (!queue_.empty() && permits_used_ + queue_.front()->cost <= permits_total_) {
    auto run = queue_.front();
    queue_.pop_front();
    permits_used_ += run->cost;
    spawn(run);
  }
}

void Registry::spawn(const std::shared_ptr<Run>& run) {
  auto sr = std::make_shared<sup::SpawnRequest>();
  sr->argv = config_.executor;
  sr->argv.insert(sr->argv.end(), run->argv_tail.begin(), run->argv_tail.end());
  int host1[2] = {-1, -1};
  if (config_.executor_protocol == Config::ExecutorProtocol::kGenvm) {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, host1) != 0) {
      permits_used_ -= run->cost;
      fail_to_start(run, std::string("socketpair: ") + std::strerror(errno));
      pump();
      return;
    }
    sr->pass_fds.emplace_back(host1[1], kExecutorHostOneFd);
    run->host1 = std::make_unique<asio::posix::stream_descriptor>(io_, host1[0]);
  }
  sup::EnvOptions eo;
  eo.pass_through = config_.env_pass_through;
  eo.define.emplace_back("GENVM_LOG_FD", std::to_string(kChildLogFd));
  sr->env = sup::build_env(eo, environ);
  sr->capture = capture(run->mode);
  sr->stdin_pipe = true;
  sr->log_fd = kChildLogFd;
  run->state = Run::State::kSpawning;
  // On the supervisor thread: the fork+exec (and its cgroup setup) no longer holds up io_.
  Spawner* sp = spawner_.get();
  std::uint64_t id = run->id;
  int child_end = host1[1];
  std::weak_ptr<int> alive = alive_;
  sp->post([this, alive, sp, run, sr, id, child_end]() mutable {
    auto out = std::make_shared<SpawnOutcome>();
    auto child = sp->sup.spawn(*sr);
    close_fd(child_end);  // the child has its copy
    if (!child) {
      out->error = child.error().to_string();
    } else {
      sup::Child& c = *child;
      // The io thread owns duplicates; the Child keeps (and later closes) its pidfd.
      auto dup = [](int fd) { return fd < 0 ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, 3); };
      out->pid = c.pid();
      out->out = dup(c.stdout_fd());
      out->err = dup(c.stderr_fd());
      out->log = dup(c.log_fd());
      out->in = dup(c.stdin_fd());
      out->pidfd = dup(c.pidfd());
      for (int fd : {c.stdout_fd(), c.stderr_fd(), c.log_fd()}) c.close_fd(fd);
      c.close_stdin();
      sp->children.emplace(id, std::move(c));
    }
    asio::post(io_, [this, alive, run, out] {
      if (!alive.expired()) on_spawned(run, out);
    });
  });
}

void Registry::on_spawned(const std::shared_ptr<Run>& run, const std::shared_ptr<SpawnOutcome>& out) {
  if (!out->error.empty()) {
    run->host1.reset();
    permits_used_ -= run->cost;
    fail_to_start(run, out->error);
    pump();
    return;
  }
  run->pid = out->pid;
  run->state = Run::State::kRunning;
  ++running_;
  run->started_at = Clock::now();
  Capture cap = capture(run->mode);
  run->out_cap.emplace(cap);
  run->err_cap.emplace(cap);
  run->log_cap.emplace(cap);
  run->watch_handle = watcher_->watch(run->pid);
  {
    JsonWriter w;
    w.begin_object().key("event").string("run_started").key("genvm_id").unsigned_number(run->id);
    w.key("pid").number(run->pid).key("debug_mode").string(to_string(run->mode));
    w.key("deadline").string(format_duration(run->request.deadline)).end_object();
    log_.line(w.take());
  }
  auto adopt = [&](int& fd) -> std::unique_ptr<asio::posix::stream_descriptor> {
    if (fd < 0) return nullptr;
    auto sd = std::make_unique<asio::posix::stream_descriptor>(io_, fd);
    fd = -1;
    return sd;
  };
  run->streams[kOut] = adopt(out->out);
  run->streams[kErr] = adopt(out->err);
  run->streams[kLogStream] = adopt(out->log);
  run->in = adopt(out->in);
  run->pidfd = adopt(out->pidfd);

  if (run->host1) {
    run->host1_parser.emplace(config_.max_message_bytes);
    read_host1(run);
  }
  publish(run, run->tag("started"));

  if (run->in) {
    auto data = std::make_shared<std::vector<std::uint8_t>>(run->exec_data);
    asio::async_write(*run->in, asio::buffer(*data), [run, data](boost::system::error_code, std::size_t) {
      // Written or refused (the executor closed its stdin): either way, EOF from here on.
      run->in.reset();
    });
  }
  for (int s = 0; s < 3; ++s) {
    if (run->streams[s]) read_stream(run, s);
  }
  if (run->pidfd) {
    run->pidfd->async_wait(asio::posix::stream_descriptor::wait_read,
                           [this, run](boost::system::error_code ec) {
                             if (ec == asio::error::operation_aborted) return;
                             on_leader_exit(run);
                           });
  }
  run->deadline_timer.expires_after(run->request.deadline);
  run->deadline_timer.async_wait([this, run](boost::system::error_code ec) {
    if (ec) return;
    stop_run(run, "deadline");
  });
  // A cancel or shutdown that arrived while the spawn was in flight.
  if (run->pending_cause) stop_run(run, run->pending_cause);
}

void Registry::read_stream(const std::shared_ptr<Run>& run, int which) {
  auto buf = std::make_shared<std::array<char, 64 * 1024>>();
  auto& sd = run->streams[which];
  sd->async_read_some(asio::buffer(*buf), [this, run, which, buf](boost::system::error_code ec, std::size_t n) {
    if (!run->streams[which]) return;  // closed by the drain timer
    std::string_view bytes(buf->data(), n);
    if (n > 0) {
      if (which == kOut) {
        run->out_cap->append(bytes);
      } else if (which == kErr) {
        run->err_cap->append(bytes);
      } else if (capture(run->mode) != Capture::kDisabled) {
        run->log_cap->append(bytes);
      } else {
        // Capture disabled: the executor's log lines go to our own log, not into the result.
        run->forward_partial.append(bytes);
        std::size_t nl;
        while ((nl = run->forward_partial.find('\n')) != std::string::npos) {
          std::string line = run->forward_partial.substr(0, nl);
          run->forward_partial.erase(0, nl + 1);
          JsonWriter w;
          w.begin_object().key("event").string("executor_log").key("genvm_id").unsigned_number(run->id);
          w.key("line").string(line).end_object();
          log_.line(w.take());
        }
        if (run->forward_partial.size() > kMaxForwardedLogLine) run->forward_partial.clear();
      }
    }
    if (ec) {
      run->streams[which].reset();
      maybe_finalize(run);
      return;
    }
    read_stream(run, which);
  });
}

void Registry::read_host1(const std::shared_ptr<Run>& run) {
  auto buf = std::make_shared<std::array<std::uint8_t, 64 * 1024>>();
  run->host1->async_read_some(asio::buffer(*buf), [this, run, buf](boost::system::error_code ec, std::size_t n) {
    if (!run->host1) return;
    if (n > 0) {
      auto out = run->host1_parser->feed(std::span<const std::uint8_t>(buf->data(), n));
      if (out.consumed) run->consumed = std::move(out.consumed);
      if (!out.reply.empty()) {
        boost::system::error_code wec;
        asio::write(*run->host1, asio::buffer(out.reply), wec);  // a few bytes: the socket takes them
      }
      if (out.error) {
        JsonWriter w;
        w.begin_object().key("event").string("executor_violation").key("genvm_id").unsigned_number(run->id);
        w.key("error").string(*out.error).end_object();
        log_.line(w.take());
        run->host1.reset();  // refused without an acknowledgement
        return;
      }
    }
    if (ec) {
      run->host1.reset();
      return;
    }
    read_host1(run);
  });
}

void Registry::on_leader_exit(const std::shared_ptr<Run>& run) {
  if (run->leader_exited || run->reaping || run->state != Run::State::kRunning) return;
  run->reaping = true;
  Spawner* sp = spawner_.get();
  std::uint64_t id = run->id;
  std::weak_ptr<int> alive = alive_;
  sp->post([this, alive, sp, run, id] {
    std::optional<sup::WaitStatus> ws;
    auto it = sp->children.find(id);
    if (it != sp->children.end()) {
      ws = it->second.try_wait();
      // The executor is done: anything it left in its tree goes now, so pipes it shared close.
      if (ws) it->second.kill_tree(SIGKILL);
    }
    asio::post(io_, [this, alive, run, ws] {
      if (alive.expired()) return;
      run->reaping = false;
      on_reaped(run, ws);
    });
  });
}

void Registry::on_reaped(const std::shared_ptr<Run>& run, std::optional<sup::WaitStatus> ws) {
  if (run->leader_exited || run->state != Run::State::kRunning) return;
  if (!ws) {
    // Readable pidfd but not yet reapable cannot happen for a leader we spawned; wait once
    // more rather than guess.
    run->pidfd->async_wait(asio::posix::stream_descriptor::wait_read, [this, run](boost::system::error_code ec) {
      if (!ec) on_leader_exit(run);
    });
    return;
  }
  run->leader_exited = true;
  run->wait = *ws;
  run->deadline_timer.cancel();
  run->drain_timer.expires_after(kDrain);
  run->drain_timer.async_wait([this, run](boost::system::error_code ec) {
    if (ec) return;
    run->drained = true;
    for (auto& s : run->streams) s.reset();
    maybe_finalize(run);
  });
  maybe_finalize(run);
}

void Registry::stop_run(const std::shared_ptr<Run>& run, const char* cause) {
  if (run->state == Run::State::kSpawning) {
    if (!run->pending_cause) run->pending_cause = cause;  // applied once the spawn is back
    return;
  }
  if (run->state != Run::State::kRunning || run->leader_exited || run->cause || run->stopping) return;
  run->stopping = true;
  Spawner* sp = spawner_.get();
  std::uint64_t id = run->id;
  std::weak_ptr<int> alive = alive_;
  sp->post([this, alive, sp, run, id, cause] {
    std::optional<sup::WaitStatus> ws;
    auto it = sp->children.find(id);
    if (it != sp->children.end()) {
      ws = it->second.try_wait();  // already exited on its own: it keeps cause `exited`
      it->second.kill_tree(SIGKILL);
    }
    asio::post(io_, [this, alive, run, ws, cause] {
      if (alive.expired()) return;
      run->stopping = false;
      if (ws) return on_reaped(run, ws);
      if (run->leader_exited || run->cause || run->state != Run::State::kRunning) return;
      run->cause = cause;
      JsonWriter w;
      w.begin_object().key("event").string("run_killed").key("genvm_id").unsigned_number(run->id);
      w.key("cause").string(cause).end_object();
      log_.line(w.take());
    });
  });
}

void Registry::maybe_finalize(const std::shared_ptr<Run>& run) {
  if (run->state != Run::State::kRunning || !run->leader_exited) return;
  if (run->open_streams() && !run->drained) return;
  finalize(run);
}

void Registry::finalize(const std::shared_ptr<Run>& run) {
  run->drain_timer.cancel();
  auto usage = watcher_->stop(run->watch_handle);
  Spawner* sp = spawner_.get();
  std::uint64_t id = run->id;
  sp->post([sp, id] {
    auto it = sp->children.find(id);
    if (it == sp->children.end()) return;
    it->second.release();
    sp->children.erase(it);
  });
  run->pidfd.reset();
  run->in.reset();
  run->host1.reset();
  for (auto& s : run->streams) s.reset();
  permits_used_ -= run->cost;
  --running_;

  auto duration_ms = static_cast<std::uint64_t>(
      std::chrono::duration_cast<Millis>(Clock::now() - run->started_at).count());
  std::uint64_t cpu_ms = std::max(run->wait.cpu_ms, usage ? usage->cpu_ms : 0);
  std::uint64_t peak_rss = std::max(run->wait.max_rss_bytes, usage ? usage->rss_bytes : 0);
  run->artifacts[0] = run->out_cap->take();
  run->artifacts[1] = run->err_cap->take();
  std::string log_text;
  for (const auto& line : run->log_cap->take()) {
    log_text += line;
    log_text += '\n';
  }
  run->artifacts[2] = std::move(log_text);

  const char* cause = run->cause ? run->cause : "exited";
  Value::Map fin;
  fin["cause"] = cause;
  // A tree we killed has no exit code of its own to report.
  bool killed_by_us = run->cause != nullptr && run->wait.signal == SIGKILL;
  fin["exit_code"] = killed_by_us ? Value() : Value(static_cast<std::int64_t>(run->wait.exit_code));
  fin["consumed_result"] = run->consumed ? Value(*run->consumed) : Value();
  Value::Map metrics;
  metrics["duration_ms"] = duration_ms;
  metrics["cpu_ms"] = cpu_ms;
  metrics["peak_rss_bytes"] = peak_rss;
  metrics["signal"] = run->wait.signal;
  metrics["debug_mode"] = std::string(to_string(run->mode));
  metrics["containment"] = std::string(sup::to_string(containment_));
  fin["metrics"] = Value(std::move(metrics));
  fin["finished_at"] = rfc3339_now();
  fin["version_major"] = 0;
  fin["version_minor"] = 0;
  fin["artifact_sizes"] = Value::map({{"stdout", run->artifacts[0].size()},
                                      {"stderr", run->artifacts[1].size()},
                                      {"genvm_log", run->artifacts[2].size()}});
  duration_seconds_.observe(static_cast<double>(duration_ms) / 1000.0);
  peak_rss_bytes_.observe(static_cast<double>(peak_rss));
  terminal(run, run->tag("finished", std::move(fin)), cause);
  pump();
}

void Registry::fail_to_start(const std::shared_ptr<Run>& run, const std::string& error) {
  terminal(run, run->tag("failed_to_start", {{"error", error}}), "failed_to_start");
}

void Registry::finish_without_process(const std::shared_ptr<Run>& run, const char* cause) {
  Value::Map fin;
  fin["cause"] = cause;
  fin["exit_code"] = Value();
  fin["consumed_result"] = Value();
  fin["finished_at"] = rfc3339_now();
  fin["version_major"] = 0;
  fin["version_minor"] = 0;
  fin["artifact_sizes"] = Value::map({{"stdout", 0}, {"stderr", 0}, {"genvm_log", 0}});
  terminal(run, run->tag("finished", std::move(fin)), cause);
}

void Registry::publish(const std::shared_ptr<Run>& run, Value event) {
  run->last_event = std::move(event);
  // Copy first: a sink may subscribe or drop others while being told.
  auto sinks = run->sinks;
  std::vector<std::weak_ptr<EventSink>> alive;
  for (auto& w : sinks) {
    if (auto s = w.lock()) {
      s->on_event(run->id, run->last_event);
      alive.push_back(w);
    }
  }
  run->sinks = std::move(alive);
}

void Registry::terminal(const std::shared_ptr<Run>& run, Value event, const std::string& outcome) {
  run->state = Run::State::kDone;
  ++outcomes_[outcome];
  {
    JsonWriter w;
    w.begin_object().key("event").string("run_terminal").key("genvm_id").unsigned_number(run->id);
    w.key("outcome").string(outcome).end_object();
    log_.line(w.take());
  }
  publish(run, std::move(event));
  run->sinks.clear();  // nothing follows a terminal event
  if (shutting_down_) {
    check_shutdown_done();
    return;
  }
  run->retention_timer.expires_after(config_.execution_retention);
  std::uint64_t id = run->id;
  run->retention_timer.async_wait([this, id](boost::system::error_code ec) {
    if (!ec) forget(id);
  });
}

void Registry::forget(std::uint64_t id) {
  auto it = runs_.find(id);
  if (it == runs_.end()) return;
  auto run = it->second;
  run->retention_timer.cancel();
  if (run->host_genvm_id) {
    auto h = by_host_id_.find(*run->host_genvm_id);
    if (h != by_host_id_.end() && h->second == id) by_host_id_.erase(h);
  }
  runs_.erase(it);
}

Result<Value> Registry::attach(std::uint64_t boot_id, std::uint64_t genvm_id, std::shared_ptr<EventSink> sink) {
  if (boot_id != boot_id_) {
    return make_error("boot_id_mismatch", "boot_id " + std::to_string(boot_id) + " is not this manager's");
  }
  auto snap = subscribe(genvm_id, std::move(sink));
  if (!snap) return snap.take_error();
  return Value::map({{"snapshot", std::move(*snap)}});
}

Result<Value> Registry::subscribe(std::uint64_t genvm_id, std::shared_ptr<EventSink> sink) {
  auto it = runs_.find(genvm_id);
  if (it == runs_.end()) return make_error("unknown_id", "no run " + std::to_string(genvm_id));
  auto& run = it->second;
  if (sink && run->state != Run::State::kDone) {
    bool already = false;
    for (auto& w : run->sinks) {
      if (w.lock() == sink) already = true;
    }
    if (!already) run->sinks.push_back(sink);
  }
  return run->last_event;
}

Status Registry::cancel(std::uint64_t genvm_id) {
  auto it = runs_.find(genvm_id);
  if (it == runs_.end()) return make_error("unknown_id", "no run " + std::to_string(genvm_id));
  auto run = it->second;
  switch (run->state) {
    case Run::State::kValidating:
      finish_without_process(run, "cancelled");
      break;
    case Run::State::kQueued:
      for (auto q = queue_.begin(); q != queue_.end(); ++q) {
        if (*q == run) {
          queue_.erase(q);
          break;
        }
      }
      finish_without_process(run, "cancelled");
      pump();  // the head may have been what held the others back
      break;
    case Run::State::kSpawning:
    case Run::State::kRunning: stop_run(run, "cancelled"); break;
    case Run::State::kDone: break;
  }
  return {};
}

Status Registry::ack(std::uint64_t genvm_id) {
  auto it = runs_.find(genvm_id);
  if (it == runs_.end()) return make_error("unknown_id", "no run " + std::to_string(genvm_id));
  if (it->second->state != Run::State::kDone) {
    return make_error("not_finished", "run " + std::to_string(genvm_id) + " has not reached a terminal event");
  }
  forget(genvm_id);
  return {};
}

bool Registry::is_terminal(std::uint64_t genvm_id) const {
  auto it = runs_.find(genvm_id);
  return it != runs_.end() && it->second->state == Run::State::kDone;
}

Result<ArtifactChunk> Registry::get_artifact(std::uint64_t genvm_id, ArtifactField field,
                                             std::uint64_t offset, std::uint32_t max_len) const {
  auto it = runs_.find(genvm_id);
  if (it == runs_.end()) return make_error("unknown_id", "no run " + std::to_string(genvm_id));
  const auto& run = it->second;
  if (run->state != Run::State::kDone) {
    return make_error("not_finished", "artifacts exist once the run is terminal");
  }
  const std::string& a = run->artifacts[static_cast<int>(field)];
  ArtifactChunk chunk;
  chunk.total_len = a.size();
  if (offset < a.size()) {
    std::size_t n = std::min<std::uint64_t>({a.size() - offset, max_len, kArtifactChunkCap});
    chunk.data = a.substr(static_cast<std::size_t>(offset), n);
  }
  return chunk;
}

void Registry::shutdown(std::function<void()> done) {
  if (shutting_down_) return;
  shutting_down_ = true;
  shutdown_done_ = std::move(done);
  log_.line("{\"event\":\"shutdown_started\"}");
  // Retained results have no reader left once we exit.
  for (auto& [id, run] : runs_) run->retention_timer.cancel();
  auto queued = std::move(queue_);
  queue_.clear();
  std::vector<std::shared_ptr<Run>> all;
  for (auto& [id, run] : runs_) all.push_back(run);
  for (auto& run : queued) finish_without_process(run, "shutdown");
  for (auto& run : all) {
    if (run->state == Run::State::kValidating) finish_without_process(run, "shutdown");
    if (run->state == Run::State::kRunning || run->state == Run::State::kSpawning) stop_run(run, "shutdown");
  }
  check_shutdown_done();
}

void Registry::check_shutdown_done() {
  if (!shutting_down_ || !shutdown_done_ || running_ > 0) return;
  for (auto& [id, run] : runs_) {
    if (run->state != Run::State::kDone) return;
  }
  log_.line("{\"event\":\"shutdown_done\"}");
  auto done = std::move(shutdown_done_);
  shutdown_done_ = nullptr;
  asio::post(io_, std::move(done));
}

RegistryStats Registry::stats() const {
  RegistryStats s;
  s.permits_total = permits_total_;
  s.permits_in_use = permits_used_;
  s.per_sync = config_.permits.sync;
  s.per_nondet = config_.permits.nondet;
  s.queued = queue_.size();
  s.running = running_;
  for (const auto& [id, run] : runs_) {
    if (run->state == Run::State::kDone) ++s.retained;
  }
  return s;
}

std::string Registry::prometheus() const {
  RegistryStats s = stats();
  std::string out;
  std::vector<std::pair<std::string, std::uint64_t>> outcomes;
  for (const char* o : {"exited", "cancelled", "deadline", "shutdown", "failed_to_start"}) {
    auto it = outcomes_.find(o);
    outcomes.emplace_back(o, it == outcomes_.end() ? 0 : it->second);
  }
  render_counter(out, "genvm_manager_runs_total", "Runs that reached their terminal event, by outcome.",
                 "outcome", outcomes);
  render_gauge(out, "genvm_manager_queue_depth", "Runs waiting for permits.", static_cast<double>(s.queued));
  render_gauge(out, "genvm_manager_running", "Executor trees alive.", static_cast<double>(s.running));
  render_gauge(out, "genvm_manager_permits_in_use", "Permits held by running runs.",
               static_cast<double>(s.permits_in_use));
  render_gauge(out, "genvm_manager_permits_total", "The permit budget.", static_cast<double>(s.permits_total));
  render_gauge(out, "genvm_manager_retained_results", "Terminal runs kept until ack or retention.",
               static_cast<double>(s.retained));
  duration_seconds_.render(out, "genvm_manager_run_duration_seconds", "Wall time from spawn to the finished event.");
  peak_rss_bytes_.render(out, "genvm_manager_run_peak_rss_bytes", "Peak resident memory of a run's process tree.");
  return out;
}

}  // namespace genvm::manager
