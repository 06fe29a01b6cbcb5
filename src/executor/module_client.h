// The executor's side of a module connection (LLM, web): the wire of src/common/module.
//
//   ModuleClient llm(uri, hello);                 // nothing happens yet
//   Result<module::Answer> a = llm.call(request); // connects and sends the hello on first use
//
// One connection per module per run, made on first use and kept (the public executor's
// modules.rs). `hello` is the run's GenVMHello, or the error that kept it from being built
// (host_data that is not the JSON object HostData needs): then every call fails with it. Any
// failure on the connection (connect, I/O, an answer above 64 MiB, not calldata, not a
// Result variant: "module_io", "module_oversized", "module_protocol") poisons it for the run.
// A failed call's Error::errc is a ModuleCallError: the caller tells a module that is gone
// (the contract is told, 03-schemas.rst "Module Error Format") from one that broke the wire (the
// run's internal error).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/module/protocol.h"
#include "common/result.h"
#include "executor/host_client.h"

namespace genvm::executor {

enum class ModuleCallError : int {
  kBroken = 1,  // the module answered what the wire does not allow, or the run cannot talk to it
                // at all (no valid hello, a bad address)
  kGone = 2,    // the module could not be reached or its connection broke (connect refused,
                // reset, closed mid-answer): it died or was stopped
};
inline ModuleCallError module_call_error(const Error& e) { return static_cast<ModuleCallError>(e.errc); }

class ModuleClient {
 public:
  ModuleClient(std::string uri, Result<module::Hello> hello) : uri_(std::move(uri)), hello_(std::move(hello)) {}
  bool configured() const { return !uri_.empty(); }
  Result<module::Answer> call(const calldata::Value& request);

 private:
  Result<HostConnection*> connection();
  std::string uri_;
  Result<module::Hello> hello_;
  std::unique_ptr<HostConnection> conn_;
  std::optional<Error> failed_;  // the first failure, answered to every later call
};

}  // namespace genvm::executor
