// The HTTP adapter's bodies (manager-api.yaml; handlers.rs, mod.rs), as pure functions so each
// is tested without a socket.
//
//   respond(200, genvm_status_json(id, registry.result(id)));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manager/registry.h"

namespace genvm::manager {

// mod.rs parse_genvm_id: one or more ASCII digits within u64, else the route is not found.
std::optional<std::uint64_t> parse_path_genvm_id(std::string_view segment);

// GET /genvm/{id}: {"genvm_id": id, "status": <SingleGenVMContextDone> or null}. The status is
// finished_at in epoch milliseconds, stdout, stderr, genvm_log (the JSON objects), metrics,
// consumed_result (base64, or null), version_major, version_minor.
std::string genvm_status_json(std::uint64_t genvm_id, const RunResult* result);

// GET /status: handlers.rs handle_status (llm_module, web_module, permits, executions by id
// with result, version, started_at, strict_deadline), and ours besides: boot_id,
// shutting_down, containment, and `runs` counting queued, running and retained.
struct ManagerStatus {
  std::string llm_module = "stopped", web_module = "stopped";  // modules.h to_string(ModuleState)
  RegistryStats stats;
  std::vector<ExecutionStatus> executions;
  std::uint64_t boot_id = 0;
  bool shutting_down = false;
  std::string containment;
};
std::string manager_status_json(const ManagerStatus& s);

// GET /vm-error/describe: handlers.rs describe_vm_error, the same prefixes and texts; nullopt
// for an error it has no text for.
std::optional<std::string_view> describe_vm_error(std::string_view error);

// {"error": message}: mod.rs error_response's body.
std::string error_json(std::string_view message);

}  // namespace genvm::manager
