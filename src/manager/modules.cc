#include "manager/modules.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/exe_dir.h"
#include "common/module/server.h"
#include "manager/protocol.h"

extern char** environ;

namespace genvm::manager {

namespace asio = boost::asio;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr auto kPollPeriod = std::chrono::milliseconds(25);  // while waiting for a socket to accept
constexpr std::size_t kMaxStderrLine = 4096;                 // a longer line is cut (the log stays bounded)

Error bad_request(std::string m) { return make_error("bad_request", std::move(m)); }
Error module_error(std::string m) { return make_error("module_start", std::move(m)); }

bool executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0; }

std::string describe_wait_status(int st) {
  if (WIFEXITED(st)) return "exited with code " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st)) return std::string("killed by signal ") + ::strsignal(WTERMSIG(st));
  return "ended";
}

// A non-blocking connect: true when the module's listener took the connection.
bool socket_accepts(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

const JsonValue* member(const JsonValue& body, std::string_view key) { return body.is_object() ? body.find(key) : nullptr; }

Result<ModuleType> module_type_of(const JsonValue& body) {
  if (!body.is_object()) return bad_request("the body must be a JSON object");
  const JsonValue* t = body.find("module_type");
  if (!t) return bad_request("missing field `module_type`");
  auto type = t->is_string() ? parse_module_type(t->text()) : std::nullopt;
  if (!type) return bad_request("module_type: must be \"llm\" or \"web\"");
  return *type;
}

Result<bool> optional_bool(const JsonValue& body, std::string_view key) {
  const JsonValue* v = member(body, key);
  if (!v) return false;
  if (v->kind() != JsonValue::Kind::kBool) return bad_request(std::string(key) + ": must be true or false");
  return v->as_bool();
}

}  // namespace

std::string_view module_name(ModuleType t) { return t == ModuleType::kLlm ? "llm" : "web"; }

std::optional<ModuleType> parse_module_type(std::string_view s) {
  if (s == "llm" || s == "Llm") return ModuleType::kLlm;
  if (s == "web" || s == "Web") return ModuleType::kWeb;
  return std::nullopt;
}

std::string_view to_string(ModuleState s) {
  switch (s) {
    case ModuleState::kStopped: return "stopped";
    case ModuleState::kStarting: return "starting";
    case ModuleState::kRunning: return "running";
    case ModuleState::kStopping: return "stopping";
  }
  return "stopped";
}

Result<ModuleStartRequest> parse_module_start_request(const JsonValue& body) {
  auto type = module_type_of(body);
  if (!type) return type.take_error();
  ModuleStartRequest r;
  r.type = *type;
  if (const JsonValue* c = body.find("config"); c && c->kind() != JsonValue::Kind::kNull) {
    if (!c->is_object()) return bad_request("config: must be an object or null");
    r.config = *c;
  }
  auto user_error = optional_bool(body, "user_error");
  if (!user_error) return user_error.take_error();
  auto allow_empty = optional_bool(body, "allow_empty_backends");
  if (!allow_empty) return allow_empty.take_error();
  r.user_error = *user_error;
  r.allow_empty_backends = *allow_empty;
  return r;
}

Result<ModuleType> parse_module_stop_request(const JsonValue& body) { return module_type_of(body); }

Result<int> connect_module_socket(const std::string& path, Millis timeout) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return make_error("module_connect", "socket path too long: " + path);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error("module_connect", std::string("socket: ") + std::strerror(errno));
  // A unix connect waits on a full backlog for SO_SNDTIMEO; the option is cleared afterwards,
  // since the executor's writes on this socket must never time out.
  timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int rc;
  do {
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int e = errno;
    ::close(fd);
    return make_error("module_connect", "connect " + path + ": " + std::strerror(e));
  }
  timeval none{0, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, sizeof none);
  return fd;
}

