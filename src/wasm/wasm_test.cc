// Unit tests of the engine: reader and validator errors, every trap kind, GenVM's stack rule,
// tail calls, deterministic mode, canonical NaNs, the RAM budget, fuel and interrupts, and
// hostile modules. Modules are written in WAT and assembled with wabt's wat2wasm at test time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>

#include "common/blake3.h"
#include "wasm/leb128.h"
#include "wasm/module.h"
#include "wasm/ops.h"
#include "wasm/wasm.h"

namespace genvm::wasm {
namespace {

bool have_wat2wasm() { return std::system("wat2wasm --version >/dev/null 2>&1") == 0; }

std::vector<uint8_t> wat(const std::string& text, const char* flags = "") {
  char in_path[] = "/tmp/genvm-wasm-test-XXXXXX";
  int fd = mkstemp(in_path);
  EXPECT_GE(fd, 0);
  close(fd);
  {
    std::ofstream o(in_path);
    o << text;
  }
  std::string out_path = std::string(in_path) + ".wasm";
  std::string cmd = std::string("wat2wasm ") + flags + " " + in_path + " -o " + out_path;
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << text;
  std::ifstream in(out_path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(in_path);
  std::remove(out_path.c_str());
  return bytes;
}

#define REQUIRE_WAT2WASM() \
  if (!have_wat2wasm()) GTEST_SKIP() << "wat2wasm (wabt) not installed; install the Debian package wabt"

struct Env {
  Store store;
  Linker linker;
  Instance* inst = nullptr;
  explicit Env(StoreConfig cfg = {}) : store(cfg) {}
  void load(const std::vector<uint8_t>& bytes, LoadOptions lo = {}) {
    auto m = Module::load(bytes, lo);
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    auto i = linker.instantiate(store, *m, "test");
    ASSERT_TRUE(i.ok()) << i.error().to_string();
    inst = *i;
  }
  Outcome call(const std::string& name, std::vector<Value> args = {}) {
    FuncInst* f = inst->get_func(name);
    EXPECT_NE(f, nullptr) << name;
    auto r = store.call(f, args);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : Outcome{};
  }
  std::optional<TrapKind> trap_of(const std::string& name, std::vector<Value> args = {}) {
    Outcome o = call(name, args);
    if (!o.trap) return std::nullopt;
    return o.trap->kind;
  }
};

// ------------------------------------------------------------------------------------ reader

TEST(WasmReader, RejectsBadMagicWithOffset) {
  std::vector<uint8_t> b = {0, 'a', 's', 'n', 1, 0, 0, 0};
  auto m = Module::load(b);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "malformed");
  EXPECT_NE(m.error().message.find("at offset 0: magic header not detected"), std::string::npos);
}

TEST(WasmReader, RejectsTruncatedSection) {
  // Type section claims 10 bytes but the file ends.
  std::vector<uint8_t> b = {0, 'a', 's', 'm', 1, 0, 0, 0, 1, 10, 1, 0x60};
  auto m = Module::load(b);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "malformed");
  EXPECT_NE(m.error().message.find("unexpected end"), std::string::npos) << m.error().message;
}

TEST(WasmReader, GiantCountIsCheckedAgainstRemainingBytes) {
  // Type section with count 0xffffffff in 6 bytes: must fail fast, not reserve 4G entries.
  std::vector<uint8_t> b = {0, 'a', 's', 'm', 1, 0, 0, 0, 1, 5, 0xff, 0xff, 0xff, 0xff, 0x0f};
  auto m = Module::load(b);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("unexpected end"), std::string::npos) << m.error().message;
}

TEST(WasmReader, GiantLocalCountIsRejected) {
  // One function whose body declares 0xffffffff i32 locals.
  std::vector<uint8_t> b = {0, 'a', 's', 'm', 1, 0, 0, 0,
                            1, 4, 1, 0x60, 0, 0,           // type () -> ()
                            3, 2, 1, 0,                    // func 0: type 0
                            10, 10, 1, 8, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x7f, 0x0b};
  auto m = Module::load(b);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("too many locals"), std::string::npos) << m.error().message;
}

TEST(WasmReader, OverlongLebIsMalformed) {
  // memory section: limits min encoded in 6 bytes.
  std::vector<uint8_t> b = {0, 'a', 's', 'm', 1, 0, 0, 0, 5, 8, 1, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  auto m = Module::load(b);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("integer representation too long"), std::string::npos) << m.error().message;
}

// --------------------------------------------------------------------------------- validator

TEST(WasmValidator, TypeMismatchIsInvalidWithMessage) {
  REQUIRE_WAT2WASM();
  auto b = wat("(module (func (result i32) (i64.const 1)))", "--no-check");
  auto m = Module::load(b);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "invalid");
  EXPECT_NE(m.error().message.find("type mismatch"), std::string::npos) << m.error().message;
}

TEST(WasmValidator, UnknownFunctionAndImmutableGlobal) {
  REQUIRE_WAT2WASM();
  auto m1 = Module::load(wat("(module (func (call 5)))", "--no-check"));
  ASSERT_FALSE(m1.ok());
  EXPECT_NE(m1.error().message.find("unknown function"), std::string::npos);
  auto m2 = Module::load(wat("(module (global i32 (i32.const 0)) (func (global.set 0 (i32.const 1))))", "--no-check"));
  ASSERT_FALSE(m2.ok());
  EXPECT_NE(m2.error().message.find("global is immutable"), std::string::npos);
}

TEST(WasmValidator, FrameLargerThanValueBudgetIsRejected) {
  REQUIRE_WAT2WASM();
  // 70000 declared locals: refused (wasmparser's 50000 locals, GenVM's 65535-value frame limit
  // is also exceeded; WasmHostileModules.DeepOperandStack checks the frame limit on its own).
  auto m = Module::load(wat("(module (func (local i32) (local i32)))"));
  ASSERT_TRUE(m.ok());
  std::vector<uint8_t> b = {0, 'a', 's', 'm', 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0,
                            10, 8, 1, 6, 1, 0xf0, 0xa2, 0x04, 0x7f, 0x0b};  // 70000 = 0xf0 0xa2 0x04
  auto big = Module::load(b);
  ASSERT_FALSE(big.ok());
}

// ------------------------------------------------------------------------------------- traps

TEST(WasmTraps, EveryKindIsReportedAsAValue) {
  REQUIRE_WAT2WASM();
  Env e;
  e.load(wat(R"((module
    (type $v (func))
    (type $i (func (result i32)))
    (memory 1)
    (table 2 funcref)
    (elem (i32.const 0) $f)
    (func $f)
    (func (export "unreachable") unreachable)
    (func (export "mem") (result i32) (i32.load (i32.const 65534)))
    (func (export "table_oob") (call_indirect (type $v) (i32.const 5)))
    (func (export "null") (call_indirect (type $v) (i32.const 1)))
    (func (export "sig") (result i32) (call_indirect (type $i) (i32.const 0)))
    (func (export "overflow") (result i32) (i32.div_s (i32.const 0x80000000) (i32.const -1)))
    (func (export "div0") (result i32) (i32.rem_u (i32.const 1) (i32.const 0)))
    (func (export "conv") (result i32) (i32.trunc_f32_s (f32.const nan)))
    (func $rec (export "stack") (call $rec))
  ))"));
  EXPECT_EQ(e.trap_of("unreachable"), TrapKind::kUnreachable);
  EXPECT_EQ(e.trap_of("mem"), TrapKind::kMemoryOutOfBounds);
  EXPECT_EQ(e.trap_of("table_oob"), TrapKind::kTableOutOfBounds);
  EXPECT_EQ(e.trap_of("null"), TrapKind::kIndirectCallToNull);
  EXPECT_EQ(e.trap_of("sig"), TrapKind::kBadSignature);
  EXPECT_EQ(e.trap_of("overflow"), TrapKind::kIntegerOverflow);
  EXPECT_EQ(e.trap_of("div0"), TrapKind::kIntegerDivideByZero);
  EXPECT_EQ(e.trap_of("conv"), TrapKind::kBadConversionToInteger);
  Outcome o = e.call("stack");
  ASSERT_TRUE(o.trap);
  EXPECT_EQ(o.trap->public_string(), "wasm_trap stack_overflow");
}

TEST(WasmTraps, HostExitStopsTheWholeRunWithPayload) {
  REQUIRE_WAT2WASM();
  Env e;
  int calls_after = 0;
  e.linker.define_host(e.store, "env", "exit", FuncType{{ValType::I32}, {}},
                       [](Caller&, std::span<const Value> args, std::span<Value>) -> std::optional<Trap> {
                         Trap t;
                         t.kind = TrapKind::kHostExit;
                         t.exit_code = args[0].as_i32();
                         t.payload = std::make_shared<std::string>("bye");
                         return t;
                       });
  e.linker.define_host(e.store, "env", "after", FuncType{{}, {}},
                       [&](Caller&, std::span<const Value>, std::span<Value>) -> std::optional<Trap> {
                         ++calls_after;
                         return std::nullopt;
                       });
  e.load(wat(R"((module (import "env" "exit" (func $exit (param i32))) (import "env" "after" (func $after))
    (func $inner (call $exit (i32.const 7)) (call $after))
    (func (export "run") (call $inner) (call $after))))"));
  Outcome o = e.call("run");
  ASSERT_TRUE(o.trap);
  EXPECT_EQ(o.trap->kind, TrapKind::kHostExit);
  EXPECT_EQ(o.trap->exit_code, 7);
  EXPECT_EQ(*std::static_pointer_cast<std::string>(o.trap->payload), "bye");
  EXPECT_EQ(calls_after, 0);
}

TEST(WasmHost, HostFunctionReadsAndWritesCallerMemory) {
  REQUIRE_WAT2WASM();
  Env e;
  e.linker.define_host(e.store, "env", "upcase", FuncType{{ValType::I32, ValType::I32}, {ValType::I32}},
                       [](Caller& c, std::span<const Value> args, std::span<Value> res) -> std::optional<Trap> {
                         uint32_t p = uint32_t(args[0].as_i32()), n = uint32_t(args[1].as_i32());
                         std::string s(n, '\0');
                         if (!c.read(p, s.data(), n)) return Trap{TrapKind::kMemoryOutOfBounds, "", 0, nullptr, {}};
                         for (auto& ch : s) ch = char(std::toupper(ch));
                         c.write(p, s.data(), n);
                         res[0] = Value::i32(int32_t(n));
                         return std::nullopt;
                       });
  e.load(wat(R"((module (import "env" "upcase" (func $up (param i32 i32) (result i32)))
    (memory (export "memory") 1) (data (i32.const 16) "hello")
    (func (export "run") (result i32) (call $up (i32.const 16) (i32.const 5)))))"));
  Outcome o = e.call("run");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o.values[0].as_i32(), 5);
  auto mem = e.inst->memory(0);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(mem.data()) + 16, 5), "HELLO");
}

