#!/usr/bin/env python3
"""The internal code's one definition: every opcode of the slot code (ops.h) with its shape
(operand words, how a variable-length one counts them, which words are branch targets), its
listing name and its interpreter handler, and the numeric handlers' semantics. Generates

  ops_table.inc        the Op enum, FuseOuter/FuseInner, the shape and name tables (ops.h)
  interp_numeric.inc   the numeric, immediate, fused compare-branch and fused-op handlers
  interp_dispatch.inc  the interpreter's static dispatch table, one label per opcode

Run from anywhere: `python3 src/wasm/gen_ops.py` rewrites them beside this file; `--check`
writes nothing and exits 1 naming every checked-in file that differs (ctest
wasm_generated_files). Edit here, regenerate, and commit the generator with its output."""

import os
import re
import sys
I32B = {0x46: 'a == b', 0x47: 'a != b', 0x48: 'int32_t(a) < int32_t(b)', 0x49: 'a < b', 0x4a: 'int32_t(a) > int32_t(b)',
        0x4b: 'a > b', 0x4c: 'int32_t(a) <= int32_t(b)', 0x4d: 'a <= b', 0x4e: 'int32_t(a) >= int32_t(b)', 0x4f: 'a >= b',
        0x6a: 'a + b', 0x6b: 'a - b', 0x6c: 'a * b', 0x71: 'a & b', 0x72: 'a | b', 0x73: 'a ^ b', 0x74: 'a << (b & 31)',
        0x75: 'uint32_t(int32_t(a) >> (b & 31))', 0x76: 'a >> (b & 31)', 0x77: 'std::rotl(a, int(b & 31))',
        0x78: 'std::rotr(a, int(b & 31))'}
I64B = {0x51: 'a == b', 0x52: 'a != b', 0x53: 'int64_t(a) < int64_t(b)', 0x54: 'a < b', 0x55: 'int64_t(a) > int64_t(b)',
        0x56: 'a > b', 0x57: 'int64_t(a) <= int64_t(b)', 0x58: 'a <= b', 0x59: 'int64_t(a) >= int64_t(b)', 0x5a: 'a >= b',
        0x7c: 'a + b', 0x7d: 'a - b', 0x7e: 'a * b', 0x83: 'a & b', 0x84: 'a | b', 0x85: 'a ^ b', 0x86: 'a << (b & 63)',
        0x87: 'uint64_t(int64_t(a) >> (b & 63))', 0x88: 'a >> (b & 63)', 0x89: 'std::rotl(a, int(b & 63))',
        0x8a: 'std::rotr(a, int(b & 63))'}
F32CMP = {0x5b: '==', 0x5c: '!=', 0x5d: '<', 0x5e: '>', 0x5f: '<=', 0x60: '>='}
F64CMP = {0x61: '==', 0x62: '!=', 0x63: '<', 0x64: '>', 0x65: '<=', 0x66: '>='}
# Unary ops: [op, src, dst]. Float arithmetic results go through canon32/canon64.
U = {0x45: 'uint32_t(S(1)) == 0 ? 1 : 0', 0x50: 'S(1) == 0 ? 1 : 0',
     0x67: 'uint32_t(std::countl_zero(uint32_t(S(1))))', 0x68: 'uint32_t(std::countr_zero(uint32_t(S(1))))',
     0x69: 'uint32_t(std::popcount(uint32_t(S(1))))',
     0x79: 'uint64_t(std::countl_zero(S(1)))', 0x7a: 'uint64_t(std::countr_zero(S(1)))', 0x7b: 'uint64_t(std::popcount(S(1)))',
     0xac: 'uint64_t(int64_t(int32_t(uint32_t(S(1)))))', 0xad: 'uint64_t(uint32_t(S(1)))',
     0xc0: 'uint32_t(int32_t(int8_t(uint8_t(S(1)))))', 0xc1: 'uint32_t(int32_t(int16_t(uint16_t(S(1)))))',
     0xc2: 'uint64_t(int64_t(int8_t(uint8_t(S(1)))))', 0xc3: 'uint64_t(int64_t(int16_t(uint16_t(S(1)))))',
     0xc4: 'uint64_t(int64_t(int32_t(uint32_t(S(1)))))',
     0x8b: 'uint64_t(uint32_t(S(1)) & 0x7fffffffu)', 0x8c: 'uint64_t(uint32_t(S(1)) ^ 0x80000000u)',
     0x8d: 'B32(canon32(std::ceil(F32(S(1)))))', 0x8e: 'B32(canon32(std::floor(F32(S(1)))))',
     0x8f: 'B32(canon32(std::trunc(F32(S(1)))))', 0x90: 'B32(canon32(std::nearbyint(F32(S(1)))))',
     0x91: 'B32(canon32(std::sqrt(F32(S(1)))))',
     0x99: 'S(1) & 0x7fffffffffffffffull', 0x9a: 'S(1) ^ 0x8000000000000000ull',
     0x9b: 'B64(canon64(std::ceil(F64(S(1)))))', 0x9c: 'B64(canon64(std::floor(F64(S(1)))))',
     0x9d: 'B64(canon64(std::trunc(F64(S(1)))))', 0x9e: 'B64(canon64(std::nearbyint(F64(S(1)))))',
     0x9f: 'B64(canon64(std::sqrt(F64(S(1)))))',
     0xb2: 'B32(float(int32_t(uint32_t(S(1)))))', 0xb3: 'B32(float(uint32_t(S(1))))', 0xb4: 'B32(float(int64_t(S(1))))',
     0xb5: 'B32(float(S(1)))', 0xb6: 'B32(canon32(float(F64(S(1)))))',
     0xb7: 'B64(double(int32_t(uint32_t(S(1)))))', 0xb8: 'B64(double(uint32_t(S(1))))', 0xb9: 'B64(double(int64_t(S(1))))',
     0xba: 'B64(double(S(1)))', 0xbb: 'B64(canon64(double(F32(S(1)))))'}
