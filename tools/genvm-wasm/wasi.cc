// WASI preview1 for `genvm-wasm run` (filled in below).
#include "tools/genvm-wasm/tool.h"
#include <iostream>
namespace genvm_wasm_tool {
int run_wasi(const std::string&, const RunOptions&) {
  std::cerr << "genvm-wasm: run is not implemented yet\n";
  return 2;
}
}  // namespace genvm_wasm_tool