// ----------------------------------------------------------------------------- stack limits

// $r counts its activations in a global and recurses forever. Its value size is
// `locals` declared locals + 2 (max operand depth: global.get, i32.const).
std::string recursion_module(int locals) {
  std::string l;
  for (int i = 0; i < locals; ++i) l += " (local i32)";
  return "(module (global $n (export \"n\") (mut i32) (i32.const 0))"
         " (func $r (export \"r\")" + l +
         "  (global.set $n (i32.add (global.get $n) (i32.const 1))) (call $r)))";
}

TEST(WasmStackLimit, CallDepthLimitTrapsAtExactly1024Frames) {
  REQUIRE_WAT2WASM();
  Env e;
  e.load(wat(recursion_module(0)));
  EXPECT_EQ(e.trap_of("r"), TrapKind::kStackOverflow);
  // The host entry is frame 1; frame 1025 is refused.
  EXPECT_EQ(e.inst->get_global("n")->as_i32(), 1024);
}

TEST(WasmStackLimit, ValueBudgetCountsLocalsPlusOperandDepth) {
  REQUIRE_WAT2WASM();
  Env e;
  e.load(wat(recursion_module(100)));
  EXPECT_EQ(e.trap_of("r"), TrapKind::kStackOverflow);
  // Each frame costs 100 locals + 2 operand slots = 102; floor(65535 / 102) = 642 frames.
  // (Fails if params were charged, if operand depth were ignored, or the counter not held.)
  EXPECT_EQ(e.inst->get_global("n")->as_i32(), 65535 / 102);
}

TEST(WasmStackLimit, LimitsAreConfigurablePerStore) {
  REQUIRE_WAT2WASM();
  StoreConfig cfg;
  cfg.call_stack_limit = 10;
  Env e(cfg);
  e.load(wat(recursion_module(0)));
  EXPECT_EQ(e.trap_of("r"), TrapKind::kStackOverflow);
  EXPECT_EQ(e.inst->get_global("n")->as_i32(), 10);
}

TEST(WasmStackLimit, ReturnRefundsSoRepeatedCallsDoNotLeak) {
  REQUIRE_WAT2WASM();
  Env e;
  e.load(wat(R"((module (func $leaf (result i32) (local i32) (i32.const 1))
    (func (export "loop") (result i32) (local $i i32) (local $s i32)
      (loop $l (local.set $s (i32.add (local.get $s) (call $leaf)))
        (br_if $l (i32.lt_u (local.tee $i (i32.add (local.get $i) (i32.const 1))) (i32.const 100000))))
      (local.get $s))))"));
  Outcome o = e.call("loop");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o.values[0].as_i32(), 100000);
  EXPECT_EQ(e.store.calls_left(), 1024u);
  EXPECT_EQ(e.store.values_left(), 65535u);
}

TEST(WasmStackLimit, TailCallChainOfAMillionRunsAtConstantDepth) {
  REQUIRE_WAT2WASM();
  Env e;
  e.load(wat(R"((module (func $t (export "t") (param i64) (result i64)
    (if (result i64) (i64.eqz (local.get 0)) (then (i64.const 42))
      (else (return_call $t (i64.sub (local.get 0) (i64.const 1))))))))", "--enable-tail-call"));
  Outcome o = e.call("t", {Value::i64(1000000)});
  ASSERT_TRUE(o.ok()) << o.trap->public_string();
  EXPECT_EQ(o.values[0].as_i64(), 42);
}

TEST(WasmStackLimit, NonTailRecursionOfTheSameDepthOverflows) {
  REQUIRE_WAT2WASM();
  // The control for the test above: the same chain with `call` must trap.
  Env e;
  e.load(wat(R"((module (func $t (export "t") (param i64) (result i64)
    (if (result i64) (i64.eqz (local.get 0)) (then (i64.const 42))
      (else (call $t (i64.sub (local.get 0) (i64.const 1))))))))"));
  EXPECT_EQ(e.trap_of("t", {Value::i64(1000000)}), TrapKind::kStackOverflow);
}

// ------------------------------------------------------------------------------ determinism

const char* kFloatModule = R"((module (memory 1)
  (func (export "add") (param i32) (result f32)
    (if (result f32) (local.get 0) (then (f32.add (f32.const 1) (f32.const 2))) (else (f32.const 7))))
  (func (export "bits") (result i32)
    (f32.store (i32.const 0) (f32.const 1.5))
    (i32.reinterpret_f32 (select (f32.load (i32.const 0)) (f32.const 0) (i32.const 1))))
  (func (export "div0") (result i32) (i32.reinterpret_f32 (f32.div (f32.const 0) (f32.const 0))))
  (func (export "sqrtneg") (result i64) (i64.reinterpret_f64 (f64.sqrt (f64.const -1))))
  (func (export "nanpayload") (result i32)
    (i32.reinterpret_f32 (f32.add (f32.reinterpret_i32 (i32.const 0x7fa00001)) (f32.const 1))))
  (func (export "neg") (result i32) (i32.reinterpret_f32 (f32.neg (f32.reinterpret_i32 (i32.const 0x7fa00001)))))
))";

TEST(WasmDeterminism, FloatOpTrapsOnlyWhenReached) {
  REQUIRE_WAT2WASM();
  Env e;
  LoadOptions lo;
  lo.deterministic = true;
  e.load(wat(kFloatModule), lo);  // a module containing float ops loads fine
  Outcome skip = e.call("add", {Value::i32(0)});
  ASSERT_TRUE(skip.ok());
  EXPECT_EQ(skip.values[0].as_f32(), 7.0f);
  EXPECT_EQ(e.trap_of("add", {Value::i32(1)}), TrapKind::kNondetInstruction);
  // load/store/const/reinterpret (and select) are bit moves: allowed.
  Outcome bits = e.call("bits");
  ASSERT_TRUE(bits.ok());
  EXPECT_EQ(uint32_t(bits.values[0].as_i32()), 0x3fc00000u);
}

TEST(WasmDeterminism, NondetModeComputesFloats) {
  REQUIRE_WAT2WASM();
  Env e;
  e.load(wat(kFloatModule));
  Outcome o = e.call("add", {Value::i32(1)});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o.values[0].as_f32(), 3.0f);
}

TEST(WasmDeterminism, ArithmeticNaNsAreCanonical) {
  REQUIRE_WAT2WASM();
  Env e;
  e.load(wat(kFloatModule));
  EXPECT_EQ(uint32_t(e.call("div0").values[0].as_i32()), 0x7fc00000u);
  EXPECT_EQ(uint64_t(e.call("sqrtneg").values[0].as_i64()), 0x7ff8000000000000ull);
  // x86 would propagate the input payload (0x7fe00001); we canonicalize.
  EXPECT_EQ(uint32_t(e.call("nanpayload").values[0].as_i32()), 0x7fc00000u);
  // neg is a bit operation: the payload is kept, only the sign flips.
  EXPECT_EQ(uint32_t(e.call("neg").values[0].as_i32()), 0xffa00001u);
}

// ------------------------------------------------------------------------ budget and fuel

TEST(WasmBudget, MemoryGrowBeyondRamBudgetReturnsMinusOne) {
  REQUIRE_WAT2WASM();
  StoreConfig cfg;
  cfg.ram_budget = 4 * 65536;
  Env e(cfg);
  e.load(wat(R"((module (memory 1) (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))))"));
  EXPECT_EQ(e.call("grow", {Value::i32(100)}).values[0].as_i32(), -1);
  EXPECT_EQ(e.call("grow", {Value::i32(3)}).values[0].as_i32(), 1);
  EXPECT_EQ(e.call("grow", {Value::i32(1)}).values[0].as_i32(), -1);
  EXPECT_EQ(e.call("grow", {Value::i32(0x7fffffff)}).values[0].as_i32(), -1);
}

// Stores sharing one RamBudget (the executor's sub-VMs of one run): what one holds the other
// cannot have, everything returns when a store goes, and the second store's memory reserves only
// what the first left unreserved, moving its mapping when it grows past that (data kept).
TEST(WasmBudget, StoresSharingABudgetSeeEachOthersUseAndReservations) {
  REQUIRE_WAT2WASM();
  auto ram = std::make_shared<RamBudget>(64 * 65536);
  StoreConfig cfg;
  cfg.shared_ram = ram;
  const auto bytes = wat(R"((module (memory (export "mem") 1)
      (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
      (func (export "poke") (param i32 i32) (i32.store8 (local.get 0) (local.get 1)))
      (func (export "peek") (param i32) (result i32) (i32.load8_u (local.get 0)))))");
  Env first(cfg);
  first.load(bytes);
  // The first memory reserved the whole budget's address space for its growth.
  EXPECT_EQ(ram->reserved(), 64u * 65536);
  EXPECT_EQ(first.call("grow", {Value::i32(40)}).values[0].as_i32(), 1);
  {
    Env second(cfg);
    second.load(bytes);
    EXPECT_EQ(ram->used(), 42u * 65536);
    // 22 pages are left of the one budget, not 63 of a budget of its own.
    EXPECT_EQ(second.call("grow", {Value::i32(23)}).values[0].as_i32(), -1);
    second.call("poke", {Value::i32(65535), Value::i32(0x5a)});
    // Past its 1-page reservation: the mapping moves, the bytes come along.
    EXPECT_EQ(second.call("grow", {Value::i32(22)}).values[0].as_i32(), 1);
    EXPECT_EQ(second.call("peek", {Value::i32(65535)}).values[0].as_i32(), 0x5a);
    second.call("poke", {Value::i32(23 * 65536 - 1), Value::i32(7)});
    EXPECT_EQ(second.call("peek", {Value::i32(23 * 65536 - 1)}).values[0].as_i32(), 7);
    EXPECT_EQ(ram->left(), 0u);
    EXPECT_EQ(first.call("grow", {Value::i32(1)}).values[0].as_i32(), -1);
    // The run's reservations together: the first's 64 pages and the second's 23.
    EXPECT_EQ(ram->reserved(), (64u + 23u) * 65536);
  }
  // The second store is gone: its pages and its address space are back.
  EXPECT_EQ(ram->used(), 41u * 65536);
  EXPECT_EQ(ram->reserved(), 64u * 65536);
  EXPECT_EQ(first.call("grow", {Value::i32(23)}).values[0].as_i32(), 41);
  EXPECT_EQ(ram->peak(), 64u * 65536);
}

