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

}  // namespace genvm::wasm
