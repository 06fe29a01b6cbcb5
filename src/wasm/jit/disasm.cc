// genvm-wasm dump --jit: the JIT code of a module as Intel-syntax assembly (Zydis), function by
// function, offsets relative to the code start (the code is position-independent); br_table
// jump tables are shown as data, and each call's return point names its wasm offset.
#include <Zydis/Zydis.h>

#include <algorithm>
#include <cstdio>

#include "wasm/jit/jit.h"

namespace genvm::wasm::jit {

std::string disassemble(const ModuleImpl& m, const ModuleCode& code) {
  std::string out;
  char line[192];
  const uint8_t* base = code.code->base();
  const size_t size = code.code->size();
  size_t next_func = 0, next_table = 0, next_call = 0;
  size_t off = 0;
  while (off < size) {
    while (next_func < code.func_start.size() && code.func_start[next_func] <= off) {
      if (code.func_start[next_func] == off) {
        std::snprintf(line, sizeof line, "func %zu (wasm offset 0x%zx):\n", m.num_imported_funcs + next_func,
                      m.bodies[next_func].body_offset);
        out += line;
      }
      ++next_func;
    }
    while (next_call < code.call_sites.size() && code.call_sites[next_call].first < off) ++next_call;
    if (next_call < code.call_sites.size() && code.call_sites[next_call].first == off) {
      std::snprintf(line, sizeof line, "          ; return from the call at wasm offset 0x%x\n", code.call_sites[next_call].second);
      out += line;
    }
    if (next_table < code.data_ranges.size() && code.data_ranges[next_table].first == off) {
      std::snprintf(line, sizeof line, "  %06zx  .table %u entries\n", off, code.data_ranges[next_table].second / 8);
      out += line;
      off += code.data_ranges[next_table].second;
      ++next_table;
      continue;
    }
    size_t limit = next_table < code.data_ranges.size() ? code.data_ranges[next_table].first : size;
    ZydisDisassembledInstruction insn;
    if (!ZYAN_SUCCESS(ZydisDisassembleIntel(ZYDIS_MACHINE_MODE_LONG_64, off, base + off, limit - off, &insn))) {
      std::snprintf(line, sizeof line, "  %06zx  .byte 0x%02x\n", off, base[off]);
      out += line;
      ++off;
      continue;
    }
    std::snprintf(line, sizeof line, "  %06zx  %s\n", off, insn.text);
    out += line;
    off += insn.info.length;
  }
  return out;
}

}  // namespace genvm::wasm::jit

namespace genvm::wasm {

std::string engine_note(const Module& m) { return m.impl().jit_note; }

std::string dump_jit(const Module& m) {
  const ModuleImpl& mi = m.impl();
  if (!mi.jit_code) return mi.jit_note + "\n";
  return mi.jit_note + "\n" + jit::disassemble(mi, *mi.jit_code);
}

}  // namespace genvm::wasm
