// Hostile modules (issue 18 acceptance): giant functions, deep nesting, huge br_tables, many
// locals and functions, and the shapes that could make our own passes (fusion, jump threading)
// super-linear. Each module is generated here as bytes and loaded under both engines, with
// fusion on and off (and with metering): a load either succeeds or returns an error, and a
// module that loads gives the same outcome (values or trap, backtrace, fuel) everywhere, and
// the value the generator expects, and the load's peak RSS stays proportional to the input.
// Each case prints its load CPU time and peak RSS growth (the table in docs/BENCHMARKS.md,
// "Hostile modules"); nothing asserts on time.
//
// Sizes: GENVM_HOSTILE_SCALE (a factor, default 1) scales every case; under ASan they are a
// tenth.
#include <gtest/gtest.h>
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "wasm/module.h"
#include "wasm/writer.h"
#include "wasm/wasm.h"
#include "common/sanitizers.h"

namespace genvm::wasm {
namespace {

constexpr double kSanitizerScale = kAddressSanitizer ? 0.1 : 1;

double scale() {
  static const double s = [] {
    const char* e = std::getenv("GENVM_HOSTILE_SCALE");
    double v = e ? std::atof(e) : 1.0;
    return (v > 0 ? v : 1.0) * kSanitizerScale;
  }();
  return s;
}
uint32_t scaled(double n) { return uint32_t(std::max(1.0, n * scale())); }

// ------------------------------------------------------------------ module bytes
// One function body's instruction bytes, with helpers for the instructions the generators use.
struct Code {
  std::vector<uint8_t> b;
  Code& op(uint8_t o) { b.push_back(o); return *this; }
  Code& u(uint64_t v) { put_uleb(b, v); return *this; }
  Code& i32_const(int32_t v) { b.push_back(0x41); put_sleb(b, v); return *this; }
  Code& local_get(uint32_t x) { b.push_back(0x20); put_uleb(b, x); return *this; }
  Code& local_set(uint32_t x) { b.push_back(0x21); put_uleb(b, x); return *this; }
  Code& repeat(size_t n, const std::function<void(Code&)>& f) { for (size_t i = 0; i < n; ++i) f(*this); return *this; }
};
constexpr uint8_t kBlock = 0x02, kLoop = 0x03, kIf = 0x04, kElse = 0x05, kEnd = 0x0b, kBr = 0x0c, kBrIf = 0x0d,
                  kBrTable = 0x0e, kCall = 0x10, kI32Add = 0x6a, kVoid = 0x40, kI32 = 0x7f;

// A module of defined functions (types, bodies; function 0 exported as "f"), through the
// module writer. `raw_locals`: a body's locals declaration as given bytes, for declarations the
// writer cannot express (2^32-1 locals); the writer's output is patched to carry it.
struct Func { uint32_t type = 0; std::vector<ValType> locals; Code code; };
std::vector<uint8_t> module_of(const std::vector<FuncType>& types, std::vector<Func> funcs) {
  ModuleParts p;
  p.types = types;
  for (auto& f : funcs) {
    p.funcs.push_back(f.type);
    f.code.op(kEnd);
    p.bodies.push_back(BodyOut{std::move(f.locals), std::move(f.code.b)});
  }
  p.exports.push_back(Export{"f", 'f', 0});
  return write_module(p);
}
// A module of `funcs` functions `() -> i32` whose bodies each declare `count` i32 locals in one
// group (written by hand: the writer expands locals first).
std::vector<uint8_t> module_with_locals_decl(uint32_t count, const Code& code, uint32_t funcs = 1) {
  std::vector<uint8_t> body;
  put_uleb(body, 1);
  put_uleb(body, count);
  body.push_back(kI32);
  body.insert(body.end(), code.b.begin(), code.b.end());
  body.push_back(kEnd);
  auto section = [](std::vector<uint8_t>& out, uint8_t id, const std::vector<uint8_t>& payload) {
    out.push_back(id);
    put_uleb(out, payload.size());
    out.insert(out.end(), payload.begin(), payload.end());
  };
  std::vector<uint8_t> out = {0, 'a', 's', 'm', 1, 0, 0, 0};
  section(out, 1, {1, 0x60, 0, 1, kI32});
  std::vector<uint8_t> func_sec;
  put_uleb(func_sec, funcs);
  func_sec.insert(func_sec.end(), funcs, 0);
  section(out, 3, func_sec);
  section(out, 7, {1, 1, 'f', 0, 0});
  std::vector<uint8_t> code_sec;
  put_uleb(code_sec, funcs);
  for (uint32_t i = 0; i < funcs; ++i) {
    put_uleb(code_sec, body.size());
    code_sec.insert(code_sec.end(), body.begin(), body.end());
  }
  section(out, 10, code_sec);
  return out;
}

const FuncType kVoidToI32{{}, {ValType::I32}};
const FuncType kI32ToI32{{ValType::I32}, {ValType::I32}};

// ------------------------------------------------------------------ running
struct Config {
  const char* name;
  Engine engine;
  bool fuse;
  bool metering;
};
constexpr Config kConfigs[] = {
    {"interp", Engine::kInterp, true, false},        {"interp-nofuse", Engine::kInterp, false, false},
    {"jit", Engine::kJit, true, false},              {"jit-nofuse", Engine::kJit, false, false},
    {"interp-metered", Engine::kInterp, true, true}, {"jit-metered", Engine::kJit, true, true},
};

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
// kB from /proc/self/status ("VmRSS", "VmHWM").
long status_kb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::atol(line.c_str() + std::strlen(key) + 1);
  return -1;
}
// Resets the peak RSS to the current RSS (Linux: clear_refs 5); false where not allowed.
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return bool(f);
}

