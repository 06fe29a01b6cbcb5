// `genvm-wasm softfloat IN.wasm LIB.wasm OUT.wasm`: the float rewrite of src/wasm/rewrite.h as a
// command. Prints one summary line; errors are one line on stderr (exit 1; usage errors exit 2).
#include <cstdio>
#include <fstream>
#include <iostream>

#include "tools/genvm-wasm/tool.h"
#include "wasm/rewrite.h"

namespace genvm_wasm_tool {

int softfloat_main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "genvm-wasm: softfloat takes IN.wasm LIB.wasm OUT.wasm (see --help)\n";
    return 2;
  }
  std::vector<uint8_t> in, lib;
  for (auto [path, bytes] : {std::pair{argv[0], &in}, std::pair{argv[1], &lib}}) {
    if (!read_file(path, *bytes)) {
      std::cerr << "genvm-wasm: cannot read " << path << "\n";
      return 2;
    }
  }
  genvm::wasm::SoftFloatReport report;
  auto out = genvm::wasm::rewrite_floats_to_softfloat(in, lib, &report);
  if (!out) {
    std::cerr << "genvm-wasm: softfloat: " << out.error().to_string() << "\n";
    return 1;
  }
  std::ofstream o(argv[2], std::ios::binary | std::ios::trunc);
  o.write(reinterpret_cast<const char*>(out->data()), std::streamsize(out->size()));
  o.close();
  if (!o) {
    std::cerr << "genvm-wasm: cannot write " << argv[2] << "\n";
    return 2;
  }
  std::printf("replaced %u instructions (%zu operations), appended %u library functions; %zu -> %zu bytes\n",
              report.replaced_instructions, report.operations.size(), report.library_functions, in.size(),
              out->size());
  return 0;
}

}  // namespace genvm_wasm_tool
