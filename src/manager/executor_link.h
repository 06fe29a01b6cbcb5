// The manager's side of one executor process, as run.rs drives it: the command line, the
// executor's log lines, and host connection 1, a socketpair the manager owns and serves
// (impl-spec/appendix/host-loop: consume_result, and resolve_callcontract_executor answered
// null unless the request hooks cross-contract calls).
//
//   argv = {exe} + executor_args(request, granted, genvm_id, /*modules=*/false);
//   HostOneParser p(max_result_bytes);
//   p.feed(bytes);   // -> reply bytes to write, a consumed result, or an error
//   auto entry = parse_log_line(line);   // one line of the log fd
//
// Pure: no I/O, so every rule is unit-tested; the registry does the reading and writing.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/calldata.h"
#include "common/debug_mode.h"
#include "common/result.h"
#include "common/vm_error.h"
#include "common/json.h"
#include "manager/run_request.h"

namespace genvm::manager {

// The executor's descriptor numbers (run.rs passes whatever numbers its own fds have; these
// are ours, fixed, so a command line is reproducible).
inline constexpr int kExecutorLogFd = 3;
inline constexpr int kExecutorHostOneFd = 4;
inline constexpr int kExecutorModuleLlmFd = 5;
inline constexpr int kExecutorModuleWebFd = 6;

// The arguments after the executor's path, in run.rs's order (build_genvm_command, then
// run_genvm_process):
//   --log-fd=3 run <extra_args...> [--sync] --host <request.host> --permissions <p>
//   --genvm-id=<id> --debug-mode <granted> --host fd://4 [--module-llm=fd://5 --module-web=fd://6]
// The ExecutionData goes on stdin (no --execution-data flag). `with_modules` only when the run
// needs modules (RunRequest::needs_modules) and they are running.
std::vector<std::string> executor_args(const RunRequest& request, DebugMode granted, std::uint64_t genvm_id,
                                       bool with_modules);

// run.rs decode_reported_result: one outer ResultCode byte, then a calldata ReportedResult
// that decodes completely and strictly (every field present and of its type, no other field,
// `kind` the variant name: "Return", "UserError", "VmError", "InternalError", "FatalVmError")
// and names the same code as the byte. Error code "invalid_result", the message starting with
// `source` ("top-level executor", "nested executor").
struct DecodedResult {
  ResultCode code = ResultCode::kInternalError;
  calldata::Value reported;  // the ReportedResult map
};
Result<DecodedResult> decode_reported_result(std::span<const std::uint8_t> payload, std::string_view source);

// decode_reported_result + guard_top_level_consumed_result: execution_hash and small_hash 32
// bytes unless InternalError. A FatalVmError is rewritten to VmError in both places; anything
// else is kept byte for byte. Error code "invalid_result".
Result<calldata::Bytes> check_consumed_result(std::span<const std::uint8_t> payload);

// Host connection 1, incrementally: bytes in, actions out. A top-level run's consume_result is
// checked here (check_consumed_result); a nested run's is kept as sent, since its caller's reply
// is derived from it (nested_run.h). A run_nested request is handed out whole, and nothing after
// it is parsed until nested_replied(): the reply pairs with its request by order alone.
class HostOneParser {
 public:
  enum class Role { kTopLevel, kNested };
  explicit HostOneParser(std::size_t max_result_bytes, Role role = Role::kTopLevel)
      : max_(max_result_bytes), role_(role) {}
  struct Output {
    std::vector<std::uint8_t> reply;                  // write these to the executor
    std::optional<calldata::Bytes> consumed;          // a (checked) consume_result
    std::optional<calldata::Bytes> nested_envelope;   // a run_nested to serve, then nested_replied()
    std::optional<std::string> error;                 // protocol violation: close the connection
  };
  Output feed(std::span<const std::uint8_t> bytes);
  // The reply to the last nested_envelope was written: feed({}) parses what waited behind it.
  void nested_replied() { waiting_ = false; }

 private:
  std::size_t max_;
  Role role_;
  std::vector<std::uint8_t> buf_;
  bool failed_ = false;
  bool waiting_ = false;
};

// One line of the executor's log fd, as run.rs read_log_pipe takes it: trimmed; empty lines
// are skipped (nullopt); a JSON object is a record whose `level` member is taken out (a
// string naming trace, debug, info, warn/warning or error, any case; otherwise info); anything
// else is a text line at level info.
struct LogEntry {
  std::string level = "info";        // trace, debug, info, warn, error
  std::optional<JsonValue> record;   // the object without `level`; none for a text line
  std::string text;                  // the trimmed line, for a text line
};
std::optional<LogEntry> parse_log_line(std::string_view line);
// The entry as a `genvm_log` item (one JSON object, no newline): a record's members in their
// order and then "level"; a text line as {"level":"info","message":"genvm log","line":...}.
std::string genvm_log_json(const LogEntry& e);

// The log fd as the manager keeps it: bytes split into lines, each parsed (parse_log_line).
// Capturing levels keep genvm_log items (bounded: the newest kBoundedLogEntries entries, and a
// line longer than kBoundedStreamTailBytes is dropped); with capture disabled nothing is kept
// and every entry goes to `forward` (lines cut at 64 KiB: the manager's own log stays bounded).
class GenvmLogCollector {
 public:
  using Forward = std::function<void(const LogEntry&)>;
  GenvmLogCollector(Capture capture, Forward forward);
  void append(std::string_view bytes);
  void finish();  // end of the stream: a last line without its newline still counts
  const std::deque<std::string>& items() const { return items_; }
  std::string artifact() const;  // JSON Lines: each item and a newline

 private:
  void line(std::string_view text);
  Capture capture_;
  Forward forward_;
  std::string partial_;
  bool overlong_ = false;  // the partial line passed its cap: drop it up to its newline
  std::deque<std::string> items_;
};

}  // namespace genvm::manager