// One instance of a module: a child process, or (user_error) a listener served by this process.
struct ModuleSet::Lease::Slot {
  explicit Slot(asio::io_context& io) : timer(io) {}
  ModuleType type = ModuleType::kLlm;
  ModuleState state = ModuleState::kStarting;
  std::string socket_path, written_config;
  pid_t pid = -1;  // -1: served in this process (user_error)
  std::unique_ptr<asio::posix::stream_descriptor> pidfd, err;
  std::string err_partial, last_err_line;
  std::array<char, 4096> err_buf{};
  asio::steady_timer timer;
  SteadyClock::time_point start_deadline;
  std::size_t leases = 0;
  bool exited = false;
  Done start_done;
  std::vector<std::function<void()>> stopped_waiters;
  std::unique_ptr<module::ModuleListener> listener;
  std::thread serve_thread;
  std::weak_ptr<ModuleSet::Impl> owner;
};
using Slot = ModuleSet::Lease::Slot;

struct ModuleSet::Impl : std::enable_shared_from_this<ModuleSet::Impl> {
  Impl(asio::io_context& i, ModulesConfig c, Log& l) : io(i), cfg(std::move(c)), log(l), exe_dir(executable_dir()) {}

  asio::io_context& io;
  ModulesConfig cfg;
  Log& log;
  std::string exe_dir;
  std::string dir;  // the private directory, made on the first start
  std::shared_ptr<Slot> slots[2];

  std::shared_ptr<Slot>& slot(ModuleType t) { return slots[t == ModuleType::kLlm ? 0 : 1]; }
  const ModuleProgram& program(ModuleType t) const { return t == ModuleType::kLlm ? cfg.llm : cfg.web; }

  void log_event(std::string_view event, ModuleType t, LogLevel level, std::initializer_list<std::pair<const char*, std::string>> extra = {}) {
    JsonWriter w;
    w.begin_object().key("event").string(event).key("module").string(module_name(t));
    for (const auto& [k, v] : extra) w.key(k).string(v);
    w.end_object();
    log.line(w.take(), level);
  }

  Status ensure_dir() {
    if (!dir.empty()) return {};
    std::string base = cfg.runtime_dir;
    if (base.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      base = tmp && *tmp ? tmp : "/tmp";
    }
    std::string tmpl = base + "/genvm-modules-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) return module_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
    dir = tmpl;  // 0700: only this uid reaches the sockets
    return {};
  }

  Result<std::string> binary_for(ModuleType t) const {
    std::string name = "genvm-module-" + std::string(module_name(t));
    const std::string& configured = program(t).binary;
    if (!configured.empty()) {
      std::string path = expand_exe_dir(configured, exe_dir);
      if (!executable(path)) return module_error("the module binary " + path + " is not an executable file");
      return path;
    }
    for (std::string path : {exe_dir + "/" + name, exe_dir + "/../" + name + "/" + name}) {
      if (executable(path)) return path;
    }
    return module_error("no " + name + " beside " + exe_dir + " (set modules." + std::string(module_name(t)) + ".binary)");
  }

  Result<std::string> config_for(const ModuleStartRequest& req, Slot& s) {
    if (!req.config) {
      std::string path = program(req.type).default_config;
      if (path.empty()) path = "${exeDir}/../config/genvm-module-" + std::string(module_name(req.type)) + ".yaml";
      return expand_exe_dir(path, exe_dir);
    }
    // JSON is YAML: the module reads the object as its YAML configuration.
    std::string path = dir + "/" + std::string(module_name(req.type)) + "-config.json";
    JsonWriter w;
    write_json(w, *req.config);
    std::ofstream out(path, std::ios::trunc);
    out << w.take();
    out.close();
    if (!out) return module_error("cannot write " + path);
    s.written_config = path;
    return path;
  }

  // Posts `done(st)` so a caller never sees its callback run inside its own call.
  void post_done(Done done, Status st) {
    if (done) asio::post(io, [done = std::move(done), st = std::move(st)]() mutable { done(std::move(st)); });
  }

