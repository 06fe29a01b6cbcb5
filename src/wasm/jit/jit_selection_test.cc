// What the executor's engine selection relies on (src/executor/engine_choice.h): the cpuid query
// its default asks, and a module taken from the compiled-module cache running on the JIT as a
// freshly compiled one does (the cache holds only the interpreter's slot code).
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "wasm/jit/jit.h"
#include "wasm/wasm.h"

namespace genvm::wasm {
namespace {

// (func (export "f") (param i32) (result i32) local.get 0 i32.const 1 i32.add)
const std::vector<uint8_t> kAddOne = {
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,                    // magic, version
    0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f,                    // type: [i32] -> [i32]
    0x03, 0x02, 0x01, 0x00,                                            // func 0: type 0
    0x07, 0x05, 0x01, 0x01, 'f', 0x00, 0x00,                           // export "f"
    0x0a, 0x09, 0x01, 0x07, 0x00, 0x20, 0x00, 0x41, 0x01, 0x6a, 0x0b,  // code
};

// The CPU flags Linux reports, as a second opinion on cpuid (lzcnt is reported as "abm").
std::set<std::string> proc_cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;) flags.insert(w);
    break;
  }
  return flags;
}

TEST(JitSelection, CpuQueryAgreesWithTheKernelsCpuFlags) {
  auto flags = proc_cpu_flags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags";
  // Some hypervisors pass LZCNT through in cpuid but the guest kernel does not list "abm": then
  // the instruction itself decides. Without LZCNT the same bytes run as BSR, which answers 0
  // for 1 where LZCNT answers 31, so the JIT must not be chosen on such a CPU.
  bool lzcnt = flags.count("abm") > 0;
  if (!lzcnt && jit::cpu_supports_jit()) {
    std::uint32_t in = 1, out = 0;
    asm("lzcnt %1, %0" : "=r"(out) : "r"(in));
    lzcnt = out == 31;
  }
  bool expected = lzcnt && flags.count("bmi1") && flags.count("popcnt") && flags.count("sse4_1");
  EXPECT_EQ(jit::cpu_supports_jit(), expected);
}

TEST(JitSelection, AModuleFromTheCacheRunsOnTheJitLikeAFreshOne) {
  if (!jit::cpu_supports_jit()) GTEST_SKIP() << "this CPU cannot run the JIT";
  LoadOptions lo;
  lo.engine = Engine::kJit;
  lo.metering = true;
  auto fresh = Module::load(kAddOne, lo);
  ASSERT_TRUE(fresh) << fresh.error().to_string();
  const std::string note = engine_note(**fresh);
  ASSERT_EQ(note.rfind("jit: 1 functions", 0), 0u) << note;
  SealKey key{};
  key[0] = 7;
  auto blob = (*fresh)->serialize_compiled(key);
  ASSERT_TRUE(blob) << blob.error().to_string();
  auto cached = Module::load_with_compiled(kAddOne, lo, *blob, key);
  ASSERT_TRUE(cached) << cached.error().to_string();
  // Its code was mapped from the blob, not compiled again.
  EXPECT_EQ(engine_note(**cached), note + ", from the module cache");
  EXPECT_EQ(jit_code_origin(**cached), JitCodeOrigin::kFromCache);
  // Both give the same result and leave the same fuel.
  uint64_t fuel_left[2];
  int i = 0;
  for (const auto& m : {*fresh, *cached}) {
    StoreConfig sc;
    sc.fuel_enabled = true;
    sc.fuel = 1000;
    Store store(sc);
    store.set_fuel(1000);
    Linker linker;
    auto inst = linker.instantiate(store, m, "t");
    ASSERT_TRUE(inst) << inst.error().to_string();
    std::vector<Value> args = {Value::i32(41)};
    auto out = store.call((*inst)->get_func("f"), args);
    ASSERT_TRUE(out && out->ok());
    EXPECT_EQ(out->values[0].as_i32(), 42);
    fuel_left[i++] = store.fuel();
  }
  EXPECT_EQ(fuel_left[0], fuel_left[1]);
  EXPECT_LT(fuel_left[0], 1000u);
  // The interpreter's load of the same blob has no JIT note: the engine is a load option, not
  // part of the blob.
  LoadOptions interp = lo;
  interp.engine = Engine::kInterp;
  auto on_interp = Module::load_with_compiled(kAddOne, interp, *blob, key);
  ASSERT_TRUE(on_interp);
  EXPECT_EQ(engine_note(**on_interp), "");
}

}  // namespace
}  // namespace genvm::wasm