struct Expect {
  std::optional<uint32_t> value;     // the function's i32 result
  std::optional<TrapKind> trap;      // or this trap
  std::string load_error;            // or the load fails with an error message containing this
};

std::string describe(const Result<Outcome>& r, const Store& s, bool metered) {
  std::ostringstream o;
  if (!r) return "error " + r.error().to_string();
  if (r->trap) {
    o << "trap " << trap_kind_name(r->trap->kind);
    for (const auto& f : r->trap->frames) o << " (" << f.func_index << " @" << f.code_offset << ")";
  } else {
    for (const auto& v : r->values) o << val_type_name(v.type) << ":" << v.bits << " ";
  }
  if (metered) o << " fuel " << s.fuel();
  o << " calls " << s.calls_left() << " values " << s.values_left();
  return o.str();
}

// Loads `bytes` under every configuration, prints one line per configuration (load CPU
// seconds, peak RSS growth during the load, the JIT's note) and checks the expectation and
// that every configuration of one metering mode gives the same outcome.
void run_case(const std::string& name, const std::vector<uint8_t>& bytes, const Expect& want,
              std::vector<Value> args = {}) {
  std::string plain_outcome, metered_outcome;
  for (const Config& c : kConfigs) {
    SCOPED_TRACE(name + " " + c.name);
    LoadOptions lo;
    lo.engine = c.engine;
    lo.metering = c.metering;
    lo.compile.fuse = c.fuse;
    malloc_trim(0);
    long rss_before = status_kb("VmRSS:");
    bool peak_ok = reset_peak_rss();
    double t0 = cpu_seconds();
    auto m = Module::load(bytes, lo);
    double load_s = cpu_seconds() - t0;
    long peak = status_kb("VmHWM:");
    std::string note = m ? engine_note(**m) : std::string();
    std::printf("hostile %-22s %-15s %8.2f MB in  load %7.3f s  peak +%7.1f MB%s  %s\n", name.c_str(), c.name,
                double(bytes.size()) / 1e6, load_s, peak_ok ? double(peak - rss_before) / 1024 : 0.0,
                peak_ok ? "" : " (no peak reset)", m ? note.c_str() : m.error().to_string().c_str());
    // Memory proportional to the input: 256 bytes per input byte and 64 MB of slack bound every
    // case (the worst measured: the metered JIT on a nest of loops, ~190 per byte, each 3-byte
    // loop getting a ~63-byte fuel check held in the assembler's buffer and in the executable
    // copy). Not under ASan (its shadow and quarantine) nor where the peak cannot be reset.
    if (peak_ok && kSanitizerScale == 1) {
      EXPECT_LT(double(peak - rss_before) * 1024, 64e6 + 256.0 * double(bytes.size())) << "peak RSS during the load";
    }
    if (!want.load_error.empty()) {
      ASSERT_FALSE(m.ok());
      EXPECT_NE(m.error().to_string().find(want.load_error), std::string::npos) << m.error().to_string();
      continue;
    }
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    StoreConfig sc;
    sc.fuel_enabled = c.metering;
    sc.fuel = c.metering ? uint64_t(1) << 40 : 0;
    Store store(sc);
    Linker linker;
    auto inst = linker.instantiate(store, *m, "hostile");
    ASSERT_TRUE(inst.ok()) << inst.error().to_string();
    auto r = store.call((*inst)->get_func("f"), args);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    if (want.trap) {
      ASSERT_TRUE(r->trap.has_value());
      EXPECT_EQ(r->trap->kind, *want.trap);
    } else {
      ASSERT_FALSE(r->trap.has_value()) << r->trap->message;
      ASSERT_EQ(r->values.size(), 1u);
      EXPECT_EQ(uint32_t(r->values[0].bits), *want.value);
    }
    std::string& same = c.metering ? metered_outcome : plain_outcome;
    std::string got = describe(r, store, c.metering);
    if (same.empty()) same = got;
    else EXPECT_EQ(got, same);
  }
}