  void start(const ModuleStartRequest& req, Done done) {
    if (slot(req.type)) return post_done(std::move(done), make_error("module_already_running", "module_already_running"));
    if (auto s = ensure_dir(); !s) return post_done(std::move(done), s);
    auto s = std::make_shared<Slot>(io);
    s->type = req.type;
    s->owner = weak_from_this();
    s->socket_path = dir + "/" + std::string(module_name(req.type)) + ".sock";
    ::unlink(s->socket_path.c_str());
    if (req.user_error) return start_user_error(s, std::move(done));
    auto binary = binary_for(req.type);
    if (!binary) return post_done(std::move(done), binary.take_error());
    auto config = config_for(req, *s);
    if (!config) return post_done(std::move(done), config.take_error());
    if (req.allow_empty_backends) log_event("module_allow_empty_backends_ignored", req.type, LogLevel::kWarn);
    if (auto st = spawn(*s, *binary, *config); !st) {
      remove_files(*s);
      return post_done(std::move(done), st);
    }
    slot(req.type) = s;
    s->start_done = std::move(done);
    s->start_deadline = SteadyClock::now() + cfg.start_timeout;
    log_event("module_spawned", req.type, LogLevel::kInfo,
              {{"binary", *binary}, {"config", *config}, {"pid", std::to_string(s->pid)}});
    watch_exit(s);
    read_stderr(s);
    poll_ready(s);
  }

  // modules.rs create_user_error_stream_handler, served on the module's socket by this process.
  void start_user_error(const std::shared_ptr<Slot>& s, Done done) {
    auto l = module::ModuleListener::bind("unix://" + s->socket_path);
    if (!l) return post_done(std::move(done), module_error(l.error().to_string()));
    s->listener = std::move(*l);
    module::ModuleListener* listener = s->listener.get();
    s->serve_thread = std::thread([listener] {
      listener->serve([](const module::Hello&, const Value&) {
        return module::Answer::user_error({"MODULE_USER_ERROR"});
      });
    });
    s->state = ModuleState::kRunning;
    slot(s->type) = s;
    log_event("module_started", s->type, LogLevel::kInfo, {{"mode", "user_error"}});
    post_done(std::move(done), {});
  }

