// Internal: the compiled code's opcodes. Private to src/wasm.
//
// Code is a vector of 32-bit words: an opcode word followed by its operands. Operands are frame
// slot indices (fp-relative, resolved at compile time), immediates, or absolute code indices
// (branch targets). Numeric instructions keep their wasm opcode number so that the compiler and
// the interpreter need no mapping table for them:
//   unary  0x45..0xc4 : [op, src, dst]          binary: [op, a, b, dst]
//   0xc5..0xcc        : the eight trunc_sat ops, [op, src, dst]
// dst is always the last word of "simple" instructions (the compiler retargets it to a local
// when the next wasm instruction is local.set).
#pragma once

#include <cstdint>

namespace genvm::wasm {

enum Op : uint32_t {
  kTruncSatBase = 0xc5,          // + (0xfc sub-opcode 0..7)
  kUnreachable = 0x100,          // []
  kNondet,                       // [] traps nondet_instruction (deterministic mode)
  kCopy,                         // [src, dst]
  kConst32,                      // [value, dst]
  kConst64,                      // [lo, hi, dst]
  kBr,                           // [target]
  kBrIfNz,                       // [cond, target]
  kBrIfZ,                        // [cond, target]
  kBrTable,                      // [idx, n, target * n]  (last = default)
  kReturn,                       // [src, count]
  kCall,                         // [func, base]
  kCallIndirect,                 // [type_index, table, idx, base] (the module's own type index:
                                 //  compiled code holds no process-wide id, so it can be cached)
  kReturnCall,                   // [func, base]
  kReturnCallIndirect,           // [type_index, table, idx, base]
  kSelect,                       // [a, b, cond, dst]
  kGlobalGet,                    // [global, dst]
  kGlobalSet,                    // [global, src]
  kMemorySize,                   // [dst]
  kMemoryGrow,                   // [delta, dst]
  kMemoryFill,                   // [d, val, n]
  kMemoryCopy,                   // [d, s, n]
  kMemoryInit,                   // [seg, d, s, n]
  kDataDrop,                     // [seg]
  kTableGet,                     // [table, idx, dst]
  kTableSet,                     // [table, idx, val]
  kTableSize,                    // [table, dst]
  kTableGrow,                    // [table, init, delta, dst]
  kTableFill,                    // [table, i, val, n]
  kTableCopy,                    // [dst_table, src_table, d, s, n]
  kTableInit,                    // [table, seg, d, s, n]
  kElemDrop,                     // [seg]
  kRefIsNull,                    // [src, dst]
  kRefFunc,                      // [func, dst]
  kFuelCheck,                    // [n] charge n fuel and check the interrupt flag (function
                                 //     entry, loop head: the start of a fuel region)
  kCopy2,                        // [src1, dst1, src2, dst2] two copies, in that order
  kCopyBr,                       // [src, dst, target] copy, then branch
  kCallLocal,                    // [code, base, cost, frame_slots, num_params, num_locals] a call
                                 // to a function defined in the same module: its callee facts
                                 // are written in by compile_functions once all are compiled
  kCopyN,                        // [n, src1, dst1, ..., srcn, dstn] n >= 3 copies, in order
  kCopyNBr,                      // [n, src1, dst1, ..., srcn, dstn, target] n >= 2 copies, branch
  kBrTableLoad8u,                // [addr, offset, n, target * n] br_table on i32.load8_u(addr)
  kBrTableLoad8uAddImm,          // [a, imm, offset, n, target * n] ... on load8_u(a + imm)
  kAddImmShl,                    // [x, k, imm, dst] (x << k) + imm, i32
  kAddImmAddShl,                 // [a, imm, x, k, dst] (a + imm) + (x << k), i32
  kAndNot32,                     // [x, y, dst] x & ~y, i32 (an `and` of a just-computed NOT)
  kAndNot64,                     // [x, y, dst] x & ~y, i64
  kXorRot3,                      // [x, a, b, c, dst] rotl(x,a) ^ rotl(x,b) ^ rotl(x,c), i32
  kXorRot2Shr,                   // [x, a, b, c, dst] rotl(x,a) ^ rotl(x,b) ^ (x >> c), i32
  kMaj32,                        // [a, b, c, dst] (a & (b ^ c)) ^ (b & c), i32 (SHA-2's majority)
  kBswap32,                      // [x, dst] byte-reversed x, i32 (LLVM's expansion of bswap)
  kXorRot3Add,                   // [x, a, b, c, p, dst] kXorRot3(x, a, b, c) + p, i32
  kXorRot3Add2,                  // [x, a, b, c, p, q, dst] kXorRot3(x, a, b, c) + p + q
  kXorRot2ShrAdd,                // [x, a, b, c, p, dst] kXorRot2Shr(x, a, b, c) + p
  kXorRot2ShrAdd2,               // [x, a, b, c, p, q, dst] kXorRot2Shr(x, a, b, c) + p + q
  kCopyAddImm,                   // [s, d, k, r] d = s, then r = d + k (i32): from jump threading
  kCopyAddImmFetch,              // [s, d, k, r, x, k2, t, imm1, off1, d2, imm2, off2, n, target * n]:
                                 // kCopyAddImm then a kFetchDispatch of x = d (an interpreter's
                                 // whole `pc = next; next = pc + 1; fetch; dispatch`)
  kFetchDispatch,                // [x, k, t, imm1, off1, d, imm2, off2, n, target * n]:
                                 // t = x << k; d = i32.load(t + imm1 + off1);
                                 // br_table on i32.load8_u(t + imm2 + off2) (wasm address sums)
  kLoadBase = 0x200,             // + wasm opcode 0x28..0x35: [addr, offset, dst]
                                 // + wasm opcode 0x36..0x3e: [addr, value, offset]
  // Binary ops with an immediate second operand: kImmBase + (wasm op - 0x40), for the i32/i64
  // compares, add/sub/mul, div/rem (by neither 0 nor -1: they cannot trap), bitwise ops,
  // shifts and rotates: [op, a, imm32, dst]. i64 immediates are sign-extended from 32 bits.
  kImmBase = 0x240,
  // Compare fused with a conditional branch: + (wasm op - 0x45) for eqz and the i32/i64
  // compares. "If" variants branch when the compare is true, "Ifn" when it is false.
  // Binary: [op, a, b, target]; immediate: [op, a, imm32, target]; eqz: [op, a, target].
  kBrIfCmpBase = 0x2d0,
  kBrIfCmpImmBase = 0x2f0,
  kBrIfnCmpBase = 0x310,
  kBrIfnCmpImmBase = 0x330,
  // Loads whose address is an i32.add computed just before (the sum is not kept), one dispatch
  // instead of two; the effective address is still uint32(a + b) + offset, exactly as wasm:
  // + wasm opcode 0x28..0x35 - 0x28. AddImm: [a, imm, offset, dst]; Add: [a, b, offset, dst].
  kLoadAddImmBase = 0x350,
  kLoadAddBase = 0x360,
  // An i32 add/and/or/xor (outer, index 0..3) whose operand is the result of the i32
  // instruction just before it (inner, index 0..8: add sub and or xor, then shl shr_u rotl
  // rotr by a constant), the inner result not kept: + outer * 16 + inner,
  // [op, other, x, y_or_k, dst] = other OUTER (x INNER y). Chosen from executed-pair counts
  // (sha256's rotate/xor/add chains, array indexing `base + (i << k)`).
  kFuseBase = 0x370,
  kFuseAddShl = kFuseBase + 5,
  // Loads whose address is a kFuseAddShl just before: + (wasm op - 0x28),
  // [a, b, k, offset, dst], ea = uint32(a + (b << k)) + offset.
  kLoadAddShlBase = 0x3b0,
  // i64 binary ops with a 64-bit immediate: kImm64Base + (wasm op - 0x40), [a, lo, hi, dst],
  // for the i64 ops of kImmBase whose constant does not fit 32 signed bits, and for i64
  // div/rem (immediate not 0 or -1). i32 div/rem by such a constant use kImmBase.
  kImm64Base = 0x3c0,
  // Loads whose address is a kAddImmShl just before: + (wasm op - 0x28),
  // [x, k, imm, offset, dst], ea = uint32((x << k) + imm) + offset.
  kLoadShlImmBase = 0x410,
  // A counted loop's step: an i32 `add` of an immediate to a local in place (`i += k`), then a
  // compare of that local that branches (kBrIfCmp*/kBrIfNz just after it): + family * 16 +
  // (wasm op - 0x45) for eqz and the i32 compares, family 0 = branch if true, b a slot; 1 = if
  // true, b an immediate; 2 and 3 = branch if false. [i, k, b|imm, target]; eqz: [i, k, target].
  kIncBrIfBase = 0x420,
  kNumOps = 0x460,
};

// Named members of the opcode families above, instead of base arithmetic at each use.
// The binary op `wasm_op` with a 32-bit (imm_op) or 64-bit (imm64_op) immediate operand.
constexpr uint32_t imm_op(uint32_t wasm_op) { return kImmBase + (wasm_op - 0x40); }
constexpr uint32_t imm64_op(uint32_t wasm_op) { return kImm64Base + (wasm_op - 0x40); }
// The halves of a kFuseBase op `other OUTER (x INNER y)` (the inner shifts and rotates take
// a constant y). Keep in sync with FUSE_OUTER / FUSE_INNER in gen_interp_numeric.py.
enum class FuseOuter : uint32_t { kAdd, kAnd, kOr, kXor };
enum class FuseInner : uint32_t { kAdd, kSub, kAnd, kOr, kXor, kShlImm, kShrUImm, kRotlImm, kRotrImm, kAndNot };
constexpr uint32_t fused_op(FuseOuter outer, FuseInner inner) {
  return kFuseBase + uint32_t(outer) * 16 + uint32_t(inner);
}

// Number of operand words after the opcode word of the fixed-length instructions; see
// instr_words for all.
inline int operand_words(uint32_t op) {
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
    case kCopyAddImm: return 4;
    case kXorRot3Add: case kXorRot2ShrAdd: return 6;
    case kXorRot3Add2: case kXorRot2ShrAdd2: return 7;
    case kAddImmAddShl: return 5;
  }
  return 0;
}