FB = {0x92: 'canon32(a + b)', 0x93: 'canon32(a - b)', 0x94: 'canon32(a * b)', 0x95: 'canon32(a / b)', 0x96: 'fmin(a, b)', 0x97: 'fmax(a, b)'}
DB = {0xa0: 'canon64(a + b)', 0xa1: 'canon64(a - b)', 0xa2: 'canon64(a * b)', 0xa3: 'canon64(a / b)', 0xa4: 'fmin(a, b)', 0xa5: 'fmax(a, b)'}
# Trapping float->int truncations: (source, target type, in-range test after the NaN test).
TR = {0xa8: ('F32', 'int32_t', 'x >= -2147483648.0f && x < 2147483648.0f'),
      0xa9: ('F32', 'uint32_t', 'x > -1.0f && x < 4294967296.0f'),
      0xaa: ('F64', 'int32_t', 'x > -2147483649.0 && x < 2147483648.0'),
      0xab: ('F64', 'uint32_t', 'x > -1.0 && x < 4294967296.0'),
      0xae: ('F32', 'int64_t', 'x >= -9223372036854775808.0f && x < 9223372036854775808.0f'),
      0xaf: ('F32', 'uint64_t', 'x > -1.0f && x < 18446744073709551616.0f'),
      0xb0: ('F64', 'int64_t', 'x >= -9223372036854775808.0 && x < 9223372036854775808.0'),
      0xb1: ('F64', 'uint64_t', 'x > -1.0 && x < 18446744073709551616.0')}
# The halves of a kFuseBase op (ops_table.inc generates FuseOuter/FuseInner from these): outer ops commute.
FUSE_OUTER = [0x6a, 0x71, 0x72, 0x73]  # i32 add and or xor
FUSE_INNER = [(0x6a, False), (0x6b, False), (0x71, False), (0x72, False), (0x73, False),
              (0x74, True), (0x76, True), (0x77, True), (0x78, True)]  # shl shr_u rotl rotr by a constant
SAT = [TR[k] for k in (0xa8, 0xa9, 0xaa, 0xab, 0xae, 0xaf, 0xb0, 0xb1)]  # 0xfc 0..7


FUSE_OUTER_NAMES = ['kAdd', 'kAnd', 'kOr', 'kXor']
FUSE_INNER_NAMES = ['kAdd', 'kSub', 'kAnd', 'kOr', 'kXor', 'kShlImm', 'kShrUImm', 'kRotlImm', 'kRotrImm']

# wasm's mnemonics of the numeric opcodes 0x45..0xc4 (listing names).
_CMP = ['eq', 'ne', 'lt_s', 'lt_u', 'gt_s', 'gt_u', 'le_s', 'le_u', 'ge_s', 'ge_u']
_FCMP = ['eq', 'ne', 'lt', 'gt', 'le', 'ge']
_IBIN = ['add', 'sub', 'mul', 'div_s', 'div_u', 'rem_s', 'rem_u', 'and', 'or', 'xor', 'shl', 'shr_s', 'shr_u', 'rotl', 'rotr']
_FUN = ['abs', 'neg', 'ceil', 'floor', 'trunc', 'nearest', 'sqrt', 'add', 'sub', 'mul', 'div', 'min', 'max', 'copysign']
WASM_NAMES = (['i32.eqz'] + ['i32.' + c for c in _CMP] + ['i64.eqz'] + ['i64.' + c for c in _CMP] +
              ['f32.' + c for c in _FCMP] + ['f64.' + c for c in _FCMP] +
              ['i32.clz', 'i32.ctz', 'i32.popcnt'] + ['i32.' + b for b in _IBIN] +
              ['i64.clz', 'i64.ctz', 'i64.popcnt'] + ['i64.' + b for b in _IBIN] +
              ['f32.' + u for u in _FUN] + ['f64.' + u for u in _FUN] +
              ['i32.wrap_i64', 'i32.trunc_f32_s', 'i32.trunc_f32_u', 'i32.trunc_f64_s', 'i32.trunc_f64_u',
               'i64.extend_i32_s', 'i64.extend_i32_u', 'i64.trunc_f32_s', 'i64.trunc_f32_u', 'i64.trunc_f64_s',
               'i64.trunc_f64_u', 'f32.convert_i32_s', 'f32.convert_i32_u', 'f32.convert_i64_s', 'f32.convert_i64_u',
               'f32.demote_f64', 'f64.convert_i32_s', 'f64.convert_i32_u', 'f64.convert_i64_s', 'f64.convert_i64_u',
               'f64.promote_f32', 'i32.reinterpret_f32', 'i64.reinterpret_f64', 'f32.reinterpret_i32',
               'f64.reinterpret_i64', 'i32.extend8_s', 'i32.extend16_s', 'i64.extend8_s', 'i64.extend16_s',
               'i64.extend32_s'])
