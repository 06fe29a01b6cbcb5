// Internal: the peephole fusions of an i32/i64 binary operator into the instructions just
// emitted before it, as one ordered rule table (fusion.cc). Private to src/wasm.
//
// The compiler (compile.cc) asks when it is about to emit a binary op whose operands are both
// in slots (no constant); the first rule that matches says which instructions to replace and
// with what. Why a table: each rule is a pattern measured on real code (DESIGN.md,
// "Superinstructions"), and the table is where one is added, dropped or switched off.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "wasm/ops.h"

namespace genvm::wasm {

// What a rule sees of the function's code so far.
struct FusionWindow {
  const std::vector<uint32_t>& code;
  // Starts of the last instructions noted by the compiler, newest first (back[0] is the last
  // one); SIZE_MAX where unknown. Contiguity is for the rule to check with their lengths.
  std::array<size_t, 8> back;
  size_t label_pos;     // the last code index handed out as a branch target: nothing at or
                        // after it may be folded with anything before it
  uint32_t first_temp;  // slots >= first_temp are operand-stack temporaries (used once)
  size_t last_dst;      // word index of the last simple instruction's dst, or SIZE_MAX
};

// The binary operator being compiled.
struct FusionConsumer {
  uint32_t op;                    // its wasm opcode
  std::array<uint32_t, 2> slot;   // slot of operand k from the top (0 = right operand)
  // Position of the instruction that computed operand k just before (still in its home slot,
  // nothing emitted since, no label in between), or SIZE_MAX. At most one is set.
  std::array<size_t, 2> fresh;
};

// The replacement: code [at, end) becomes `words..., dst` (dst: the consumer's result slot).
struct Fused {
  size_t at;
  std::vector<uint32_t> words;
};

struct FusionRule {
  const char* name;
  bool (*triggers)(uint32_t wasm_op);  // which consumers the rule looks at
  std::optional<Fused> (*match)(const FusionWindow& w, const FusionConsumer& c);
};

// The replacement of the first rule (in table order) that matches, or nothing.
std::optional<Fused> fuse_binary(const FusionWindow& w, const FusionConsumer& c);

}  // namespace genvm::wasm
