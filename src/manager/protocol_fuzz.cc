// libFuzzer target: every parser of untrusted manager input — a socket frame and the typed
// arguments of each request, the duration strings, the run-request checks and the ExecutionData
// conversion, and host connection 1 (consume_result) fed in arbitrary pieces.
//   build-<name>/src/manager/manager_protocol_fuzz -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "manager/executor_link.h"
#include "manager/protocol.h"

using namespace genvm::manager;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> bytes(data, size);
  auto m = parse_client_message(bytes, size % 2 == 0);
  if (auto* r = std::get_if<ClientRequest>(&m)) {
    (void)parse_attach(r->body);
    (void)parse_genvm_id(r->body);
    (void)parse_get_artifact(r->body);
    for (auto mode : {genvm::DebugMode::kDisabled, genvm::DebugMode::kUnsafe}) {
      auto d = to_execution_data(r->body, mode);
      (void)genvm_run_args(r->body, mode, 1);
      (void)d;
    }
  }
  (void)parse_duration(std::string_view(reinterpret_cast<const char*>(data), size));
  (void)check_consumed_result(bytes);
  HostOneParser p(1 << 16);
  std::size_t cut = size > 0 ? data[0] % (size + 1) : 0;
  (void)p.feed(bytes.subspan(0, cut));
  (void)p.feed(bytes.subspan(cut));
  return 0;
}
