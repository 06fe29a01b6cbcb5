#include "node/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "common/vm_error.h"
#include "manager/config.h"
#include "manager/log.h"
#include "manager/modules.h"
#include "manager/registry.h"
#include "node/host_server.h"

namespace genvm::node {

using calldata::Value;

namespace {

std::string tail(const std::string& s, std::size_t keep) { return s.size() > keep ? s.substr(s.size() - keep) : s; }

Error io_error(const std::string& what) { return make_error("node_io", what + ": " + std::strerror(errno)); }

// Collects a run's terminal event.
struct TerminalSink : manager::EventSink {
  std::optional<Value> terminal;
  std::string kind;
  void on_event(std::uint64_t, const Value& e) override {
    if (!e.is_map() || e.as_map().empty()) return;
    const auto& [k, body] = *e.as_map().begin();
    if (k == "finished" || k == "failed_to_start") {
      kind = k;
      terminal = body;
    }
  }
};

std::atomic<int> g_interrupt{0};
static_assert(std::atomic<int>::is_always_lock_free);

}  // namespace

void request_interrupt(int sig) { g_interrupt.store(sig, std::memory_order_relaxed); }
int interrupt_signal() { return g_interrupt.load(std::memory_order_relaxed); }
Error interrupted_error(int sig) {
  const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
  return make_error("interrupted", std::string("interrupted by ") + name);
}

struct Runner::Impl {
  boost::asio::io_context io;
  manager::Log log{-1};  // the manager's JSON log lines are not the node's output
  ModuleFiles module_files;
  std::unique_ptr<manager::ModuleSet> modules;  // made on the first run when module_files.any()
  std::map<std::string, std::unique_ptr<manager::Registry>> registries;  // by executor path
  std::string dir, socket_path;
  int listen_fd = -1;
  int wake[2] = {-1, -1};

  ~Impl() {
    registries.clear();  // kills anything still running before the sockets go
    modules.reset();     // its folder (inside ours) goes before ours
    if (listen_fd >= 0) ::close(listen_fd);
    for (int fd : wake) {
      if (fd >= 0) ::close(fd);
    }
    if (!socket_path.empty()) ::unlink(socket_path.c_str());
    if (!dir.empty()) ::rmdir(dir.c_str());
  }

