// Internal to the genvm-wasm tool: the subcommands.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wasm/wasm.h"

namespace genvm_wasm_tool {

struct SpecOptions {
  // Non-empty: every module is rewritten onto this softfloat library (rewrite.h) and run in
  // deterministic mode; a conversion's trap then arrives as `unreachable` (DESIGN.md, "Float
  // rewriting").
  std::vector<uint8_t> softfloat_library;
  // Every module that should load is first re-encoded by our writer (read -> write round trip).
  bool reencode = false;
  genvm::wasm::Engine engine = genvm::wasm::Engine::kInterp;  // --engine
  genvm::wasm::CompileOptions compile{};  // --no-fuse, --fuse-off
};
int spectest_file(const std::string& path, int* passed, int* failed, int* skipped, const SpecOptions& opts = {});
// genvm-wasm softfloat IN.wasm LIB.wasm OUT.wasm
int softfloat_main(int argc, char** argv);
bool read_file(const std::string& path, std::vector<uint8_t>& out);
struct RunOptions {
  std::vector<std::string> args;  // argv for the guest, args[0] = program name
  std::vector<std::string> env;   // K=V
  std::vector<std::pair<std::string, std::string>> dirs;  // host dir, guest dir
  bool fuel = false;
  uint64_t fuel_amount = 0;
  bool deterministic = false;     // GenVM deterministic mode (float instructions trap)
  genvm::wasm::Engine engine = genvm::wasm::Engine::kInterp;  // --engine
  genvm::wasm::CompileOptions compile{};  // --no-fuse, --fuse-off
};
// "--engine interp|jit": parses the value; false on anything else.
bool parse_engine(const std::string& s, genvm::wasm::Engine& out);
// The slot-code options every loading command takes: `--no-fuse` (no fused forms at all) and
// `--fuse-off NAMES` (the comma-separated fusion families left out, DESIGN.md
// "Superinstructions"). kNotFuse: argv[i] is neither; kTaken: applied to `out`, i is past its
// value; kBad: `error` holds the error line's text.
enum class FuseOption { kNotFuse, kTaken, kBad };
FuseOption parse_fuse_option(int argc, char** argv, int& i, genvm::wasm::CompileOptions& out, std::string& error);
int fuzz_exec(const std::string& path);
// genvm-wasm compile FILE.wasm [--engine interp|jit] [--det] [--metering] [--runs N]
int compile_main(int argc, char** argv);
int run_wasi(const std::string& path, const RunOptions& opts);

}  // namespace genvm_wasm_tool
