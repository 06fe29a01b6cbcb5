// The binary-operator fusions as one rule table (see fusion.h and DESIGN.md,
// "Superinstructions"). Each matcher only reads the window: the compiler applies the
// replacement (pops, pushes, trap offsets stay its business).
#include "wasm/fusion.h"

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
    case kAndNot32: return FuseInner::kAndNot;
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

bool is_and(uint32_t op) { return op == 0x71 || op == 0x83; }
bool is_i32_or(uint32_t op) { return op == 0x72; }
bool is_i32_add(uint32_t op) { return op == 0x6a; }
bool is_i32_xor(uint32_t op) { return op == 0x73; }
bool is_fuse_outer(uint32_t op) { return fuse_outer(op).has_value(); }

// The operand k with a fresh producer, if one has.
std::optional<size_t> fresh_operand(const FusionConsumer& c) {
  for (size_t k = 0; k < 2; ++k)
    if (c.fresh[k] != SIZE_MAX) return k;
  return std::nullopt;
}

// `and` of a NOT computed just before (xor with -1): one `x & ~y` (SHA-2's choose, Keccak's
// chi), which can itself be the inner half of a fused op.
std::optional<Fused> match_and_not(const FusionWindow& w, const FusionConsumer& c) {
  const uint32_t not_op = imm_op(c.op == 0x71 ? 0x73u : 0x85u);
  for (size_t k = 0; k < 2; ++k) {
    size_t at = c.fresh[k];
    if (at == SIZE_MAX || w.code[at] != not_op || w.code[at + 2] != 0xffffffffu) continue;
    uint32_t y = w.code[at + 1], x = c.slot[1 - k];
    return Fused{at, {uint32_t(c.op == 0x71 ? kAndNot32 : kAndNot64), x, y}};
  }
  return std::nullopt;
}

// A 32-bit byte swap, as LLVM's wasm backend expands `bswap` (big-endian loads: SHA-2's
// message words, network byte order), about to be finished by the `or` being compiled:
//   A: x << 24 -> p   B: x << 8 -> q   C: q & 0xff0000 -> q   D: p | q -> p
//   E: x >> 8 -> r    F: r & 0xff00 -> r   G: r | (x >> 24) -> r (fused)   now: p | r
// All eight contiguous (the noted instruction history), no branch target inside, p q r
// temporaries: one kBswap32 instead of seven dispatches.
std::optional<Fused> match_bswap32(const FusionWindow& w, const FusionConsumer& c) {
  const std::vector<uint32_t>& code = w.code;
  size_t at[7];
  for (size_t n = 0; n < 7; ++n) at[n] = w.back[6 - n];  // at[0] = A ... at[6] = G
  for (size_t n = 0; n < 7; ++n)
    if (at[n] == SIZE_MAX || at[n] + (n == 6 ? 5 : 4) != (n == 6 ? code.size() : at[n + 1])) return std::nullopt;
  if (w.label_pos > at[0] || at[6] != w.back[0] || w.last_dst + 1 != code.size()) return std::nullopt;
  const uint32_t* A = &code[at[0]];
  const uint32_t* B = A + 4;
  const uint32_t* C = A + 8;
  const uint32_t* D = A + 12;
  const uint32_t* E = A + 16;
  const uint32_t* F = A + 20;
  const uint32_t* G = A + 24;
  uint32_t x = A[1], p = A[3], q = B[3], r = E[3];
  const uint32_t L = w.first_temp;
  if (A[0] != imm_op(0x74) || A[2] != 24 || B[0] != imm_op(0x74) || B[1] != x || B[2] != 8) return std::nullopt;
  if (C[0] != imm_op(0x71) || C[1] != q || C[2] != 0xff0000 || C[3] != q) return std::nullopt;
  if (D[0] != 0x72 || !((D[1] == p && D[2] == q) || (D[1] == q && D[2] == p)) || D[3] != p) return std::nullopt;
  if (E[0] != imm_op(0x76) || E[1] != x || E[2] != 8) return std::nullopt;
  if (F[0] != imm_op(0x71) || F[1] != r || F[2] != 0xff00 || F[3] != r) return std::nullopt;
  if (G[0] != fused_op(FuseOuter::kOr, FuseInner::kShrUImm) || G[1] != r || G[2] != x || G[3] != 24 || G[4] != r)
    return std::nullopt;
  if (p < L || q < L || r < L || p == q || p == r || x == p || x == q || x == r) return std::nullopt;
  // The `or` consumes exactly p and r, the top two operands.
  uint32_t top = c.slot[0], below = c.slot[1];
  if (!((top == r && below == p) || (top == p && below == r))) return std::nullopt;
  return Fused{at[0], {uint32_t(kBswap32), x}};
}

