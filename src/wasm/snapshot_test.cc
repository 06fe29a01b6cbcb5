// Instance snapshots (wasm.h, InstanceSnapshot): an instance captured after an export returned
// and restored into a fresh instance of the same module continues exactly as the original —
// same results, memory and fuel — on the interpreter and the JIT; another module, a broken byte
// form and a RAM budget too small for the state are refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "wasm/wasm.h"

namespace genvm::wasm {
namespace {

std::vector<uint8_t> wat(const std::string& text) {
  char path[] = "/tmp/genvm-snapshot-test-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << text;
  std::string out = std::string(path) + ".wasm";
  EXPECT_EQ(std::system(("wat2wasm " + std::string(path) + " -o " + out).c_str()), 0) << text;
  std::ifstream in(out, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path);
  std::remove(out.c_str());
  return bytes;
}

// `init` changes every kind of state a snapshot holds: memory grown and written (also past the
// initial page and over a data segment), a mutable global, a table element, a dropped passive
// data and element segment. `next` reads all of it back into one number (and spends fuel).
const char* kModule = R"(
(module
  (memory 1 8)
  (global $g (mut i64) (i64.const 5))
  (table 4 funcref)
  (func $a (result i32) (i32.const 11))
  (func $b (result i32) (i32.const 29))
  (elem (i32.const 0) $a)
  (elem $passive func $b)
  (data (i32.const 16) "original")
  (data $pdata "passive")
  (type $rt (func (result i32)))
  (func (export "init")
    (local $i i32)
    (drop (memory.grow (i32.const 2)))
    (i32.store (i32.const 16) (i32.const 0x01020304))
    (i32.store (i32.const 140000) (i32.const 777))
    (global.set $g (i64.const 1234567))
    (table.set 0 (i32.const 2) (ref.func $b))
    (memory.init $pdata (i32.const 200) (i32.const 0) (i32.const 7))
    (data.drop $pdata)
    (elem.drop $passive)
    (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1)))
             (br_if $l (i32.lt_u (local.get $i) (i32.const 1000)))))
  (func (export "next") (result i64)
    (local $i i32) (local $acc i64)
    (loop $l
      (local.set $acc (i64.add (local.get $acc) (i64.extend_i32_u (i32.load (i32.mul (local.get $i) (i32.const 4))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 100))))
    (i64.add (local.get $acc)
      (i64.add (global.get $g)
        (i64.add (i64.extend_i32_u (i32.load (i32.const 140000)))
          (i64.add (i64.extend_i32_u (memory.size))
            (i64.extend_i32_u (call_indirect (type $rt) (i32.const 2))))))))
  (func (export "dropped_data") (memory.init $pdata (i32.const 0) (i32.const 0) (i32.const 1)))
  (func (export "dropped_elem") (table.init 0 $passive (i32.const 0) (i32.const 0) (i32.const 1))))
)";

constexpr uint64_t kFuel = 1'000'000;

struct Guest {
  Store store;
  Linker linker;
  Instance* inst = nullptr;
  explicit Guest(uint64_t fuel, uint64_t ram = uint64_t(1) << 30) : store(config(fuel, ram)) { store.set_fuel(fuel); }
  static StoreConfig config(uint64_t fuel, uint64_t ram) {
    StoreConfig c;
    c.fuel_enabled = true;
    c.fuel = fuel;
    c.ram_budget = ram;
    return c;
  }
  Status start(const std::shared_ptr<const Module>& m) {
    auto i = linker.instantiate(store, m, "t");
    if (!i) return i.take_error();
    inst = *i;
    return {};
  }
  Outcome call(const char* name) {
    auto r = store.call(inst->get_func(name), {});
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : Outcome{};
  }
};

std::shared_ptr<const Module> load(const std::vector<uint8_t>& bytes, Engine engine) {
  LoadOptions lo;
  lo.metering = true;
  lo.engine = engine;
  auto m = Module::load(bytes, lo);
  EXPECT_TRUE(m.ok()) << m.error().to_string();
  return m.ok() ? *m : nullptr;
}

