// The spec testsuite's `spectest` module: the imports every .wast file may link against, with
// the values its assertions expect (print functions that do nothing, globals 666 / 666.6, a
// 10..20 funcref table, a 1..2 page memory). Shared by `genvm-wasm spectest` and the engine's
// differential tests so that all of them run the suite against one definition.
#pragma once

#include <optional>
#include <span>
#include <utility>

#include "wasm/wasm.h"

namespace genvm::wasm {

inline void define_spectest_imports(Store& store, Linker& linker) {
  auto nop = [](Caller&, std::span<const Value>, std::span<Value>) -> std::optional<Trap> { return std::nullopt; };
  using V = ValType;
  const std::pair<const char*, FuncType> functions[] = {
      {"print", {{}, {}}},          {"print_i32", {{V::I32}, {}}},           {"print_i64", {{V::I64}, {}}},
      {"print_f32", {{V::F32}, {}}}, {"print_f64", {{V::F64}, {}}},           {"print_i32_f32", {{V::I32, V::F32}, {}}},
      {"print_f64_f64", {{V::F64, V::F64}, {}}}};
  for (const auto& [name, type] : functions) linker.define_host(store, "spectest", name, type, nop);
  const std::pair<const char*, Value> globals[] = {{"global_i32", Value::i32(666)},
                                                   {"global_i64", Value::i64(666)},
                                                   {"global_f32", Value::f32(666.6f)},
                                                   {"global_f64", Value::f64(666.6)}};
  for (const auto& [name, value] : globals) {
    Extern g;
    g.kind = Extern::kGlobal;
    g.global = store.new_global(value.type, false, value);
    linker.define("spectest", name, g);
  }
  Extern t;
  t.kind = Extern::kTable;
  t.table = *store.new_table(V::FuncRef, 10, 20);
  linker.define("spectest", "table", t);
  Extern m;
  m.kind = Extern::kMemory;
  m.memory = *store.new_memory(1, 2);
  linker.define("spectest", "memory", m);
}

}  // namespace genvm::wasm
