// Internal: the peephole fusions, as ordered rule tables (fusion.cc). Private to src/wasm.
//
// The compiler (compile.cc) asks when it is about to emit an instruction that may absorb the
// ones just emitted before it: a binary op whose operands are both in slots (fuse_binary), a
// binary op with a constant operand (fuse_immediate), a load (fuse_load). The first rule of
// the table that matches says which instructions to replace and with what. Why tables: each rule is a pattern measured on real code (DESIGN.md,
// "Superinstructions"), and a table is where one is added, dropped or switched off.
// Compare-and-branch is an opcode mapping (compare_branch_op).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "wasm/ops.h"
#include "wasm/wasm.h"

namespace genvm::wasm {

// What a rule sees of the function's code so far.
struct FusionWindow {
  const std::vector<uint32_t>& code;
  uint32_t off = 0;  // families switched off (CompileOptions::fuse_off): their rules skip
};

// The instruction being compiled.
struct FusionConsumer {
  uint32_t op;                    // its wasm opcode
  // Slot of operand k from the top (0 = right operand). fuse_immediate: slot[0] is the
  // operand that is not the constant; fuse_load: slot[0] is the only operand.
  std::array<uint32_t, 2> slot;
  // Position of the instruction that computed operand k just before (still in its home slot,
  // nothing emitted since, no label in between), or SIZE_MAX. At most one is set.
  std::array<size_t, 2> fresh;
  uint64_t imm = 0;               // fuse_immediate: the constant; fuse_load: the memarg offset
};

// The replacement: code [at, end) becomes `words..., dst` (dst: the consumer's result slot).
// at == code.size() replaces nothing: the consumer is emitted as `words..., dst`.
struct Fused {
  size_t at;
  std::vector<uint32_t> words;
};

struct FusionRule {
  const char* name;
  FuseFamily family;
  bool (*triggers)(uint32_t wasm_op);  // which consumers the rule looks at
  std::optional<Fused> (*match)(const FusionWindow& w, const FusionConsumer& c);
};

// The replacement of the first rule (in table order) that matches, or nothing.
std::optional<Fused> fuse_binary(const FusionWindow& w, const FusionConsumer& c);
// A binary op `c.op` whose operand is the constant c.imm (immediate_ok): always a form.
std::optional<Fused> fuse_immediate(const FusionWindow& w, const FusionConsumer& c);
std::optional<Fused> fuse_load(const FusionWindow& w, const FusionConsumer& c);

// Whether binary op `wasm_op` has an immediate form for the constant operand v (division and
// remainder take one only when it is neither 0 nor -1, so the immediate forms cannot trap).
bool immediate_ok(uint32_t wasm_op, uint64_t v);
// The compare-and-branch that replaces compare instruction `compare_op` (a wasm compare or
// eqz, or an immediate compare) followed by a branch if it holds (if_true) or fails.
std::optional<uint32_t> compare_branch_op(uint32_t compare_op, bool if_true);

constexpr uint32_t fuse_bit(FuseFamily f) { return 1u << uint32_t(f); }
constexpr uint32_t kAllFuseFamilies = fuse_bit(FuseFamily::kCount) - 1;
// The families compiled in under `o` (0 when fusion is off): what the blob records.
constexpr uint32_t fuse_families_on(const CompileOptions& o) { return o.fuse ? kAllFuseFamilies & ~o.fuse_off : 0; }

}  // namespace genvm::wasm