  Status spawn(Slot& s, const std::string& binary, const std::string& config) {
    std::vector<std::string> args = {binary, "--config", config, "--bind", "unix://" + s.socket_path, "--die-with-parent"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) return module_error(std::string("pipe: ") + std::strerror(errno));
    int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) {
      int e = errno;
      ::close(err[0]);
      ::close(err[1]);
      if (devnull >= 0) ::close(devnull);
      return module_error(std::string("fork: ") + std::strerror(e));
    }
    if (pid == 0) {
      // Only async-signal-safe calls from here to exec.
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(127);
      if (devnull >= 0) ::dup2(devnull, 0);
      ::dup2(err[1], 1);
      ::dup2(err[1], 2);
      ::syscall(SYS_close_range, 3U, ~0U, 0U);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::signal(SIGPIPE, SIG_DFL);
      ::execve(argv[0], argv.data(), environ);
      ::_exit(127);
    }
    ::setpgid(pid, pid);  // also here, so a kill of the group never races the child's own call
    ::close(err[1]);
    if (devnull >= 0) ::close(devnull);
    s.pid = pid;
    s.err = std::make_unique<asio::posix::stream_descriptor>(io, err[0]);
    int pfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pfd < 0) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return module_error(std::string("pidfd_open: ") + std::strerror(errno));
    }
    s.pidfd = std::make_unique<asio::posix::stream_descriptor>(io, pfd);
    return {};
  }

  void watch_exit(const std::shared_ptr<Slot>& s) {
    std::weak_ptr<Impl> self = weak_from_this();
    s->pidfd->async_wait(asio::posix::stream_descriptor::wait_read, [self, s](boost::system::error_code ec) {
      auto impl = self.lock();
      if (ec || !impl) return;
      impl->on_exit(s);
    });
  }

  void read_stderr(const std::shared_ptr<Slot>& s) {
    std::weak_ptr<Impl> self = weak_from_this();
    s->err->async_read_some(asio::buffer(s->err_buf), [self, s](boost::system::error_code ec, std::size_t n) {
      auto impl = self.lock();
      if (!impl) return;
      if (n > 0) impl->on_stderr(*s, std::string_view(s->err_buf.data(), n));
      if (ec) {
        if (!s->err_partial.empty()) impl->on_stderr(*s, "\n");
        return;
      }
      impl->read_stderr(s);
    });
  }

  void on_stderr(Slot& s, std::string_view bytes) {
    for (char c : bytes) {
      if (c != '\n') {
        if (s.err_partial.size() < kMaxStderrLine) s.err_partial.push_back(c);
        continue;
      }
      if (s.err_partial.empty()) continue;
      s.last_err_line = std::move(s.err_partial);
      s.err_partial.clear();
      log_event("module_log", s.type, LogLevel::kInfo, {{"line", s.last_err_line}});
    }
  }

  void poll_ready(const std::shared_ptr<Slot>& s) {
    if (s->state != ModuleState::kStarting) return;
    if (socket_accepts(s->socket_path)) {
      s->state = ModuleState::kRunning;
      log_event("module_started", s->type, LogLevel::kInfo, {{"pid", std::to_string(s->pid)}});
      post_done(std::move(s->start_done), {});
      s->start_done = nullptr;
      return;
    }
    if (SteadyClock::now() >= s->start_deadline) {
      fail_start(*s, "did not accept on its socket within " + format_duration(cfg.start_timeout));
      terminate(s, /*force=*/true);
      return;
    }
    std::weak_ptr<Impl> self = weak_from_this();
    s->timer.expires_after(kPollPeriod);
    s->timer.async_wait([self, s](boost::system::error_code ec) {
      auto impl = self.lock();
      if (ec || !impl) return;
      impl->poll_ready(s);
    });
  }

  void fail_start(Slot& s, const std::string& why) {
    if (!s.start_done) return;
    std::string message = "genvm-module-" + std::string(module_name(s.type)) + " " + why;
    if (!s.last_err_line.empty()) message += ": " + s.last_err_line;
    log_event("module_start_failed", s.type, LogLevel::kError, {{"error", message}});
    post_done(std::move(s.start_done), module_error(message));
    s.start_done = nullptr;
  }

  void on_exit(const std::shared_ptr<Slot>& s) {
    int st = 0;
    ::waitpid(s->pid, &st, 0);
    s->exited = true;
    ::kill(-s->pid, SIGKILL);  // whatever the module left in its group
    s->timer.cancel();
    // The rest of its output is read before the failure is told (the line says why).
    if (s->err) {
      boost::system::error_code ignored;
      s->err->non_blocking(true, ignored);
      for (;;) {
        auto n = s->err->read_some(asio::buffer(s->err_buf), ignored);
        if (ignored || n == 0) break;
        on_stderr(*s, std::string_view(s->err_buf.data(), n));
      }
      if (!s->err_partial.empty()) on_stderr(*s, "\n");
    }
    std::string how = describe_wait_status(st);
    if (s->state == ModuleState::kStarting) {
      fail_start(*s, how + " before it accepted on its socket");
    } else if (s->state == ModuleState::kRunning) {
      log_event("module_exited", s->type, LogLevel::kError, {{"status", how}});
    } else {
      log_event("module_stopped", s->type, LogLevel::kInfo, {{"status", how}});
    }
    finish(s);
  }

  // The instance is gone: its files are removed and every stop waiter is told.
  void finish(const std::shared_ptr<Slot>& s) {
    s->state = ModuleState::kStopped;
    if (slot(s->type) == s) slot(s->type).reset();
    remove_files(*s);
    s->pidfd.reset();
    s->err.reset();
    for (auto& w : s->stopped_waiters) asio::post(io, std::move(w));
    s->stopped_waiters.clear();
  }

  void remove_files(Slot& s) {
    ::unlink(s.socket_path.c_str());
    if (!s.written_config.empty()) ::unlink(s.written_config.c_str());
  }

  // SIGTERM to the group (force: SIGKILL), SIGKILL after stop_timeout; finish() on exit. An
  // in-process listener stops at once.
  void terminate(const std::shared_ptr<Slot>& s, bool force) {
    if (s->pid < 0) {
      stop_listener(*s);
      log_event("module_stopped", s->type, LogLevel::kInfo, {{"mode", "user_error"}});
      finish(s);
      return;
    }
    if (s->exited) return;
    ::kill(-s->pid, force ? SIGKILL : SIGTERM);
    if (force) return;
    std::weak_ptr<Impl> self = weak_from_this();
    s->timer.expires_after(cfg.stop_timeout);
    s->timer.async_wait([self, s](boost::system::error_code ec) {
      if (ec || !self.lock() || s->exited) return;
      ::kill(-s->pid, SIGKILL);
    });
  }

  void stop_listener(Slot& s) {
    if (!s.listener) return;
    s.listener->stop();
    if (s.serve_thread.joinable()) s.serve_thread.join();
    s.listener.reset();
  }

  void stop(ModuleType t, std::function<void(bool)> done) {
    auto s = slot(t);
    if (!s) {
      if (done) asio::post(io, [done] { done(false); });
      return;
    }
    if (done) s->stopped_waiters.push_back([done] { done(true); });
    if (s->state == ModuleState::kStopping) return;
    if (s->state == ModuleState::kStarting) fail_start(*s, "was stopped before it accepted on its socket");
    s->state = ModuleState::kStopping;
    s->timer.cancel();
    log_event("module_stopping", t, LogLevel::kInfo, {{"leases", std::to_string(s->leases)}});
    if (s->leases == 0) terminate(s, false);
  }

  void released(const std::shared_ptr<Slot>& s) {
    if (s->leases == 0 && s->state == ModuleState::kStopping) terminate(s, false);
  }

  ~Impl() {
    for (auto& s : slots) {
      if (!s) continue;
      if (s->pid < 0) {
        stop_listener(*s);
      } else if (!s->exited) {
        ::kill(-s->pid, SIGKILL);
        ::waitpid(s->pid, nullptr, 0);
        s->exited = true;
      }
      s->timer.cancel();
      s->pidfd.reset();
      s->err.reset();
      remove_files(*s);
    }
    if (!dir.empty()) ::rmdir(dir.c_str());
  }
};