assert len(WASM_NAMES) == 0xc5 - 0x45
def wasm_name(op):
    return WASM_NAMES[op - 0x45]
SAT_NAMES = ['i32.trunc_sat_f32_s', 'i32.trunc_sat_f32_u', 'i32.trunc_sat_f64_s', 'i32.trunc_sat_f64_u',
             'i64.trunc_sat_f32_s', 'i64.trunc_sat_f32_u', 'i64.trunc_sat_f64_s', 'i64.trunc_sat_f64_u']
MEM_NAMES = ['i32.load', 'i64.load', 'f32.load', 'f64.load', 'i32.load8_s', 'i32.load8_u', 'i32.load16_s',
             'i32.load16_u', 'i64.load8_s', 'i64.load8_u', 'i64.load16_s', 'i64.load16_u', 'i64.load32_s',
             'i64.load32_u', 'i32.store', 'i64.store', 'f32.store', 'f64.store', 'i32.store8', 'i32.store16',
             'i64.store8', 'i64.store16', 'i64.store32']  # wasm 0x28..0x3e
# Loads share handlers by what they read and how they extend it (interp.cc LOAD_FAMILY): the
# handler kind of each wasm load 0x28..0x35, and of each store 0x36..0x3e.
LOAD_KIND = ['i32_load', 'i64_load', 'i32_load', 'i64_load', 'i32_load8_s', 'i32_load8_u', 'i32_load16_s',
             'i32_load16_u', 'i64_load8_s', 'i32_load8_u', 'i64_load16_s', 'i32_load16_u', 'i64_load32_s', 'i32_load']
STORE_KIND = ['store32', 'store64', 'store32', 'store64', 'store8', 'store16', 'store8', 'store16', 'store32']

# ---------------------------------------------------------------------------------------------
# The opcode table. Each instruction is an opcode word followed by `words` operand words, or
# for a variable-length one Var(head, count_at, per): `head` words (opcode included), then
# `per` words for each of the count in word `count_at`. `branch`: None, 'last' (the last word
# is a code index to jump to) or 'table' (every word after the head is one).

class Var:
    def __init__(self, head, count_at, per):
        self.head, self.count_at, self.per = head, count_at, per