TEST(WasmBudget, TableGrowCountsSixtyFourBytesPerElement) {
  REQUIRE_WAT2WASM();
  StoreConfig cfg;
  cfg.ram_budget = 64 * 1000;
  Env e(cfg);
  e.load(wat(R"((module (table 0 funcref) (func (export "grow") (param i32) (result i32) (table.grow 0 (ref.null func) (local.get 0)))))"));
  EXPECT_EQ(e.call("grow", {Value::i32(1001)}).values[0].as_i32(), -1);
  EXPECT_EQ(e.call("grow", {Value::i32(1000)}).values[0].as_i32(), 0);
  EXPECT_EQ(e.call("grow", {Value::i32(-1)}).values[0].as_i32(), -1);
  EXPECT_EQ(e.store.ram_used(), 64u * 1000);
}

TEST(WasmBudget, HostileInitialMemoryFailsCleanly) {
  REQUIRE_WAT2WASM();
  StoreConfig cfg;
  cfg.ram_budget = 1 << 20;
  Store s(cfg);
  Linker l;
  auto m = Module::load(wat("(module (memory 65536))"));
  ASSERT_TRUE(m.ok());
  auto i = l.instantiate(s, *m);
  ASSERT_FALSE(i.ok());
  // The code, not the message, is what embedders map (the executor: out_of memory wasm_memory).
  EXPECT_EQ(i.error().code, "memory_over_budget") << i.error().message;
  EXPECT_EQ(s.ram_used(), 0u);
}

TEST(WasmBudget, HostileInitialTableFailsWithItsOwnCode) {
  REQUIRE_WAT2WASM();
  StoreConfig cfg;
  cfg.ram_budget = 64 * 1000;
  Store s(cfg);
  Linker l;
  auto m = Module::load(wat("(module (table 1001 funcref))"));
  ASSERT_TRUE(m.ok());
  auto i = l.instantiate(s, *m);
  ASSERT_FALSE(i.ok());
  EXPECT_EQ(i.error().code, "table_over_budget") << i.error().message;
}

const char* kCountingLoop = R"((module (global $n (export "n") (mut i32) (i32.const 0))
  (func (export "spin") (loop $l (global.set $n (i32.add (global.get $n) (i32.const 1))) (br $l)))))";

TEST(WasmFuel, OutOfFuelIsDeterministic) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(kCountingLoop);
  LoadOptions lo;
  lo.metering = true;
  int32_t counts[2];
  for (int run = 0; run < 2; ++run) {
    StoreConfig cfg;
    cfg.fuel_enabled = true;
    Env e(cfg);
    e.load(bytes, lo);
    e.store.set_fuel(10000);
    EXPECT_EQ(e.trap_of("spin"), TrapKind::kOutOfFuel);
    counts[run] = e.inst->get_global("n")->as_i32();
  }
  EXPECT_EQ(counts[0], counts[1]);
  EXPECT_GT(counts[0], 100);
  EXPECT_LT(counts[0], 10000);
  // More fuel goes further.
  StoreConfig cfg;
  cfg.fuel_enabled = true;
  Env e(cfg);
  e.load(bytes, lo);
  e.store.set_fuel(20000);
  EXPECT_EQ(e.trap_of("spin"), TrapKind::kOutOfFuel);
  EXPECT_GT(e.inst->get_global("n")->as_i32(), counts[0]);
}

// The fuel rule (DESIGN.md "Fuel"): a region (function body outside loops, or one loop body
// outside nested loops) is charged its static instruction count (every instruction but
// `else`/`end`, branches not taken included) when it is entered, and out_of_fuel fires only
// there. Pinned exactly: fails if charges move back to basic blocks (the untaken arm would
// not be charged) or if a region's count is off by one.
TEST(WasmFuel, RegionsAreChargedTheirStaticSizeOnEntry) {
  REQUIRE_WAT2WASM();
  // Function region: local.get, if, i32.const, i32.const = 4 (the loop is its own region).
  // Loop region: local.get, i32.const, i32.sub, local.tee, br_if = 5 per iteration.
  auto bytes = wat(R"((module
    (func (export "pick") (param i32) (result i32) (if (result i32) (local.get 0) (then (i32.const 1)) (else (i32.const 2))))
    (func (export "count") (param i32) (loop $l (br_if $l (local.tee 0 (i32.sub (local.get 0) (i32.const 1))))))))");
  LoadOptions lo;
  lo.metering = true;
  StoreConfig cfg;
  cfg.fuel_enabled = true;
  Env e(cfg);
  e.load(bytes, lo);
  for (int32_t arg : {0, 1}) {
    e.store.set_fuel(4);
    EXPECT_TRUE(e.call("pick", {Value::i32(arg)}).ok());
    EXPECT_EQ(e.store.fuel(), 0u);
    e.store.set_fuel(3);
    EXPECT_EQ(e.trap_of("pick", {Value::i32(arg)}), TrapKind::kOutOfFuel);
  }
  // "count": its function region is the `loop` instruction (1), then 3 iterations cost 3 * 5.
  e.store.set_fuel(100);
  EXPECT_TRUE(e.call("count", {Value::i32(3)}).ok());
  EXPECT_EQ(e.store.fuel(), 100u - 16u);
  e.store.set_fuel(15);
  EXPECT_EQ(e.trap_of("count", {Value::i32(3)}), TrapKind::kOutOfFuel);
}

TEST(WasmFuel, InterruptFromAnotherThreadStopsAnInfiniteLoop) {
  REQUIRE_WAT2WASM();
  Env e;
  LoadOptions lo;
  lo.metering = true;
  e.load(wat(kCountingLoop), lo);
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    e.store.interrupt();
  });
  EXPECT_EQ(e.trap_of("spin"), TrapKind::kInterrupt);
  t.join();
}

// ---------------------------------------------------------------------------------- hostile

TEST(WasmHostile, HugeMemoryGrowAndTableGrowFailCleanly) {
  REQUIRE_WAT2WASM();
  Env e;
  e.load(wat(R"((module (memory 0) (table 0 externref)
    (func (export "mg") (result i32) (memory.grow (i32.const 0xffffffff)))
    (func (export "tg") (result i32) (table.grow 0 (ref.null extern) (i32.const 0xfffffff0)))))"));
  EXPECT_EQ(e.call("mg").values[0].as_i32(), -1);
  EXPECT_EQ(e.call("tg").values[0].as_i32(), -1);
}

TEST(WasmHostile, TruncatedModulesNeverLoad) {
  REQUIRE_WAT2WASM();
  auto b = wat(kFloatModule);
  ASSERT_TRUE(Module::load(b).ok());
  // Section boundaries: a prefix ending exactly there may be a valid (smaller) module.
  std::set<size_t> boundaries = {8};
  for (size_t p = 8; p < b.size();) {
    size_t q = p + 1, size = 0, shift = 0;
    while (b[q] & 0x80) size |= size_t(b[q++] & 0x7f) << shift, shift += 7;
    size |= size_t(b[q++]) << shift;
    p = q + size;
    boundaries.insert(p);
  }
  for (size_t n = 0; n < b.size(); ++n) {
    if (boundaries.count(n)) continue;
    std::vector<uint8_t> cut(b.begin(), b.begin() + n);
    EXPECT_FALSE(Module::load(cut).ok()) << "prefix of " << n << " bytes loaded";
  }
}

// ------------------------------------------------------------------------ compiler rewrites

TEST(WasmCompiler, TeeOfALocalKeepsTheValueOnTheStack) {
  REQUIRE_WAT2WASM();
  // Regression: `local.get; local.tee` once left the stack slot unwritten.
  Env e;
  e.load(wat(R"((module (func (export "f") (param i32) (result i32) (local i32)
    (i32.add (local.tee 1 (local.get 0)) (i32.const 1)))))"));
  EXPECT_EQ(e.call("f", {Value::i32(41)}).values[0].as_i32(), 42);
}

TEST(WasmCompiler, PendingLocalReadSeesTheOldValueAfterSet) {
  REQUIRE_WAT2WASM();
  // The virtual local.get must be materialized before local.set overwrites the local.
  Env e;
  e.load(wat(R"((module (func (export "f") (param i32) (result i32)
    (local.get 0) (local.set 0 (i32.const 100)) (local.get 0) (i32.sub))))"));
  EXPECT_EQ(e.call("f", {Value::i32(7)}).values[0].as_i32(), 7 - 100);
}

// Immediate-operand and fused compare-branch forms must agree with the register forms.
TEST(WasmCompiler, ImmediateFormsAgreeWithRegisterForms) {
  REQUIRE_WAT2WASM();
  const char* ops32[] = {"add", "sub", "mul", "and", "or", "xor", "shl", "shr_s", "shr_u", "rotl", "rotr",
                         "eq", "ne", "lt_s", "lt_u", "gt_s", "gt_u", "le_s", "le_u", "ge_s", "ge_u"};
  const int64_t consts[] = {0, 1, -1, 5, -5, 31, 0x7fffffff, int64_t(0x80000000), 0x123456789ll, -0x123456789ll};
  std::string mod = "(module";
  int n = 0;
  for (const char* op : ops32) {
    for (const char* ty : {"i32", "i64"}) {
      for (int64_t c : consts) {
        std::string cs = std::to_string(std::string(ty) == "i32" ? int64_t(int32_t(c)) : c);
        std::string res = std::string(op).find_first_of("eglnq") == 0 && std::string(op) != "and" ? "i32" : ty;
        bool cmp = std::string(op) == "eq" || std::string(op) == "ne" || std::string(op).rfind("lt", 0) == 0 ||
                   std::string(op).rfind("gt", 0) == 0 || std::string(op).rfind("le", 0) == 0 || std::string(op).rfind("ge", 0) == 0;
        res = cmp ? "i32" : ty;
        mod += " (func (export \"imm" + std::to_string(n) + "\") (param " + ty + ") (result " + res + ") (" + ty + "." + op +
               " (local.get 0) (" + ty + ".const " + cs + ")))";
        mod += " (func (export \"reg" + std::to_string(n) + "\") (param " + ty + " " + ty + ") (result " + res + ") (" + ty + "." +
               op + " (local.get 0) (local.get 1)))";
        if (cmp)
          mod += " (func (export \"br" + std::to_string(n) + "\") (param " + ty + ") (result i32) (block (br_if 0 (" + ty + "." +
                 op + " (local.get 0) (" + ty + ".const " + cs + "))) (return (i32.const 0))) (i32.const 1))"
                 " (func (export \"if" + std::to_string(n) + "\") (param " + ty + ") (result i32) (if (result i32) (" + ty + "." +
                 op + " (local.get 0) (" + ty + ".const " + cs + ")) (then (i32.const 1)) (else (i32.const 0))))";
        ++n;
      }
    }
  }
  mod += ")";
  Env e;
  e.load(wat(mod));
  const int64_t inputs[] = {0, 1, -1, 3, 0x7fffffff, int64_t(0x80000000), 0x123456789ll, -7};
  int idx = 0;
  for (const char* op : ops32) {
    for (const char* ty : {"i32", "i64"}) {
      bool is32 = std::string(ty) == "i32";
      for (int64_t c : consts) {
        for (int64_t x : inputs) {
          Value vx = is32 ? Value::i32(int32_t(x)) : Value::i64(x);
          Value vc = is32 ? Value::i32(int32_t(c)) : Value::i64(c);
          uint64_t want = e.call("reg" + std::to_string(idx), {vx, vc}).values[0].bits;
          EXPECT_EQ(e.call("imm" + std::to_string(idx), {vx}).values[0].bits, want) << ty << "." << op << " " << x << ", " << c;
          if (e.inst->get_func("br" + std::to_string(idx))) {
            EXPECT_EQ(e.call("br" + std::to_string(idx), {vx}).values[0].bits, want) << "br_if " << ty << "." << op;
            EXPECT_EQ(e.call("if" + std::to_string(idx), {vx}).values[0].bits, want) << "if " << ty << "." << op;
          }
        }
        ++idx;
      }
    }
  }
}

