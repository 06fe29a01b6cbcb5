#!/usr/bin/env python3
"""Generates interp_numeric.inc (numeric, immediate and fused compare-branch handlers) and
interp_numeric_reg.inc (their label registrations), both included by interp.cc.

Run from src/wasm: `python3 gen_interp_numeric.py`. The semantics table lives here so each
handler is one reviewed line; edit here, regenerate, and commit all three files."""

import re

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
# Fused pairs (keep in sync with fuse_outer/fuse_inner in compile.cc): outer ops commute.
FUSE_OUTER = [0x6a, 0x71, 0x72, 0x73]  # i32 add and or xor
FUSE_INNER = [(0x6a, False), (0x6b, False), (0x71, False), (0x72, False), (0x73, False),
              (0x74, True), (0x76, True), (0x77, True), (0x78, True),  # shl shr_u rotl rotr by a constant
              ('andn', False)]  # kAndNot32: x & ~y (SHA-2's choose, Keccak's chi)
I32B_X = dict(I32B, andn='a & ~b')
SAT = [TR[k] for k in (0xa8, 0xa9, 0xaa, 0xab, 0xae, 0xaf, 0xb0, 0xb1)]  # 0xfc 0..7


def main():
    out, reg = [], []

    def h(name, body, key=None):
        out.append(f"  {name}: {{ {body} }}")
        if key is not None:
            reg.append((key, name))

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
    ops = sorted(set(int(l.split(':')[0].strip()[3:], 16) for l in out))
    numeric = "\n".join(out)
    numeric_reg = ' '.join(f"L[{o:#04x}] = &&op_{o:#04x};" for o in ops)

    out.clear()
    for op, e in I32B.items():
        h(f"op_imm_{op:#04x}", f"uint32_t a = uint32_t(S(1)), b = pc[2]; S(3) = uint64_t(uint32_t({e})); pc += 4; NEXT();", f"kImmBase + {op - 0x40:#x}")
    for op, e in I64B.items():
        h(f"op_imm_{op:#04x}", f"uint64_t a = S(1), b = uint64_t(int64_t(int32_t(pc[2]))); S(3) = uint64_t({e}); pc += 4; NEXT();", f"kImmBase + {op - 0x40:#x}")
    for op, e in I64B.items():
        h(f"op_imm64_{op:#04x}", f"uint64_t a = S(1), b = uint64_t(pc[2]) | (uint64_t(pc[3]) << 32); S(4) = uint64_t({e}); pc += 5; NEXT();", f"kImm64Base + {op - 0x40:#x}")
    # Division by a constant that is neither 0 nor -1 (the compiler's rule): no trap checks.
    for op, e in {0x6d: 'uint32_t(int32_t(a) / int32_t(b))', 0x6e: 'a / b', 0x6f: 'uint32_t(int32_t(a) % int32_t(b))', 0x70: 'a % b'}.items():
        h(f"op_imm_{op:#04x}", f"uint32_t a = uint32_t(S(1)), b = pc[2]; S(3) = uint64_t(uint32_t({e})); pc += 4; NEXT();", f"kImmBase + {op - 0x40:#x}")
    for op, e in {0x7f: 'uint64_t(int64_t(a) / int64_t(b))', 0x80: 'a / b', 0x81: 'uint64_t(int64_t(a) % int64_t(b))', 0x82: 'a % b'}.items():
        h(f"op_imm64_{op:#04x}", f"uint64_t a = S(1), b = uint64_t(pc[2]) | (uint64_t(pc[3]) << 32); S(4) = {e}; pc += 5; NEXT();", f"kImm64Base + {op - 0x40:#x}")
    for op in list(range(0x46, 0x50)) + list(range(0x51, 0x5b)):
        e = I32B.get(op) or I64B.get(op)
        t = 'uint32_t' if op < 0x50 else 'uint64_t'
        av = 'uint32_t(S(1))' if op < 0x50 else 'S(1)'
        for imm in (False, True):
            bv = ('pc[2]' if op < 0x50 else 'uint64_t(int64_t(int32_t(pc[2])))') if imm else ('uint32_t(S(2))' if op < 0x50 else 'S(2)')
            for neg in (False, True):
                kbase = {(False, False): 'kBrIfCmpBase', (True, False): 'kBrIfCmpImmBase', (False, True): 'kBrIfnCmpBase', (True, True): 'kBrIfnCmpImmBase'}[(imm, neg)]
                cond = f"(!({e}))" if neg else f"({e})"
                h(f"op_br{'n' if neg else ''}{'i' if imm else ''}_{op:#04x}", f"{t} a = {av}, b = {bv}; if {cond} pc = code + pc[3]; else pc += 4; NEXT();", f"{kbase} + {op - 0x45:#x}")
    for op, t, av in ((0x45, 'uint32_t', 'uint32_t(S(1))'), (0x50, 'uint64_t', 'S(1)')):
        for neg in (False, True):
            cond = "(a != 0)" if neg else "(a == 0)"
            h(f"op_br{'n' if neg else ''}_{op:#04x}", f"{t} a = {av}; if {cond} pc = code + pc[2]; else pc += 3; NEXT();", f"{'kBrIfnCmpBase' if neg else 'kBrIfCmpBase'} + {op - 0x45:#x}")
    # A counted loop's step: `i += k` (i32, in place) then a compare of the new i that branches
    # (see ops.h kIncBrIfBase): [op, i, k, b|imm, target], eqz: [op, i, k, target]. The compare
    # reads b after i is written, as the two instructions did.
    for neg in (False, True):
        for imm in (False, True):
            fam = (2 if neg else 0) + (1 if imm else 0)
            for op in [0x45] + list(range(0x46, 0x50)):
                if op == 0x45:
                    if imm:
                        continue
                    e, words = 'a == 0', 4
                    bdecl = ''
                else:
                    e, words = I32B[op], 5
                    bdecl = f", b = {'pc[3]' if imm else 'uint32_t(S(3))'}"
                cond = f"(!({e}))" if neg else f"({e})"
                name = f"op_inc_br{'n' if neg else ''}{'i' if imm else ''}_{op:#04x}"
                h(name, f"uint32_t a = uint32_t(S(1)) + pc[2]; S(1) = a; uint32_t t = pc[{words - 1}]{bdecl}; if {cond} pc = code + t; else pc += {words}; NEXT();",
                  f"kIncBrIfBase + {fam * 16 + op - 0x45:#x}")
    # i32 binop whose operand is the result of the i32 instruction just before it: one
    # dispatch for `other OUTER (x INNER y)`, [op, other, x, y|k, dst] (see ops.h kFuseBase).
    def xy(e):
        return re.sub(r'\bb\b', 'y', re.sub(r'\ba\b', 'x', e))
    for oi, oop in enumerate(FUSE_OUTER):
        for ii, (iop, imm) in enumerate(FUSE_INNER):
            yv = 'pc[3]' if imm else 'uint32_t(S(3))'
            h(f"op_fuse_{oi}_{ii}", f"uint32_t x = uint32_t(S(2)), y = {yv}; uint32_t b = uint32_t({xy(I32B_X[iop])}); uint32_t a = uint32_t(S(1)); S(4) = uint64_t(uint32_t({I32B[oop]})); pc += 5; NEXT();", f"kFuseBase + {oi * 16 + ii:#x}")
    fused = "\n".join(out)
    with open('interp_numeric.inc', 'w') as f:
        f.write("// Generated by gen_interp_numeric.py; numeric handlers (included by interp.cc).\n" + numeric + "\n")
        f.write("// Immediate-operand and fused compare-branch handlers.\n" + fused + "\n")
    with open('interp_numeric_reg.inc', 'w') as f:
        f.write("// Generated by gen_interp_numeric.py: label registration for interp_numeric.inc.\n" + numeric_reg + "\n")
        f.write(' '.join(f"L[{k}] = &&{n};" for k, n in reg) + "\n")


if __name__ == '__main__':
    main()