// ------------------------------------------------------------------ the cases
// One function of 4n instructions (2*10^6, 3.5 MB, within wasmparser's function size limit):
// n times `x = x + 1` on the parameter.
TEST(WasmHostileModules, GiantFunction) {
  uint32_t n = scaled(5e5);
  Func f{1, {}, {}};
  f.code.repeat(n, [](Code& c) { c.local_get(0).i32_const(1).op(kI32Add).local_set(0); }).local_get(0);
  run_case("giant_function", module_of({kVoidToI32, kI32ToI32}, {std::move(f)}), {n + 5, {}, {}}, {Value::i32(5)});
  // 1.1*10^6 of them (7.7 MB, not scaled) pass wasmparser's 7654321-byte body limit: refused.
  Func g{1, {}, {}};
  g.code.repeat(1100000, [](Code& c) { c.local_get(0).i32_const(1).op(kI32Add).local_set(0); }).local_get(0);
  run_case("giant_function_over", module_of({kVoidToI32, kI32ToI32}, {std::move(g)}), {{}, {}, "function body of"});
}

// An operand stack just under GenVM's frame limit (60000 constants, then their sum), and one
// above it, which is refused.
TEST(WasmHostileModules, DeepOperandStack) {
  for (uint32_t k : {60000u, 70000u}) {
    Func f{0, {}, {}};
    f.code.repeat(k, [](Code& c) { c.i32_const(1); }).repeat(k - 1, [](Code& c) { c.op(kI32Add); });
    Expect want = k < 65535 ? Expect{k, {}, {}} : Expect{{}, {}, "function frame too large"};
    run_case("operand_stack_" + std::to_string(k), module_of({kVoidToI32}, {std::move(f)}), want);
  }
}

