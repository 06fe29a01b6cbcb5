// Which wasm engine `genvm run` runs contracts on (issue 18: the interpreter is the reference
// and the fallback, the JIT the default where the CPU has what it emits). The argv stays the
// public manager's, so the choice is ours to read from elsewhere:
//
//   1. the environment: GENVM_ENGINE=interp|jit (an override for tests and operators);
//   2. the --config file's `engine` key (ours; the public executor has none);
//   3. the default: jit where the CPU supports the JIT's instructions, interp elsewhere.
//
//   auto choice = choose_engine(opts.fees_config);   // the --config file, or ""
//   if (!choice) -> the run does not start (exit 2, one line)
//
// A module the JIT cannot compile yet still runs, on the interpreter; the executor's debug log
// says so per module (vm.cc).
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "wasm/wasm.h"

namespace genvm::executor {

struct EngineChoice {
  wasm::Engine engine = wasm::Engine::kInterp;
  std::string why;  // for the log: "GENVM_ENGINE=interp", "default: this CPU supports the JIT", ...
};

// "interp" or "jit"; anything else is an error naming `source` (error code "engine").
Result<wasm::Engine> parse_engine_name(std::string_view name, std::string_view source);

// Error code "engine" for a bad value, or "engine_config" when the --config file is unreadable
// or not YAML.
Result<EngineChoice> choose_engine(const std::string& config_file);

std::string_view engine_name(wasm::Engine e);

}  // namespace genvm::executor
