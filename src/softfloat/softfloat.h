/* gvmsf: IEEE-754 binary32/binary64 arithmetic in integers, with WebAssembly's semantics.
 *
 * Deterministic mode traps every float instruction; CPython's second build has each one
 * rewritten into a call to the function of the same mnemonic here ('.' -> '_', prefixed
 * `gvmsf_`). Floats travel as their bit patterns: uint32_t for f32, uint64_t for f64 (what
 * wasm's reinterpret instructions produce), integers as the wasm type's width, compares as
 * int32_t 0/1. The library is freestanding C11 without a single float type or operation, so
 * the same bits come out on every machine and compiled to wasm it needs no float instruction.
 *
 * Semantics are wasm's: round to nearest, ties to even; correct rounding; subnormals kept;
 * min/max order -0 below +0. Every NaN a computation produces is the positive canonical quiet
 * NaN (GVMSF_F32_NAN / GVMSF_F64_NAN), whatever the operands' payloads; abs, neg and copysign
 * are bit operations and keep payloads. The trapping truncations are split in two: `_valid`
 * says whether the wasm instruction would succeed (1) or trap (0); the value comes from the
 * matching trunc_sat function. docs/PROTOCOLS.md "Software float" is the contract. */
#ifndef GENVM_SOFTFLOAT_SOFTFLOAT_H
#define GENVM_SOFTFLOAT_SOFTFLOAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GVMSF_F32_NAN UINT32_C(0x7fc00000)
#define GVMSF_F64_NAN UINT64_C(0x7ff8000000000000)

/* f32 arithmetic */
uint32_t gvmsf_f32_add(uint32_t a, uint32_t b);
uint32_t gvmsf_f32_sub(uint32_t a, uint32_t b);
uint32_t gvmsf_f32_mul(uint32_t a, uint32_t b);
uint32_t gvmsf_f32_div(uint32_t a, uint32_t b);
uint32_t gvmsf_f32_min(uint32_t a, uint32_t b);
uint32_t gvmsf_f32_max(uint32_t a, uint32_t b);
uint32_t gvmsf_f32_copysign(uint32_t a, uint32_t b);
uint32_t gvmsf_f32_sqrt(uint32_t a);
uint32_t gvmsf_f32_ceil(uint32_t a);
uint32_t gvmsf_f32_floor(uint32_t a);
uint32_t gvmsf_f32_trunc(uint32_t a);
uint32_t gvmsf_f32_nearest(uint32_t a);
uint32_t gvmsf_f32_abs(uint32_t a);
uint32_t gvmsf_f32_neg(uint32_t a);

/* f64 arithmetic */
uint64_t gvmsf_f64_add(uint64_t a, uint64_t b);
uint64_t gvmsf_f64_sub(uint64_t a, uint64_t b);
uint64_t gvmsf_f64_mul(uint64_t a, uint64_t b);
uint64_t gvmsf_f64_div(uint64_t a, uint64_t b);
uint64_t gvmsf_f64_min(uint64_t a, uint64_t b);
uint64_t gvmsf_f64_max(uint64_t a, uint64_t b);
uint64_t gvmsf_f64_copysign(uint64_t a, uint64_t b);
uint64_t gvmsf_f64_sqrt(uint64_t a);
uint64_t gvmsf_f64_ceil(uint64_t a);
uint64_t gvmsf_f64_floor(uint64_t a);
uint64_t gvmsf_f64_trunc(uint64_t a);
uint64_t gvmsf_f64_nearest(uint64_t a);
uint64_t gvmsf_f64_abs(uint64_t a);
uint64_t gvmsf_f64_neg(uint64_t a);

/* compares: 1 or 0; any NaN operand makes all false except ne */
int32_t gvmsf_f32_eq(uint32_t a, uint32_t b);
int32_t gvmsf_f32_ne(uint32_t a, uint32_t b);
int32_t gvmsf_f32_lt(uint32_t a, uint32_t b);
int32_t gvmsf_f32_gt(uint32_t a, uint32_t b);
int32_t gvmsf_f32_le(uint32_t a, uint32_t b);
int32_t gvmsf_f32_ge(uint32_t a, uint32_t b);
int32_t gvmsf_f64_eq(uint64_t a, uint64_t b);
int32_t gvmsf_f64_ne(uint64_t a, uint64_t b);
int32_t gvmsf_f64_lt(uint64_t a, uint64_t b);
int32_t gvmsf_f64_gt(uint64_t a, uint64_t b);
int32_t gvmsf_f64_le(uint64_t a, uint64_t b);
int32_t gvmsf_f64_ge(uint64_t a, uint64_t b);

/* integer -> float (correctly rounded) */
uint32_t gvmsf_f32_convert_i32_s(int32_t a);
uint32_t gvmsf_f32_convert_i32_u(uint32_t a);
uint32_t gvmsf_f32_convert_i64_s(int64_t a);
uint32_t gvmsf_f32_convert_i64_u(uint64_t a);
uint64_t gvmsf_f64_convert_i32_s(int32_t a);
uint64_t gvmsf_f64_convert_i32_u(uint32_t a);
uint64_t gvmsf_f64_convert_i64_s(int64_t a);
uint64_t gvmsf_f64_convert_i64_u(uint64_t a);

/* float <-> float */
uint32_t gvmsf_f32_demote_f64(uint64_t a);
uint64_t gvmsf_f64_promote_f32(uint32_t a);

/* float -> integer, saturating (NaN -> 0) */
int32_t gvmsf_i32_trunc_sat_f32_s(uint32_t a);
uint32_t gvmsf_i32_trunc_sat_f32_u(uint32_t a);
int32_t gvmsf_i32_trunc_sat_f64_s(uint64_t a);
uint32_t gvmsf_i32_trunc_sat_f64_u(uint64_t a);
int64_t gvmsf_i64_trunc_sat_f32_s(uint32_t a);
uint64_t gvmsf_i64_trunc_sat_f32_u(uint32_t a);
int64_t gvmsf_i64_trunc_sat_f64_s(uint64_t a);
uint64_t gvmsf_i64_trunc_sat_f64_u(uint64_t a);

/* the trapping truncations: 1 when i{32,64}.trunc_f{32,64}_{s,u} would not trap (then its
 * value is the matching trunc_sat's), 0 when it traps (NaN or out of range) */
int32_t gvmsf_i32_trunc_f32_s_valid(uint32_t a);
int32_t gvmsf_i32_trunc_f32_u_valid(uint32_t a);
int32_t gvmsf_i32_trunc_f64_s_valid(uint64_t a);
int32_t gvmsf_i32_trunc_f64_u_valid(uint64_t a);
int32_t gvmsf_i64_trunc_f32_s_valid(uint32_t a);
int32_t gvmsf_i64_trunc_f32_u_valid(uint32_t a);
int32_t gvmsf_i64_trunc_f64_s_valid(uint64_t a);
int32_t gvmsf_i64_trunc_f64_u_valid(uint64_t a);

#ifdef __cplusplus
}
#endif

#endif /* GENVM_SOFTFLOAT_SOFTFLOAT_H */