# The named instructions, numbered from 0x100 in this order: (enum name, listing name, words,
# branch, handler label, layout comment).
NAMED = [
    ('kUnreachable', 'unreachable', 0, None, 'op_unreachable', '[]'),
    ('kNondet', 'nondet', 0, None, 'op_nondet', '[] traps nondet_instruction (deterministic mode)'),
    ('kCopy', 'copy', 2, None, 'op_copy', '[src, dst]'),
    ('kConst32', 'const32', 2, None, 'op_const32', '[value, dst]'),
    ('kConst64', 'const64', 3, None, 'op_const64', '[lo, hi, dst]'),
    ('kBr', 'br', 1, 'last', 'op_br', '[target]'),
    ('kBrIfNz', 'br_if_nz', 2, 'last', 'op_br_if_nz', '[cond, target]'),
    ('kBrIfZ', 'br_if_z', 2, 'last', 'op_br_if_z', '[cond, target]'),
    ('kBrTable', 'br_table', Var(3, 2, 1), 'table', 'op_br_table', '[idx, n, target * n]  (last = default)'),
    ('kReturn', 'return', 2, None, 'op_return', '[src, count]'),
    ('kCall', 'call', 2, None, 'op_call', '[func, base]'),
    ('kCallIndirect', 'call_indirect', 4, None, 'op_call_indirect',
     "[type_index, table, idx, base] (the module's own type index: compiled code holds no\n"
     "process-wide id, so it can be cached)"),
    ('kReturnCall', 'return_call', 2, None, 'op_return_call', '[func, base]'),
    ('kReturnCallIndirect', 'return_call_indirect', 4, None, 'op_return_call_indirect', '[type_index, table, idx, base]'),
    ('kSelect', 'select', 4, None, 'op_select', '[a, b, cond, dst]'),
    ('kGlobalGet', 'global.get', 2, None, 'op_global_get', '[global, dst]'),
    ('kGlobalSet', 'global.set', 2, None, 'op_global_set', '[global, src]'),
    ('kMemorySize', 'memory.size', 1, None, 'op_memory_size', '[dst]'),
    ('kMemoryGrow', 'memory.grow', 2, None, 'op_memory_grow', '[delta, dst]'),
    ('kMemoryFill', 'memory.fill', 3, None, 'op_memory_fill', '[d, val, n]'),
    ('kMemoryCopy', 'memory.copy', 3, None, 'op_memory_copy', '[d, s, n]'),
    ('kMemoryInit', 'memory.init', 4, None, 'op_memory_init', '[seg, d, s, n]'),
    ('kDataDrop', 'data.drop', 1, None, 'op_data_drop', '[seg]'),
    ('kTableGet', 'table.get', 3, None, 'op_table_get', '[table, idx, dst]'),
    ('kTableSet', 'table.set', 3, None, 'op_table_set', '[table, idx, val]'),
    ('kTableSize', 'table.size', 2, None, 'op_table_size', '[table, dst]'),
    ('kTableGrow', 'table.grow', 4, None, 'op_table_grow', '[table, init, delta, dst]'),
    ('kTableFill', 'table.fill', 4, None, 'op_table_fill', '[table, i, val, n]'),
    ('kTableCopy', 'table.copy', 5, None, 'op_table_copy', '[dst_table, src_table, d, s, n]'),
    ('kTableInit', 'table.init', 5, None, 'op_table_init', '[table, seg, d, s, n]'),
    ('kElemDrop', 'elem.drop', 1, None, 'op_elem_drop', '[seg]'),
    ('kRefIsNull', 'ref.is_null', 2, None, 'op_ref_is_null', '[src, dst]'),
    ('kRefFunc', 'ref.func', 2, None, 'op_ref_func', '[func, dst]'),
    ('kFuelCheck', 'fuel_check', 1, None, 'op_fuel_check',
     '[n] charge n fuel and check the interrupt flag (function entry, loop head: the start of a\n'
     'fuel region)'),
    ('kCopy2', 'copy2', 4, None, 'op_copy2', '[src1, dst1, src2, dst2] two copies, in that order'),
    ('kCopyBr', 'copy_br', 3, 'last', 'op_copy_br', '[src, dst, target] copy, then branch'),
    ('kCallLocal', 'call_local', 6, None, 'op_call_local',
     '[code, base, cost, frame_slots, num_params, num_locals] a call to a function defined in the\n'
     'same module: its callee facts are written in by compile_functions once all are compiled'),
    ('kCopyN', 'copy_n', Var(2, 1, 2), None, 'op_copy_n', '[n, src1, dst1, ..., srcn, dstn] n >= 3 copies, in order'),
    ('kCopyNBr', 'copy_n_br', Var(3, 1, 2), 'last', 'op_copy_n_br',
     '[n, src1, dst1, ..., srcn, dstn, target] n >= 2 copies, branch'),
    ('kAddImmShl', 'add_imm_shl', 4, None, 'op_add_imm_shl', '[x, k, imm, dst] (x << k) + imm, i32'),
    ('kCopyAddImm', 'copy_add_imm', 4, None, 'op_copy_add_imm', '[s, d, k, r] d = s, then r = d + k (i32): from jump threading'),
]