// An i32.add of a SHA-2 sigma (kXorRot3 / kXorRot2Shr) computed just before: the sum is one
// instruction, and an add of that sum one more operand (SHA-256's t1 and t2 and its message
// schedule add sigmas to one or two other terms): one dispatch instead of two or three.
std::optional<Fused> match_sigma_add(const FusionWindow& w, const FusionConsumer& c) {
  const std::vector<uint32_t>& code = w.code;
  for (size_t k = 0; k < 2; ++k) {
    size_t at = c.fresh[k];
    if (at == SIZE_MAX) continue;
    uint32_t p = code[at];
    uint32_t other = c.slot[1 - k];
    if ((p == kXorRot3 || p == kXorRot2Shr) && at + 6 == code.size()) {
      uint32_t x = code[at + 1], a = code[at + 2], b = code[at + 3], cc = code[at + 4];
      return Fused{at, {uint32_t(p == kXorRot3 ? kXorRot3Add : kXorRot2ShrAdd), x, a, b, cc, other}};
    }
    if ((p == kXorRot3Add || p == kXorRot2ShrAdd) && at + 7 == code.size()) {
      uint32_t x = code[at + 1], a = code[at + 2], b = code[at + 3], cc = code[at + 4], q = code[at + 5];
      return Fused{at, {uint32_t(p == kXorRot3Add ? kXorRot3Add2 : kXorRot2ShrAdd2), x, a, b, cc, q, other}};
    }
  }
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

// The SHA-2 "big sigma" shape: `rotl(x,a) ^ rotl(x,b) ^ (rotl|shr_u)(x,c)` of one slot x,
// compiled so far as [rot_imm x,a -> t] [t ^= rot(x,b)] [rot_imm x,c -> u], about to become
// `t ^ u`. When the three are contiguous, with no branch target inside, and t is a temporary
// used only here, they become one kXorRot3 / kXorRot2Shr: one dispatch instead of three for
// each of SHA-256's four sigma functions per round (the hash that contracts compute most).
std::optional<Fused> match_xor_rot3(const FusionWindow& w, const FusionConsumer& c) {
  auto in = fresh_inner(w, c);
  if (!in || (in->op != FuseInner::kShrUImm && in->op != FuseInner::kRotlImm && in->op != FuseInner::kRotrImm))
    return std::nullopt;
  const std::vector<uint32_t>& code = w.code;
  const size_t at = in->at, a_pos = w.back[2], b_pos = w.back[1];
  const uint32_t other = in->other, x = in->x, L = w.first_temp;
  if (at != w.back[0] || a_pos == SIZE_MAX || b_pos == SIZE_MAX) return std::nullopt;
  if (a_pos + 4 != b_pos || b_pos + 5 != at || at + 4 != code.size() || w.label_pos > a_pos) return std::nullopt;
  const uint32_t kRotl = imm_op(0x77), kRotr = imm_op(0x78);
  const uint32_t kXorRotl = fused_op(FuseOuter::kXor, FuseInner::kRotlImm);
  const uint32_t kXorRotr = fused_op(FuseOuter::kXor, FuseInner::kRotrImm);
  uint32_t aop = code[a_pos], bop = code[b_pos];
  if ((aop != kRotl && aop != kRotr) || (bop != kXorRotl && bop != kXorRotr)) return std::nullopt;
  uint32_t t = code[a_pos + 3];
  // B = [t ^ rot(x, b) -> other]: reads A's t, same x; all results are temporaries (so
  // not x, and used once: operand-stack values are).
  if (code[b_pos + 1] != t || code[b_pos + 2] != x || code[a_pos + 1] != x || code[b_pos + 4] != other) return std::nullopt;
  if (t < L || other < L || x == t || x == other) return std::nullopt;
  auto rotl_amount = [](bool is_rotr, uint32_t k) { return is_rotr ? (32 - (k & 31)) & 31 : k & 31; };
  uint32_t ka = rotl_amount(aop == kRotr, code[a_pos + 2]);
  uint32_t kb = rotl_amount(bop == kXorRotr, code[b_pos + 3]);
  uint32_t kc = in->op == FuseInner::kShrUImm ? in->y & 31 : rotl_amount(in->op == FuseInner::kRotrImm, in->y);
  return Fused{a_pos, {uint32_t(in->op == FuseInner::kShrUImm ? kXorRot2Shr : kXorRot3), x, ka, kb, kc}};
}

// `(a + imm) + (x << k)`: the address of an element of an array in the shadow stack frame
// (`sp + off`), compiled so far as [add_imm a, imm -> t] [shl_imm x, k -> u], about to
// become `t + u`. Contiguous, no branch target inside, t a temporary: one kAddImmAddShl.
std::optional<Fused> match_add_imm_add_shl(const FusionWindow& w, const FusionConsumer& c) {
  auto in = fresh_inner(w, c);
  if (!in || in->op != FuseInner::kShlImm) return std::nullopt;
  const std::vector<uint32_t>& code = w.code;
  const size_t at = in->at, a_pos = w.back[1];
  const uint32_t other = in->other, x = in->x, k = in->y;
  if (at != w.back[0] || a_pos == SIZE_MAX || a_pos + 4 != at || at + 4 != code.size() || w.label_pos > a_pos)
    return std::nullopt;
  uint32_t aop = code[a_pos];
  if (aop != imm_op(0x6a) && aop != imm_op(0x6b)) return std::nullopt;
  if (code[a_pos + 3] != other || other < w.first_temp || x == other) return std::nullopt;
  uint32_t a = code[a_pos + 1];
  uint32_t imm = aop == imm_op(0x6a) ? code[a_pos + 2] : uint32_t(0) - code[a_pos + 2];
  return Fused{a_pos, {uint32_t(kAddImmAddShl), a, imm, x, k}};
}

// SHA-2's majority `(a & (b ^ c)) ^ (b & c)`, compiled so far as [a & (b ^ c) -> t]
// [b & c -> u], about to become `t ^ u`: contiguous, no branch target inside, t a temporary
// used only here: one kMaj32 instead of two fused instructions per SHA-256 round.
std::optional<Fused> match_maj(const FusionWindow& w, const FusionConsumer& c) {
  auto in = fresh_inner(w, c);
  if (!in || in->op != FuseInner::kAnd) return std::nullopt;
  const std::vector<uint32_t>& code = w.code;
  const size_t at = in->at, a_pos = w.back[1];
  const uint32_t other = in->other, b = in->x, cc = in->y;
  if (at != w.back[0] || a_pos == SIZE_MAX || a_pos + 5 != at || at + 4 != code.size() || w.label_pos > a_pos)
    return std::nullopt;
  if (code[a_pos] != fused_op(FuseOuter::kAnd, FuseInner::kXor) || code[a_pos + 4] != other || other < w.first_temp)
    return std::nullopt;
  uint32_t pb = code[a_pos + 2], pc = code[a_pos + 3];
  if (!((pb == b && pc == cc) || (pb == cc && pc == b)) || other == b || other == cc) return std::nullopt;
  uint32_t a = code[a_pos + 1];
  if (a == other) return std::nullopt;
  return Fused{a_pos, {uint32_t(kMaj32), a, b, cc}};
}

// An operand computed by the i32 instruction just before (and used only here): one fused
// instruction `other OUTER (x INNER y)` (kFuseBase).
std::optional<Fused> match_outer_inner(const FusionWindow& w, const FusionConsumer& c) {
  auto in = fresh_inner(w, c);
  if (!in) return std::nullopt;
  return Fused{in->at, {fused_op(*fuse_outer(c.op), in->op), in->other, in->x, in->y}};
}

// Tried in this order; the more specific shapes before the general pair.
constexpr FusionRule kRules[] = {
    {"and_not", is_and, match_and_not},
    {"bswap32", is_i32_or, match_bswap32},
    {"sigma_add", is_i32_add, match_sigma_add},
    {"xor_rot3", is_i32_xor, match_xor_rot3},
    {"add_imm_add_shl", is_i32_add, match_add_imm_add_shl},
    {"maj", is_i32_xor, match_maj},
    {"outer_inner", is_fuse_outer, match_outer_inner},
};

}  // namespace

std::optional<Fused> fuse_binary(const FusionWindow& w, const FusionConsumer& c) {
  for (const FusionRule& r : kRules) {
    if (!r.triggers(c.op)) continue;
    if (auto f = r.match(w, c)) return f;
  }
  return std::nullopt;
}

}  // namespace genvm::wasm
