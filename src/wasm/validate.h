// Internal: what module validation (validate.cc) hands the body compiler. Private to src/wasm.
#pragma once

#include <cstdint>
#include <set>

#include "wasm/module.h"

namespace genvm::wasm {

// The functions a `ref.func` in a body may name: those referenced outside function bodies
// (global initializers, element segments, exports).
std::set<uint32_t> declared_refs(const ModuleImpl& m);

}  // namespace genvm::wasm
