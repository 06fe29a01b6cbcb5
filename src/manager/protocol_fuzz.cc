// libFuzzer target: every parser of untrusted manager input — a socket frame and the typed
// arguments of each request, the run request (the public decode, then the ExecutionData and
// the command line built from what it accepts), the duration strings, host connection 1
// (consume_result) fed in arbitrary pieces, and the executor's log fd as JSON lines.
//   build-<name>/src/manager/manager_protocol_fuzz -max_total_time=60
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "manager/executor_link.h"
#include "manager/protocol.h"
#include "manager/run_request.h"

using namespace genvm::manager;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> bytes(data, size);
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = parse_client_message(bytes, size % 2 == 0);
  if (auto* r = std::get_if<ClientRequest>(&m)) {
    (void)parse_attach(r->body);
    (void)parse_genvm_id(r->body);
    (void)parse_get_artifact(r->body);
    if (auto req = parse_run_request(r->body)) {
      for (auto mode : {genvm::DebugMode::kDisabled, genvm::DebugMode::kUnsafe}) {
        (void)to_execution_data(*req, mode);
        (void)executor_args(*req, mode, 1, mode == genvm::DebugMode::kUnsafe);
      }
    }
  }
  (void)parse_duration(text);
  (void)check_consumed_result(bytes);
  HostOneParser p(1 << 16);
  std::size_t cut = size > 0 ? data[0] % (size + 1) : 0;
  (void)p.feed(bytes.subspan(0, cut));
  (void)p.feed(bytes.subspan(cut));
  GenvmLogCollector log(genvm::Capture::kBounded, nullptr);
  log.append(text.substr(0, cut));
  log.append(text.substr(cut));
  log.finish();
  return 0;
}
