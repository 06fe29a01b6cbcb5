#include "manager/registry.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <list>
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
#include "common/json.h"
#include "manager/nested_run.h"
#include "manager/versioning.h"
#include "common/sanitizers.h"

extern char** environ;

namespace genvm::manager {

namespace asio = boost::asio;
namespace sup = genvm::supervisor;
using Clock = std::chrono::steady_clock;

namespace {

// The child fd number of the executor's JSON-lines log pipe.
constexpr int kChildLogFd = kExecutorLogFd;
// Helper processes (detect-version) share the supervisor thread's table with runs; their keys
// have the top bit set so they never meet a run id.
constexpr std::uint64_t kHelperIdBit = 1ull << 63;
// A helper that has not answered by then is killed (the public manager waits forever).
constexpr Millis kHelperTimeout{10'000};
// After the leader exits and its tree is SIGKILLed, output still in flight is read for at most
// this long; a pipe held open beyond it belongs to something outside our reach.
constexpr Millis kDrain{1000};
enum Stream { kOut = 0, kErr = 1, kLogStream = 2 };

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
  std::string owner;  // Caller::owner of the request that started it
  std::string peer;   // Caller::peer of that request: whose retention quota it counts against
  // Once terminal: what it holds (held_bytes) as counted against the retention caps, and its
  // place in retained_order_.
  std::uint64_t retained_bytes = 0;
  std::optional<std::list<std::uint64_t>::iterator> retained_pos;
  std::optional<std::string> host_genvm_id;
  // kSpawning: handed to the supervisor thread, its outcome not yet back.
  enum class State { kValidating, kQueued, kSpawning, kRunning, kDone } state = State::kValidating;
  std::vector<std::weak_ptr<EventSink>> sinks;
  Value last_event;
  RunRequest request;
  DebugMode mode = DebugMode::kDisabled;
  std::uint64_t cost = 0;
  std::vector<std::uint8_t> exec_data;
  // The resolved line (run.rs set_version): "" and 0.0 until the spawn resolves it.
  std::string version_key;
  std::uint32_t version_major = 0, version_minor = 0;
  UtcTime submitted_at, strict_deadline;
  // A run that needs modules holds both from submit to its terminal event (modules.rs's read
  // locks): a stop or restart of either waits until it is released.
  ModuleSet::Lease modules;

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
  std::optional<GenvmLogCollector> log;
  asio::steady_timer deadline_timer, drain_timer;
  const char* cause = nullptr;  // set by whoever stopped it; null: it exited on its own
  bool leader_exited = false;
  bool drained = false;
  sup::WaitStatus wait;
  int watch_handle = -1;
  Clock::time_point started_at;

  // A nested run (run_nested on its caller's host 1; nested_run.h): its caller and how many
  // delegated calls deep it is. Any run: the one callee it is blocked on.
  std::weak_ptr<Run> caller;
  std::size_t nested_depth = 0;
  std::shared_ptr<Run> callee;
  bool nested() const { return nested_depth > 0; }

  // Once finished (not after failed_to_start: run.rs keeps no result then).
  std::optional<RunResult> result;
  asio::steady_timer retention_timer;

  Value tag(std::string_view kind, Value::Map extra = {}) const {
    extra["genvm_id"] = id;
    extra["host_genvm_id"] = host_genvm_id ? Value(*host_genvm_id) : Value();
    return Value::map({{std::string(kind), Value(std::move(extra))}});
  }
  bool open_streams() const {
    for (const auto& s : streams) {
      if (s) return true;
    }
    return false;
  }
};

// A helper process (detect-version's `genvm parse-version-pattern`) while it runs.
struct Registry::Helper {
  explicit Helper(asio::io_context& io) : timer(io) {}
  std::uint64_t key = 0;
  std::uint32_t fallback = 0;
  std::string input, output;
  std::unique_ptr<asio::posix::stream_descriptor> in, out, err;
  asio::steady_timer timer;
  std::function<void(Result<std::uint32_t>)> done;
  bool ended = false;
};

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
  for (auto& [id, top] : runs_) {
    // A nested run is reached through its caller only; its pending reads end here too.
    for (Run* run = top.get(); run; run = run->callee.get()) {
      run->deadline_timer.cancel();
      run->drain_timer.cancel();
      run->retention_timer.cancel();
      run->pidfd.reset();
      run->in.reset();
      run->host1.reset();
      for (auto& st : run->streams) st.reset();
    }
  }
  queue_.clear();
  runs_.clear();
}

sup::Containment Registry::containment() const { return containment_; }

Status Registry::load_manifest() {
  if (config_.manifest_path.empty()) {
    manifest_ = Manifest{};
    return {};
  }
  auto m = manager::load_manifest(config_.manifest_path);
  if (!m) return m.take_error();
  manifest_ = std::move(*m);
  JsonWriter w;
  w.begin_object().key("event").string("manifest_loaded").key("path").string(config_.manifest_path);
  w.key("lines").begin_array();
  for (const auto& [v, line] : manifest_.lines) w.string(line.key);
  w.end_array().end_object();
  log_.line(w.take());
  return {};
}

Result<Submitted> Registry::submit(const Value& body, const Caller& caller, std::shared_ptr<EventSink> sink) {
  auto req = parse_run_request(body);
  if (!req) return req.take_error();
  // socket.rs/handlers.rs: checked before a run exists.
  ModuleSet::Lease modules;
  if (req->needs_modules()) {
    if (!modules_) return request_failure(RequestFailure::kModulesNotRunning, "modules are required but not running");
    auto lease = modules_->acquire();
    if (!lease) return lease.take_error();
    modules = std::move(*lease);
  }
  if (req->host_genvm_id) {
    auto it = by_host_id_.find(*req->host_genvm_id);
    if (it != by_host_id_.end()) {
      auto& run = runs_.at(it->second);
      // Another caller's key neither joins nor reveals that caller's run.
      if (!may_use_run(caller, run->owner, config_.ownership)) {
        return request_failure(RequestFailure::kMalformed, "host_genvm_id is in use by another caller");
      }
      (void)subscribe(run->id, sink);  // the repeat's caller hears the same events
      return Submitted{run->id, true, run->last_event};
    }
  }
  auto run = std::make_shared<Run>(io_);
  run->id = next_id_++;
  run->owner = caller.owner;
  run->peer = caller.peer;
  run->host_genvm_id = req->host_genvm_id;
  run->request = std::move(*req);
  run->modules = std::move(modules);
  run->last_event = run->tag("queued");
  run->submitted_at = utc_now();
  run->strict_deadline = run->submitted_at;
  run->strict_deadline.unix_seconds += run->request.deadline.count() / 1000;
  run->strict_deadline.nanos += static_cast<std::uint32_t>(run->request.deadline.count() % 1000) * 1'000'000;
  if (run->strict_deadline.nanos >= 1'000'000'000) {
    run->strict_deadline.nanos -= 1'000'000'000;
    ++run->strict_deadline.unix_seconds;
  }
  if (sink) run->sinks.push_back(sink);
  runs_[run->id] = run;
  if (run->host_genvm_id) by_host_id_[*run->host_genvm_id] = run->id;
  // run.rs: the strict deadline counts from the request, so a run still waiting for permits
  // can reach it too.
  run->deadline_timer.expires_after(run->request.deadline);
  run->deadline_timer.async_wait([this, run](boost::system::error_code ec) {
    if (ec) return;
    stop_run(run, "deadline");
  });
  // The reply carrying the id goes out before any event of this run.
  asio::post(io_, [this, run, caller] { start(run, caller); });
  return Submitted{run->id, false, run->last_event};
}

void Registry::start(const std::shared_ptr<Run>& run, const Caller& caller) {
  if (run->state != Run::State::kValidating) return;  // cancelled before we got here
  if (shutting_down_) return fail_to_start(run, "manager is shutting down");
  PolicyDecision d = decide_debug_mode(caller, run->request.debug_mode, config_.debug);
  log_.line(to_json(caller, run->request.debug_mode, d));
  if (d.outcome == PolicyOutcome::kRejected) return fail_to_start(run, d.reason);
  run->mode = d.granted;
  run->cost = run->request.needs_modules() ? config_.permits.nondet : config_.permits.sync;
  run->state = Run::State::kQueued;
  queue_.push_back(run);
  pump();
}

void Registry::pump() {
  while (!queue_.empty() && permits_used_ + queue_.front()->cost <= permits_total_) {
    auto run = queue_.front();
    queue_.pop_front();
    permits_used_ += run->cost;
    spawn(run);
  }
}

Result<std::vector<std::string>> Registry::executor_command(const std::shared_ptr<Run>& run) {
  std::vector<std::string> argv = config_.executor;
  if (argv.empty()) {
    // run.rs run_genvm_process: a debug reroute replaces the selector, from `safe` up only, so
    // production runs always resolve what the request states.
    ExecutorSelector selector = run->request.selector;
    if (!run->request.reroute_to.empty() && run->mode >= DebugMode::kSafe) {
      selector = ExecutorSelector{ExecutorSelector::Kind::kVersion, 0, run->request.reroute_to};
    }
    auto v = resolve_selector(manifest_, selector, run->request.timestamp);
    if (!v) return v.take_error();
    // Ours: the key becomes one path component, never a way out of the executors directory.
    if (v->key.empty() || v->key == "." || v->key == ".." || v->key.find('/') != std::string::npos ||
        v->key.find('\0') != std::string::npos) {
      return make_error("version_resolution", "version `" + v->key + "` is not an executor directory name");
    }
    if (selector.kind == ExecutorSelector::Kind::kMajor && v->version.major != selector.major) {
      JsonWriter w;
      w.begin_object().key("event").string("version_fallback").key("genvm_id").unsigned_number(run->id);
      w.key("major").unsigned_number(selector.major).key("line").string(v->key).end_object();
      log_.line(w.take(), LogLevel::kWarn);
    }
    run->version_key = v->key;
    run->version_major = v->version.major;
    run->version_minor = v->version.minor;
    argv = {config_.executors_dir + "/" + v->key + "/bin/genvm"};
  }
  if (config_.executor_protocol == Config::ExecutorProtocol::kGenvm) {
    auto args = executor_args(run->request, run->mode, run->id, /*with_modules=*/bool(run->modules));
    argv.insert(argv.end(), args.begin(), args.end());
  } else {
    argv.push_back("--debug-mode");
    argv.push_back(std::string(to_string(run->mode)));
    argv.insert(argv.end(), run->request.extra_args.begin(), run->request.extra_args.end());
  }
  return argv;
}

void Registry::spawn(const std::shared_ptr<Run>& run) {
  auto sr = std::make_shared<sup::SpawnRequest>();
  // Encoded only now (a nested run's comes with its plan): a queued run holds its request
  // once, not twice.
  if (!run->nested()) {
    if (config_.executor_protocol == Config::ExecutorProtocol::kGenvm) {
      run->exec_data = calldata::encode(to_execution_data(run->request, run->mode));
    } else {
      run->exec_data = calldata::encode(run->request.body);
    }
  }
  auto argv = executor_command(run);
  if (!argv) {
    permits_used_ -= run->cost;
    fail_to_start(run, argv.error().message);
    pump();
    return;
  }
  sr->argv = std::move(*argv);
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
  sr->env = sup::build_env(eo, environ);
  sr->capture = capture(run->mode);
  sr->stdin_pipe = true;
  sr->log_fd = kChildLogFd;
  // The backstop behind the executor's own RAM budget (config.h kDefaultExecutorMemoryMax). Not
  // in an ASan build: without a cgroup it is RLIMIT_AS, and ASan's shadow needs terabytes of it.
#if !GENVM_ADDRESS_SANITIZER
  sr->limits.memory_max_bytes = config_.executor_memory_max_bytes;
#endif
  run->state = Run::State::kSpawning;
  // On the supervisor thread: the fork+exec (and its cgroup setup) no longer holds up io_.
  Spawner* sp = spawner_.get();
  std::uint64_t id = run->id;
  int child_end = host1[1];
  std::weak_ptr<int> alive = alive_;
  // run.rs setup_module_relays: this run's own connection to each module. Made on the
  // supervisor thread too (a connect may wait for a busy module's backlog).
  std::vector<std::pair<std::string, int>> module_sockets;
  if (run->modules) {
    module_sockets = {{run->modules.socket_path(ModuleType::kLlm), kExecutorModuleLlmFd},
                      {run->modules.socket_path(ModuleType::kWeb), kExecutorModuleWebFd}};
  }
  sp->post([this, alive, sp, run, sr, id, child_end, module_sockets]() mutable {
    auto out = std::make_shared<SpawnOutcome>();
    std::vector<int> module_fds;
    for (const auto& [path, child_fd] : module_sockets) {
      auto fd = connect_module_socket(path);
      if (!fd) {
        out->error = "modules are required but not all are running (" + fd.error().message + ")";
        break;
      }
      module_fds.push_back(*fd);
      sr->pass_fds.emplace_back(*fd, child_fd);
    }
    Result<sup::Child> child = out->error.empty() ? sp->sup.spawn(*sr) : Result<sup::Child>(make_error("module_connect"));
    close_fd(child_end);  // the child has its copy
    for (int fd : module_fds) close_fd(fd);  // so do these: the connection ends with the run
    if (!out->error.empty()) {
      // told below
    } else if (!child) {
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
  std::uint64_t id = run->id;
  run->log.emplace(cap, [this, id](const LogEntry& e) {
    // Capture disabled: the executor's log goes to the manager's own log at its level.
    JsonWriter w;
    w.begin_object().key("level").string(e.level).key("event").string(e.record ? "genvm_log" : "genvm_log_raw");
    w.key("genvm_id").unsigned_number(id);
    if (e.record) {
      w.key("log");
      write_json(w, *e.record);
    } else {
      w.key("line").string(e.text);
    }
    w.end_object();
    log_.line(w.take(), parse_log_level(e.level).value_or(LogLevel::kInfo));
  });
  run->watch_handle = watcher_->watch(run->pid);
  {
    JsonWriter w;
    w.begin_object().key("event").string("run_started").key("genvm_id").unsigned_number(run->id);
    w.key("pid").number(run->pid).key("debug_mode").string(to_string(run->mode));
    w.key("version").string(run->version_key);
    w.key("deadline").string(format_duration(run->request.deadline));
    if (auto caller = run->caller.lock()) w.key("nested_in").unsigned_number(caller->id);
    w.end_object();
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
    run->host1_parser.emplace(host::kMaxHostSlice,
                              run->nested() ? HostOneParser::Role::kNested : HostOneParser::Role::kTopLevel);
    read_host1(run);
  }
  if (!run->nested()) publish(run, run->tag("started"));  // a nested run has no events of its own

  if (run->in) {
    // The write owns the bytes and frees them once written: the run keeps no copy.
    auto data = std::make_shared<std::vector<std::uint8_t>>(std::move(run->exec_data));
    run->exec_data = {};
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
  // A cancel, deadline or shutdown that arrived while the spawn was in flight.
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
      } else {
        run->log->append(bytes);
      }
    }
    if (ec) {
      if (which == kLogStream) run->log->finish();
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
    if (n > 0 && !on_host1_output(run, run->host1_parser->feed(std::span<const std::uint8_t>(buf->data(), n)))) return;
    if (ec) {
      run->host1.reset();
      return;
    }
    read_host1(run);
  });
}

bool Registry::on_host1_output(const std::shared_ptr<Run>& run, HostOneParser::Output out) {
  if (out.consumed) run->consumed = std::move(out.consumed);
  if (!out.reply.empty()) {
    boost::system::error_code wec;
    asio::write(*run->host1, asio::buffer(out.reply), wec);  // a few bytes: the socket takes them
  }
  if (out.error) {
    JsonWriter w;
    w.begin_object().key("event").string("executor_violation").key("genvm_id").unsigned_number(run->id);
    w.key("error").string(*out.error).end_object();
    log_.line(w.take(), LogLevel::kError);
    run->host1.reset();  // refused without an acknowledgement
    return false;
  }
  if (out.nested_envelope) {
    // Served inline, as run.rs does: host 1 is read again once the reply is written.
    serve_nested(run, *out.nested_envelope);
    return false;
  }
  return true;
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
  if (run->callee) stop_run(run->callee, "caller_exited");  // no one is left to read its reply
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
  // ADR-015: cancellation, the deadline and shutdown reach a chain from its outermost run.
  if (run->callee) stop_run(run->callee, cause);
  switch (run->state) {
    case Run::State::kValidating:
      finish_without_process(run, cause);
      return;
    case Run::State::kQueued:
      for (auto q = queue_.begin(); q != queue_.end(); ++q) {
        if (*q == run) {
          queue_.erase(q);
          break;
        }
      }
      finish_without_process(run, cause);
      pump();  // the head may have been what held the others back
      return;
    case Run::State::kSpawning:
      if (!run->pending_cause) run->pending_cause = cause;  // applied once the spawn is back
      return;
    case Run::State::kRunning: break;
    case Run::State::kDone: return;
  }
  if (run->leader_exited || run->cause || run->stopping) return;
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
  if (run->callee) return;  // nothing outlives a run: its callee ends first (end_nested)
  finalize(run);
}

namespace {

Value artifact_sizes(const RunResult& r) {
  std::uint64_t log_bytes = 0;
  for (const auto& i : r.genvm_log) log_bytes += i.size() + 1;
  return Value::map({{"stdout", r.stdout_data.size()}, {"stderr", r.stderr_data.size()}, {"genvm_log", log_bytes}});
}

// run.rs finished_event over its SingleGenVMContextDone.
Value::Map finished_fields(const RunResult& r, const char* cause, Value exit_code) {
  Value::Map fin;
  fin["cause"] = cause;
  fin["exit_code"] = std::move(exit_code);
  fin["consumed_result"] = r.consumed_result ? Value(*r.consumed_result) : Value();
  fin["metrics"] = r.metrics;
  fin["finished_at"] = format_rfc3339_utc(r.finished_at);
  fin["version_major"] = r.version_major;
  fin["version_minor"] = r.version_minor;
  fin["artifact_sizes"] = artifact_sizes(r);
  return fin;
}

}  // namespace

void Registry::finalize(const std::shared_ptr<Run>& run) {
  run->drain_timer.cancel();
  run->deadline_timer.cancel();
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
  if (run->nested()) {
    run->log->finish();  // capture is disabled: its last line goes to our log now
    Result<host::NestedRunReply> reply =
        run->cause ? Result<host::NestedRunReply>(make_error("nested_run", std::string("nested executor stopped: ") + run->cause))
                   : nested_reply_for_exit(run->consumed, run->wait.exit_code, run->wait.signal);
    end_nested(run, std::move(reply));
    return;
  }

  auto duration_ms = static_cast<std::uint64_t>(
      std::chrono::duration_cast<Millis>(Clock::now() - run->started_at).count());
  std::uint64_t cpu_ms = std::max(run->wait.cpu_ms, usage ? usage->cpu_ms : 0);
  std::uint64_t peak_rss = std::max(run->wait.max_rss_bytes, usage ? usage->rss_bytes : 0);
  RunResult r;
  r.finished_at = utc_now();
  r.stdout_data = run->out_cap->take();
  r.stderr_data = run->err_cap->take();
  run->log->finish();
  r.genvm_log = run->log->items();
  r.consumed_result = run->consumed;
  r.version_major = run->version_major;
  r.version_minor = run->version_minor;
  Value::Map metrics;
  metrics["duration_ms"] = duration_ms;
  metrics["cpu_ms"] = cpu_ms;
  metrics["peak_rss_bytes"] = peak_rss;
  metrics["signal"] = run->wait.signal;
  metrics["debug_mode"] = std::string(to_string(run->mode));
  metrics["containment"] = std::string(sup::to_string(containment_));
  r.metrics = Value(std::move(metrics));

  const char* cause = run->cause ? run->cause : "exited";
  // run.rs: ExitStatus::code(), which a death by any signal leaves empty.
  Value exit_code = run->wait.signal != 0 ? Value() : Value(static_cast<std::int64_t>(run->wait.exit_code));
  Value event = run->tag("finished", finished_fields(r, cause, std::move(exit_code)));
  run->result = std::move(r);
  duration_seconds_.observe(static_cast<double>(duration_ms) / 1000.0);
  peak_rss_bytes_.observe(static_cast<double>(peak_rss));
  terminal(run, std::move(event), cause);
  pump();
}

void Registry::fail_to_start(const std::shared_ptr<Run>& run, const std::string& error) {
  if (run->nested()) return end_nested(run, make_error("nested_run", error));
  run->deadline_timer.cancel();
  terminal(run, run->tag("failed_to_start", {{"error", error}}), "failed_to_start");
}

void Registry::finish_without_process(const std::shared_ptr<Run>& run, const char* cause) {
  // run.rs finish_execution with no process: no exit code, no metrics, nothing captured.
  run->deadline_timer.cancel();
  RunResult r;
  r.finished_at = utc_now();
  Value event = run->tag("finished", finished_fields(r, cause, Value()));
  run->result = std::move(r);
  terminal(run, std::move(event), cause);
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
  run->modules = ModuleSet::Lease();  // a pending module stop may go on
  ++outcomes_[outcome];
  {
    JsonWriter w;
    w.begin_object().key("event").string("run_terminal").key("genvm_id").unsigned_number(run->id);
    w.key("outcome").string(outcome).end_object();
    log_.line(w.take());
  }
  shed(*run);
  publish(run, std::move(event));
  run->sinks.clear();  // nothing follows a terminal event
  if (shutting_down_) {
    check_shutdown_done();
    return;
  }
  std::uint64_t id = run->id;
  auto it = runs_.find(id);
  if (it == runs_.end() || it->second != run) return;  // a sink acked it while being told
  run->retention_timer.expires_after(config_.execution_retention);
  run->retention_timer.async_wait([this, id](boost::system::error_code ec) {
    if (!ec) forget(id);
  });
  run->retained_bytes = held_bytes(*run);
  retained_total_ += run->retained_bytes;
  retained_by_peer_[run->peer] += run->retained_bytes;
  run->retained_pos = retained_order_.insert(retained_order_.end(), id);
  enforce_retention_caps(run->peer);
}

// A terminal run keeps what attach, get_artifact, GET /genvm/{id} and /status answer from
// (its last event, its result, its version and times), and nothing it needed to run.
void Registry::shed(Run& run) {
  run.request = RunRequest{};
  std::vector<std::uint8_t>().swap(run.exec_data);
  run.out_cap.reset();
  run.err_cap.reset();
  run.log.reset();
  run.host1_parser.reset();
  run.consumed.reset();  // the result holds it
}

// What a run holds, as the retention caps count it: every byte it keeps, the request included
// (shed() leaves it empty), plus a fixed overhead per run and per log entry.
std::uint64_t Registry::held_bytes(const Run& run) {
  constexpr std::uint64_t kPerRun = 1024, kPerEntry = 64;
  std::uint64_t n = kPerRun + run.owner.size() + run.peer.size() + run.version_key.size() + run.exec_data.size() +
                    calldata::encode(run.request.body).size() + calldata::encode(run.last_event).size();
  if (run.host_genvm_id) n += run.host_genvm_id->size();
  if (const auto& r = run.result) {
    n += r->stdout_data.size() + r->stderr_data.size() + calldata::encode(r->metrics).size();
    for (const auto& e : r->genvm_log) n += e.size() + kPerEntry;
    if (r->consumed_result) n += r->consumed_result->size();
  }
  return n;
}

// Over a cap, the oldest terminal runs go first (they were not acked): the peer's own for its
// cap, anyone's for the total. A result larger than a cap on its own is not kept at all.
void Registry::enforce_retention_caps(const std::string& peer) {
  auto evict = [&](std::uint64_t id, const char* cap) {
    auto& run = runs_.at(id);
    JsonWriter w;
    w.begin_object().key("event").string("retained_run_evicted").key("genvm_id").unsigned_number(id);
    w.key("peer").string(run->peer).key("bytes").unsigned_number(run->retained_bytes);
    w.key("cap").string(cap).end_object();
    log_.line(w.take(), LogLevel::kWarn);
    forget(id);
  };
  while (retained_by_peer_[peer] > config_.retention.max_bytes_per_peer) {
    std::optional<std::uint64_t> oldest;
    for (std::uint64_t id : retained_order_) {
      if (runs_.at(id)->peer == peer) {
        oldest = id;
        break;
      }
    }
    if (!oldest) break;
    evict(*oldest, "retention.max_bytes_per_peer");
  }
  while (retained_total_ > config_.retention.max_bytes && !retained_order_.empty()) {
    evict(retained_order_.front(), "retention.max_bytes");
  }
}

void Registry::forget(std::uint64_t id) {
  auto it = runs_.find(id);
  if (it == runs_.end()) return;
  auto run = it->second;
  run->retention_timer.cancel();
  if (run->retained_pos) {
    retained_order_.erase(*run->retained_pos);
    run->retained_pos.reset();
    retained_total_ -= run->retained_bytes;
    auto p = retained_by_peer_.find(run->peer);
    if (p != retained_by_peer_.end() && (p->second -= run->retained_bytes) == 0) retained_by_peer_.erase(p);
  }
  if (run->host_genvm_id) {
    auto h = by_host_id_.find(*run->host_genvm_id);
    if (h != by_host_id_.end() && h->second == id) by_host_id_.erase(h);
  }
  runs_.erase(it);
}

Result<Value> Registry::attach(std::uint64_t boot_id, std::uint64_t genvm_id, std::shared_ptr<EventSink> sink) {
  if (boot_id != boot_id_) return request_failure(RequestFailure::kBootIdMismatch, "boot_id_mismatch");
  auto snap = subscribe(genvm_id, std::move(sink));
  if (!snap) return snap.take_error();
  return Value::map({{"snapshot", std::move(*snap)}});
}

Result<Value> Registry::subscribe(std::uint64_t genvm_id, std::shared_ptr<EventSink> sink) {
  auto it = runs_.find(genvm_id);
  if (it == runs_.end()) return request_failure(RequestFailure::kUnknownId, "unknown_id");
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
  if (it == runs_.end()) return request_failure(RequestFailure::kUnknownId, "GenVM with id " + std::to_string(genvm_id) + " not found");
  stop_run(it->second, "cancelled");
  return {};
}

Status Registry::ack(std::uint64_t genvm_id) {
  auto it = runs_.find(genvm_id);
  if (it == runs_.end()) return request_failure(RequestFailure::kUnknownId, "unknown_id");
  if (it->second->state != Run::State::kDone) return request_failure(RequestFailure::kNotFinished, "run has not finished");
  forget(genvm_id);
  return {};
}

std::uint64_t Registry::retained_bytes(const std::string& peer) const {
  auto it = retained_by_peer_.find(peer);
  return it == retained_by_peer_.end() ? 0 : it->second;
}

const std::string* Registry::owner(std::uint64_t genvm_id) const {
  auto it = runs_.find(genvm_id);
  return it == runs_.end() ? nullptr : &it->second->owner;
}

bool Registry::is_terminal(std::uint64_t genvm_id) const {
  auto it = runs_.find(genvm_id);
  return it != runs_.end() && it->second->state == Run::State::kDone;
}

const RunResult* Registry::result(std::uint64_t genvm_id) const {
  auto it = runs_.find(genvm_id);
  if (it == runs_.end() || !it->second->result) return nullptr;
  return &*it->second->result;
}

Result<ArtifactChunk> Registry::get_artifact(std::uint64_t genvm_id, std::string_view field, std::uint64_t offset,
                                             std::uint32_t max_len) const {
  const RunResult* r = result(genvm_id);
  if (r == nullptr) return request_failure(RequestFailure::kUnknownId, "unknown_id");
  std::string log_lines;
  const std::string* a;
  if (field == "stdout") {
    a = &r->stdout_data;
  } else if (field == "stderr") {
    a = &r->stderr_data;
  } else if (field == "genvm_log") {
    for (const auto& i : r->genvm_log) log_lines += i + "\n";
    a = &log_lines;
  } else {
    return request_failure(RequestFailure::kMalformed, "unknown artifact field " + std::string(field));
  }
  ArtifactChunk chunk;
  chunk.total_len = a->size();
  if (offset < a->size()) {
    std::size_t n = std::min<std::uint64_t>({a->size() - offset, max_len, kArtifactChunkCap});
    chunk.data = a->substr(static_cast<std::size_t>(offset), n);
  }
  return chunk;
}

std::uint64_t Registry::set_permits(std::uint64_t permits) {
  std::uint64_t least = std::max(config_.permits.sync, config_.permits.nondet);
  if (permits < least) {
    JsonWriter w;
    w.begin_object().key("event").string("permits_refused").key("permits").unsigned_number(permits);
    w.key("min").unsigned_number(least).end_object();
    log_.line(w.take(), LogLevel::kWarn);
    return permits_total_;
  }
  permits_total_ = permits;
  pump();
  return permits_total_;
}

void Registry::detect_version(std::string code, const UtcTime& deployment,
                              std::function<void(Result<std::uint32_t>)> done) {
  auto major = latest_major(manifest_, deployment);
  if (!major) return done(make_error("internal", "no_executor_version_available"));
  auto line = version_for_major(manifest_, *major, deployment);
  if (!line) return done(make_error("internal", "failed_to_get_executor_version"));
  std::string path = config_.executors_dir + "/" + line->key + "/bin/genvm";
  auto h = std::make_shared<Helper>(io_);
  h->key = kHelperIdBit | next_helper_id_++;
  h->fallback = *major;
  h->input = std::move(code);
  h->done = std::move(done);
  auto sr = std::make_shared<sup::SpawnRequest>();
  sr->argv = {path, "parse-version-pattern"};
  sup::EnvOptions eo;
  eo.pass_through = config_.env_pass_through;
  sr->env = sup::build_env(eo, environ);
  sr->capture = Capture::kUnbounded;  // stdout and stderr piped; stderr is drained and dropped
  sr->stdin_pipe = true;
  Spawner* sp = spawner_.get();
  std::weak_ptr<int> alive = alive_;
  sp->post([this, alive, sp, h, sr, path] {
    auto out = std::make_shared<SpawnOutcome>();
    auto child = sp->sup.spawn(*sr);
    if (!child) {
      out->error = "running genvm command \"" + path + "\": " + child.error().message;
    } else {
      auto dup = [](int fd) { return fd < 0 ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, 3); };
      out->out = dup(child->stdout_fd());
      out->err = dup(child->stderr_fd());
      out->in = dup(child->stdin_fd());
      for (int fd : {child->stdout_fd(), child->stderr_fd()}) child->close_fd(fd);
      child->close_stdin();
      sp->children.emplace(h->key, std::move(*child));
    }
    asio::post(io_, [this, alive, h, out] {
      if (alive.expired()) return;
      if (!out->error.empty()) return end_helper(h, make_error("internal", out->error));
      auto adopt = [&](int& fd) {
        auto sd = std::make_unique<asio::posix::stream_descriptor>(io_, fd);
        fd = -1;
        return sd;
      };
      h->out = adopt(out->out);
      h->err = adopt(out->err);
      h->in = adopt(out->in);
      asio::async_write(*h->in, asio::buffer(h->input), [h](boost::system::error_code, std::size_t) { h->in.reset(); });
      auto drain_err = std::make_shared<std::function<void()>>();
      auto buf = std::make_shared<std::array<char, 4096>>();
      *drain_err = [h, buf, drain_err] {
        if (!h->err) return;
        h->err->async_read_some(asio::buffer(*buf), [h, drain_err](boost::system::error_code ec, std::size_t) {
          if (ec) {
            h->err.reset();
            *drain_err = nullptr;  // break the cycle
            return;
          }
          (*drain_err)();
        });
      };
      (*drain_err)();
      auto read_out = std::make_shared<std::function<void()>>();
      auto obuf = std::make_shared<std::array<char, 4096>>();
      *read_out = [this, h, obuf, read_out] {
        h->out->async_read_some(asio::buffer(*obuf), [this, h, obuf, read_out](boost::system::error_code ec, std::size_t n) {
          if (h->ended) {
            *read_out = nullptr;  // break the cycle: the read was cancelled by end_helper
            return;
          }
          // The answer is one short line; more than a page is not a version.
          if (h->output.size() < 4096) h->output.append(obuf->data(), std::min<std::size_t>(n, 4096 - h->output.size()));
          if (ec) {
            *read_out = nullptr;
            return end_helper(h, detected_major(h->output, h->fallback));
          }
          (*read_out)();
        });
      };
      (*read_out)();
      h->timer.expires_after(kHelperTimeout);
      h->timer.async_wait([this, h](boost::system::error_code ec) {
        if (!ec) end_helper(h, detected_major(h->output, h->fallback));
      });
    });
  });
}

void Registry::end_helper(const std::shared_ptr<Helper>& h, Result<std::uint32_t> outcome) {
  if (h->ended) return;
  h->ended = true;
  h->timer.cancel();
  h->in.reset();
  h->out.reset();
  h->err.reset();
  Spawner* sp = spawner_.get();
  std::uint64_t key = h->key;
  sp->post([sp, key] {
    auto it = sp->children.find(key);
    if (it == sp->children.end()) return;
    // Done with it either way: it printed its answer (or ran out of time).
    if (!it->second.try_wait()) it->second.kill_tree(SIGKILL);
    it->second.wait();
    it->second.release();
    sp->children.erase(it);
  });
  auto done = std::move(h->done);
  done(std::move(outcome));
}

void Registry::shutdown(std::function<void()> done) {
  if (shutting_down_) return;
  shutting_down_ = true;
  shutdown_done_ = std::move(done);
  log_.line("{\"event\":\"shutdown_started\"}");
  // Retained results have no reader left once we exit.
  for (auto& [id, run] : runs_) run->retention_timer.cancel();
  std::vector<std::shared_ptr<Run>> all;
  for (auto& [id, run] : runs_) all.push_back(run);
  for (auto& run : all) stop_run(run, "shutdown");
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
  s.retained_bytes = retained_total_;
  return s;
}

std::vector<ExecutionStatus> Registry::executions() const {
  std::vector<ExecutionStatus> out;
  for (const auto& [id, run] : runs_) {
    ExecutionStatus e;
    e.genvm_id = id;
    if (run->result) e.finished_at = run->result->finished_at;
    e.version = run->version_key;
    e.started_at = run->submitted_at;
    e.strict_deadline = run->strict_deadline;
    out.push_back(std::move(e));
  }
  return out;
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
  render_gauge(out, "genvm_manager_retained_bytes", "Bytes those runs hold, as the retention caps count them.",
               static_cast<double>(s.retained_bytes));
  std::vector<std::pair<std::string, std::uint64_t>> nested;
  for (const char* o : {"Return", "UserError", "VmError", "FatalVmError", "InternalError", "refused"}) {
    auto it = nested_outcomes_.find(o);
    nested.emplace_back(o, it == nested_outcomes_.end() ? 0 : it->second);
  }
  render_counter(out, "genvm_manager_nested_runs_total",
                 "run_nested calls served, by the callee's result kind (refused: the internal-error reply).", "outcome",
                 nested);
  duration_seconds_.render(out, "genvm_manager_run_duration_seconds", "Wall time from spawn to the finished event.");
  peak_rss_bytes_.render(out, "genvm_manager_run_peak_rss_bytes", "Peak resident memory of a run's process tree.");
  return out;
}

// ---- run_nested (nested_run.h) --------------------------------------------------------------
// The child is a Run of its own (spawned, read and reaped as any run) with no permit, no
// events, no deadline of its own and capture disabled (its log goes to the manager's log under
// its own id); its caller's stop reaches it (stop_run), and its end writes the caller's reply.

void Registry::serve_nested(const std::shared_ptr<Run>& caller, const calldata::Bytes& envelope) {
  auto plan = plan_nested_run(caller->request, envelope, caller->nested_depth);
  auto child = std::make_shared<Run>(io_);
  child->id = next_id_++;  // run.rs: a fresh GenVMId from the same counter
  child->caller = caller;
  child->nested_depth = caller->nested_depth + 1;
  child->submitted_at = utc_now();
  child->strict_deadline = caller->strict_deadline;
  caller->callee = child;
  if (!plan) return end_nested(child, plan.take_error());
  child->request = std::move(plan->request);
  child->exec_data = std::move(plan->execution_data);
  if (caller->cause || caller->stopping || shutting_down_) {
    return end_nested(child, make_error("nested_run", "the caller is being stopped"));
  }
  spawn(child);
}

void Registry::end_nested(const std::shared_ptr<Run>& child, Result<host::NestedRunReply> reply) {
  child->state = Run::State::kDone;
  std::string outcome = reply ? std::string(wire_name(reply->kind)) : "refused";
  ++nested_outcomes_[outcome];
  auto caller = child->caller.lock();
  {
    JsonWriter w;
    w.begin_object().key("event").string("nested_run_finished").key("genvm_id").unsigned_number(child->id);
    w.key("nested_in").unsigned_number(caller ? caller->id : 0).key("version").string(child->version_key);
    w.key("outcome").string(outcome);
    if (!reply) w.key("error").string(reply.error().message);
    w.end_object();
    log_.line(w.take(), reply ? LogLevel::kInfo : LogLevel::kError);
  }
  if (!caller || caller->callee != child) return;
  caller->callee.reset();
  if (caller->host1 && !caller->leader_exited) {
    auto frame = std::make_shared<std::vector<std::uint8_t>>(nested_reply_frame(reply ? *reply : nested_internal_error()));
    asio::async_write(*caller->host1, asio::buffer(*frame), [this, caller, frame](boost::system::error_code ec, std::size_t) {
      if (!caller->host1) return;
      if (ec) {
        caller->host1.reset();
        return;
      }
      caller->host1_parser->nested_replied();
      if (on_host1_output(caller, caller->host1_parser->feed({}))) read_host1(caller);
    });
  }
  maybe_finalize(caller);
  check_shutdown_done();
}

}  // namespace genvm::manager