# The families: (enum name of the base, value, comment). Members are added by build_table.
FAMILIES = [
    ('kTruncSatBase', 0xc5, '+ (0xfc sub-opcode 0..7): the eight trunc_sat ops, [src, dst]'),
    ('kLoadBase', 0x200, '+ wasm opcode 0x28..0x35: [addr, offset, dst]\n+ wasm opcode 0x36..0x3e: [addr, value, offset]'),
    ('kImmBase', 0x240,
     'Binary ops with an immediate second operand: kImmBase + (wasm op - 0x40), for the i32/i64\n'
     'compares, add/sub/mul, div/rem (by neither 0 nor -1: they cannot trap), bitwise ops,\n'
     'shifts and rotates: [op, a, imm32, dst]. i64 immediates are sign-extended from 32 bits.'),
    ('kBrIfCmpBase', 0x2d0,
     'Compare fused with a conditional branch: + (wasm op - 0x45) for eqz and the i32/i64\n'
     'compares. "If" variants branch when the compare is true, "Ifn" when it is false.\n'
     'Binary: [op, a, b, target]; immediate: [op, a, imm32, target]; eqz: [op, a, target].'),
    ('kBrIfCmpImmBase', 0x2f0, None),
    ('kBrIfnCmpBase', 0x310, None),
    ('kBrIfnCmpImmBase', 0x330, None),
    ('kLoadAddImmBase', 0x350,
     'Loads whose address is an i32.add computed just before (the sum is not kept), one dispatch\n'
     'instead of two; the effective address is still uint32(a + b) + offset, exactly as wasm:\n'
     '+ wasm opcode 0x28..0x35 - 0x28. AddImm: [a, imm, offset, dst]; Add: [a, b, offset, dst].'),
    ('kLoadAddBase', 0x360, None),
    ('kFuseBase', 0x370,
     'An i32 add/and/or/xor (outer, index 0..3) whose operand is the result of the i32\n'
     'instruction just before it (inner, index 0..8: add sub and or xor, then shl shr_u rotl\n'
     'rotr by a constant), the inner result not kept: + outer * 16 + inner\n'
     '(fused_op), [op, other, x, y_or_k, dst] = other OUTER (x INNER y). Chosen from\n'
     "executed-pair counts (sha256's rotate/xor/add chains, array indexing `base + (i << k)`)."),
    ('kLoadAddShlBase', 0x3b0,
     'Loads whose address is a fused_op(kAdd, kShlImm) just before: + (wasm op - 0x28),\n'
     '[a, b, k, offset, dst], ea = uint32(a + (b << k)) + offset.'),
    ('kImm64Base', 0x3c0,
     'i64 binary ops with a 64-bit immediate: kImm64Base + (wasm op - 0x40), [a, lo, hi, dst],\n'
     'for the i64 ops of kImmBase whose constant does not fit 32 signed bits, and for i64\n'
     'div/rem (immediate not 0 or -1). i32 div/rem by such a constant use kImmBase.'),
    ('kLoadShlImmBase', 0x410,
     'Loads whose address is a kAddImmShl just before: + (wasm op - 0x28),\n'
     '[x, k, imm, offset, dst], ea = uint32((x << k) + imm) + offset.'),
]
FAM = {name: value for name, value, _ in FAMILIES}
NUM_OPS = 0x420
FUSE_OP_NAMES = {0x6a: 'add', 0x71: 'and', 0x72: 'or', 0x73: 'xor', 0x6b: 'sub', 0x74: 'shl_imm',
                 0x76: 'shr_u_imm', 0x77: 'rotl_imm', 0x78: 'rotr_imm'}


class Entry:
    def __init__(self, value, name, words, branch, label):
        self.value, self.name, self.words, self.branch, self.label = value, name, words, branch, label


def build_table(handlers):
    """Every opcode the interpreter runs: value -> Entry. `handlers` maps a generated handler's
    opcode to its label (the numeric, immediate, compare-branch, loop-step and fused ones)."""
    t = {}

    def add(value, name, words, branch, label):
        assert 0 <= value < NUM_OPS and value not in t, hex(value)
        t[value] = Entry(value, name, words, branch, label)

    binary = set(I32B) | set(I64B) | set(F32CMP) | set(F64CMP) | set(FB) | set(DB) | {0x6d, 0x6e, 0x6f, 0x70, 0x7f, 0x80, 0x81, 0x82, 0x98, 0xa6}
    for op in range(0x45, 0xc5):
        if op in handlers:
            add(op, wasm_name(op), 3 if op in binary else 2, None, handlers[op])
    for k in range(8):
        add(FAM['kTruncSatBase'] + k, SAT_NAMES[k], 2, None, handlers[FAM['kTruncSatBase'] + k])
    for value, (enum, name, words, branch, label, _) in enumerate(NAMED, 0x100):
        add(value, name, words, branch, label)
    for k in range(14):
        n, kind = MEM_NAMES[k], LOAD_KIND[k]
        add(FAM['kLoadBase'] + 0x28 + k, n, 3, None, f'op_ld_{kind}')
        add(FAM['kLoadAddImmBase'] + k, n + '[a+imm]', 4, None, f'op_ai_{kind}')
        add(FAM['kLoadAddBase'] + k, n + '[a+b]', 4, None, f'op_aa_{kind}')
        add(FAM['kLoadAddShlBase'] + k, n + '[a+(b<<k)]', 5, None, f'op_as_{kind}')
        add(FAM['kLoadShlImmBase'] + k, n + '[(x<<k)+imm]', 5, None, f'op_si_{kind}')
    for k in range(9):
        add(FAM['kLoadBase'] + 0x36 + k, MEM_NAMES[14 + k], 3, None, f'op_{STORE_KIND[k]}')
    for value, label in handlers.items():
        if value in t:
            continue
        if FAM['kImmBase'] <= value < FAM['kBrIfCmpBase']:
            add(value, wasm_name(value - FAM['kImmBase'] + 0x40) + '_imm', 3, None, label)
        elif FAM['kImm64Base'] <= value < FAM['kLoadShlImmBase']:
            add(value, wasm_name(value - FAM['kImm64Base'] + 0x40) + '_imm64', 4, None, label)
        elif FAM['kBrIfCmpBase'] <= value < FAM['kLoadAddImmBase']:
            fam = (value - FAM['kBrIfCmpBase']) // 0x20
            cmp = (value - FAM['kBrIfCmpBase']) % 0x20 + 0x45
            eqz = cmp in (0x45, 0x50)
            name = ('br_if.' if fam in (0, 1) else 'br_unless.') + wasm_name(cmp) + ('_imm' if fam in (1, 3) else '')
            add(value, name, 2 if eqz else 3, 'last', label)
        elif FAM['kFuseBase'] <= value < FAM['kLoadAddShlBase']:
            oi, ii = divmod(value - FAM['kFuseBase'], 16)
            add(value, f"i32.{FUSE_OP_NAMES[FUSE_OUTER[oi]]}({FUSE_OP_NAMES[FUSE_INNER[ii][0]]})", 4, None, label)
        else:
            raise AssertionError(f'handler {label} at {value:#x} is in no family')
    return t


