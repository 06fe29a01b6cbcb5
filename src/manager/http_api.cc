#include "manager/http_api.h"

#include "common/json.h"

namespace genvm::manager {

std::optional<std::uint64_t> parse_path_genvm_id(std::string_view s) { return parse_decimal_u64(s); }

std::string genvm_status_json(std::uint64_t genvm_id, const RunResult* r) {
  JsonWriter w;
  w.begin_object().key("genvm_id").unsigned_number(genvm_id).key("status");
  if (r == nullptr) {
    w.null();
  } else {
    w.begin_object();
    w.key("finished_at").number(unix_millis(r->finished_at));
    w.key("stdout").string(r->stdout_data);
    w.key("stderr").string(r->stderr_data);
    w.key("genvm_log").begin_array();
    for (const auto& item : r->genvm_log) w.raw(item);
    w.end_array();
    w.key("metrics");
    write_value(w, r->metrics);
    w.key("consumed_result");
    if (r->consumed_result) {
      const auto& b = *r->consumed_result;
      w.string(base64_encode(std::string_view(reinterpret_cast<const char*>(b.data()), b.size())));
    } else {
      w.null();
    }
    w.key("version_major").unsigned_number(r->version_major);
    w.key("version_minor").unsigned_number(r->version_minor);
    w.end_object();
  }
  w.end_object();
  return w.take();
}

std::string manager_status_json(const ManagerStatus& s) {
  JsonWriter w;
  w.begin_object();
  w.key("llm_module").string(s.llm_module);
  w.key("web_module").string(s.web_module);
  w.key("permits").begin_object();
  w.key("current").unsigned_number(s.stats.permits_total > s.stats.permits_in_use
                                       ? s.stats.permits_total - s.stats.permits_in_use
                                       : 0);
  w.key("max").unsigned_number(s.stats.permits_total);
  w.key("per_sync_run").unsigned_number(s.stats.per_sync);
  w.key("per_nondet_run").unsigned_number(s.stats.per_nondet);
  w.end_object();
  // chrono's to_rfc3339(): AutoSi with "+00:00", not "Z".
  w.key("executions").begin_object();
  for (const auto& e : s.executions) {
    w.key(std::to_string(e.genvm_id)).begin_object();
    w.key("result");
    if (e.finished_at) {
      w.begin_object().key("finished_at").string(format_rfc3339_utc(*e.finished_at, false)).end_object();
    } else {
      w.null();
    }
    w.key("version").string(e.version);
    w.key("started_at").string(format_rfc3339_utc(e.started_at, false));
    w.key("strict_deadline").string(format_rfc3339_utc(e.strict_deadline, false));
    w.end_object();
  }
  w.end_object();
  w.key("boot_id").unsigned_number(s.boot_id);
  w.key("shutting_down").boolean(s.shutting_down);
  w.key("containment").string(s.containment);
  w.key("runs").begin_object();
  w.key("queued").unsigned_number(s.stats.queued);
  w.key("running").unsigned_number(s.stats.running);
  w.key("retained").unsigned_number(s.stats.retained);
  w.end_object();
  w.end_object();
  return w.take();
}

namespace {
// handlers.rs is_sub_error: equal, or extended by a space and further components.
bool is_sub_error(std::string_view err, std::string_view of) {
  if (!err.starts_with(of)) return false;
  return err.size() == of.size() || err[of.size()] == ' ';
}
}  // namespace

std::optional<std::string_view> describe_vm_error(std::string_view error) {
  if (is_sub_error(error, "wasm_trap")) return "Web Assembly trap reached";
  if (is_sub_error(error, "exit_code")) {
    return "Non-zero exit code from the contract. Check stderr for contract-provided details";
  }
  if (is_sub_error(error, "invalid_contract not_utf8_text")) {
    return "The contract was detected to be a plain text contract, however it contains non-UTF8 bytes and hence "
           "cannot be parsed. Is deployed runner a valid contract?";
  }
  if (is_sub_error(error, "invalid_contract runner absent") ||
      is_sub_error(error, "invalid_contract absent_runner_comment")) {
    return "The contract was detected to be a plain text contract, however it does not start with a runner comment "
           "(such as `# { \"Depends\": \"py-genlayer:...\" }`), hence it is impossible to run. Have you forgotten to "
           "add it or is there other content before it?";
  }
  if (is_sub_error(error, "invalid_contract")) {
    return "Execution failed before running the contract, likely due to invalid or malformed contract runner";
  }
  if (is_sub_error(error, "OOM storage")) return "Contract ran out of storage pages it could (re)write";
  if (is_sub_error(error, "OOM")) return "Contract exceeded allowed execution memory (RAM) limit";
  return std::nullopt;
}

std::string error_json(std::string_view message) {
  JsonWriter w;
  w.begin_object().key("error").string(message).end_object();
  return w.take();
}

}  // namespace genvm::manager
