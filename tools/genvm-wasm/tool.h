// Internal to the genvm-wasm tool: the subcommands.
#pragma once

#include <string>
#include <vector>

#include "wasm/wasm.h"

namespace genvm_wasm_tool {

int spectest_file(const std::string& path, int* passed, int* failed, int* skipped);
struct RunOptions {
  std::vector<std::string> args;  // argv for the guest, args[0] = program name
  std::vector<std::string> env;   // K=V
  std::vector<std::pair<std::string, std::string>> dirs;  // host dir, guest dir
  bool fuel = false;
  uint64_t fuel_amount = 0;
};
int fuzz_exec(const std::string& path);
int run_wasi(const std::string& path, const RunOptions& opts);

}  // namespace genvm_wasm_tool