ModuleSet::ModuleSet(asio::io_context& io, ModulesConfig config, Log& log)
    : impl_(std::make_shared<Impl>(io, std::move(config), log)) {}

ModuleSet::~ModuleSet() = default;

void ModuleSet::start(const ModuleStartRequest& req, Done done) { impl_->start(req, std::move(done)); }

void ModuleSet::restart(const ModuleStartRequest& req, Done done) {
  std::weak_ptr<Impl> self = impl_;
  impl_->stop(req.type, [self, req, done = std::move(done)](bool) mutable {
    auto impl = self.lock();
    if (!impl) return;
    impl->start(req, std::move(done));
  });
}

void ModuleSet::stop(ModuleType t, std::function<void(bool)> done) { impl_->stop(t, std::move(done)); }

void ModuleSet::autostart(Done done) {
  std::vector<ModuleType> todo;
  for (ModuleType t : kModuleTypes) {
    if (impl_->program(t).autostart) todo.push_back(t);
  }
  // One after the other, so a failure is reported for the module that failed.
  auto step = std::make_shared<std::function<void(std::size_t)>>();
  std::weak_ptr<Impl> self = impl_;
  *step = [self, todo, done = std::move(done), step](std::size_t i) mutable {
    auto impl = self.lock();
    if (!impl) return;
    if (i == todo.size()) {
      if (done) done({});
      *step = nullptr;  // breaks the cycle
      return;
    }
    ModuleStartRequest req;
    req.type = todo[i];
    impl->start(req, [step, i, done](Status s) mutable {
      if (!s) {
        if (done) done(std::move(s));
        *step = nullptr;
        return;
      }
      (*step)(i + 1);
    });
  };
  (*step)(0);
}

