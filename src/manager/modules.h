// The LLM and web modules a manager owns (issue 16; the public manager's modules.rs runs them
// inside its own process, ours runs our module binaries as child processes):
//
//   ModulesConfig mc;                                   // config.h; every field has a default
//   mc.web.binary = "/opt/genvm/bin/genvm-module-web"; // empty: found beside this program
//   ModuleSet modules(io, mc, log);                     // starts nothing yet
//   modules.start({.type = ModuleType::kWeb}, [](Status s) { ... });  // async, on io's thread
//   registry.set_modules(&modules);                     // registry.h: runs now get connections
//   ...
//   modules.stop(ModuleType::kWeb, [](bool was_running) { ... });
//
// A program that drives io itself between calls (the node) may use start_and_wait() instead of
// start(): it runs io until the module answers or fails.
//
// Contract:
//  - At most one process per module type: `<binary> --config FILE --bind unix://<private dir>/
//    <type>.sock --die-with-parent`, in its own process group, with PR_SET_PDEATHSIG(SIGTERM)
//    (it dies with the thread that started it: start modules from a thread that lives as long
//    as the ModuleSet), the manager's environment (provider keys come from it), stdin
//    /dev/null, stderr read line by line into the manager's log (`module_log`). FILE is the
//    request's inline config written as JSON into the private directory, or, for config null,
//    the program's default_config (${exeDir} there is this program's directory).
//  - A start answers once the socket accepts a connection (kRunning), or fails when the process
//    exits first (the error carries its last stderr line) or start_timeout passes (the process
//    group is killed). Starting a type that is not stopped fails with "module_already_running"
//    (modules.rs). A module that exits later is logged (`module_exited`) and is stopped.
//  - Runs hold leases (acquire()): a lease needs both modules running (modules.rs
//    get_module_locks), else it fails with RequestFailure::kModulesNotRunning. stop() and
//    restart() wait until every lease on that module is released (the public write lock waits
//    for every run's read lock); meanwhile the module is kStopping and acquire() fails. Stop:
//    SIGTERM to the group, SIGKILL after stop_timeout, then the process is reaped.
//  - user_error: true starts no process: the manager itself serves the socket, reading each
//    hello and answering every request UserError {causes: ["MODULE_USER_ERROR"], ctx: {}}
//    (modules.rs create_user_error_stream_handler). allow_empty_backends is passed on as
//    nothing: our LLM module refuses a configuration with no usable backend (docs/PROTOCOLS.md).
//  - Not thread-safe: every call on io's thread, except connect_module_socket() and a Lease's
//    socket_path(), which any thread may call. The destructor SIGKILLs every module group and
//    removes the private directory.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "common/json.h"
#include "common/result.h"
#include "manager/config.h"
#include "manager/log.h"

namespace genvm::manager {

enum class ModuleType { kLlm, kWeb };
inline constexpr ModuleType kModuleTypes[] = {ModuleType::kLlm, ModuleType::kWeb};
std::string_view module_name(ModuleType t);  // "llm", "web"
// "llm" / "web" (manager-api.yaml) or "Llm" / "Web" (modules.rs's serde variant names).
std::optional<ModuleType> parse_module_type(std::string_view s);

// The body of POST /module/start and /module/restart (modules.rs StartRequest).
struct ModuleStartRequest {
  ModuleType type = ModuleType::kLlm;
  std::optional<JsonValue> config;  // an inline configuration (a JSON object); nullopt: the default file
  bool user_error = false;
  bool allow_empty_backends = false;
};
// {module_type, config?, user_error?, allow_empty_backends?}: config null or absent is the
// default file; unknown keys are ignored (serde's default). Errors code "bad_request".
Result<ModuleStartRequest> parse_module_start_request(const JsonValue& body);
// POST /module/stop's {module_type}.
Result<ModuleType> parse_module_stop_request(const JsonValue& body);

enum class ModuleState { kStopped, kStarting, kRunning, kStopping };
// /status's llm_module / web_module: "stopped", "starting", "running", "stopping".
std::string_view to_string(ModuleState s);

// A connected, blocking unix socket to a module (SOCK_CLOEXEC; the caller owns it), or an
// error "module_connect". The connect waits at most `timeout` for the module's backlog.
Result<int> connect_module_socket(const std::string& path, Millis timeout = std::chrono::seconds(5));

class ModuleSet {
 public:
  ModuleSet(boost::asio::io_context& io, ModulesConfig config, Log& log);
  ~ModuleSet();
  ModuleSet(const ModuleSet&) = delete;
  ModuleSet& operator=(const ModuleSet&) = delete;

  using Done = std::function<void(Status)>;
  // /module/start: `done` on io's thread once the module answers, or with the error.
  void start(const ModuleStartRequest& req, Done done);
  // /module/restart: stop (waiting for leases) if not stopped, then start.
  void restart(const ModuleStartRequest& req, Done done);
  // /module/stop: `done(true)` once it is stopped, `done(false)` if it was not running
  // (module_stopped / module_not_running). A module still starting is stopped too.
  void stop(ModuleType t, std::function<void(bool was_running)> done);
  // Starts the modules whose ModuleProgram::autostart is set, with their default config;
  // `done` gets the first failure or ok.
  void autostart(Done done);
  // Runs io (io.run_one) until start() is done. Never call it from a handler io runs.
  Status start_and_wait(const ModuleStartRequest& req);

  ModuleState state(ModuleType t) const;
  // Whether the module's process is on its way out though io has not seen it exit yet: a
  // SIGKILL pending, its exit begun (/proc: PF_EXITING) or done (a zombie). Such a process may
  // still hold its listening socket for a while (a loaded machine can preempt the exit between
  // closing a run's connection and closing the listener), so a probe connection succeeds and a
  // new run's connection dies on its first use. False for a running module, a stopped one and
  // the in-process user_error listener.
  bool process_exiting(ModuleType t) const;
  // The module's socket path while it is running, else empty.
  std::string socket_path(ModuleType t) const;

  // What a run needing modules holds from submit to its terminal event. Move-only; releasing
  // it (destruction) lets a pending stop or restart of either module go on.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&&) noexcept;
    Lease& operator=(Lease&&) noexcept;
    ~Lease();
    explicit operator bool() const { return bool(llm_) && bool(web_); }
    // Where this run's connection to the module goes (connect_module_socket); safe on any thread.
    const std::string& socket_path(ModuleType t) const;

    struct Slot;

   private:
    friend class ModuleSet;
    void release();
    std::shared_ptr<Slot> llm_, web_;
  };
  // Both modules running: a lease on them; else RequestFailure::kModulesNotRunning.
  Result<Lease> acquire();

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace genvm::manager