def comment(text, indent):
    return '\n'.join(indent + '// ' + line for line in text.split('\n'))


def ops_table(t):
    out = ['// Generated by gen_ops.py (the one definition of the slot code); included by ops.h.',
           'enum Op : uint32_t {']
    members = []
    for name, value, doc in FAMILIES:
        members.append((value, name, doc))
    for value, (name, _, _, _, _, doc) in enumerate(NAMED, 0x100):
        members.append((value, name, doc))
    members.append((FAM['kFuseBase'] + 5, 'kFuseAddShl', 'fused_op(FuseOuter::kAdd, FuseInner::kShlImm)'))
    members.append((NUM_OPS, 'kNumOps', None))
    for value, name, doc in sorted(members):
        if doc and '\n' in doc or (doc and len(doc) > 60):
            out.append(comment(doc, '  '))
            out.append(f'  {name} = {value:#x},')
        elif doc:
            out.append(f'  {name} = {value:#x},  // {doc}')
        else:
            out.append(f'  {name} = {value:#x},')
    out.append('};')
    out.append('')
    out.append('// The halves of a kFuseBase op `other OUTER (x INNER y)` (the inner shifts and rotates take')
    out.append('// a constant y); see fused_op in ops.h.')
    out.append('enum class FuseOuter : uint32_t { ' + ', '.join(FUSE_OUTER_NAMES) + ' };')
    out.append('enum class FuseInner : uint32_t { ' + ', '.join(FUSE_INNER_NAMES) + ' };')
    assert len(FUSE_OUTER_NAMES) == len(FUSE_OUTER) and len(FUSE_INNER_NAMES) == len(FUSE_INNER)
    out.append('')
    out.append('// Each opcode\'s shape: `head` words (opcode included), plus `per_count` words times the')
    out.append('// value of word `count_at` (variable-length instructions), and which words are branch')
    out.append('// targets. An opcode no handler runs has head 1 (its opcode word alone).')
    out.append('inline constexpr OpShape kOpShapes[kNumOps] = {')
    names = []
    run = 0

    def flush():
        nonlocal run
        while run:
            n = min(run, 8)
            out.append('    ' + ' '.join(['{1, 0, 0, kNoBranch},'] * n))
            names.append('    ' + ' '.join(['nullptr,'] * n))
            run -= n

    for v in range(NUM_OPS):
        e = t.get(v)
        if e is None:
            run += 1
            continue
        flush()
        br = {None: 'kNoBranch', 'last': 'kLastWordBranch', 'table': 'kTableBranch'}[e.branch]
        if isinstance(e.words, Var):
            shape = f'{{{e.words.head}, {e.words.count_at}, {e.words.per}, {br}}}'
        else:
            shape = f'{{{e.words + 1}, 0, 0, {br}}}'
        out.append(f'    {shape},  // {v:#x} {e.name}')
        names.append(f'    "{e.name}",  // {v:#x}')
    flush()
    out.append('};')
    out.append('')
    out.append('// Listing names (genvm-wasm dump); nullptr where no handler runs the opcode.')
    out.append('inline constexpr const char* kOpNames[kNumOps] = {')
    out.extend(names)
    out.append('};')
    return '\n'.join(out) + '\n'


def dispatch_table(t):
    out = ['// Generated by gen_ops.py: the interpreter\'s dispatch table, one handler label per opcode',
           '// (op_bad where none runs it), in opcode order. Included by interp.cc.']
    bad = 0
    for v in range(NUM_OPS + 1):
        e = t.get(v)
        if e is None and v < NUM_OPS:
            bad += 1
            continue
        while bad:
            n = min(bad, 8)
            out.append(' '.join(['&&op_bad,'] * n))
            bad -= n
        if e is not None:
            out.append(f'&&{e.label},  // {v:#x} {e.name}')
    return '\n'.join(out) + '\n'