Status ModuleSet::start_and_wait(const ModuleStartRequest& req) {
  std::optional<Status> result;
  start(req, [&result](Status s) { result = std::move(s); });
  while (!result) {
    if (impl_->io.stopped()) impl_->io.restart();
    impl_->io.run_one();
  }
  return std::move(*result);
}

ModuleState ModuleSet::state(ModuleType t) const {
  const auto& s = impl_->slot(t);
  return s ? s->state : ModuleState::kStopped;
}

namespace {

// /proc/<pid>/stat's state and flags (fields 3 and 9; the command name, field 2, may hold
// spaces and parentheses, so fields count from its last ')') and /proc/<pid>/status's pending
// signal masks: see ModuleSet::process_exiting.
bool proc_exiting(pid_t pid) {
  constexpr unsigned long kPfExiting = 0x4;    // include/linux/sched.h
  constexpr unsigned long kSigKill = 1ul << 8;  // SIGKILL (9) in the SigPnd/ShdPnd masks
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;  // reaped by someone: gone
  auto close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(line.substr(close + 1));
  std::string state, skip;
  unsigned long flags = 0;
  fields >> state;
  for (int i = 0; i < 5; ++i) fields >> skip;  // ppid pgrp session tty_nr tpgid
  fields >> flags;
  if (state == "Z" || state == "X" || (flags & kPfExiting)) return true;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  while (std::getline(status, line)) {
    if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0) {
      if (std::strtoul(line.c_str() + 7, nullptr, 16) & kSigKill) return true;
    }
  }
  return false;
}

}  // namespace

bool ModuleSet::process_exiting(ModuleType t) const {
  const auto& s = impl_->slot(t);
  if (!s || s->pid < 0 || s->exited) return false;
  return proc_exiting(s->pid);
}

std::string ModuleSet::socket_path(ModuleType t) const {
  const auto& s = impl_->slot(t);
  return s && s->state == ModuleState::kRunning ? s->socket_path : std::string();
}

Result<ModuleSet::Lease> ModuleSet::acquire() {
  auto llm = impl_->slot(ModuleType::kLlm), web = impl_->slot(ModuleType::kWeb);
  if (!llm || !web || llm->state != ModuleState::kRunning || web->state != ModuleState::kRunning) {
    return request_failure(RequestFailure::kModulesNotRunning, "modules are required but not running");
  }
  ++llm->leases;
  ++web->leases;
  Lease l;
  l.llm_ = std::move(llm);
  l.web_ = std::move(web);
  return l;
}

ModuleSet::Lease::Lease(Lease&& o) noexcept : llm_(std::move(o.llm_)), web_(std::move(o.web_)) {}

ModuleSet::Lease& ModuleSet::Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    release();
    llm_ = std::move(o.llm_);
    web_ = std::move(o.web_);
  }
  return *this;
}

ModuleSet::Lease::~Lease() { release(); }

void ModuleSet::Lease::release() {
  for (auto* p : {&llm_, &web_}) {
    std::shared_ptr<Slot> s = std::move(*p);
    p->reset();
    if (!s) continue;
    --s->leases;
    if (auto impl = s->owner.lock()) impl->released(s);
  }
}

const std::string& ModuleSet::Lease::socket_path(ModuleType t) const {
  static const std::string kNone;
  const auto& s = t == ModuleType::kLlm ? llm_ : web_;
  return s ? s->socket_path : kNone;
}

}  // namespace genvm::manager
