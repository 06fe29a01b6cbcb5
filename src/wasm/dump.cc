// Debug aid: a textual listing of a function's compiled code (genvm-wasm dump).
#include <cstdio>

#include "wasm/ops.h"
#include "wasm/runtime.h"

namespace genvm::wasm {

// Number of operand words after the opcode word; -1 for br_table (variable).
static int operand_words(uint32_t op) {
  if (op >= 0x45 && op <= 0xc4) {
    bool unary = op == 0x45 || op == 0x50 || (op >= 0x67 && op <= 0x69) || (op >= 0x79 && op <= 0x7b) ||
                 (op >= 0x8b && op <= 0x91) || (op >= 0x99 && op <= 0x9f) || op >= 0xa7;
    return unary ? 2 : 3;
  }
  if (op >= kTruncSatBase && op < kTruncSatBase + 8) return 2;
  if (op >= kImmBase && op < kBrIfCmpBase) return 3;
  if (op >= kIncBrIfBase) return (op - kIncBrIfBase) % 16 == 0 ? 3 : 4;
  if (op >= kLoadShlImmBase) return 5;
  if (op >= kImm64Base) return 4;
  if (op >= kLoadAddShlBase) return 5;
  if (op >= kLoadAddImmBase) return 4;
  if (op >= kBrIfCmpBase && op < kLoadAddImmBase) {
    uint32_t c = (op - kBrIfCmpBase) % 0x20;  // 0 = i32.eqz, 0xb = i64.eqz
    return c == 0 || c == 0xb ? 2 : 3;
  }
  if (op >= kLoadBase) return 3;
  switch (op) {
    case kUnreachable: case kNondet: return 0;
    case kCopy: case kConst32: return 2;
    case kConst64: return 3;
    case kBr: return 1;
    case kBrIfNz: case kBrIfZ: return 2;
    case kBrTable: return -1;
    case kReturn: return 2;
    case kCall: case kReturnCall: return 2;
    case kCallIndirect: case kReturnCallIndirect: return 4;
    case kSelect: return 4;
    case kGlobalGet: case kGlobalSet: return 2;
    case kMemorySize: return 1;
    case kMemoryGrow: return 2;
    case kMemoryFill: case kMemoryCopy: return 3;
    case kMemoryInit: return 4;
    case kDataDrop: case kElemDrop: return 1;
    case kTableGet: case kTableSet: return 3;
    case kTableSize: return 2;
    case kTableGrow: case kTableFill: return 4;
    case kTableCopy: case kTableInit: return 5;
    case kRefIsNull: case kRefFunc: return 2;
    case kFuelCheck: return 1;
    case kCopy2: return 4;
    case kCopyBr: return 3;
    case kCallLocal: return 6;
    case kXorRot3: case kXorRot2Shr: return 5;
    case kAddImmShl: return 4;
    case kAndNot32: case kAndNot64: return 3;
    case kMaj32: return 4;
    case kBswap32: return 2;
    case kAddImmAddShl: return 5;
  }
  return 0;
}

std::string dump_function(const Module& mod, uint32_t defined_index) {
  const ModuleImpl& m = mod.impl();
  if (defined_index >= m.compiled.size()) return "no such function\n";
  const CompiledFunc& cf = m.compiled[defined_index];
  uint32_t end = defined_index + 1 < m.compiled.size() ? m.compiled[defined_index + 1].code : uint32_t(m.code.size());
  std::string out;
  char buf[128];
  std::snprintf(buf, sizeof buf, "params=%u locals=%u frame=%u cost=%u\n", cf.num_params, cf.num_locals, cf.frame_slots, cf.cost);
  out += buf;
  for (uint32_t pc = cf.code; pc < end;) {
    uint32_t op = m.code[pc];
    int n = operand_words(op);
    if (op == kCopyN) n = 1 + 2 * int(m.code[pc + 1]);
    else if (op == kBrTableLoad8u) n = 3 + int(m.code[pc + 3]);
    else if (op == kBrTableLoad8uAddImm) n = 4 + int(m.code[pc + 4]);
    else if (op == kCopyNBr) n = 2 + 2 * int(m.code[pc + 1]);
    else if (n < 0) n = 2 + int(m.code[pc + 2]);
    std::snprintf(buf, sizeof buf, "%6u: op %#x", pc, op);
    out += buf;
    for (int k = 1; k <= n; ++k) out += " " + std::to_string(m.code[pc + k]);
    out += "\n";
    pc += 1 + n;
  }
  return out;
}

}  // namespace genvm::wasm
