// Fuzz target: bytes -> read -> validate -> compile -> instantiate -> run every export with
// zero arguments under fuel, a small RAM budget and small stack limits. Any crash, sanitizer
// report or hang is a bug; errors and traps are expected outcomes.
#include <cstddef>
#include <cstdint>

#include "wasm/wasm.h"

using namespace genvm::wasm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  LoadOptions lo;
  lo.metering = true;
  lo.deterministic = size > 0 && (data[0] & 1);
  auto m = Module::load(std::span<const uint8_t>(data, size), lo);
  if (!m) return 0;
  StoreConfig cfg;
  cfg.ram_budget = 16u << 20;
  cfg.fuel_enabled = true;
  cfg.call_stack_limit = 200;
  Store store(cfg);
  Linker linker;
  for (const auto& im : (*m)->imports()) {
    if (im.kind != 'f') return 0;
    FuncType ft = im.func_type;
    linker.define_host(store, im.module, im.name, ft,
                       [ft](Caller& c, std::span<const Value>, std::span<Value> res) -> std::optional<Trap> {
                         uint8_t b = 0;
                         c.read(0, &b, 1);
                         for (size_t i = 0; i < res.size(); ++i) res[i] = Value::zero(ft.results[i]);
                         return std::nullopt;
                       });
  }
  store.set_fuel(100000);
  auto inst = linker.instantiate(store, *m, "fuzz");
  if (!inst) return 0;
  for (const auto& e : (*m)->exports()) {
    if (e.kind != 'f') continue;
    FuncInst* f = (*inst)->get_func(e.name);
    std::vector<Value> args;
    for (ValType t : func_type(f).params) args.push_back(Value::zero(t));
    store.set_fuel(100000);
    (void)store.call(f, args);
  }
  (void)fingerprint_memories(store);
  return 0;
}