// A deep operand stack of virtual values (local.get references), then many blocks, local.sets
// and br_ifs: each of these looks at the operand stack, and must not rescan all of it.
TEST(WasmHostileModules, BlocksAndBranchesOverADeepStack) {
  const uint32_t depth = std::min<uint32_t>(30000, scaled(30000)), n = scaled(1e5);
  {
    Func f{1, {ValType::I32}, {}};
    f.code.repeat(depth, [](Code& c) { c.local_get(0); });
    f.code.repeat(n, [](Code& c) { c.op(kBlock).op(kVoid).op(kEnd); });
    f.code.repeat(depth - 1, [](Code& c) { c.op(kI32Add); });
    run_case("blocks_over_stack", module_of({kVoidToI32, kI32ToI32}, {std::move(f)}), {depth * 3, {}, {}}, {Value::i32(3)});
  }
  {
    Func f{1, {ValType::I32}, {}};
    f.code.repeat(depth, [](Code& c) { c.local_get(0); });
    f.code.repeat(n, [](Code& c) { c.local_get(0).local_set(1); });
    f.code.repeat(depth - 1, [](Code& c) { c.op(kI32Add); }).local_get(1).op(kI32Add);
    run_case("local_set_over_stack", module_of({kVoidToI32, kI32ToI32}, {std::move(f)}), {depth * 3 + 3, {}, {}},
             {Value::i32(3)});
  }
  {
    Func f{1, {}, {}};
    f.code.repeat(depth, [](Code& c) { c.local_get(0); });
    f.code.op(kBlock).op(kVoid).repeat(n, [](Code& c) { c.i32_const(0).op(kBrIf).u(0); }).op(kEnd);
    f.code.repeat(depth - 1, [](Code& c) { c.op(kI32Add); });
    run_case("br_if_over_stack", module_of({kVoidToI32, kI32ToI32}, {std::move(f)}), {depth * 3, {}, {}}, {Value::i32(3)});
  }
}

// Block types of the largest arity a type may have (1000 params, 1000 results: wasmparser's
// limits, so GenVM's): 10^4 blocks each passing 1000 values through, then their sum; and a
// type of 1001 params, refused.
TEST(WasmHostileModules, WideBlockTypes) {
  const uint32_t arity = 1000, n = scaled(1e4);
  FuncType wide{std::vector<ValType>(arity, ValType::I32), std::vector<ValType>(arity, ValType::I32)};
  Func f{1, {}, {}};
  f.code.repeat(arity, [](Code& c) { c.i32_const(1); });
  f.code.repeat(n, [](Code& c) { c.op(kBlock).u(0).op(kEnd); });
  f.code.repeat(arity - 1, [](Code& c) { c.op(kI32Add); });
  run_case("wide_block_types", module_of({wide, kVoidToI32}, {std::move(f)}), {arity, {}, {}});
  FuncType too_wide{std::vector<ValType>(arity + 1, ValType::I32), {}};
  Func g{1, {}, {}};
  g.code.i32_const(0);
  run_case("type_1001_params", module_of({too_wide, kVoidToI32}, {std::move(g)}), {{}, {}, "too many function params"});
}

// Blocks, loops and if/else nested d (10^5) deep.
TEST(WasmHostileModules, DeepNesting) {
  const uint32_t d = scaled(1e5);
  {
    Func f{0, {}, {}};
    f.code.repeat(d, [](Code& c) { c.op(kBlock).op(kVoid); }).repeat(d, [](Code& c) { c.op(kEnd); }).i32_const(7);
    run_case("nested_blocks", module_of({kVoidToI32}, {std::move(f)}), {7, {}, {}});
  }
  {
    // Each level passes its inner value out, plus one: d + 1.
    Func f{0, {}, {}};
    f.code.repeat(d, [](Code& c) { c.op(kBlock).op(kI32); }).i32_const(1);
    f.code.repeat(d, [](Code& c) { c.op(kEnd).i32_const(1).op(kI32Add); });
    run_case("nested_value_blocks", module_of({kVoidToI32}, {std::move(f)}), {d + 1, {}, {}});
  }
  {
    Func f{0, {}, {}};
    f.code.repeat(d, [](Code& c) { c.op(kLoop).op(kVoid); }).repeat(d, [](Code& c) { c.op(kEnd); }).i32_const(9);
    run_case("nested_loops", module_of({kVoidToI32}, {std::move(f)}), {9, {}, {}});
  }
  {
    // if (x) ... if (x) 1 else 2 ... else 2: with x != 0, 1.
    Func f{1, {}, {}};
    f.code.repeat(d, [](Code& c) { c.local_get(0).op(kIf).op(kI32); }).i32_const(1);
    f.code.repeat(d, [](Code& c) { c.op(kElse).i32_const(2).op(kEnd); });
    run_case("nested_if_else", module_of({kVoidToI32, kI32ToI32}, {std::move(f)}), {1, {}, {}}, {Value::i32(1)});
  }
  {
    // The innermost of d blocks branches out of all of them (a label depth of d - 1).
    Func f{0, {}, {}};
    f.code.repeat(d, [](Code& c) { c.op(kBlock).op(kVoid); }).op(kBr).u(d - 1);
    f.code.repeat(d, [](Code& c) { c.op(kEnd); }).i32_const(3);
    run_case("deep_br", module_of({kVoidToI32}, {std::move(f)}), {3, {}, {}});
  }
}

