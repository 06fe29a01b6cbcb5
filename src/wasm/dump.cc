// Debug aid: a textual listing of a function's compiled code (genvm-wasm dump).
#include <cstdio>

#include "wasm/ops.h"
#include "wasm/runtime.h"

namespace genvm::wasm {

std::string dump_function(const Module& mod, uint32_t defined_index) {
  const ModuleImpl& m = mod.impl();
  if (defined_index >= m.compiled.size()) return "no such function\n";
  const CompiledFunc& cf = m.compiled[defined_index];
  const auto code = m.slot_code();
  uint32_t end = defined_index + 1 < m.compiled.size() ? m.compiled[defined_index + 1].code : uint32_t(code.size());
  std::string out;
  char buf[128];
  std::snprintf(buf, sizeof buf, "params=%u locals=%u frame=%u cost=%u\n", cf.num_params, cf.num_locals, cf.frame_slots, cf.cost);
  out += buf;
  for (uint32_t pc = cf.code; pc < end;) {
    uint32_t op = code[pc];
    uint32_t n = instr_words(&code[pc]) - 1;
    const char* name = op_name(op);
    std::snprintf(buf, sizeof buf, "%6u: op %#x %s", pc, op, name ? name : "?");
    out += buf;
    for (uint32_t k = 1; k <= n; ++k) out += " " + std::to_string(code[pc + k]);
    out += "\n";
    pc += 1 + n;
  }
  return out;
}

std::string dump_module(const Module& mod) {
  const ModuleImpl& m = mod.impl();
  std::string out;
  for (uint32_t i = 0; i < m.compiled.size(); ++i) {
    const CompiledFunc& cf = m.compiled[i];
    out += "func " + std::to_string(i) + " type=" + std::to_string(cf.type_index) + " code=" + std::to_string(cf.code) +
           " results=" + std::to_string(cf.num_results) + " ";
    out += dump_function(mod, i);
  }
  out += "code_offsets " + std::to_string(m.offsets().size()) + "\n";
  for (const auto& [pc, off] : m.offsets()) out += std::to_string(pc) + " " + std::to_string(off) + "\n";
  return out;
}

}  // namespace genvm::wasm