void continues_identically(Engine engine) {
  auto module = load(wat(kModule), engine);
  ASSERT_TRUE(module);
  Guest live(kFuel);
  ASSERT_TRUE(live.start(module).ok());
  ASSERT_TRUE(live.call("init").ok());
  uint64_t init_fuel = kFuel - live.store.fuel();
  auto snap = capture_instance(*live.inst);
  ASSERT_TRUE(snap.ok()) << snap.error().to_string();
  std::vector<uint8_t> bytes = snap->serialize();
  Outcome want = live.call("next");
  ASSERT_TRUE(want.ok());
  uint64_t want_fuel = live.store.fuel();
  auto want_memory = fingerprint_memories(live.store);
  Trap want_data = *live.call("dropped_data").trap, want_elem = *live.call("dropped_elem").trap;

  auto parsed = InstanceSnapshot::parse(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
  EXPECT_EQ(parsed->serialize(), bytes);
  Guest restored(kFuel - init_fuel);
  ASSERT_TRUE(restored.start(module).ok());
  ASSERT_TRUE(restore_instance(restored.store, *restored.inst, *parsed).ok());
  Outcome got = restored.call("next");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got.values.size(), 1u);
  EXPECT_EQ(got.values[0].bits, want.values[0].bits);
  EXPECT_EQ(restored.store.fuel(), want_fuel);
  auto got_memory = fingerprint_memories(restored.store);
  ASSERT_EQ(got_memory.size(), want_memory.size());
  EXPECT_EQ(got_memory[0].blake3, want_memory[0].blake3);
  EXPECT_EQ(restored.call("dropped_data").trap->kind, want_data.kind);
  EXPECT_EQ(restored.call("dropped_elem").trap->kind, want_elem.kind);
  // A fresh instance without the snapshot traps there (table element 2 is only set by init).
  Guest fresh(kFuel);
  ASSERT_TRUE(fresh.start(module).ok());
  EXPECT_FALSE(fresh.call("next").ok());
}

TEST(WasmSnapshot, RestoredInstanceContinuesIdenticallyInterp) { continues_identically(Engine::kInterp); }
TEST(WasmSnapshot, RestoredInstanceContinuesIdenticallyJit) { continues_identically(Engine::kJit); }

TEST(WasmSnapshot, RefusesAnotherModule) {
  auto module = load(wat(kModule), Engine::kInterp);
  auto other = load(wat(std::string(kModule).replace(std::string(kModule).find("original"), 8, "changed!")), Engine::kInterp);
  ASSERT_TRUE(module && other);
  Guest a(kFuel), b(kFuel);
  ASSERT_TRUE(a.start(module).ok() && b.start(other).ok());
  auto snap = capture_instance(*a.inst);
  ASSERT_TRUE(snap.ok());
  auto r = restore_instance(b.store, *b.inst, *snap);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "snapshot_mismatch");
}

TEST(WasmSnapshot, RefusesStateOverTheRamBudget) {
  auto module = load(wat(kModule), Engine::kInterp);
  Guest a(kFuel);
  ASSERT_TRUE(a.start(module).ok());
  ASSERT_TRUE(a.call("init").ok());
  auto snap = capture_instance(*a.inst);
  ASSERT_TRUE(snap.ok());
  Guest small(kFuel, 2 * 65536 + 4096);  // the initial page and the table fit, three pages do not
  ASSERT_TRUE(small.start(module).ok());
  auto r = restore_instance(small.store, *small.inst, *snap);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "snapshot_over_budget");
}

TEST(WasmSnapshot, ParseRefusesEveryTruncationAndTrailingBytes) {
  auto module = load(wat(kModule), Engine::kInterp);
  Guest a(kFuel);
  ASSERT_TRUE(a.start(module).ok());
  ASSERT_TRUE(a.call("init").ok());
  std::vector<uint8_t> bytes = capture_instance(*a.inst)->serialize();
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = InstanceSnapshot::parse(std::span<const uint8_t>(bytes.data(), n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.error().code, "snapshot_malformed");
  }
  bytes.push_back(0);
  EXPECT_FALSE(InstanceSnapshot::parse(bytes).ok());
}

}  // namespace
}  // namespace genvm::wasm
