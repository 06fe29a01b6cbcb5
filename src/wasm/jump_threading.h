// Internal: jump threading, the compiler's last pass over each function. Private to src/wasm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "wasm/module.h"

namespace genvm::wasm {

// Jump threading, a pass over one function's finished code: an unconditional branch (`br`,
// or copies then `br`) whose target is a short straight run ending in an unconditional
// transfer (a loop head ending in the `br_table` of a bytecode interpreter, a shared
// `sp++; pc = next; br head` tail) gets a copy of that run in its place. That saves the
// branch's dispatch, and each copy of a `br_table` gets its own indirect jump, which the
// processor predicts from where it is (an interpreter's dispatch replicated per case, as
// threaded code does). Straight runs only: no calls (their return address and callee patching
// stay simple); conditional branches inside are fine, their targets are remapped like all
// others. Growth is bounded (kMaxGrowth), one level only (a copy is not threaded again).
// Every branch target is remapped through the old -> new position map; the trap offsets of
// the copies are their originals'.
//
// [start, end of m.code) is the function; its trap-offset entries start at offsets_begin, its
// kCallLocal positions in local_calls at calls_begin (both are remapped); body_offset is the
// wasm offset of the body's first instruction. Run twice: a run copied in the first pass may
// end in a branch to another short run.
void thread_jumps(ModuleImpl& m, size_t start, size_t offsets_begin, std::vector<uint32_t>& local_calls,
                  size_t calls_begin, uint32_t body_offset);

}  // namespace genvm::wasm