// ------------------------------------------------------------------------------- embedding

TEST(WasmApi, GlobalsMemoriesAndFingerprintViews) {
  REQUIRE_WAT2WASM();
  Env e;
  e.load(wat(R"((module (global (export "g") (mut i64) (i64.const 5)) (memory 1) (data (i32.const 0) "ab")))"));
  EXPECT_EQ(e.inst->get_global("g")->as_i64(), 5);
  ASSERT_TRUE(e.inst->set_global("g", Value::i64(9)).ok());
  EXPECT_EQ(e.inst->get_global("g")->as_i64(), 9);
  EXPECT_FALSE(e.inst->set_global("g", Value::i32(1)).ok());
  auto views = memories_for_fingerprint(e.store);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].module, "test");
  EXPECT_EQ(views[0].index, 0u);
  EXPECT_EQ(views[0].bytes.size(), 65536u);
  EXPECT_EQ(views[0].bytes[1], 'b');
}

TEST(WasmApi, NameSectionGivesFunctionNames) {
  REQUIRE_WAT2WASM();
  Env e;
  e.load(wat("(module (func $hello) (func $world))", "--debug-names"));
  EXPECT_EQ(e.inst->func_name(1), "world");
  EXPECT_EQ(e.inst->func_name(7), "func[7]");
}

// ------------------------------------------------------------------------------ backtraces
// Each test below fails if frames are not collected (empty), if the pc -> function mapping or
// the pc -> byte offset table (ModuleImpl::code_offsets) is wrong (the opcode byte at
// code_offset is checked), or if the cap is not applied.

// Three nested calls: c traps, b and a are its callers.
const char kNestedWat[] = R"((module (memory 1)
  (func $c (param i32) (result i32)
    (if (i32.eq (local.get 0) (i32.const 0)) (then unreachable))
    (if (i32.eq (local.get 0) (i32.const 1)) (then (return (i32.div_s (i32.const 1) (i32.sub (local.get 0) (i32.const 1))))))
    (i32.load (i32.const 70000)))
  (func $b (param i32) (result i32) (i32.add (i32.const 1) (call $c (local.get 0))))
  (func $a (export "run") (param i32) (result i32) (i32.add (i32.const 2) (call $b (local.get 0))))))";

void expect_nested_frames(const Trap& t, const std::vector<uint8_t>& bytes, uint8_t trap_opcode, bool named) {
  ASSERT_EQ(t.frames.size(), 3u) << format_backtrace(t.frames);
  const uint32_t idx[] = {0, 1, 2};
  const char* names[] = {"c", "b", "a"};
  for (size_t i = 0; i < 3; ++i) {
    const TrapFrame& f = t.frames[i];
    EXPECT_EQ(f.module, "test");
    EXPECT_EQ(f.func_index, idx[i]) << i;
    EXPECT_EQ(f.func_name, named ? names[i] : "") << i;
    ASSERT_GT(f.code_offset, 0u);
    ASSERT_LT(f.code_offset, bytes.size());
    EXPECT_EQ(bytes[f.code_offset], i == 0 ? trap_opcode : uint8_t(0x10)) << "frame " << i << " at " << f.code_offset;
  }
  // Callers' call instructions lie in later function bodies than the callee's trap here.
  EXPECT_LT(t.frames[0].code_offset, t.frames[1].code_offset);
  EXPECT_LT(t.frames[1].code_offset, t.frames[2].code_offset);
}

TEST(WasmBacktrace, NestedTrapsWithNameSection) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(kNestedWat, "--debug-names");
  Env e;
  e.load(bytes);
  struct { int32_t arg; TrapKind kind; uint8_t opcode; } cases[] = {
      {0, TrapKind::kUnreachable, 0x00},
      {1, TrapKind::kIntegerDivideByZero, 0x6d},
      {2, TrapKind::kMemoryOutOfBounds, 0x28},
  };
  for (const auto& c : cases) {
    Outcome o = e.call("run", {Value::i32(c.arg)});
    ASSERT_TRUE(o.trap) << c.arg;
    EXPECT_EQ(o.trap->kind, c.kind);
    expect_nested_frames(*o.trap, bytes, c.opcode, true);
  }
  Outcome o = e.call("run", {Value::i32(0)});
  ASSERT_TRUE(o.trap);
  EXPECT_EQ(format_backtrace(o.trap->frames).substr(0, 23), "  #0 test!c (func 0) at");
}

TEST(WasmBacktrace, NestedTrapsWithoutNameSection) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(kNestedWat);
  Env e;
  e.load(bytes);
  Outcome o = e.call("run", {Value::i32(1)});
  ASSERT_TRUE(o.trap);
  EXPECT_EQ(o.trap->kind, TrapKind::kIntegerDivideByZero);
  expect_nested_frames(*o.trap, bytes, 0x6d, false);
  EXPECT_NE(format_backtrace(o.trap->frames).find("test!func[2] (func 2)"), std::string::npos);
}

TEST(WasmBacktrace, FramesWorkWithMeteringAndFuel) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(kNestedWat, "--debug-names");
  StoreConfig cfg;
  cfg.fuel_enabled = true;
  Env e(cfg);
  e.load(bytes, LoadOptions{false, true});
  e.store.set_fuel(1000000);
  Outcome o = e.call("run", {Value::i32(2)});
  ASSERT_TRUE(o.trap);
  EXPECT_EQ(o.trap->kind, TrapKind::kMemoryOutOfBounds);
  expect_nested_frames(*o.trap, bytes, 0x28, true);
  // An infinite loop out of fuel: the frame names the looping function.
  Env f(cfg);
  f.load(wat(R"((module (func $spin (loop (br 0))) (func $main (export "run") (call $spin))))", "--debug-names"),
         LoadOptions{false, true});
  f.store.set_fuel(1000);
  Outcome o2 = f.call("run");
  ASSERT_TRUE(o2.trap);
  EXPECT_EQ(o2.trap->kind, TrapKind::kOutOfFuel);
  ASSERT_EQ(o2.trap->frames.size(), 2u);
  EXPECT_EQ(o2.trap->frames[0].func_name, "spin");
  EXPECT_EQ(o2.trap->frames[1].func_name, "main");
}

TEST(WasmBacktrace, DeepRecursionIsCappedAtTwentyInnermostFrames) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(R"((module (func $rec (export "run") (param i32) (result i32)
    (i32.add (i32.const 1) (call $rec (i32.add (local.get 0) (i32.const 1)))))))", "--debug-names");
  Env e;
  e.load(bytes);
  Outcome o = e.call("run", {Value::i32(0)});
  ASSERT_TRUE(o.trap);
  EXPECT_EQ(o.trap->kind, TrapKind::kStackOverflow);
  ASSERT_EQ(o.trap->frames.size(), 20u);
  for (const auto& f : o.trap->frames) {
    EXPECT_EQ(f.func_name, "rec");
    EXPECT_EQ(bytes[f.code_offset], 0x10);  // the overflowing call, then the calls below it
  }
  StoreConfig small;
  small.max_trap_frames = 3;
  Env e3(small);
  e3.load(bytes);
  Outcome o3 = e3.call("run", {Value::i32(0)});
  ASSERT_TRUE(o3.trap);
  EXPECT_EQ(o3.trap->frames.size(), 3u);
}

TEST(WasmBacktrace, HostTrapGetsTheWasmFramesBelowIt) {
  REQUIRE_WAT2WASM();
  Env e;
  e.linker.define_host(e.store, "env", "fail", FuncType{{}, {}},
                       [](Caller&, std::span<const Value>, std::span<Value>) -> std::optional<Trap> {
                         Trap t;
                         t.kind = TrapKind::kHostError;
                         t.message = "host says no";
                         return t;
                       });
  auto bytes = wat(R"((module (import "env" "fail" (func $fail))
    (func $inner (nop) (call $fail))
    (func $outer (export "run") (call $inner))
    (func $tail (export "tail") (return_call $fail))))", "--debug-names --enable-tail-call");
  e.load(bytes);
  Outcome o = e.call("run");
  ASSERT_TRUE(o.trap);
  EXPECT_EQ(o.trap->kind, TrapKind::kHostError);
  EXPECT_EQ(o.trap->message, "host says no");
  ASSERT_EQ(o.trap->frames.size(), 2u) << format_backtrace(o.trap->frames);
  EXPECT_EQ(o.trap->frames[0].func_index, 1u);  // import 0 is the host function
  EXPECT_EQ(o.trap->frames[0].func_name, "inner");
  EXPECT_EQ(bytes[o.trap->frames[0].code_offset], 0x10);
  EXPECT_EQ(o.trap->frames[1].func_name, "outer");
  Outcome t = e.call("tail");
  ASSERT_TRUE(t.trap);
  ASSERT_EQ(t.trap->frames.size(), 1u);
  EXPECT_EQ(t.trap->frames[0].func_name, "tail");
  EXPECT_EQ(bytes[t.trap->frames[0].code_offset], 0x12);  // return_call
}

