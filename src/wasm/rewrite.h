// Module-to-module rewriting: our reader, then our writer (src/wasm/writer.cc).
//
// rewrite_floats_to_softfloat turns every float instruction that traps in GenVM's deterministic
// mode (every f32.* / f64.* instruction except load, store, const and reinterpret; the
// float<->int conversions; trunc_sat) into a call to a software float library, so the output
// runs in deterministic mode without reaching nondet_instruction. See DESIGN.md, "Float
// rewriting", for the library contract and the output's layout.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace genvm::wasm {

// Reads, validates and writes back a module: the same module, re-encoded by our writer. Errors
// are the loader's ("malformed" / "invalid").
Result<std::vector<uint8_t>> reencode_module(std::span<const uint8_t> bytes);

struct SoftFloatReport {
  uint32_t replaced_instructions = 0;   // float instructions turned into calls
  uint32_t library_functions = 0;       // library functions appended (those reachable)
  std::vector<std::string> operations;  // the distinct instructions replaced, by mnemonic
};

// Error codes of rewrite_floats_to_softfloat (Error::code, stable names).
//   "malformed" / "invalid"  the module or the library does not load
//   "unsupported"            the module uses an instruction the rewriter does not handle
//                            (SIMD, other prefixes)
//   "bad_library"            the library breaks the contract (imports, globals, tables, data,
//                            elements, a start function, an instruction that touches memory or
//                            floats, a gvmsf_ export the module needs missing or of the wrong
//                            type); a declared memory nothing uses is allowed and left out
// The output is checked by loading it; a failure there is "internal".
Result<std::vector<uint8_t>> rewrite_floats_to_softfloat(std::span<const uint8_t> module,
                                                         std::span<const uint8_t> library,
                                                         SoftFloatReport* report = nullptr);

// The wasm mnemonic ("f64.add", "i32.trunc_sat_f64_s") of a float instruction that traps in
// deterministic mode, or nullptr. `op` is the opcode byte, or 0xfc00 | sub-opcode for 0xfc.
const char* trapping_float_mnemonic(uint32_t op);

}  // namespace genvm::wasm