  Status ensure_socket() {
    if (listen_fd >= 0) return {};
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/genvm-node-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) return io_error("mkdtemp " + tmpl);
    dir = tmpl;  // mkdtemp makes it 0700: only our uid reaches the socket
    socket_path = dir + "/host.sock";
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof(addr.sun_path)) {
      return make_error("node_io", "the host socket path " + socket_path + " is too long (set TMPDIR)");
    }
    std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
    listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd < 0) return io_error("socket");
    if (::bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return io_error("bind " + socket_path);
    if (::listen(listen_fd, 8) != 0) return io_error("listen");
    if (::pipe2(wake, O_CLOEXEC) != 0) return io_error("pipe");
    return {};
  }

  manager::Registry& registry_for(const std::string& genvm) {
    auto it = registries.find(genvm);
    if (it != registries.end()) return *it->second;
    manager::Config c;
    c.executor = {genvm};  // the given binary, not a manifest line; run.rs's command line follows
    c.executor_protocol = manager::Config::ExecutorProtocol::kGenvm;
    c.execution_retention = std::chrono::minutes(1);  // we ack at once; this only bounds a leak
    // The executor's runner-directory override (docs/PROTOCOLS.md, Runners) reaches it: the
    // manager passes on only the essential environment and what its config names.
    c.env_pass_through = {"GENVM_RUNNERS_DIR", "GENVM_RUNNERS_REGISTRY"};
    auto reg = std::make_unique<manager::Registry>(io, c, log);
    reg->set_modules(modules.get());
    return *registries.emplace(genvm, std::move(reg)).first->second;
  }

  // Both modules running before a run that needs them: started on the first run, and again when
  // one was found stopped (the ModuleSet stops a module whose process exited).
  Status ensure_modules() {
    if (!modules) {
      manager::ModulesConfig mc;
      // Inside our socket folder (ensure_socket ran first): a node killed -9 leaves both, and
      // the next node's sweep (stale_host_dirs.h) removes them together once host.sock is dead.
      mc.runtime_dir = dir;
      mc.llm.default_config = module_files.llm_config;
      mc.web.default_config = module_files.web_config;
      modules = std::make_unique<manager::ModuleSet>(io, mc, log);
      for (auto& [path, reg] : registries) reg->set_modules(modules.get());
    }
    io.restart();
    io.poll();  // a module's exit noticed during the last run is handled before its state is read
    for (manager::ModuleType t : manager::kModuleTypes) {
      if (modules->state(t) == manager::ModuleState::kRunning) {
        // The ModuleSet learns of an exit on its event loop, so a module that died during the
        // last run may still show running: a socket that refuses a connection is a dead module,
        // and so is one whose process is exiting (its listener may outlive the last run's
        // connection for a moment, and a run's connection made then dies at once).
        if (!modules->process_exiting(t)) {
          auto probe = manager::connect_module_socket(modules->socket_path(t), std::chrono::milliseconds(200));
          if (probe) {
            ::close(*probe);
            continue;
          }
        }
        bool stopped = false;
        modules->stop(t, [&stopped](bool) { stopped = true; });
        while (!stopped) {
          io.restart();
          io.run_one();
        }
      }
      const std::string& file = t == manager::ModuleType::kLlm ? module_files.llm_config : module_files.web_config;
      manager::ModuleStartRequest req;
      req.type = t;
      req.user_error = file.empty();  // served by the ModuleSet itself: every call a UserError
      if (auto s = modules->start_and_wait(req); !s) {
        std::string name(manager::module_name(t));
        return make_error("module_start", "the " + name + " module did not start (--module-" + name + "-config " + file +
                                              "): " + s.error().message);
      }
    }
    return {};
  }

  // Host 0 for the life of one run: connections are served one after another until `wake`.
  // A connection left in the backlog by an earlier, dead executor reads EOF at once and the
  // loop goes on to the next, so it can never stand in for this run's executor.
  void serve(State& state, HostSession& session, std::vector<std::string>& errors) {
    for (;;) {
      pollfd p[2] = {{listen_fd, POLLIN, 0}, {wake[0], POLLIN, 0}};
      int rc = ::poll(p, 2, -1);
      if (rc < 0 && errno == EINTR) continue;
      if (rc < 0 || (p[1].revents & POLLIN)) return;
      if (!(p[0].revents & POLLIN)) continue;
      int c = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      Status s = serve_host_connection(c, state, session);
      if (!s.ok()) errors.push_back(s.error().to_string());
      ::close(c);
    }
  }
};

Runner::Runner(ModuleFiles modules) : impl_(std::make_unique<Impl>()) { impl_->module_files = std::move(modules); }
Runner::~Runner() = default;