// br_tables: one with ~10^6 targets over three labels; one at the bottom of deep nesting with
// targets at every depth; one whose label carries values that need copying (a branch stub per
// target, unless targets share them).
TEST(WasmHostileModules, HugeBrTables) {
  {
    // block block block (br_table 0 1 2 ... [n] default 2 (x)) end i32.const 10 return end
    // i32.const 20 return end i32.const 30: x % 3 picks 10, 20 or 30 for x < n.
    const uint32_t n = scaled(1e6);
    Func f{1, {}, {}};
    f.code.op(kBlock).op(kVoid).op(kBlock).op(kVoid).op(kBlock).op(kVoid).local_get(0).op(kBrTable).u(n);
    for (uint32_t i = 0; i < n; ++i) f.code.u(i % 3);
    f.code.u(2).op(kEnd).i32_const(10).op(0x0f).op(kEnd).i32_const(20).op(0x0f).op(kEnd).i32_const(30);
    run_case("br_table_wide", module_of({kVoidToI32, kI32ToI32}, {std::move(f)}), {20, {}, {}}, {Value::i32(4)});
  }
  {
    // d blocks, each `end` followed by `local.1 += 1`; target i is depth i % d: a branch to
    // depth k lands after the k-th end (from the inside) and counts d - k.
    const uint32_t d = scaled(1e5), n = scaled(1e6);
    Func f{1, {ValType::I32}, {}};
    f.code.repeat(d, [](Code& c) { c.op(kBlock).op(kVoid); }).local_get(0).op(kBrTable).u(n);
    for (uint32_t i = 0; i < n; ++i) f.code.u(i % d);
    f.code.u(d - 1);
    f.code.repeat(d, [](Code& c) { c.op(kEnd).local_get(1).i32_const(1).op(kI32Add).local_set(1); }).local_get(1);
    run_case("br_table_deep", module_of({kVoidToI32, kI32ToI32}, {std::move(f)}), {d - 4, {}, {}}, {Value::i32(4)});
  }
  {
    // block (result i32 x 200): the br_table's values sit above an extra value inside the
    // block, so every target needs 200 copies: n targets, all the same label.
    const uint32_t arity = 200, n = scaled(2e5);
    FuncType wide{{}, std::vector<ValType>(arity, ValType::I32)};
    Func f{2, {}, {}};
    f.code.i32_const(5).op(kBlock).u(0).i32_const(9);  // block type: type 0, () -> i32^arity
    f.code.repeat(arity, [](Code& c) { c.i32_const(1); }).local_get(0).op(kBrTable).u(n);
    for (uint32_t i = 0; i < n; ++i) f.code.u(0);
    f.code.u(0).op(kEnd).repeat(arity, [](Code& c) { c.op(kI32Add); });
    run_case("br_table_copies", module_of({wide, kVoidToI32, kI32ToI32}, {std::move(f)}), {arity + 5, {}, {}},
             {Value::i32(1)});
  }
}