TEST(WasmBacktrace, FramesNameTheirOwnInstance) {
  REQUIRE_WAT2WASM();
  Store store;
  Linker linker;
  auto lib = Module::load(wat(R"((module (func $boom (export "boom") unreachable)))", "--debug-names"));
  ASSERT_TRUE(lib.ok());
  auto li = linker.instantiate(store, *lib, "lib");
  ASSERT_TRUE(li.ok());
  linker.define_instance("lib", **li);
  auto main = Module::load(wat(R"((module (import "lib" "boom" (func $b)) (func $m (export "run") (call $b))))", "--debug-names"));
  ASSERT_TRUE(main.ok());
  auto mi = linker.instantiate(store, *main, "main");
  ASSERT_TRUE(mi.ok());
  auto r = store.call((*mi)->get_func("run"), {});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->trap);
  ASSERT_EQ(r->trap->frames.size(), 2u);
  EXPECT_EQ(r->trap->frames[0].module, "lib");
  EXPECT_EQ(r->trap->frames[0].func_name, "boom");
  EXPECT_EQ(r->trap->frames[0].func_index, 0u);
  EXPECT_EQ(r->trap->frames[1].module, "main");
  EXPECT_EQ(r->trap->frames[1].func_name, "m");
  EXPECT_EQ(r->trap->frames[1].func_index, 1u);
}

// A malformed name section never makes a module invalid (custom sections cannot): names are
// dropped, frames still carry indices and offsets.
TEST(WasmBacktrace, MalformedNameSectionIsIgnored) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(R"((module (func (export "run") unreachable)))");
  // custom section "name": subsection 1 claims 3 entries, holds one entry whose name length
  // runs past the end.
  const std::vector<uint8_t> bad = {0x00, 0x0c, 0x04, 'n', 'a', 'm', 'e', 0x01, 0x05, 0x03, 0x00, 0x09, 'x', 'y'};
  bytes.insert(bytes.end(), bad.begin(), bad.end());
  Env e;
  e.load(bytes);
  Outcome o = e.call("run");
  ASSERT_TRUE(o.trap);
  ASSERT_EQ(o.trap->frames.size(), 1u);
  EXPECT_EQ(o.trap->frames[0].func_name, "");
  EXPECT_EQ(bytes[o.trap->frames[0].code_offset], 0x00);
  EXPECT_EQ(e.inst->func_name(0), "func[0]");
  // Names out of order are still kept (sorted), the first one per index wins.
  auto b2 = wat(R"((module (func) (func (export "run") unreachable)))");
  const std::vector<uint8_t> unordered = {0x00, 0x11, 0x04, 'n', 'a', 'm', 'e', 0x01, 0x0a, 0x03,
                                          0x01, 0x01, 'b', 0x00, 0x01, 'a', 0x01, 0x01, 'c'};
  b2.insert(b2.end(), unordered.begin(), unordered.end());
  Env e2;
  e2.load(b2);
  EXPECT_EQ(e2.inst->func_name(0), "a");
  EXPECT_EQ(e2.inst->func_name(1), "b");
}

// ------------------------------------------------------------------------ superinstructions
// The compiler fuses `i32.add` into the load that consumes it and `i32.shl` by a constant into
// the `i32.add` that consumes it. These pin that the fused forms keep wasm's exact semantics:
// the sum wraps at 32 bits before the offset is added (no trap when the wrapped address is in
// bounds), a sum past the end traps with the load's offset in the backtrace, shift counts are
// taken mod 32. Each expectation fails if the fused handler computes the address in 64 bits
// or skips the mask.
TEST(WasmFusion, AddThenLoadWrapsLikeWasm) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(R"((module (memory 1) (data (i32.const 16) "\01\02\03\04\05\06\07\08")
    (func $imm (export "imm") (param i32) (result i32) (i32.load offset=4 (i32.add (local.get 0) (i32.const 32))))
    (func $reg (export "reg") (param i32 i32) (result i64) (i64.load8_u (i32.add (local.get 0) (local.get 1))))
    (func $shl (export "shl") (param i32 i32 i32) (result i32) (i32.add (local.get 0) (i32.shl (local.get 1) (i32.const 33))))
    (func $shl2 (export "shl2") (param i32 i32) (result i32) (i32.add (i32.shl (local.get 1) (i32.const 3)) (local.get 0)))))",
                   "--debug-names");
  Env e;
  e.load(bytes);
  // 0xfffffff0 + 32 wraps to 16; +4 offset reads bytes 20..23.
  EXPECT_EQ(e.call("imm", {Value::i32(int32_t(0xfffffff0u))}).values[0].bits, 0x08070605u);
  EXPECT_EQ(e.call("reg", {Value::i32(int32_t(0xffffff00u)), Value::i32(0x113)}).values[0].bits, 4u);
  EXPECT_EQ(e.call("shl", {Value::i32(1), Value::i32(5), Value::i32(0)}).values[0].bits, 11u);
  EXPECT_EQ(e.call("shl", {Value::i32(0), Value::i32(int32_t(0x80000001u)), Value::i32(0)}).values[0].bits, 2u);
  EXPECT_EQ(e.call("shl2", {Value::i32(int32_t(0xfffffffcu)), Value::i32(1)}).values[0].bits, 4u);
  Outcome o = e.call("imm", {Value::i32(65536 - 32 - 4 - 3)});
  ASSERT_TRUE(o.trap);
  EXPECT_EQ(o.trap->kind, TrapKind::kMemoryOutOfBounds);
  ASSERT_EQ(o.trap->frames.size(), 1u);
  EXPECT_EQ(o.trap->frames[0].func_name, "imm");
  EXPECT_EQ(bytes[o.trap->frames[0].code_offset], 0x28);  // the load, not the fused add
  Outcome r = e.call("reg", {Value::i32(65536), Value::i32(0)});
  ASSERT_TRUE(r.trap);
  EXPECT_EQ(bytes[r.trap->frames[0].code_offset], 0x31);
}