Result<RunReport> Runner::run(const std::string& genvm, const Value& execution_data, const std::string& permissions,
                              State& state, int timeout_ms, DebugMode debug) {
  if (::access(genvm.c_str(), X_OK) != 0) {
    return make_error("genvm_missing", "the executor '" + genvm + "' is not an executable file (use --genvm PATH)");
  }
  if (!execution_data.is_map()) return make_error("node_internal", "execution data is not a map");
  if (int sig = interrupt_signal()) return interrupted_error(sig);
  if (auto s = impl_->ensure_socket(); !s) return s.take_error();
  const bool with_modules = impl_->module_files.any();
  if (with_modules) {
    if (auto s = impl_->ensure_modules(); !s) return s.take_error();
  }
  manager::Registry& reg = impl_->registry_for(genvm);

  // The GenvmRunRequest: the ExecutionData's fields the request carries (the manager derives
  // method_hosts, remaining_recursion and nested itself) plus the manager's own.
  Value::Map body = execution_data.as_map();
  for (const char* derived : {"method_hosts", "remaining_recursion", "nested"}) body.erase(derived);
  body["selector"] = Value::map({{"kind", "major"}, {"major", 0}});
  body["is_sync"] = false;
  body["no_modules"] = !with_modules;  // with modules, every run with permission n gets both
  const Value* msg = execution_data.find("message");
  const Value* dt = msg ? msg->find("datetime") : nullptr;
  body["timestamp"] = dt && dt->is_string() ? *dt : Value("2024-11-26T06:42:42.424242Z");
  body["host"] = "unix://" + impl_->socket_path;
  body["debug_mode"] = std::string(to_string(std::max(debug, DebugMode::kSafe)));  // see runner.h
  body["permissions"] = permissions;
  if (timeout_ms > 0) body["deadline"] = std::to_string(timeout_ms) + "ms";

  // Submitted first: a refused request starts nothing, and the run's executor (spawned only
  // once io runs below) finds the host socket's backlog waiting for the server thread.
  auto sink = std::make_shared<TerminalSink>();
  auto submitted = reg.submit(Value(std::move(body)), manager::Caller{true, "genvm-node", "genvm-node"}, sink);
  if (!submitted) return make_error("node_internal", "the manager refused the run request: " + submitted.error().message);
  const auto started = std::chrono::steady_clock::now();
  HostSession session;
  std::vector<std::string> host_errors;
  std::thread server([&] { impl_->serve(state, session, host_errors); });
  std::uint64_t id = submitted->genvm_id;
  // The deadline is the manager's: every run ends in a terminal event, a cancelled one too.
  bool cancelled = false;
  while (!sink->terminal) {
    if (!cancelled && interrupt_signal()) {
      (void)reg.cancel(id);
      cancelled = true;
    }
    impl_->io.restart();
    impl_->io.run_one_for(std::chrono::milliseconds(100));
  }
  const auto ended = std::chrono::steady_clock::now();
  std::uint8_t one = 1;
  while (::write(impl_->wake[1], &one, 1) < 0 && errno == EINTR) {
  }
  server.join();
  while (::read(impl_->wake[0], &one, 1) < 0 && errno == EINTR) {
  }

  if (cancelled) {
    (void)reg.ack(id);
    return interrupted_error(interrupt_signal());
  }
  RunReport out;
  out.run_us = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(ended - started).count());
  const Value& t = *sink->terminal;
  if (sink->kind == "failed_to_start") {
    const Value* e = t.find("error");
    out.stderr_text = e && e->is_string() ? e->as_string() : "the run failed to start";
    return out;
  }
  if (const Value* c = t.find("cause"); c && c->is_string()) out.timed_out = c->as_string() == "deadline";
  if (const Value* x = t.find("exit_code"); x && x->is_int()) {
    out.exit_code = static_cast<int>(x->as_int().to_int64().value_or(-1));
  }
  if (const manager::RunResult* captured = reg.result(id)) {
    out.stderr_text = tail(captured->stderr_data, kRunnerKeepStream);
    out.stdout_text = tail(captured->stdout_data, kRunnerKeepStream);
    out.stderr_bytes = captured->stderr_data.size();
    out.stdout_bytes = captured->stdout_data.size();
    out.log_entries = captured->genvm_log.size();
    const std::size_t skip = captured->genvm_log.size() > kRunnerKeepLogEntries
                                 ? captured->genvm_log.size() - kRunnerKeepLogEntries : 0;
    out.log.assign(captured->genvm_log.begin() + static_cast<std::ptrdiff_t>(skip), captured->genvm_log.end());
  }
  if (out.stderr_text.empty() && !host_errors.empty()) out.stderr_text = host_errors.front();
  if (const Value* r = t.find("consumed_result"); r && r->is_bytes() && r->as_bytes().size() > 1) {
    const Bytes& b = r->as_bytes();  // the manager's outer result-code byte, then the map
    auto v = calldata::decode(std::span<const std::uint8_t>(b.data() + 1, b.size() - 1));
    if (v && v->is_map()) {
      out.report = std::move(*v);
      if (const Value* h = out.report.find("execution_hash"); h && h->is_bytes()) out.execution_hash = h->as_bytes();
      if (const Value* k = out.report.find("kind"); k && k->is_string()) {
        if (auto code = parse_result_code_name(k->as_string())) out.kind = static_cast<int>(*code);
      }
    }
  }
  (void)reg.ack(id);
  return out;
}

}  // namespace genvm::node