def main():
    out, handlers = [], {}

    def h(name, body, key=None):
        out.append(f"  {name}: {{ {body} }}")
        if key is None:
            key = int(name[3:], 16)  # op_0x6a: the numeric op itself
        assert key not in handlers, name
        handlers[key] = name

    base = []
    for op, e in I32B.items():
        h(f"op_{op:#04x}", f"uint32_t a = uint32_t(S(1)), b = uint32_t(S(2)); S(3) = uint64_t(uint32_t({e})); pc += 4; NEXT();")
    for op, e in I64B.items():
        h(f"op_{op:#04x}", f"uint64_t a = S(1), b = S(2); S(3) = uint64_t({e}); pc += 4; NEXT();")
    for op, c in F32CMP.items():
        h(f"op_{op:#04x}", f"float a = F32(S(1)), b = F32(S(2)); S(3) = (a {c} b) ? 1 : 0; pc += 4; NEXT();")
    for op, c in F64CMP.items():
        h(f"op_{op:#04x}", f"double a = F64(S(1)), b = F64(S(2)); S(3) = (a {c} b) ? 1 : 0; pc += 4; NEXT();")
    h("op_0x6d", "int32_t a = int32_t(S(1)), b = int32_t(S(2)); if (b == 0) TRAP(kIntegerDivideByZero); if (a == INT32_MIN && b == -1) TRAP(kIntegerOverflow); S(3) = uint32_t(a / b); pc += 4; NEXT();")
    h("op_0x6e", "uint32_t a = uint32_t(S(1)), b = uint32_t(S(2)); if (b == 0) TRAP(kIntegerDivideByZero); S(3) = a / b; pc += 4; NEXT();")
    h("op_0x6f", "int32_t a = int32_t(S(1)), b = int32_t(S(2)); if (b == 0) TRAP(kIntegerDivideByZero); S(3) = (b == -1) ? 0 : uint32_t(a % b); pc += 4; NEXT();")
    h("op_0x70", "uint32_t a = uint32_t(S(1)), b = uint32_t(S(2)); if (b == 0) TRAP(kIntegerDivideByZero); S(3) = a % b; pc += 4; NEXT();")
    h("op_0x7f", "int64_t a = int64_t(S(1)), b = int64_t(S(2)); if (b == 0) TRAP(kIntegerDivideByZero); if (a == INT64_MIN && b == -1) TRAP(kIntegerOverflow); S(3) = uint64_t(a / b); pc += 4; NEXT();")
    h("op_0x80", "uint64_t a = S(1), b = S(2); if (b == 0) TRAP(kIntegerDivideByZero); S(3) = a / b; pc += 4; NEXT();")
    h("op_0x81", "int64_t a = int64_t(S(1)), b = int64_t(S(2)); if (b == 0) TRAP(kIntegerDivideByZero); S(3) = (b == -1) ? 0 : uint64_t(a % b); pc += 4; NEXT();")
    h("op_0x82", "uint64_t a = S(1), b = S(2); if (b == 0) TRAP(kIntegerDivideByZero); S(3) = a % b; pc += 4; NEXT();")
    for op, e in U.items():
        h(f"op_{op:#04x}", f"S(2) = {e}; pc += 3; NEXT();")
    for op, e in FB.items():
        h(f"op_{op:#04x}", f"float a = F32(S(1)), b = F32(S(2)); S(3) = B32({e}); pc += 4; NEXT();")
    h("op_0x98", "S(3) = (uint32_t(S(1)) & 0x7fffffffu) | (uint32_t(S(2)) & 0x80000000u); pc += 4; NEXT();")
    for op, e in DB.items():
        h(f"op_{op:#04x}", f"double a = F64(S(1)), b = F64(S(2)); S(3) = B64({e}); pc += 4; NEXT();")
    h("op_0xa6", "S(3) = (S(1) & 0x7fffffffffffffffull) | (S(2) & 0x8000000000000000ull); pc += 4; NEXT();")
    for op, (f, t, cond) in TR.items():
        st = 'uint64_t(uint32_t(v))' if '32' in t else 'uint64_t(v)'
        h(f"op_{op:#04x}", f"auto x = {f}(S(1)); if (x != x) TRAP(kBadConversionToInteger); if (!({cond})) TRAP(kIntegerOverflow); {t} v = {t}(x); S(2) = {st}; pc += 3; NEXT();")
    for i, (f, t, cond) in enumerate(SAT):
        st = 'uint64_t(uint32_t(v))' if '32' in t else 'uint64_t(v)'
        h(f"op_{0xc5 + i:#04x}", f"auto x = {f}(S(1)); {t} v; if (x != x) v = 0; else if ({cond}) v = {t}(x); else v = x < 0 ? std::numeric_limits<{t}>::min() : std::numeric_limits<{t}>::max(); S(2) = {st}; pc += 3; NEXT();")
    numeric = "\n".join(out)

    out.clear()
    for op, e in I32B.items():
        h(f"op_imm_{op:#04x}", f"uint32_t a = uint32_t(S(1)), b = pc[2]; S(3) = uint64_t(uint32_t({e})); pc += 4; NEXT();", FAM['kImmBase'] + op - 0x40)
    for op, e in I64B.items():
        h(f"op_imm_{op:#04x}", f"uint64_t a = S(1), b = uint64_t(int64_t(int32_t(pc[2]))); S(3) = uint64_t({e}); pc += 4; NEXT();", FAM['kImmBase'] + op - 0x40)
    for op, e in I64B.items():
        h(f"op_imm64_{op:#04x}", f"uint64_t a = S(1), b = uint64_t(pc[2]) | (uint64_t(pc[3]) << 32); S(4) = uint64_t({e}); pc += 5; NEXT();", FAM['kImm64Base'] + op - 0x40)
    # Division by a constant that is neither 0 nor -1 (the compiler's rule): no trap checks.
    for op, e in {0x6d: 'uint32_t(int32_t(a) / int32_t(b))', 0x6e: 'a / b', 0x6f: 'uint32_t(int32_t(a) % int32_t(b))', 0x70: 'a % b'}.items():
        h(f"op_imm_{op:#04x}", f"uint32_t a = uint32_t(S(1)), b = pc[2]; S(3) = uint64_t(uint32_t({e})); pc += 4; NEXT();", FAM['kImmBase'] + op - 0x40)
    for op, e in {0x7f: 'uint64_t(int64_t(a) / int64_t(b))', 0x80: 'a / b', 0x81: 'uint64_t(int64_t(a) % int64_t(b))', 0x82: 'a % b'}.items():
        h(f"op_imm64_{op:#04x}", f"uint64_t a = S(1), b = uint64_t(pc[2]) | (uint64_t(pc[3]) << 32); S(4) = {e}; pc += 5; NEXT();", FAM['kImm64Base'] + op - 0x40)
    for op in list(range(0x46, 0x50)) + list(range(0x51, 0x5b)):
        e = I32B.get(op) or I64B.get(op)
        t = 'uint32_t' if op < 0x50 else 'uint64_t'
        av = 'uint32_t(S(1))' if op < 0x50 else 'S(1)'
        for imm in (False, True):
            bv = ('pc[2]' if op < 0x50 else 'uint64_t(int64_t(int32_t(pc[2])))') if imm else ('uint32_t(S(2))' if op < 0x50 else 'S(2)')
            for neg in (False, True):
                kbase = FAM[{(False, False): 'kBrIfCmpBase', (True, False): 'kBrIfCmpImmBase', (False, True): 'kBrIfnCmpBase', (True, True): 'kBrIfnCmpImmBase'}[(imm, neg)]]
                cond = f"(!({e}))" if neg else f"({e})"
                h(f"op_br{'n' if neg else ''}{'i' if imm else ''}_{op:#04x}", f"{t} a = {av}, b = {bv}; if {cond} pc = code + pc[3]; else pc += 4; NEXT();", kbase + op - 0x45)
    for op, t, av in ((0x45, 'uint32_t', 'uint32_t(S(1))'), (0x50, 'uint64_t', 'S(1)')):
        for neg in (False, True):
            cond = "(a != 0)" if neg else "(a == 0)"
            h(f"op_br{'n' if neg else ''}_{op:#04x}", f"{t} a = {av}; if {cond} pc = code + pc[2]; else pc += 3; NEXT();", FAM['kBrIfnCmpBase' if neg else 'kBrIfCmpBase'] + op - 0x45)
    # i32 binop whose operand is the result of the i32 instruction just before it: one
    # dispatch for `other OUTER (x INNER y)`, [op, other, x, y|k, dst] (see ops.h kFuseBase).
    def xy(e):
        return re.sub(r'\bb\b', 'y', re.sub(r'\ba\b', 'x', e))
    for oi, oop in enumerate(FUSE_OUTER):
        for ii, (iop, imm) in enumerate(FUSE_INNER):
            yv = 'pc[3]' if imm else 'uint32_t(S(3))'
            h(f"op_fuse_{oi}_{ii}", f"uint32_t x = uint32_t(S(2)), y = {yv}; uint32_t b = uint32_t({xy(I32B[iop])}); uint32_t a = uint32_t(S(1)); S(4) = uint64_t(uint32_t({I32B[oop]})); pc += 5; NEXT();", FAM['kFuseBase'] + oi * 16 + ii)
    fused = "\n".join(out)
    table = build_table(handlers)
    files = {
        'ops_table.inc': ops_table(table),
        'interp_numeric.inc': "// Generated by gen_ops.py; numeric handlers (included by interp.cc).\n" + numeric + "\n" +
                              "// Immediate-operand and fused compare-branch handlers.\n" + fused + "\n",
        'interp_dispatch.inc': dispatch_table(table),
    }
    here = os.path.dirname(os.path.abspath(__file__))
    check = sys.argv[1:] == ['--check']
    if sys.argv[1:] and not check:
        print(__doc__.strip())
        return 0 if sys.argv[1:] in (['--help'], ['-h']) else 2
    stale = []
    for name, text in files.items():
        path = os.path.join(here, name)
        if check:
            try:
                with open(path) as f:
                    if f.read() == text:
                        continue
            except OSError:
                pass
            stale.append(name)
        else:
            with open(path, 'w') as f:
                f.write(text)
    if stale:
        print('gen_ops.py: checked-in output differs from the generator: ' + ', '.join(stale) +
              ' (run python3 src/wasm/gen_ops.py and commit)', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