// The shared LEB128 decoder (reader and compiler): the spec's limits and error offsets.
TEST(WasmLeb128, DecodesAndRejectsPerSpec) {
  auto dec = [](std::vector<uint8_t> b, int bits, bool sgn) { return read_leb(b.data(), 0, b.size(), bits, sgn); };
  Leb r = dec({0xff, 0xff, 0xff, 0xff, 0x0f}, 32, false);
  EXPECT_EQ(r.error, nullptr);
  EXPECT_EQ(r.value, 0xffffffffu);
  EXPECT_EQ(r.next, 5u);
  EXPECT_STREQ(dec({0xff, 0xff, 0xff, 0xff, 0x1f}, 32, false).error, "integer too large");
  EXPECT_STREQ(dec({0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 32, false).error, "integer representation too long");
  r = dec({0xff, 0xff, 0xff, 0xff, 0x7f}, 32, true);
  EXPECT_EQ(r.error, nullptr);
  EXPECT_EQ(int64_t(r.value), -1);
  EXPECT_STREQ(dec({0xff, 0xff, 0xff, 0xff, 0x4f}, 32, true).error, "integer too large");
  EXPECT_EQ(int64_t(dec({0x40}, 33, true).value), -64);
  r = dec({0x80, 0x80}, 64, false);
  EXPECT_STREQ(r.error, "unexpected end");
  EXPECT_EQ(r.error_at, 2u);
  r = dec({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 64, false);
  EXPECT_EQ(r.error, nullptr);
  EXPECT_EQ(r.value, uint64_t(1) << 63);
  EXPECT_STREQ(dec({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}, 64, false).error, "integer too large");
}

// The fused `other OP (x OP2 y)` family and the load of `a + (b << k)`: results equal the
// unfused arithmetic for every outer/inner pair, and the listing shows the fused opcodes (so
// the test fails if fusion silently stops, not only if it computes wrongly).
TEST(WasmFusion, BinopOfBinopMatchesUnfusedArithmetic) {
  REQUIRE_WAT2WASM();
  const char* outer[] = {"add", "and", "or", "xor"};
  const char* inner[] = {"add", "sub", "and", "or", "xor"};
  const char* inner_imm[] = {"shl", "shr_u", "rotl", "rotr"};
  std::string text = "(module (memory 1)\n";
  int n = 0;
  for (const char* o : outer) {
    for (const char* i : inner)
      text += "(func (export \"f" + std::to_string(n++) + "\") (param i32 i32 i32) (result i32) (i32." + o +
              " (local.get 0) (i32." + i + " (local.get 1) (local.get 2))))\n";
    for (const char* i : inner_imm)
      text += "(func (export \"f" + std::to_string(n++) + "\") (param i32 i32 i32) (result i32) (i32." + o + " (i32." + i +
              " (local.get 1) (i32.const 37)) (local.get 0)))\n";
  }
  text += R"((func (export "ld") (param i32 i32) (result i32) (i32.load offset=8 (i32.add (local.get 0) (i32.shl (local.get 1) (i32.const 2)))))))";
  auto bytes = wat(text, "--debug-names");
  Env e;
  e.load(bytes);
  auto ref = [](int o, int i, uint32_t a, uint32_t b, uint32_t c) {
    uint32_t t = 0;
    switch (i) {
      case 0: t = b + c; break;
      case 1: t = b - c; break;
      case 2: t = b & c; break;
      case 3: t = b | c; break;
      case 4: t = b ^ c; break;
      case 5: t = b << 5; break;
      case 6: t = b >> 5; break;
      case 7: t = std::rotl(b, 5); break;
      default: t = std::rotr(b, 5); break;
    }
    switch (o) {
      case 0: return a + t;
      case 1: return a & t;
      case 2: return a | t;
      default: return a ^ t;
    }
  };
  const uint32_t samples[][3] = {{0x12345678u, 0x9abcdef0u, 0x0f0f0f0fu}, {0xffffffffu, 1, 0x80000000u}, {7, 0xdeadbeefu, 3}};
  for (int k = 0; k < n; ++k)
    for (const auto& v : samples) {
      Outcome o = e.call("f" + std::to_string(k), {Value::i32(int32_t(v[0])), Value::i32(int32_t(v[1])), Value::i32(int32_t(v[2]))});
      ASSERT_TRUE(o.ok());
      EXPECT_EQ(uint32_t(o.values[0].bits), ref(k / 9, k % 9, v[0], v[1], v[2])) << "f" << k;
    }
  // Dump listing: "op 0x375" is kFuseAddShl (f5 = add of shl), 0x3b0 the fused i32 load.
  auto m = Module::load(bytes);
  ASSERT_TRUE(m.ok());
  EXPECT_NE(dump_function(**m, 5).find("op 0x375"), std::string::npos) << dump_function(**m, 5);
  EXPECT_NE(dump_function(**m, uint32_t(n)).find("op 0x3b0"), std::string::npos) << dump_function(**m, uint32_t(n));
  // The fused load: 0xfffffffc + (2 << 2) wraps to 4, +8 offset reads [12, 16).
  auto mem = e.inst->memory(0);
  mem[12] = 0x2a;
  EXPECT_EQ(e.call("ld", {Value::i32(int32_t(0xfffffffcu)), Value::i32(2)}).values[0].bits, 0x2au);
  Outcome t = e.call("ld", {Value::i32(65536 - 8 - 3), Value::i32(0)});
  ASSERT_TRUE(t.trap);
  EXPECT_EQ(t.trap->kind, TrapKind::kMemoryOutOfBounds);
  EXPECT_EQ(bytes[t.trap->frames[0].code_offset], 0x28);
}

// A listing contains opcode `op` (dump_function prints "op 0x<hex> ...").
bool listing_has(const std::vector<uint8_t>& bytes, uint32_t func, uint32_t op) {
  auto m = Module::load(bytes);
  if (!m.ok()) return false;
  char needle[32];
  std::snprintf(needle, sizeof needle, "op %#x ", op);
  return dump_function(**m, func).find(needle) != std::string::npos;
}

// A run of copies (a loop rotating its locals) is one kCopyN, and with the loop's back branch
// one kCopyNBr; the copies happen in order (each reads the value before later copies).
TEST(WasmFusion, CopyRunsKeepTheirOrder) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(R"((module
    (func (export "rotate") (param $n i32) (result i64)
      (local $a i64) (local $b i64) (local $c i64) (local $d i64) (local $e i64) (local $t i64)
      (local.set $a (i64.const 1)) (local.set $b (i64.const 2)) (local.set $c (i64.const 3))
      (local.set $d (i64.const 4)) (local.set $e (i64.const 5))
      (loop $l
        (local.set $t (i64.add (i64.mul (local.get $a) (i64.const 31)) (local.get $e)))
        (local.set $e (local.get $d)) (local.set $d (local.get $c)) (local.set $c (local.get $b))
        (local.set $b (local.get $a)) (local.set $a (local.get $t))
        (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
      (i64.xor (i64.xor (local.get $a) (i64.shl (local.get $b) (i64.const 8)))
               (i64.xor (i64.shl (local.get $c) (i64.const 16)) (i64.xor (i64.shl (local.get $d) (i64.const 24)) (local.get $e)))))
    (func (export "swap3") (param i32 i32 i32) (result i32) (local i32)
      (local.set 3 (local.get 0)) (local.set 0 (local.get 1)) (local.set 1 (local.get 2)) (local.set 2 (local.get 3))
      (i32.add (i32.mul (local.get 0) (i32.const 100)) (i32.add (i32.mul (local.get 1) (i32.const 10)) (local.get 2))))))");
  Env e;
  e.load(bytes);
  for (int n : {1, 2, 7, 100}) {
    uint64_t a = 1, b = 2, c = 3, d = 4, ee = 5;
    for (int i = 0; i < n; ++i) {
      uint64_t t = a * 31 + ee;
      ee = d; d = c; c = b; b = a; a = t;
    }
    EXPECT_EQ(e.call("rotate", {Value::i32(n)}).values[0].bits, a ^ (b << 8) ^ ((c << 16) ^ ((d << 24) ^ ee))) << n;
  }
  EXPECT_EQ(e.call("swap3", {Value::i32(1), Value::i32(2), Value::i32(3)}).values[0].bits, 231u);
  EXPECT_TRUE(listing_has(bytes, 1, kCopyN));
}

// A bytecode interpreter in wasm: 8-byte records (i32 argument, opcode byte); jump threading
// copies the loop head, the fetch and its br_table (and the shared `pc = next` tail), into
// each case's back-branch. Results, fuel (each entry to the loop region charges its 42
// instructions, copied heads included) and the trap offsets of both fetch loads, also in the
// copies, are those of the wasm.
constexpr const char* kTinyInterpreter = R"((module
  (memory 1)
  ;; records at 252: [arg i32][op u8, 3 pad]. 0: add 5; 1: jnz 0; 2: halt; 3: jnz 8160; 4: jnz 8161
  (data (i32.const 252) "\05\00\00\00\00\00\00\00" "\00\00\00\00\01\00\00\00" "\00\00\00\00\02\00\00\00"
                        "\e0\1f\00\00\01\00\00\00" "\e1\1f\00\00\01\00\00\00"
  ;; for run_pre (pc incremented in place before the fetch): 5: add 5; 6: jnz 4; 7: halt
                        "\05\00\00\00\00\00\00\00" "\04\00\00\00\01\00\00\00" "\00\00\00\00\02\00\00\00")
  (func (export "run") (param $n i32) (param $pc i32) (result i32) (local $next i32) (local $t i32) (local $arg i32) (local $acc i32)
    (loop $fetch
      (block $tail
        (local.set $next (i32.add (local.get $pc) (i32.const 1)))
        (local.set $arg (i32.load (i32.add (local.tee $t (i32.shl (local.get $pc) (i32.const 3))) (i32.const 252))))
        (block $halt
          (block $jnz
            (block $add
              (br_table $add $jnz $halt (i32.load8_u (i32.add (local.get $t) (i32.const 256)))))
            (local.set $acc (i32.add (local.get $acc) (local.get $arg)))
            (br $tail))
          (if (local.tee $n (i32.sub (local.get $n) (i32.const 1)))
            (then (local.set $pc (local.get $arg)) (br $fetch)))
          (local.set $pc (local.get $next))
          (br $fetch))
        (return (local.get $acc)))
      (local.set $pc (local.get $next))
      (br $fetch))
    (unreachable))
  ;; The same machine with `pc = pc + 1` in place at the head: a jump's `pc = arg` copy is
  ;; followed by an add that overwrites the copy, which the fetch then reads.
  (func (export "run_pre") (param $n i32) (param $pc i32) (result i32) (local $t i32) (local $arg i32) (local $acc i32)
    (local.set $pc (i32.sub (local.get $pc) (i32.const 1)))
    (loop $fetch
      (local.set $pc (i32.add (local.get $pc) (i32.const 1)))
      (local.set $arg (i32.load (i32.add (local.tee $t (i32.shl (local.get $pc) (i32.const 3))) (i32.const 252))))
      (block $halt
        (block $jnz
          (block $add
            (br_table $add $jnz $halt (i32.load8_u (i32.add (local.get $t) (i32.const 256)))))
          (local.set $acc (i32.add (local.get $acc) (local.get $arg)))
          (br $fetch))
        (if (local.tee $n (i32.sub (local.get $n) (i32.const 1)))
          (then (local.set $pc (local.get $arg)) (br $fetch)))
        (br $fetch))
      (return (local.get $acc)))
    (unreachable)))
)";

TEST(WasmThreading, InterpreterLoopIsThreaded) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(kTinyInterpreter);
  for (bool metered : {false, true}) {
    LoadOptions lo;
    lo.metering = metered;
    StoreConfig cfg;
    cfg.fuel_enabled = metered;
    Env e(cfg);
    e.load(bytes, lo);
    for (int32_t n : {1, 2, 3, 10}) {
      if (metered) e.store.set_fuel(100000);
      EXPECT_EQ(int32_t(e.call("run", {Value::i32(n), Value::i32(0)}).values[0].bits), 5 * n) << n;
      if (!metered) {
        EXPECT_EQ(int32_t(e.call("run_pre", {Value::i32(n), Value::i32(5)}).values[0].bits), 5 * n) << n;
      }
      // Function region: loop, unreachable (2); 2n + 1 entries to the loop region (42 each).
      if (metered) {
        EXPECT_EQ(e.store.fuel(), 100000u - (2 + uint64_t(2 * n + 1) * 42)) << n;
      }
    }
    for (auto [start, opcode] : {std::pair{3, 0x2d}, std::pair{4, 0x28}}) {
      // 3: the argument word at 65532 is in bounds, the opcode byte at 65536 is not;
      // 4: the argument word at 65540 is not. Both fetches run in a threaded copy.
      if (metered) e.store.set_fuel(100000);
      Outcome o = e.call("run", {Value::i32(5), Value::i32(start)});
      ASSERT_TRUE(o.trap) << start;
      EXPECT_EQ(o.trap->kind, TrapKind::kMemoryOutOfBounds);
      ASSERT_FALSE(o.trap->frames.empty());
      EXPECT_EQ(bytes[o.trap->frames[0].code_offset], opcode) << start;
    }
  }
  for (bool metered : {false, true}) {
    LoadOptions lo;
    lo.metering = metered;
    auto m = Module::load(bytes, lo);
    ASSERT_TRUE(m.ok());
    std::string listing = dump_function(**m, 0);
    auto count = [&](uint32_t op) {
      char needle[32];
      std::snprintf(needle, sizeof needle, "op %#x ", op);
      size_t n = 0;
      for (size_t at = listing.find(needle); at != std::string::npos; at = listing.find(needle, at + 1)) ++n;
      return n;
    };
    // The loop head's dispatch, and a copy of it at each of the three back-branches (the add
    // case's `br $tail` reaches the head through the tail's copy).
    EXPECT_GE(count(kBrTable), 4u) << listing;
  }
}

// A loop whose back-branch copies a value into the local the head's first add reads: the
// threaded copy folds the copy into that add (kCopyAddImm), the add writing another local or
// the same one.
TEST(WasmThreading, CopyThenAddOfTheCopyIsOneInstruction) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(R"((module
    (func (export "step") (param $n i32) (result i32) (local $i i32) (local $j i32) (local $s i32)
      (loop $l
        (local.set $j (i32.add (local.get $i) (i32.const 3)))
        (local.set $s (i32.add (local.get $s) (local.get $j)))
        (if (i32.lt_u (local.get $j) (local.get $n)) (then (local.set $i (local.get $j)) (br $l))))
      (i32.add (local.get $s) (i32.mul (local.get $i) (i32.const 1000))))
    (func (export "same") (param $n i32) (result i32) (local $i i32) (local $j i32)
      (loop $l
        (local.set $i (i32.add (local.get $i) (i32.const 5)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (if (i32.lt_u (local.get $j) (local.get $n)) (then (local.set $i (local.get $j)) (br $l))))
      (i32.add (local.get $i) (i32.mul (local.get $j) (i32.const 1000))))))");
  Env e;
  e.load(bytes);
  for (uint32_t n : {0u, 1u, 3u, 4u, 10u, 100u}) {
    uint32_t i = 0, j = 0, s = 0;
    for (;;) {
      j = i + 3;
      s += j;
      if (j < n) { i = j; continue; }
      break;
    }
    EXPECT_EQ(uint32_t(e.call("step", {Value::i32(int32_t(n))}).values[0].bits), s + i * 1000) << n;
    i = 0, j = 0;
    for (;;) {
      i += 5;
      j += 1;
      if (j < n) { i = j; continue; }
      break;
    }
    EXPECT_EQ(uint32_t(e.call("same", {Value::i32(int32_t(n))}).values[0].bits), i + j * 1000) << n;
  }
  EXPECT_TRUE(listing_has(bytes, 0, kCopyAddImm));
  EXPECT_TRUE(listing_has(bytes, 1, kCopyAddImm));
}