// Declared locals: wasmparser's limit (50000, params included; so GenVM's) refuses 50001, 10^5,
// 10^6 in the reader and a declaration of 2^32-1 without expanding it; 50000 are accepted, in
// 16 functions too, but not in 10^5 (our own bound: a module's locals together are bounded by
// its code size).
TEST(WasmHostileModules, ManyLocals) {
  Code set_last;
  set_last.i32_const(11).local_set(49999).local_get(49999);
  run_case("locals_50000", module_with_locals_decl(50000, set_last), {11, {}, {}});
  Code zero;
  zero.i32_const(0);
  for (uint32_t n : {50001u, 100000u, 1000000u, 0xffffffffu})
    run_case("locals_" + std::to_string(n), module_with_locals_decl(n, zero), {{}, {}, "too many locals"});
  run_case("locals_50000_x16", module_with_locals_decl(50000, set_last, 16), {11, {}, {}});
  run_case("locals_50000_x100000", module_with_locals_decl(50000, zero, 100000), {{}, {}, "too many locals in the module"});
}

// 10^5 functions, function i returning i + 1 (function 0 calls the last); and a chain of
// calls f0 -> f1 -> ... each adding one: 1000 deep returns, 10^4 deep overflows the call stack.
TEST(WasmHostileModules, ManyFunctionsAndCallChains) {
  {
    const uint32_t n = scaled(1e5);
    std::vector<Func> fs;
    for (uint32_t i = 0; i < n; ++i) {
      Func f{0, {}, {}};
      if (i == 0) f.code.op(kCall).u(n - 1);
      else f.code.i32_const(int32_t(i + 1));
      fs.push_back(std::move(f));
    }
    run_case("many_functions", module_of({kVoidToI32}, std::move(fs)), {n, {}, {}});
  }
  for (uint32_t depth : {1000u, 10000u}) {
    std::vector<Func> fs;
    for (uint32_t i = 0; i < depth; ++i) {
      Func f{0, {}, {}};
      if (i + 1 < depth) f.code.op(kCall).u(i + 1).i32_const(1).op(kI32Add);
      else f.code.i32_const(1);
      fs.push_back(std::move(f));
    }
    Expect want = depth < 1024 ? Expect{depth, {}, {}} : Expect{{}, TrapKind::kStackOverflow, {}};
    run_case("call_chain_" + std::to_string(depth), module_of({kVoidToI32}, std::move(fs)), want);
  }
}

// Shapes for the passes over finished code: 5*10^5 branches to one short run (jump threading
// copies it into each, within its growth bound), a chain of branches to branches (each block's
// end followed by a br out of the next), and a loop whose body is 10^6 br_ifs to its head.
TEST(WasmHostileModules, BranchChainsForJumpThreading) {
  const uint32_t n = scaled(5e5);
  {
    // block loop: counter += 1, leave when it exceeds 3; then n times `br_if 0 (x)` to the
    // loop head (with x = 1 the first one is taken): returns 4.
    Func f{1, {ValType::I32}, {}};
    f.code.op(kBlock).op(kVoid).op(kLoop).op(kVoid);
    f.code.local_get(1).i32_const(1).op(kI32Add).local_set(1).local_get(1).i32_const(3).op(0x4a).op(kBrIf).u(1);
    f.code.repeat(n, [](Code& c) { c.local_get(0).op(kBrIf).u(0); }).op(kBr).u(0).op(kEnd).op(kEnd).local_get(1);
    run_case("br_to_one_run", module_of({kVoidToI32, kI32ToI32}, {std::move(f)}), {4, {}, {}}, {Value::i32(1)});
  }
  {
    const uint32_t d = scaled(1e5);
    Func f{0, {}, {}};
    f.code.repeat(d, [](Code& c) { c.op(kBlock).op(kVoid); }).op(kBr).u(0);
    f.code.repeat(d, [](Code& c) { c.op(kEnd).op(kBr).u(0); });
    // The last `br 0` leaves the function (its label): unreachable after, the result is dead.
    Func g{0, {}, {}};
    g.code.op(kCall).u(1).i32_const(6);
    FuncType void_void{{}, {}};
    std::vector<Func> fs;
    fs.push_back(std::move(g));
    f.type = 1;
    fs.push_back(std::move(f));
    run_case("br_chain", module_of({kVoidToI32, void_void}, std::move(fs)), {6, {}, {}});
  }
}

}  // namespace
}  // namespace genvm::wasm
