// The peephole fusions as ordered rule tables (see fusion.h and DESIGN.md,
// "Superinstructions"). Each matcher only reads the window: the compiler applies the
// replacement (pops, pushes, trap offsets stay its business).
#include "wasm/fusion.h"

#include <iterator>
#include <string>

namespace genvm::wasm {
namespace {

// The inner half of a kFuseBase op: what the fresh producer of an operand is, if it can be.
// FuseInner is generated from FUSE_INNER in gen_ops.py.
std::optional<FuseInner> fuse_inner(uint32_t code_op) {
  switch (code_op) {
    case 0x6a: return FuseInner::kAdd;
    case 0x6b: return FuseInner::kSub;
    case 0x71: return FuseInner::kAnd;
    case 0x72: return FuseInner::kOr;
    case 0x73: return FuseInner::kXor;
    case imm_op(0x74): return FuseInner::kShlImm;
    case imm_op(0x76): return FuseInner::kShrUImm;
    case imm_op(0x77): return FuseInner::kRotlImm;
    case imm_op(0x78): return FuseInner::kRotrImm;
    default: return std::nullopt;
  }
}
// The outer half (the consumer). FuseOuter is generated from FUSE_OUTER in gen_ops.py.
std::optional<FuseOuter> fuse_outer(uint32_t wasm_op) {
  switch (wasm_op) {
    case 0x6a: return FuseOuter::kAdd;
    case 0x71: return FuseOuter::kAnd;
    case 0x72: return FuseOuter::kOr;
    case 0x73: return FuseOuter::kXor;
    default: return std::nullopt;
  }
}

bool is_i32_add(uint32_t op) { return op == 0x6a; }
bool is_fuse_outer(uint32_t op) { return fuse_outer(op).has_value(); }

// The operand k with a fresh producer, if one has.
std::optional<size_t> fresh_operand(const FusionConsumer& c) {
  for (size_t k = 0; k < 2; ++k)
    if (c.fresh[k] != SIZE_MAX) return k;
  return std::nullopt;
}

// The fresh producer of the operand that has one, as the inner half of a kFuseBase op.
struct Inner {
  size_t at;
  FuseInner op;
  uint32_t other, x, y;  // the consumer's other operand; the producer's two inputs
};
std::optional<Inner> fresh_inner(const FusionWindow& w, const FusionConsumer& c) {
  auto k = fresh_operand(c);
  if (!k) return std::nullopt;
  size_t at = c.fresh[*k];
  auto ii = fuse_inner(w.code[at]);
  if (!ii) return std::nullopt;
  return Inner{at, *ii, c.slot[1 - *k], w.code[at + 1], w.code[at + 2]};
}

// An operand computed by the i32 instruction just before (and used only here): one fused
// instruction `other OUTER (x INNER y)` (kFuseBase).
std::optional<Fused> match_outer_inner(const FusionWindow& w, const FusionConsumer& c) {
  auto in = fresh_inner(w, c);
  if (!in) return std::nullopt;
  return Fused{in->at, {fused_op(*fuse_outer(c.op), in->op), in->other, in->x, in->y}};
}

// --- A binary op with a constant operand (c.slot[0] the other operand, c.imm the constant).

bool has_imm_form(uint32_t op) {
  return (op >= 0x46 && op <= 0x4f) || (op >= 0x6a && op <= 0x78) || (op >= 0x51 && op <= 0x5a) ||
         (op >= 0x7c && op <= 0x8a);
}
bool is_i64_with_imm_form(uint32_t op) { return has_imm_form(op) && ((op >= 0x51 && op <= 0x5a) || op >= 0x7c); }
bool is_i64_div_rem(uint32_t op) { return op >= 0x7f && op <= 0x82; }

// `(x << k) + imm`, a static array's element address, with the shift just before: one
// kAddImmShl.
std::optional<Fused> match_add_imm_shl(const FusionWindow& w, const FusionConsumer& c) {
  size_t at = c.fresh[0];
  if (at == SIZE_MAX || w.code[at] != imm_op(0x74)) return std::nullopt;
  return Fused{at, {uint32_t(kAddImmShl), w.code[at + 1], w.code[at + 2], uint32_t(c.imm)}};
}
// An i64 constant beyond 32 signed bits (FNV/Fibonacci hashing multipliers), or any i64
// divisor (the 32-bit form would sign-extend it): the 64-bit immediate form.
std::optional<Fused> match_imm64(const FusionWindow& w, const FusionConsumer& c) {
  const uint64_t v = c.imm;
  if (int64_t(v) == int64_t(int32_t(uint32_t(v))) && !is_i64_div_rem(c.op)) return std::nullopt;
  return Fused{w.code.size(), {imm64_op(c.op), c.slot[0], uint32_t(v), uint32_t(v >> 32)}};
}
// Otherwise the 32-bit immediate form (i64 ones sign-extend it).
std::optional<Fused> match_imm32(const FusionWindow& w, const FusionConsumer& c) {
  return Fused{w.code.size(), {imm_op(c.op), c.slot[0], uint32_t(c.imm)}};
}

// --- A load (wasm 0x28..0x35) of an address computed just before (c.fresh[0]); c.imm the
// memarg offset. The fused load traps with the load's wasm offset (the compiler retags it).

bool is_load(uint32_t op) { return op >= 0x28 && op <= 0x35; }

// Address `(x << k) + imm` (a static array's element).
std::optional<Fused> match_load_shl_imm(const FusionWindow& w, const FusionConsumer& c) {
  size_t at = c.fresh[0];
  if (at == SIZE_MAX || w.code[at] != kAddImmShl) return std::nullopt;
  const uint32_t* p = &w.code[at];
  return Fused{at, {load_op(LoadAddr::kShlImm, c.op), p[1], p[2], p[3], uint32_t(c.imm)}};
}
// Address `a + (b << k)`.
std::optional<Fused> match_load_add_shl(const FusionWindow& w, const FusionConsumer& c) {
  size_t at = c.fresh[0];
  if (at == SIZE_MAX || w.code[at] != kFuseAddShl) return std::nullopt;
  const uint32_t* p = &w.code[at];
  return Fused{at, {load_op(LoadAddr::kAddShl, c.op), p[1], p[2], p[3], uint32_t(c.imm)}};
}
// Address an i32.add of two slots or of a slot and a constant.
std::optional<Fused> match_load_add(const FusionWindow& w, const FusionConsumer& c) {
  size_t at = c.fresh[0];
  if (at == SIZE_MAX || (w.code[at] != 0x6a && w.code[at] != imm_op(0x6a))) return std::nullopt;
  const uint32_t* p = &w.code[at];
  LoadAddr addr = p[0] == 0x6a ? LoadAddr::kAdd : LoadAddr::kAddImm;
  return Fused{at, {load_op(addr, c.op), p[1], p[2], uint32_t(c.imm)}};
}

// Tried in this order; the more specific shapes before the general pair.
constexpr FusionRule kBinaryRules[] = {
    {"outer_inner", FuseFamily::kOuterInner, is_fuse_outer, match_outer_inner},
};
// A constant operand: the array address first, then the immediate form that fits.
constexpr FusionRule kImmediateRules[] = {
    {"add_imm_shl", FuseFamily::kAddImmShl, is_i32_add, match_add_imm_shl},
    {"imm64", FuseFamily::kImmediate, is_i64_with_imm_form, match_imm64},
    {"imm32", FuseFamily::kImmediate, has_imm_form, match_imm32},
};
constexpr FusionRule kLoadRules[] = {
    {"load_shl_imm", FuseFamily::kAddImmShl, is_load, match_load_shl_imm},
    {"load_add_shl", FuseFamily::kLoad, is_load, match_load_add_shl},
    {"load_add", FuseFamily::kLoad, is_load, match_load_add},
};

template <size_t N>
std::optional<Fused> first_match(const FusionRule (&rules)[N], const FusionWindow& w, const FusionConsumer& c) {
  for (const FusionRule& r : rules) {
    if ((w.off & fuse_bit(r.family)) || !r.triggers(c.op)) continue;
    if (auto f = r.match(w, c)) return f;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Fused> fuse_binary(const FusionWindow& w, const FusionConsumer& c) { return first_match(kBinaryRules, w, c); }
std::optional<Fused> fuse_immediate(const FusionWindow& w, const FusionConsumer& c) {
  return first_match(kImmediateRules, w, c);
}
std::optional<Fused> fuse_load(const FusionWindow& w, const FusionConsumer& c) { return first_match(kLoadRules, w, c); }

namespace {
constexpr const char* kFamilyNames[] = {
    "immediate", "add_imm_shl", "compare_branch", "load", "copy_run", "jump_threading", "outer_inner"};
static_assert(std::size(kFamilyNames) == size_t(FuseFamily::kCount));
}  // namespace

const char* fuse_family_name(FuseFamily f) {
  return uint32_t(f) < uint32_t(FuseFamily::kCount) ? kFamilyNames[uint32_t(f)] : nullptr;
}

Result<uint32_t> parse_fuse_families(std::string_view names) {
  uint32_t mask = 0;
  while (!names.empty()) {
    size_t comma = names.find(',');
    std::string_view name = names.substr(0, comma);
    names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
    uint32_t f = 0;
    while (f < uint32_t(FuseFamily::kCount) && name != kFamilyNames[f]) ++f;
    if (f == uint32_t(FuseFamily::kCount)) return make_error("bad_fuse_family", "unknown fusion family '" + std::string(name) + "'");
    mask |= fuse_bit(FuseFamily(f));
  }
  return mask;
}

bool immediate_ok(uint32_t wasm_op, uint64_t v) {
  if (!has_imm_form(wasm_op)) return false;
  if (wasm_op >= 0x6d && wasm_op <= 0x70) return uint32_t(v) != 0 && uint32_t(v) != UINT32_MAX;
  if (is_i64_div_rem(wasm_op)) return v != 0 && v != UINT64_MAX;
  return true;
}

std::optional<uint32_t> compare_branch_op(uint32_t compare_op, bool if_true) {
  if (compare_op >= 0x45 && compare_op <= 0x5a) return br_cmp_op({compare_op, false, if_true});
  std::optional<uint32_t> w = imm_op_wasm(compare_op);
  if (w && *w >= 0x46 && *w <= 0x5a && *w != 0x50) return br_cmp_op({*w, true, if_true});
  return std::nullopt;
}

}  // namespace genvm::wasm