TEST(WasmFusion, ImmediateFormsMatchTheRegisterForms) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(R"((module
    (func (export "mul64") (param i64) (result i64) (i64.mul (local.get 0) (i64.const 0x9e3779b97f4a7c15)))
    (func (export "xor64") (param i64) (result i64) (i64.xor (i64.const 0xff00ff00ff00ff00) (local.get 0)))
    (func (export "lt64") (param i64) (result i32) (i64.lt_u (local.get 0) (i64.const 0x100000000)))
    (func (export "divs") (param i32) (result i32) (i32.div_s (local.get 0) (i32.const -7)))
    (func (export "remu") (param i32) (result i32) (i32.rem_u (local.get 0) (i32.const 180000)))
    (func (export "rems64") (param i64) (result i64) (i64.rem_s (local.get 0) (i64.const 3)))
    (func (export "divu64") (param i64) (result i64) (i64.div_u (local.get 0) (i64.const 0x123456789)))
    (func (export "div0") (param i32) (result i32) (i32.div_u (local.get 0) (i32.const 0)))
    (func (export "divm1") (param i32) (result i32) (i32.div_s (local.get 0) (i32.const -1)))
    (func (export "remm1") (param i64) (result i64) (i64.rem_s (local.get 0) (i64.const -1)))
    (func (export "elem") (param i32) (result i32) (i32.add (i32.shl (local.get 0) (i32.const 3)) (i32.const 4096)))
    (memory 1)
    (func (export "elem_load") (param i32) (result i32)
      (i32.load offset=4 (i32.add (i32.shl (local.get 0) (i32.const 2)) (i32.const 1024))))
    (func (export "frame_elem") (param i32 i32) (result i32)
      (i32.add (i32.add (local.get 0) (i32.const 64)) (i32.shl (local.get 1) (i32.const 2))))
    (func (export "frame_elem_sub") (param i32 i32) (result i32)
      (i32.add (i32.sub (local.get 0) (i32.const -64)) (i32.shl (local.get 1) (i32.const 2))))))");
  Env e;
  e.load(bytes);
  for (uint64_t x : {0ull, 1ull, 0xffffffffull, 0x8000000000000000ull, 0x123456789abcdefull, ~0ull}) {
    int64_t sx = int64_t(x);
    auto c64 = [&](const char* f) { return e.call(f, {Value::i64(sx)}).values[0].bits; };
    auto c32 = [&](const char* f) { return uint32_t(e.call(f, {Value::i32(int32_t(uint32_t(x)))}).values[0].bits); };
    EXPECT_EQ(c64("mul64"), x * 0x9e3779b97f4a7c15ull);
    EXPECT_EQ(c64("xor64"), x ^ 0xff00ff00ff00ff00ull);
    EXPECT_EQ(c64("lt64"), x < 0x100000000ull ? 1u : 0u);
    EXPECT_EQ(c32("divs"), uint32_t(int32_t(uint32_t(x)) / -7));
    EXPECT_EQ(c32("remu"), uint32_t(x) % 180000u);
    EXPECT_EQ(c64("rems64"), uint64_t(sx % 3));
    EXPECT_EQ(c64("divu64"), x / 0x123456789ull);
    EXPECT_EQ(c64("remm1"), 0u);
    EXPECT_EQ(c32("elem"), (uint32_t(x) << 3) + 4096u);
  }
  EXPECT_EQ(e.trap_of("div0", {Value::i32(5)}), TrapKind::kIntegerDivideByZero);
  EXPECT_EQ(e.trap_of("divm1", {Value::i32(INT32_MIN)}), TrapKind::kIntegerOverflow);
  EXPECT_EQ(e.call("divm1", {Value::i32(9)}).values[0].bits, uint32_t(-9));
  EXPECT_TRUE(listing_has(bytes, 0, kImm64Base + (0x7e - 0x40)));
  EXPECT_TRUE(listing_has(bytes, 4, kImmBase + (0x70 - 0x40)));
  EXPECT_TRUE(listing_has(bytes, 10, kAddImmShl));
  // The fused element load keeps wasm's 32-bit wrap of (x << k) + imm before the offset.
  auto mem = e.inst->memory(0);
  mem[1024 + 4 + 8] = 0x5a;
  EXPECT_EQ(e.call("elem_load", {Value::i32(2)}).values[0].bits, 0x5au);
  EXPECT_EQ(e.call("elem_load", {Value::i32(int32_t(0x40000002u))}).values[0].bits, 0x5au);  // << 2 wraps
  Outcome t = e.call("elem_load", {Value::i32((65536 - 1024) / 4 - 1)});  // ea = 65532 + 4
  ASSERT_TRUE(t.trap);
  EXPECT_EQ(t.trap->kind, TrapKind::kMemoryOutOfBounds);
  EXPECT_EQ(bytes[t.trap->frames[0].code_offset], 0x28);  // the load, not the fused shl/add
  EXPECT_TRUE(listing_has(bytes, 11, kLoadShlImmBase + 0));
  for (uint32_t a : {0u, 1000u, 0xfffffff0u})
    for (uint32_t x : {0u, 3u, 0x7fffffffu}) {
      EXPECT_EQ(uint32_t(e.call("frame_elem", {Value::i32(int32_t(a)), Value::i32(int32_t(x))}).values[0].bits), a + 64 + (x << 2));
      EXPECT_EQ(uint32_t(e.call("frame_elem_sub", {Value::i32(int32_t(a)), Value::i32(int32_t(x))}).values[0].bits), a + 64 + (x << 2));
    }
}

// The pc -> wasm offset table the trap path binary-searches must be sorted by code index with
// one entry per index, also after fusion rewrote code already emitted. Checked on the bench
// kernels (real clang output, every fusion kind) when they are built.
TEST(WasmBacktrace, CodeOffsetTableIsSortedAndUniqueAfterFusion) {
  int checked = 0;
  for (const char* k : {"sha256", "vm", "hashtable", "coremark_like", "sort", "recursion", "bulkmem"}) {
    std::string path = std::string(GENVM_BINARY_DIR) + "/bench/wasm/" + k + ".wasm";
    std::ifstream f(path, std::ios::binary);
    if (!f) continue;
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
    for (bool metering : {false, true}) {
      LoadOptions lo;
      lo.metering = metering;
      auto m = Module::load(bytes, lo);
      ASSERT_TRUE(m.ok()) << path << ": " << m.error().to_string();
      const auto& offs = (*m)->impl().code_offsets;
      for (size_t i = 1; i < offs.size(); ++i)
        ASSERT_LT(offs[i - 1].first, offs[i].first) << path << " entry " << i << " (metering " << metering << ")";
      ++checked;
    }
  }
  if (checked == 0) GTEST_SKIP() << "bench kernels not built (target bench_wasm)";
}

// ---------------------------------------------------------------------- compiled-module blob

// A module that uses what the compiled code encodes: calls, call_indirect through a table
// (matching and mismatching signatures), memory with data, mutable globals, loops (fuel
// regions under metering), and traps deep in a call chain (backtraces with names and offsets).
const char* kBlobModule = R"((module
  (type $ii (func (param i32) (result i32)))
  (type $v (func))
  (memory 1)
  (data (i32.const 16) "\2a\00\00\00")
  (global $g (mut i32) (i32.const 7))
  (table 4 funcref)
  (elem (i32.const 0) $double $inc)
  (func $double (type $ii) (i32.mul (local.get 0) (i32.const 2)))
  (func $inc (type $ii) (i32.add (local.get 0) (i32.const 1)))
  (func (export "indirect") (param i32 i32) (result i32)
    (call_indirect (type $ii) (local.get 1) (local.get 0)))
  (func (export "badsig") (call_indirect (type $v) (i32.const 0)))
  (func (export "sum") (param $n i32) (result i32) (local $acc i32)
    (block $out (loop $l
      (br_if $out (i32.eqz (local.get $n)))
      (local.set $acc (i32.add (local.get $acc) (local.get $n)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $l)))
    (local.get $acc))
  (func (export "mem") (result i32)
    (i32.store (i32.const 20) (i32.add (i32.load (i32.const 16)) (global.get $g)))
    (global.set $g (i32.const 100))
    (i32.load (i32.const 20)))
  (func (export "glob") (result i32) (global.get $g))
  (func $deep (param i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0))
      (then (i32.load (i32.const 70000)))
      (else (call $deep (i32.sub (local.get 0) (i32.const 1))))))
  (func (export "trap") (result i32) (call $deep (i32.const 3)))
))";

// Everything observable about running kBlobModule: values, trap kinds, backtrace frames, fuel.
std::string blob_transcript(const std::shared_ptr<const Module>& m, bool metered) {
  StoreConfig cfg;
  cfg.fuel_enabled = metered;
  Store store(cfg);
  Linker linker;
  auto inst = linker.instantiate(store, m, "blob");
  if (!inst) return "instantiate: " + inst.error().to_string();
  std::string out;
  auto call = [&](const std::string& name, std::vector<Value> args) {
    if (metered) store.set_fuel(100000);
    auto r = store.call((*inst)->get_func(name), args);
    out += name + ":";
    if (!r) return void(out += " error " + r.error().to_string() + "\n");
    for (const Value& v : r->values) out += " " + std::to_string(v.bits);
    if (r->trap) out += " " + r->trap->public_string() + "\n" + format_backtrace(r->trap->frames);
    if (metered) out += " fuel " + std::to_string(store.fuel());
    out += "\n";
  };
  call("indirect", {Value::i32(0), Value::i32(21)});
  call("indirect", {Value::i32(1), Value::i32(21)});
  call("indirect", {Value::i32(3), Value::i32(21)});
  call("badsig", {});
  call("sum", {Value::i32(100)});
  call("mem", {});
  call("glob", {});
  call("trap", {});
  return out;
}

