// genvm-manager configuration: a YAML file, every key optional, unknown keys rejected (a typo
// must not silently keep a default). Defaults follow the public manager's (docs/schemas/
// default-config.json, implementation/src/manager/mod.rs); they are listed in docs/PROTOCOLS.md
// (## Manager). Durations use the protocol's duration strings ("5m", "250ms").
//
//   Result<Config> c = load_config("/etc/genvm/manager.yaml");
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "manager/log.h"
#include "manager/policy.h"
#include "manager/protocol.h"

namespace genvm::manager {

struct PermitsConfig {
  std::optional<std::uint64_t> total;  // none: available memory in GiB times per_gib
  std::uint64_t per_gib_num = 1;       // per_gib as an exact ratio num/den ("1/4")
  std::uint64_t per_gib_den = 1;
  std::uint64_t sync = 4;    // permits a sync run costs
  std::uint64_t nondet = 8;  // permits a nondet run costs; also the least `total` can be
};

// What one client connection may hold (server.h "Connections").
struct ConnectionLimits {
  // Open connections at most; 0: derived from the fd limit, keeping room for runs
  // (server.h connection_cap). A value above what the fd limit allows is lowered to it.
  std::size_t max = 0;
  // A connection with nothing to do this long is closed: no request arrived (HTTP), or no
  // request and no run of its own still going (WebSocket).
  Millis idle_timeout = std::chrono::seconds(60);
  // Replies and events queued for a client that is not reading: above this the manager stops
  // reading its requests; still above it after stall_timeout, the client is dropped.
  std::size_t max_queued_bytes = 16 * 1024 * 1024;
  Millis stall_timeout = std::chrono::seconds(10);
  // Open connections from one peer (Caller::peer: a TCP remote address, a unix peer's uid) at
  // most, so no one peer takes every connection; 0: half of the connection cap. One past it is
  // answered 429 and closed.
  std::size_t max_per_peer = 0;
};

// What retained runs may hold (config `retention`): a terminal run keeps its outcome (event,
// result, artifacts), never its request. Over a cap, the oldest terminal runs not yet acked go
// first: the same peer's for the per-peer cap, anyone's for the total.
struct RetentionLimits {
  std::uint64_t max_bytes = 1ull << 30;
  std::uint64_t max_bytes_per_peer = 256ull << 20;
};

// How a manager starts one module type (config `modules.llm` / `modules.web`; ours: the public
// manager runs its modules inside its own process). modules.h says how they run.
struct ModuleProgram {
  // The genvm-module-<type> executable. Empty: <this program's directory>/genvm-module-<type>
  // (an install's bin/), else <that directory>/../genvm-module-<type>/genvm-module-<type> (the
  // build tree). "${exeDir}" in the text stands for this program's directory.
  std::string binary;
  // The configuration a start request with config null uses. Empty:
  // ${exeDir}/../config/genvm-module-<type>.yaml (modules.rs's default).
  std::string default_config;
  bool autostart = false;  // genvm-manager starts it with default_config before it listens
};

struct ModulesConfig {
  ModuleProgram llm, web;
  // Where the private directory (0700) of sockets and written configs is made; empty: $TMPDIR,
  // else /tmp.
  std::string runtime_dir;
  Millis start_timeout = std::chrono::seconds(60);  // spawn until the socket accepts
  Millis stop_timeout = std::chrono::seconds(5);    // SIGTERM to the group, then SIGKILL
};

// The default executor_memory_max: a run's deterministic RAM budget (4294967295 octets, spec
// 03-ram-limiting.rst) times 2.5, plus 1 GiB. The executor's host memory is at most 1.25 times
// what its budget holds plus ~64 MiB, and its address space adds the memories' reservations (at
// most the budget together) and the 512 MiB run thread stack: 2.5 x budget + 1 GiB covers both
// with room, so the backstop only ever stops an executor whose own accounting failed.
inline constexpr std::uint64_t kDefaultExecutorMemoryMax = 4294967295ull * 5 / 2 + (1ull << 30);

struct Config {
  // Where executor lines live: a line's executor is <executors_dir>/<version key>/bin/genvm
  // (run.rs). Empty: genvm-manager sets <its own directory>/../executor, the public default;
  // "${exeDir}" in the text stands for that directory.
  std::string executors_dir;
  // The runner manifest (versioning.rs). Empty: genvm-manager sets
  // ${exeDir}/../data/manifest.yaml (the public install's); a library user with none gets an
  // empty manifest (then only exact version selectors resolve).
  std::string manifest_path;
  // Not public (tests, benches, embedders): when set, this argv prefix replaces the resolved
  // <executors_dir>/<version>/bin/genvm and no line is resolved (version_major/minor 0).
  std::vector<std::string> executor;
  // How the executor is driven. kGenvm: run.rs's command line, ExecutionData on stdin, host 1
  // a manager-owned socketpair (consume_result). kPlain (not public; needs `executor`):
  // `--debug-mode <level>` and the request's extra_args appended, the run request itself on
  // stdin, no host 1 (any program).
  enum class ExecutorProtocol { kGenvm, kPlain } executor_protocol = ExecutorProtocol::kGenvm;
  // The manager's own log: lines below this level are not written (POST /log/level sets it).
  LogLevel log_level = LogLevel::kInfo;
  std::vector<std::string> env_pass_through;  // beyond the supervisor's essential allowlist
  Millis execution_retention = std::chrono::minutes(5);
  RetentionLimits retention;
  // Who may use a run (policy.h RunOwnership): `shared` (default, the public manager) or
  // `per_caller`.
  RunOwnership ownership = RunOwnership::kShared;
  // Origins (exact, "https://host:port") whose browser pages may use the manager. A request
  // from a page (an Origin header, or Sec-Fetch-Site naming a page) whose origin is not listed
  // is refused with 403: the manager serves no pages, and a page must not start, read or cancel
  // runs on a local manager. Default none.
  std::vector<std::string> allowed_origins;
  // An HTTP request body or WebSocket message from a client. Not a result's bound: an
  // executor's consume_result is read up to host::kMaxHostSlice (common/host/wire.h), the one
  // limit the executor sizes results by, so a result it sends is never refused here.
  std::size_t max_message_bytes = 64 * 1024 * 1024;
  PermitsConfig permits;
  DebugPolicy debug;
  ExtraArgsPolicy extra_args;  // what an untrusted caller may pass as extra_args (policy.h)
  ConnectionLimits connections;
  ModulesConfig modules;  // modules.h: used by genvm-manager's ModuleSet, not by the Registry
  std::vector<uid_t> trusted_uids;          // unix-socket peers (SO_PEERCRED) that are trusted
  std::vector<std::string> trusted_tokens;  // `Authorization: Bearer <token>` that is trusted
  bool containment = true;                  // a cgroup per run where the machine allows it
  // The OS memory limit of each executor run, the backstop behind the executor's own RAM budget
  // (docs/PROTOCOLS.md, "Memory model of a run"): the run cgroup's memory.max, or RLIMIT_AS
  // without a cgroup. Config key `executor_memory_max` (bytes; 0: no limit).
  std::uint64_t executor_memory_max_bytes = kDefaultExecutorMemoryMax;
  // Listener; the command line overrides these.
  std::string host = "127.0.0.1";
  std::uint16_t port = 3999;
  std::string socket;  // non-empty: listen on this unix socket instead of TCP
};

Result<Config> parse_config(std::string_view yaml_text);  // code "bad_config"
Result<Config> load_config(const std::string& path);

// The permit budget: `total`, or floor(available GiB * per_gib); never below the cost of the
// most expensive run (else such a run could never be admitted).
std::uint64_t resolve_total_permits(const PermitsConfig& p, std::uint64_t mem_available_bytes);
// MemAvailable from /proc/meminfo, 0 when unreadable.
std::uint64_t read_mem_available_bytes();

}  // namespace genvm::manager
