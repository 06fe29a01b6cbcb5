// The manager's side of one `genvm run` (executor_protocol: genvm): the command line, the
// ExecutionData written to its stdin, and host connection 1, a socketpair the manager owns and
// serves (spec impl-spec/appendix/host-loop: consume_result, and resolve_callcontract_executor
// with a null reply unless the request hooks cross-contract calls).
//
//   auto data = to_execution_data(request_body, granted_mode);   // Value for stdin
//   HostOneParser p(max_result_bytes);
//   p.feed(bytes);  // -> reply bytes to write, a consumed result, or an error
//
// Pure: no I/O, so every rule is unit-tested; the registry does the reading and writing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/calldata.h"
#include "common/debug_mode.h"
#include "common/result.h"

namespace genvm::manager {

// The child fd numbers the manager gives a genvm executor.
inline constexpr int kExecutorLogFd = 3;
inline constexpr int kExecutorHostOneFd = 4;

// The run request (GenvmRunRequest) as the executor's ExecutionData map: the shared fields
// copied, big-integer strings (message.chain_id, message.value, bucket_totals) turned into
// integers, `timestamp` as message.datetime when the message has none, method_hosts routing
// consume_result, run_nested and (unless hook_cross_contract_calls) resolve_callcontract_executor
// to host 1, and remaining_recursion from unsafe_overrides.initial_recursion when the granted
// level is unsafe or above. Error code "invalid_request" naming the field.
Result<calldata::Value> to_execution_data(const calldata::Value& request, DebugMode granted);

// `genvm run` arguments after the configured argv prefix.
std::vector<std::string> genvm_run_args(const calldata::Value& request, DebugMode granted, std::uint64_t genvm_id);

// The spec's checks before a consume_result is retained: an outer ResultCode byte that agrees
// with the map's `kind`, a map that decodes completely, 32-byte execution_hash and small_hash
// unless InternalError; a top-level FatalVmError is rewritten to VmError in both places. Our
// executor sends the map without the outer byte (a calldata map never starts with a byte 0..4),
// so a payload that is only the map gets the byte prepended from its `kind`.
// Error code "invalid_result".
Result<calldata::Bytes> check_consumed_result(std::span<const std::uint8_t> payload);

// Host connection 1, incrementally: bytes in, actions out.
class HostOneParser {
 public:
  explicit HostOneParser(std::size_t max_result_bytes) : max_(max_result_bytes) {}
  struct Output {
    std::vector<std::uint8_t> reply;            // write these to the executor
    std::optional<calldata::Bytes> consumed;    // a checked consume_result
    std::optional<std::string> error;           // protocol violation: close the connection
  };
  Output feed(std::span<const std::uint8_t> bytes);

 private:
  std::size_t max_;
  std::vector<std::uint8_t> buf_;
  bool failed_ = false;
};

}  // namespace genvm::manager