// The seal key of these tests; the executor's own comes from its cache directory.
constexpr SealKey kTestSealKey = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

TEST(WasmModuleCache, ModuleLoadedFromItsBlobRunsExactlyLikeTheFreshOne) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(kBlobModule, "--debug-names");
  for (LoadOptions lo : {LoadOptions{}, LoadOptions{true, true}}) {
    auto fresh = Module::load(bytes, lo);
    ASSERT_TRUE(fresh.ok()) << fresh.error().to_string();
    auto blob = (*fresh)->serialize_compiled(kTestSealKey);
    ASSERT_TRUE(blob.ok()) << blob.error().to_string();
    auto cached = Module::load_with_compiled(bytes, lo, *blob, kTestSealKey);
    ASSERT_TRUE(cached.ok()) << cached.error().to_string();
    EXPECT_EQ((*cached)->impl().code, (*fresh)->impl().code);
    EXPECT_EQ((*cached)->impl().code_offsets, (*fresh)->impl().code_offsets);
    ASSERT_EQ((*cached)->impl().compiled.size(), (*fresh)->impl().compiled.size());
    for (size_t i = 0; i < (*fresh)->impl().compiled.size(); ++i)
      EXPECT_EQ(std::memcmp(&(*cached)->impl().compiled[i], &(*fresh)->impl().compiled[i], sizeof(CompiledFunc)), 0) << i;
    std::string want = blob_transcript(*fresh, lo.metering);
    // The transcript really exercises the module: a broken module could not produce these.
    EXPECT_NE(want.find("indirect: 42"), std::string::npos) << want;
    EXPECT_NE(want.find("indirect: 22"), std::string::npos) << want;
    EXPECT_NE(want.find("wasm_trap indirect_call_to_null"), std::string::npos) << want;
    EXPECT_NE(want.find("wasm_trap bad_signature"), std::string::npos) << want;
    EXPECT_NE(want.find("sum: 5050"), std::string::npos) << want;
    EXPECT_NE(want.find("mem: 49"), std::string::npos) << want;
    EXPECT_NE(want.find("glob: 100"), std::string::npos) << want;
    EXPECT_NE(want.find("wasm_trap memory_out_of_bounds"), std::string::npos) << want;
    EXPECT_NE(want.find("blob!deep"), std::string::npos) << want;
    if (lo.metering) {
      EXPECT_NE(want.find("fuel"), std::string::npos);
    }
    EXPECT_EQ(blob_transcript(*cached, lo.metering), want);
    // And the blob of the cached module is the same blob.
    auto again = (*cached)->serialize_compiled(kTestSealKey);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *blob);

    // With an owner that keeps the blob alive, the slot code and offsets are read in place: no
    // copy, the same words, the same run (its traps' backtraces read the offsets), the same blob.
    auto owner = std::make_shared<const std::vector<uint8_t>>(*blob);
    Module::Prechecked pre;
    pre.blob_owner = owner;
    auto viewed = Module::load_with_compiled(bytes, lo, *owner, kTestSealKey, pre);
    ASSERT_TRUE(viewed.ok()) << viewed.error().to_string();
    const ModuleImpl& v = (*viewed)->impl();
    EXPECT_TRUE(v.code.empty());
    EXPECT_TRUE(v.code_offsets.empty());
    const auto* in_blob = reinterpret_cast<const uint8_t*>(v.slot_code().data());
    EXPECT_TRUE(in_blob >= owner->data() && in_blob < owner->data() + owner->size()) << "a view of the blob";
    EXPECT_TRUE(std::ranges::equal(v.slot_code(), (*fresh)->impl().code));
    EXPECT_TRUE(std::ranges::equal(v.offsets(), (*fresh)->impl().code_offsets));
    owner.reset();  // the module holds it now
    EXPECT_EQ(blob_transcript(*viewed, lo.metering), want);
    auto from_view = (*viewed)->serialize_compiled(kTestSealKey);
    ASSERT_TRUE(from_view.ok());
    EXPECT_EQ(*from_view, *blob);
  }
}

TEST(WasmModuleCache, EveryFlippedByteAndEveryTruncationIsRefused) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(kBlobModule, "--debug-names");
  auto fresh = Module::load(bytes);
  ASSERT_TRUE(fresh.ok());
  auto blob = (*fresh)->serialize_compiled(kTestSealKey);
  ASSERT_TRUE(blob.ok());
  ASSERT_TRUE(Module::load_with_compiled(bytes, {}, *blob, kTestSealKey).ok());
  for (size_t i = 0; i < blob->size(); ++i) {
    for (uint8_t mask : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
      std::vector<uint8_t> bad = *blob;
      bad[i] ^= mask;
      auto r = Module::load_with_compiled(bytes, {}, bad, kTestSealKey);
      ASSERT_FALSE(r.ok()) << "byte " << i << " mask " << int(mask);
      EXPECT_EQ(r.error().code, "module_cache");
    }
  }
  for (size_t n = 0; n < blob->size(); ++n) {
    auto r = Module::load_with_compiled(bytes, {}, std::span<const uint8_t>(blob->data(), n), kTestSealKey);
    ASSERT_FALSE(r.ok()) << "truncated to " << n;
  }
  std::vector<uint8_t> longer = *blob;
  longer.push_back(0);
  EXPECT_FALSE(Module::load_with_compiled(bytes, {}, longer, kTestSealKey).ok());
}

// Re-seals a tampered blob with the right key, so the field checks themselves are tested
// (with the checksum alone these cases would be caught earlier and the checks never reached).
std::vector<uint8_t> reseal(std::vector<uint8_t> b) {
  b.resize(b.size() - 32);
  auto h = blake3::keyed_hash(kTestSealKey, b);
  b.insert(b.end(), h.begin(), h.end());
  return b;
}
void put_le32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + size_t(i)] = uint8_t(v >> (8 * i));
}

TEST(WasmModuleCache, BlobForOtherOptionsOtherModuleOrWithImplausibleFieldsIsRefused) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(kBlobModule, "--debug-names");
  auto other = wat("(module (func (export \"f\") (result i32) (i32.const 1)))");
  auto fresh = Module::load(bytes);
  ASSERT_TRUE(fresh.ok());
  auto blob = (*fresh)->serialize_compiled(kTestSealKey);
  ASSERT_TRUE(blob.ok());
  auto refused = [&](std::span<const uint8_t> mod, LoadOptions lo, const std::vector<uint8_t>& b, const char* why) {
    auto r = Module::load_with_compiled(mod, lo, b, kTestSealKey);
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_EQ(r.error().code, "module_cache") << why;
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
  };
  refused(bytes, LoadOptions{true, false}, *blob, "other load options");
  refused(bytes, LoadOptions{false, true}, *blob, "other load options");
  refused(other, LoadOptions{}, *blob, "another module");
  LoadOptions unfused;
  unfused.compile.fuse = false;
  refused(bytes, unfused, *blob, "other load options");
  // Layout offsets (module_cache.cc): 4 magic + 7 header words + 32 hash = 64, then n_funcs,
  // n_code, n_offsets, then the first function's {type_index, code, ...} at 76.
  auto t = *blob;
  put_le32(t, 8, 999);  // engine build
  refused(bytes, {}, reseal(t), "another engine build");
  t = *blob;
  put_le32(t, 64, uint32_t((*fresh)->impl().compiled.size() + 1));
  refused(bytes, {}, reseal(t), "counts do not match");
  t = *blob;
  put_le32(t, 68, 0x40000000u);  // n_code far past the blob
  refused(bytes, {}, reseal(t), "counts do not match");
  t = *blob;
  put_le32(t, 80, uint32_t((*fresh)->impl().code.size()));  // first function's code index
  refused(bytes, {}, reseal(t), "code index out of range");
  t = *blob;
  put_le32(t, 76, 1);  // first function's type index ($double is type 0)
  refused(bytes, {}, reseal(t), "function type differs");
  // A blob whose counts are self-consistent but describe another function count: the blob of
  // a one-function module presented with kBlobModule's bytes fails the module hash first, so
  // re-point its module hash at kBlobModule to reach the count check.
  auto small = Module::load(other);
  ASSERT_TRUE(small.ok());
  auto sb = (*small)->serialize_compiled(kTestSealKey);
  ASSERT_TRUE(sb.ok());
  auto h = blake3::hash(bytes);
  std::copy(h.begin(), h.end(), sb->begin() + 32);
  refused(bytes, {}, reseal(*sb), "function count differs");
  // Invalid module bytes with a good-looking blob: the module's own errors come first.
  std::vector<uint8_t> junk = {0, 'a', 's', 'm', 9, 0, 0, 0};
  EXPECT_FALSE(Module::load_with_compiled(junk, {}, *blob, kTestSealKey).ok());
}

// Issue 19: a mutated blob re-sealed with a correct (unkeyed) BLAKE3 was loaded, and seven such
// blobs crashed the executor. Whoever lacks the key cannot seal: such a blob, one sealed under
// another key, and a mutated code word re-sealed without the key are all refused at the seal.
TEST(WasmModuleCache, BlobSealedWithoutTheKeyIsRefusedBeforeAnyFieldIsRead) {
  REQUIRE_WAT2WASM();
  auto bytes = wat(kBlobModule, "--debug-names");
  auto fresh = Module::load(bytes);
  ASSERT_TRUE(fresh.ok());
  auto blob = (*fresh)->serialize_compiled(kTestSealKey);
  ASSERT_TRUE(blob.ok());
  auto unkeyed = [](std::vector<uint8_t> b) {
    b.resize(b.size() - 32);
    auto h = blake3::hash(b);
    b.insert(b.end(), h.begin(), h.end());
    return b;
  };
  SealKey other = kTestSealKey;
  other[0] ^= 1;
  auto foreign = (*fresh)->serialize_compiled(other);
  ASSERT_TRUE(foreign.ok());
  std::vector<uint8_t> forged = *blob;
  forged[forged.size() - 40] ^= 0x5a;  // a code word: an operand the interpreter would follow
  for (const auto& b : {unkeyed(*blob), *foreign, unkeyed(forged)}) {
    auto r = Module::load_with_compiled(bytes, {}, b, kTestSealKey);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, "module_cache");
    EXPECT_NE(r.error().message.find("seal mismatch"), std::string::npos) << r.error().message;
  }
  EXPECT_TRUE(Module::load_with_compiled(bytes, {}, *foreign, other).ok());
}

}  // namespace
}  // namespace genvm::wasm
