// node::Runner: one executor run, the production way — through src/manager's run Registry
// (in-process, on the Runner's own io_context), with the node's State served as host 0.
//
//   Runner runner;                                           // lazily: socket dir, registries
//   Result<RunReport> r = runner.run(genvm, exec_data, "wscn", state, /*timeout_ms=*/120000);
//
// Contract:
//  - The run request carries the ExecutionData's fields, `host: unix://<dir>/host.sock`,
//    `no_modules` unless set_modules gave modules (ModuleFiles), and
//    `debug_mode` (the level asked for, at least `safe`: see Runner::run) from a trusted caller; the Registry (executor_protocol genvm) spawns
//    `genvm run` through the supervisor in its own process group, serves host connection 1
//    (consume_result, resolve_callcontract_executor; `method_hosts` routes them there), applies
//    the deadline (`timeout_ms`, 0: the manager's default) and kills the whole tree when the
//    run ends. Everything else the executor asks goes to host 0: serve_host_connection over
//    `state`, one connection at a time, on a thread that lives exactly as long as the run.
//  - The report is the finished event's consumed_result (checked by the manager); stderr_text
//    is the captured stderr tail (bounded capture of debug mode `safe`), or the
//    failed_to_start reason; stdout_text and log the captured stdout tail and genvm_log
//    entries, each at most kRunnerKeep* (node.cc keeps less for a receipt).
//  - One Registry per executor path (the path is manager configuration, not a request field).
//  - The socket directory is mkdtemp'd under $TMPDIR (default /tmp), mode 0700 (with modules, the
//    ModuleSet's folder of module sockets is made inside it), and removed
//    by the destructor (also after an interrupt: see request_interrupt). Not thread-safe; one
//    run at a time.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/calldata.h"
#include "common/debug_mode.h"
#include "common/result.h"
#include "node/state.h"

namespace genvm::node {

// One executor run's outcome as the node sees it.
struct RunReport {
  int exit_code = -1;          // genvm's exit status (-1: killed, or never started)
  std::string stderr_text;     // the executor's stderr tail, or why it did not start
  calldata::Value report;      // the decoded consume_result map; null when nothing delivered
  calldata::Bytes execution_hash;  // from the report; empty when nothing delivered
  int kind = -1;               // the report's kind; -1 when nothing delivered
  bool timed_out = false;      // the manager killed it at the deadline
  std::string stdout_text;     // the executor's stdout tail (the contract's stdout)
  std::vector<std::string> log;  // the newest genvm_log entries (JSON objects)
  std::uint64_t stdout_bytes = 0, stderr_bytes = 0, log_entries = 0;  // as captured in full
  std::uint64_t run_us = 0;    // wall time from the request's submission to its terminal event
};

// The LLM and web modules a node's runs get (genvm-node --module-llm-config / --module-web-config):
// each a module configuration file (genvm-module-llm / genvm-module-web YAML), empty for none.
// With at least one set, Runner starts both modules through src/manager's ModuleSet on the first
// run (a run needing modules needs both, as the public manager's leases do): a module without a
// file is served by the manager itself, answering every call UserError MODULE_USER_ERROR. Every
// run then gets its own connections (`--module-llm=fd:// --module-web=fd://`, the Registry's
// path). A module found dead before a run (it crashed or was killed) is started again first.
struct ModuleFiles {
  std::string llm_config, web_config;
  bool any() const { return !llm_config.empty() || !web_config.empty(); }
};

// What Runner keeps of one run's capture (the manager's `safe` capture is larger).
inline constexpr std::uint32_t kRunnerKeepStream = 64 * 1024;  // per stream, the tail
inline constexpr std::size_t kRunnerKeepLogEntries = 128;      // the newest

// Interrupts (SIGINT/SIGTERM in genvm-node): request_interrupt is async-signal-safe (one
// lock-free store), so a signal handler may call it. A run in progress is cancelled (the
// manager kills its process tree) and Runner::run returns interrupted_error; a run asked for
// afterwards does not start. Whoever holds a write transaction then rolls it back.
// request_interrupt(0) withdraws it (serve's Service::start: a worker started again after a
// stop in the same process runs again).
void request_interrupt(int sig);
int interrupt_signal();  // 0: none requested
Error interrupted_error(int sig);  // code "interrupted"

class Runner {
 public:
  // `modules`: what every run gets (ModuleFiles; none by default).
  explicit Runner(ModuleFiles modules = {});
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Fails only when the run could not be set up (no executable, no socket); an executor that
  // starts and delivers nothing is a RunReport with a null report.
  // `debug` is the run request's debug_mode, raised to `safe` when lower: the executor behaves
  // the same at disabled and safe (the difference is the manager's capture), and the stderr
  // tail explains a run that delivers nothing. Whether the capture is recorded is the node's.
  Result<RunReport> run(const std::string& genvm, const calldata::Value& execution_data,
                        const std::string& permissions, State& state, int timeout_ms,
                        DebugMode debug = DebugMode::kSafe);

  // A module that cannot be started fails the run that needed it with code module_start,
  // naming the module and its file.

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace genvm::node