// Length in words of the instruction at `at` (opcode word included).
inline uint32_t instr_words(const uint32_t* at) {
  switch (at[0]) {
    case kBrTable: return 3 + at[2];
    case kCopyN: return 2 + 2 * at[1];
    case kCopyNBr: return 3 + 2 * at[1];
    case kBrTableLoad8u: return 4 + at[3];
    case kBrTableLoad8uAddImm: return 5 + at[4];
    case kFetchDispatch: return 10 + at[9];
    case kCopyAddImmFetch: return 14 + at[13];
    default: return 1 + uint32_t(operand_words(at[0]));
  }
}

// Calls f(k) for each word at[k] of the instruction at `at` that is a branch target (a code
// index). Calls are not branches: their callee word is a function's code start.
template <class F>
void for_each_branch_target(const uint32_t* at, F&& f) {
  const uint32_t op = at[0], n = instr_words(at);
  uint32_t first = 0;  // table entries start here
  switch (op) {
    case kBrTable: first = 3; break;
    case kBrTableLoad8u: first = 4; break;
    case kBrTableLoad8uAddImm: first = 5; break;
    case kFetchDispatch: first = 10; break;
    case kCopyAddImmFetch: first = 14; break;
    default: break;
  }
  if (first) {
    for (uint32_t k = first; k < n; ++k) f(k);
    return;
  }
  bool last_word_is_target = op == kBr || op == kBrIfNz || op == kBrIfZ || op == kCopyBr || op == kCopyNBr ||
                             (op >= kBrIfCmpBase && op < kLoadAddImmBase) ||
                             (op >= kIncBrIfBase && op < kIncBrIfBase + 0x40);
  if (last_word_is_target) f(n - 1);
}

}  // namespace genvm::wasm
