// Fuzz target: the compiled-module cache loader, Module::load_with_compiled.
//
// Input: byte 0 flags (bit 0 deterministic, bit 1 metering, bit 2 "re-seal", bit 3 the JIT
// engine: a blob's JIT section is checked and its code mapped, or the module compiled), bytes
// 1..2 the module's length L (u16 little-endian, clipped to what is left), L module bytes, then
// the blob.
// Without "re-seal" the blob is taken as found, as the executor takes a cache file: only a blob
// sealed with kFuzzKey may load, and a metered one that does is run as wasm_reader_fuzz runs
// modules.
// With "re-seal" the harness seals the blob's body itself with the key, so the fuzzer reaches
// the field checks behind the seal: those must refuse or accept without a crash or an
// out-of-bounds read; such a blob is only loaded, never run (the seal is what makes a blob's
// code trusted, see DESIGN.md). Seeds: fuzz/make_module_cache_seeds.sh.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/blake3.h"
#include "wasm/wasm.h"

using namespace genvm::wasm;

namespace {
// The seeds are sealed with this key (fuzz/make_module_cache_seeds.sh prints blobs with it).
constexpr SealKey kFuzzKey = {'g', 'e', 'n', 'v', 'm', '-', 'c', 'a', 'c', 'h', 'e', '-', 'f', 'u', 'z', 'z'};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  LoadOptions lo;
  lo.deterministic = data[0] & 1;
  lo.metering = (data[0] & 2) != 0;
  const bool reseal = (data[0] & 4) != 0;
  if (data[0] & 8) lo.engine = Engine::kJit;
  size_t len = size_t(data[1]) | size_t(data[2]) << 8;
  if (len > size - 3) len = size - 3;
  std::span<const uint8_t> module(data + 3, len);
  std::vector<uint8_t> blob(data + 3 + len, data + size);
  if (reseal && blob.size() >= 32) {
    blob.resize(blob.size() - 32);
    auto seal = genvm::blake3::keyed_hash(kFuzzKey, blob);
    blob.insert(blob.end(), seal.begin(), seal.end());
  }
  auto m = Module::load_with_compiled(module, lo, blob, kFuzzKey);
  // Only metered code runs: without fuel a genuine seed's loop would stall the fuzzer.
  if (!m || reseal || !lo.metering) return 0;
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
                       [ft](Caller&, std::span<const Value>, std::span<Value> res) -> std::optional<Trap> {
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
  return 0;
}
