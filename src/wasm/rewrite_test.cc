// Tests of the module writer and the float rewrite (rewrite.h): read -> write keeps every
// section and the behaviour; the rewrite replaces each float instruction with a wrapper call
// that gives the native result in deterministic mode, keeps names consistent, and refuses
// libraries that break the contract. Modules are WAT (wabt's wat2wasm) or C (clang, wasm32)
// assembled at test time. The spec testsuite runs through both paths as ctests
// (wasm_spec_reencode, wasm_spec_softfloat in CMakeLists.txt).
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

#include "wasm/module.h"
#include "wasm/rewrite.h"
#include "wasm/wasm.h"

namespace genvm::wasm {
namespace {

// Runs `tool ... IN -o OUT` over `source` (written to a temp file with suffix `ext`) and returns
// OUT's bytes; empty when the tool fails.
std::vector<uint8_t> build_with(const std::string& tool, const std::string& source, const std::string& ext) {
  char dir[] = "/tmp/genvm-rewrite-test-XXXXXX";
  if (!mkdtemp(dir)) return {};
  std::string in = std::string(dir) + "/in" + ext, out = std::string(dir) + "/out.wasm";
  std::ofstream(in) << source;
  int rc = std::system((tool + " " + in + " -o " + out + " 2>" + dir + "/err").c_str());
  std::ifstream f(out, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::system((std::string("rm -rf ") + dir).c_str());
  return rc == 0 ? bytes : std::vector<uint8_t>{};
}

bool have(const char* probe) { return std::system((std::string(probe) + " >/dev/null 2>&1").c_str()) == 0; }
#define REQUIRE_WAT2WASM() \
  if (!have("wat2wasm --version")) GTEST_SKIP() << "wat2wasm (Debian package wabt) not installed"

std::vector<uint8_t> wat(const std::string& text) {
  auto b = build_with("wat2wasm --debug-names", text, ".wat");
  EXPECT_FALSE(b.empty()) << text;
  return b;
}

std::unique_ptr<ModuleImpl> parse(const std::vector<uint8_t>& bytes) {
  auto m = read_module(bytes);
  EXPECT_TRUE(m.ok()) << m.error().to_string();
  return m.ok() ? std::move(*m) : nullptr;
}

// One instantiated module; imports, when asked, from a "host" module of each kind.
struct Instantiated {
  Store store;
  Linker linker;
  Instance* inst = nullptr;
  explicit Instantiated(const std::vector<uint8_t>& bytes, bool deterministic = false, bool host = false) {
    if (host) {
      linker.define_host(store, "host", "twice", FuncType{{ValType::I32}, {ValType::I32}},
                         [](Caller&, std::span<const Value> a, std::span<Value> r) -> std::optional<Trap> {
                           r[0] = Value::i32(a[0].as_i32() * 2);
                           return std::nullopt;
                         });
      Extern g{};
      g.kind = Extern::kGlobal;
      g.global = store.new_global(ValType::F64, false, Value::f64(0.25));
      linker.define("host", "quarter", g);
      Extern t{};
      t.kind = Extern::kTable;
      t.table = *store.new_table(ValType::FuncRef, 4, 8);
      linker.define("host", "table", t);
      Extern mem{};
      mem.kind = Extern::kMemory;
      mem.memory = *store.new_memory(1, 2);
      linker.define("host", "memory", mem);
    }
    LoadOptions lo;
    lo.deterministic = deterministic;
    auto m = Module::load(bytes, lo);
    EXPECT_TRUE(m.ok()) << m.error().to_string();
    if (!m.ok()) return;
    auto i = linker.instantiate(store, *m, "t");
    EXPECT_TRUE(i.ok()) << i.error().to_string();
    if (i.ok()) inst = *i;
  }
  Outcome call(const std::string& name, std::vector<Value> args = {}) {
    if (!inst) return Outcome{};
    FuncInst* f = inst->get_func(name);
    EXPECT_NE(f, nullptr) << name;
    if (!f) return Outcome{};
    auto r = store.call(f, args);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : Outcome{};
  }
  uint64_t bits(const std::string& name, std::vector<Value> args = {}) {
    Outcome o = call(name, std::move(args));
    EXPECT_FALSE(o.trap) << name << ": " << (o.trap ? o.trap->public_string() : "");
    EXPECT_EQ(o.values.size(), 1u) << name;
    return o.values.empty() ? 0 : o.values[0].bits;
  }
};

// ---------------------------------------------------------------------------------- writer

// Every section kind, each element and data encoding, custom sections in three places.
const char* const kAllSections = R"(
(module
  (type $binop (func (param i32 i32) (result i32)))
  (import "host" "twice" (func $twice (param i32) (result i32)))
  (import "host" "quarter" (global $quarter f64))
  (import "host" "table" (table $ht 4 8 funcref))
  (import "host" "memory" (memory 1 2))
  (table $refs 3 externref)
  (global $counter (mut i32) (i32.const 40))
  (global $neg i64 (i64.const -123456789012))
  (global $fn funcref (ref.func $add))
  (global $half f32 (f32.const 0.5))
  (func $add (type $binop) (i32.add (local.get 0) (local.get 1)))
  (func $init (global.set $counter (i32.add (global.get $counter) (i32.const 2))))
  (func (export "counter") (result i32) (global.get $counter))
  (func (export "indirect") (param i32 i32) (result i32)
    (call_indirect $ht (type $binop) (local.get 0) (i32.const 7) (local.get 1)))
  (func (export "host") (result i32) (call $twice (i32.const 21)))
  (func (export "multi") (result i32) (local i64 i64 f32 i32)
    (block (result i32 i32) (i32.const 3) (i32.const 4)) (i32.mul))
  (func (export "passive") (result i32)
    (memory.init $p (i32.const 100) (i32.const 0) (i32.const 4)) (data.drop $p)
    (i32.load (i32.const 100)))
  (func (export "active") (result i32) (i32.load8_u offset=16 (i32.const 0)))
  (func (export "declared") (result funcref) (ref.func $init))
  (func (export "consts") (result i64) (global.get $neg))
  (func (export "table_elem") (result i32) (ref.is_null (table.get $refs (i32.const 1))))
  (start $init)
  (elem (table $ht) (i32.const 0) func $add $add)
  (elem $pe funcref (ref.func $add) (ref.null func))
  (elem declare func $init)
  (elem (table $refs) (i32.const 0) externref (ref.null extern))
  (data (i32.const 16) "\2a")
  (data $p "\01\02\03\04")
)
)";

// A custom section (name + payload, each shorter than 128 bytes).
std::vector<uint8_t> custom_section(const std::string& name, const std::string& payload) {
  std::vector<uint8_t> s = {0, uint8_t(1 + name.size() + payload.size()), uint8_t(name.size())};
  s.insert(s.end(), name.begin(), name.end());
  s.insert(s.end(), payload.begin(), payload.end());
  return s;
}

// `bytes` with custom sections before everything, after the function section and at the end
// (wabt's text format cannot place them).
std::vector<uint8_t> with_customs(const std::vector<uint8_t>& bytes) {
  std::vector<uint8_t> out(bytes.begin(), bytes.begin() + 8);
  auto first = custom_section("first", "A");
  out.insert(out.end(), first.begin(), first.end());
  size_t pos = 8;
  while (pos < bytes.size()) {
    uint8_t id = bytes[pos];
    size_t p = pos + 1, size = 0;
    for (int shift = 0;; shift += 7) {
      size |= size_t(bytes[p] & 0x7f) << shift;
      if (!(bytes[p++] & 0x80)) break;
    }
    out.insert(out.end(), bytes.begin() + long(pos), bytes.begin() + long(p + size));
    if (id == 3) {
      auto middle = custom_section("middle", "BB");
      out.insert(out.end(), middle.begin(), middle.end());
    }
    pos = p + size;
  }
  auto last = custom_section("last", "CCC");
  out.insert(out.end(), last.begin(), last.end());
  return out;
}

TEST(WasmWriter, ReencodeKeepsEverySectionAndBehaviour) {
  REQUIRE_WAT2WASM();
  auto in = with_customs(wat(kAllSections));
  ASSERT_GT(in.size(), 8u);
  auto out = reencode_module(in);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  auto a = parse(in), b = parse(*out);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->types, b->types);
  ASSERT_EQ(a->imports.size(), b->imports.size());
  for (size_t i = 0; i < a->imports.size(); ++i) {
    EXPECT_EQ(a->imports[i].name, b->imports[i].name);
    EXPECT_EQ(a->imports[i].kind, b->imports[i].kind);
  }
  EXPECT_EQ(a->funcs, b->funcs);
  EXPECT_EQ(a->exports.size(), b->exports.size());
  EXPECT_EQ(a->start, b->start);
  ASSERT_EQ(a->elems.size(), b->elems.size());
  for (size_t i = 0; i < a->elems.size(); ++i) {
    EXPECT_EQ(a->elems[i].mode, b->elems[i].mode) << i;
    EXPECT_EQ(a->elems[i].table, b->elems[i].table) << i;
    EXPECT_EQ(a->elems[i].type, b->elems[i].type) << i;
    EXPECT_EQ(a->elems[i].items.size(), b->elems[i].items.size()) << i;
  }
  ASSERT_EQ(a->datas.size(), b->datas.size());
  for (size_t i = 0; i < a->datas.size(); ++i) EXPECT_EQ(a->datas[i].bytes, b->datas[i].bytes);
  EXPECT_EQ(a->data_count, b->data_count);
  EXPECT_EQ(a->func_names, b->func_names);
  ASSERT_EQ(a->bodies.size(), b->bodies.size());
  for (size_t i = 0; i < a->bodies.size(); ++i) {
    EXPECT_EQ(a->bodies[i].locals, b->bodies[i].locals);
    EXPECT_TRUE(std::equal(a->bytes.begin() + long(a->bodies[i].body_offset), a->bytes.begin() + long(a->bodies[i].body_end),
                           b->bytes.begin() + long(b->bodies[i].body_offset), b->bytes.begin() + long(b->bodies[i].body_end)));
  }
  // Custom sections: same names, payloads and places.
  ASSERT_EQ(a->customs.size(), b->customs.size());
  for (size_t i = 0; i < a->customs.size(); ++i) {
    EXPECT_EQ(a->customs[i].name, b->customs[i].name);
    EXPECT_EQ(a->customs[i].after, b->customs[i].after) << a->customs[i].name;
    EXPECT_EQ(a->customs[i].payload_size, b->customs[i].payload_size);
  }
  std::vector<std::pair<std::string, int>> placed;
  for (const auto& c : b->customs) placed.emplace_back(c.name, c.after);
  std::vector<std::pair<std::string, int>> want = {{"first", 0}, {"middle", 3}, {"name", 11}, {"last", 11}};
  EXPECT_EQ(placed, want);

  for (const auto* bytes : {&in, &*out}) {
    Instantiated r(*bytes, false, true);
    EXPECT_EQ(r.bits("counter"), 42u);  // the start function ran
    EXPECT_EQ(r.bits("indirect", {Value::i32(5), Value::i32(0)}), 12u);
    EXPECT_EQ(r.bits("host"), 42u);
    EXPECT_EQ(r.bits("multi"), 12u);
    EXPECT_EQ(r.bits("passive"), 0x04030201u);
    EXPECT_EQ(r.bits("active"), 42u);
    EXPECT_EQ(r.bits("consts"), uint64_t(int64_t(-123456789012)));
    EXPECT_EQ(r.bits("table_elem"), 1u);
  }
}

TEST(WasmWriter, ReencodeRefusesWhatDoesNotLoad) {
  std::vector<uint8_t> junk = {0, 'a', 's', 'n', 1, 0, 0, 0};
  auto out = reencode_module(junk);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, "malformed");
}

// ---------------------------------------------------------------------------- float rewrite

// A plumbing library in integer WAT: f64.lt, f64.convert_i32_s and i32.trunc_f64_s (valid +
// sat), with internal helpers (calls to remap), a multi-value block (a block type index to
// remap) and one function nothing calls (left out).
const char* const kPlumbingLibrary = R"(
(module
  (type $pair (func (result i64 i64)))
  (func $key (param $x i64) (result i64)
    (i64.xor (local.get $x) (i64.shr_u (i64.shr_s (local.get $x) (i64.const 63)) (i64.const 1))))
  (func $isnan (param $x i64) (result i32)
    (i64.gt_u (i64.and (local.get $x) (i64.const 0x7fffffffffffffff)) (i64.const 0x7ff0000000000000)))
  (func $unused (param i64) (result i64) (local.get 0))
  (func (export "gvmsf_f64_lt") (param $a i64) (param $b i64) (result i32)
    (local $ka i64) (local $kb i64)
    (if (i32.or (call $isnan (local.get $a)) (call $isnan (local.get $b))) (then (return (i32.const 0))))
    (if (i64.eqz (i64.and (i64.or (local.get $a) (local.get $b)) (i64.const 0x7fffffffffffffff)))
      (then (return (i32.const 0))))
    (block (type $pair) (call $key (local.get $a)) (call $key (local.get $b)))
    (local.set $kb) (local.set $ka)
    (i64.lt_s (local.get $ka) (local.get $kb)))
  (func (export "gvmsf_f64_convert_i32_s") (param $x i32) (result i64)
    (local $m i64) (local $e i64) (local $s i64)
    (if (i32.eqz (local.get $x)) (then (return (i64.const 0))))
    (local.set $s (i64.shl (i64.extend_i32_u (i32.shr_u (local.get $x) (i32.const 31))) (i64.const 63)))
    (local.set $m (i64.extend_i32_s (local.get $x)))
    (if (i64.lt_s (local.get $m) (i64.const 0)) (then (local.set $m (i64.sub (i64.const 0) (local.get $m)))))
    (local.set $e (i64.sub (i64.const 63) (i64.clz (local.get $m))))
    (i64.or (i64.or (local.get $s) (i64.shl (i64.add (local.get $e) (i64.const 1023)) (i64.const 52)))
            (i64.and (i64.shl (local.get $m) (i64.sub (i64.const 52) (local.get $e))) (i64.const 0x000fffffffffffff))))
  (func $trunc_mag (param $b i64) (result i64)
    (local $e i64) (local $m i64)
    (local.set $e (i64.sub (i64.and (i64.shr_u (local.get $b) (i64.const 52)) (i64.const 0x7ff)) (i64.const 1023)))
    (if (i64.lt_s (local.get $e) (i64.const 0)) (then (return (i64.const 0))))
    (local.set $m (i64.or (i64.and (local.get $b) (i64.const 0x000fffffffffffff)) (i64.const 0x0010000000000000)))
    (if (result i64) (i64.ge_s (local.get $e) (i64.const 52))
      (then (i64.shl (local.get $m) (i64.sub (local.get $e) (i64.const 52))))
      (else (i64.shr_u (local.get $m) (i64.sub (i64.const 52) (local.get $e))))))
  (func $big (param $b i64) (result i32)  ;; |x| >= 2^53
    (i64.ge_u (i64.and (local.get $b) (i64.const 0x7fffffffffffffff)) (i64.const 0x4340000000000000)))
  (func (export "gvmsf_i32_trunc_f64_s_valid") (param $b i64) (result i32)
    (local $v i64)
    (if (i32.or (call $isnan (local.get $b)) (call $big (local.get $b))) (then (return (i32.const 0))))
    (local.set $v (call $trunc_mag (local.get $b)))
    (if (result i32) (i64.lt_s (local.get $b) (i64.const 0))
      (then (i64.le_u (local.get $v) (i64.const 0x80000000)))
      (else (i64.le_u (local.get $v) (i64.const 0x7fffffff)))))
  (func (export "gvmsf_i32_trunc_sat_f64_s") (param $b i64) (result i32)
    (local $v i64)
    (if (call $isnan (local.get $b)) (then (return (i32.const 0))))
    (if (call $big (local.get $b))
      (then (local.set $v (i64.const 0x100000000)))
      (else (local.set $v (call $trunc_mag (local.get $b)))))
    (if (result i32) (i64.lt_s (local.get $b) (i64.const 0))
      (then (if (result i32) (i64.ge_u (local.get $v) (i64.const 0x80000000)) (then (i32.const 0x80000000))
             (else (i32.wrap_i64 (i64.sub (i64.const 0) (local.get $v))))))
      (else (if (result i32) (i64.ge_u (local.get $v) (i64.const 0x7fffffff)) (then (i32.const 0x7fffffff))
             (else (i32.wrap_i64 (local.get $v)))))))
)
)";

// Uses the plumbing library's operations and the three done in the wrappers (abs, neg,
// copysign), from exported functions, a table and a float global.
const char* const kFloatModule = R"(
(module
  (global $g (mut f64) (f64.const 2.5))
  (table 2 funcref)
  (elem (i32.const 0) $lt $abs)
  (func $lt (export "lt") (param f64 f64) (result i32) (f64.lt (local.get 0) (local.get 1)))
  (func $abs (export "abs") (param f64) (result f64) (f64.abs (local.get 0)))
  (func (export "neg") (param f32) (result f32) (f32.neg (local.get 0)))
  (func (export "copysign") (param f64 f64) (result f64) (f64.copysign (local.get 0) (local.get 1)))
  (func (export "conv") (param i32) (result f64) (f64.convert_i32_s (local.get 0)))
  (func (export "trunc") (param f64) (result i32) (i32.trunc_f64_s (local.get 0)))
  (func (export "sat") (param f64) (result i32) (i32.trunc_sat_f64_s (local.get 0)))
  (func (export "via_table") (param f64 f64) (result i32)
    (call_indirect (param f64 f64) (result i32) (local.get 0) (local.get 1) (i32.const 0)))
  (func (export "global_lt") (result i32) (f64.lt (global.get $g) (f64.const 3)))
  (func (export "dead") (result i32) (unreachable) (f64.lt))
)
)";

TEST(FloatRewrite, GivesTheNativeResultsInDeterministicMode) {
  REQUIRE_WAT2WASM();
  auto mod = wat(kFloatModule), lib = wat(kPlumbingLibrary);
  SoftFloatReport report;
  auto out = rewrite_floats_to_softfloat(mod, lib, &report);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(report.replaced_instructions, 9u);  // lt appears three times
  EXPECT_EQ(report.operations.size(), 7u);
  EXPECT_EQ(report.library_functions, 8u);  // everything but $unused

  // Without the rewrite, deterministic mode traps; with it, every result is the native one.
  Instantiated det_orig(mod, true);
  ASSERT_TRUE(det_orig.call("lt", {Value::f64(1), Value::f64(2)}).trap);
  EXPECT_EQ(det_orig.call("lt", {Value::f64(1), Value::f64(2)}).trap->kind, TrapKind::kNondetInstruction);
  Instantiated native(mod), det(*out, true);
  const double nan = std::nan("");
  const double d[] = {0.0, -0.0, 1.0, -1.0, 2.5, -2147483648.9, 2147483647.5, 2147483648.0, 1e300, -1e-310,
                      INFINITY, -INFINITY, nan};
  for (double a : d) {
    for (double b : d) {
      EXPECT_EQ(det.bits("lt", {Value::f64(a), Value::f64(b)}), native.bits("lt", {Value::f64(a), Value::f64(b)})) << a << " " << b;
      EXPECT_EQ(det.bits("via_table", {Value::f64(a), Value::f64(b)}), native.bits("lt", {Value::f64(a), Value::f64(b)}));
      EXPECT_EQ(det.bits("copysign", {Value::f64(a), Value::f64(b)}), native.bits("copysign", {Value::f64(a), Value::f64(b)}));
    }
    EXPECT_EQ(det.bits("abs", {Value::f64(a)}), native.bits("abs", {Value::f64(a)})) << a;
    EXPECT_EQ(det.bits("neg", {Value::f32(float(a))}), native.bits("neg", {Value::f32(float(a))})) << a;
    EXPECT_EQ(det.bits("sat", {Value::f64(a)}), native.bits("sat", {Value::f64(a)})) << a;
    Outcome n = native.call("trunc", {Value::f64(a)}), r = det.call("trunc", {Value::f64(a)});
    ASSERT_EQ(bool(n.trap), bool(r.trap)) << a;
    if (r.trap) EXPECT_EQ(r.trap->kind, TrapKind::kUnreachable);  // the library says whether, not why
    else EXPECT_EQ(r.values[0].bits, n.values[0].bits) << a;
  }
  for (int32_t i : {0, 1, -1, 7, -7, INT32_MAX, INT32_MIN, 123456789})
    EXPECT_EQ(det.bits("conv", {Value::i32(i)}), native.bits("conv", {Value::i32(i)})) << i;
  EXPECT_EQ(det.bits("global_lt"), 1u);
  // NaN payloads survive the sign-bit operations, as natively.
  EXPECT_EQ(det.bits("abs", {Value{ValType::F64, 0xfff0000000000123ull, 0}}), 0x7ff0000000000123ull);
}

TEST(FloatRewrite, NamesTheNewFunctionsAndKeepsTheModulesOwn) {
  REQUIRE_WAT2WASM();
  auto mod = wat(kFloatModule), lib = wat(kPlumbingLibrary);
  auto out = rewrite_floats_to_softfloat(mod, lib);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  auto a = parse(mod), b = parse(*out);
  ASSERT_TRUE(a && b);
  std::map<uint32_t, std::string> names(b->func_names.begin(), b->func_names.end());
  for (const auto& [idx, name] : a->func_names) EXPECT_EQ(names[idx], name);
  uint32_t base = uint32_t(a->funcs.size());
  std::map<std::string, uint32_t> by_name;
  for (const auto& [idx, name] : b->func_names) by_name[name] = idx;
  ASSERT_TRUE(by_name.count("gvmsf_f64_lt"));
  ASSERT_TRUE(by_name.count("softfloat<f64.lt>"));
  ASSERT_TRUE(by_name.count("softfloat<f64.abs>"));
  EXPECT_GE(by_name["gvmsf_f64_lt"], base);
  EXPECT_GT(by_name["softfloat<f64.lt>"], by_name["gvmsf_f64_lt"]);  // wrappers after the library
  EXPECT_FALSE(by_name.count("unused"));                              // not reachable: left out
  EXPECT_EQ(b->funcs.size(), a->funcs.size() + 8 + 7);
  // The exports and the table still reach the module's own functions.
  for (size_t i = 0; i < a->exports.size(); ++i) EXPECT_EQ(a->exports[i].index, b->exports[i].index);
  // No float instruction is left in what deterministic mode runs.
  Instantiated det(*out, true);
  EXPECT_FALSE(det.call("lt", {Value::f64(1), Value::f64(2)}).trap);
}

TEST(FloatRewrite, RefusesALibraryThatBreaksTheContract) {
  REQUIRE_WAT2WASM();
  auto mod = wat(kFloatModule);
  auto refused = [&](const std::string& lib_wat, const std::string& why) {
    auto out = rewrite_floats_to_softfloat(mod, wat(lib_wat));
    ASSERT_FALSE(out.ok()) << lib_wat;
    EXPECT_EQ(out.error().code, "bad_library");
    EXPECT_NE(out.error().message.find(why), std::string::npos) << out.error().message;
  };
  std::string lib = kPlumbingLibrary;
  auto with = [&](const std::string& extra) { return lib.substr(0, lib.rfind(')')) + extra + ")\n"; };
  std::string with_import = lib;
  with_import.insert(with_import.find("(module") + 7, R"( (import "env" "f" (func)))");
  refused(with_import, "has imports");
  refused(with("(global i32 (i32.const 0))"), "has globals");
  refused(with("(table 1 funcref)"), "has a table");
  refused(with(R"((memory 1) (data (i32.const 0) "x"))"), "has data segments");
  refused(with("(func $s) (start $s)"), "has a start function");
  refused(with("(func (param f64) (result f64) (f64.sqrt (local.get 0)))"), "float instruction f64.sqrt");
  refused(with("(memory 1) (func (result i32) (i32.load (i32.const 0)))"), "accesses memory");
  // The module needs gvmsf_f64_lt: missing, or of another type.
  std::string no_lt = lib;
  no_lt.replace(no_lt.find("\"gvmsf_f64_lt\""), 14, "\"renamed_f64_lt\"");
  refused(no_lt, "does not export gvmsf_f64_lt");
  refused(R"((module (func (export "gvmsf_f64_lt") (param i32 i32) (result i32) (i32.const 0))))", "gvmsf_f64_lt is");
  // A memory nothing touches (what wasm-ld always declares) is fine, and is not merged.
  auto ok = rewrite_floats_to_softfloat(mod, wat(with(R"((memory (export "memory") 2))")));
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  EXPECT_TRUE(parse(*ok)->memories.empty());
}

TEST(FloatRewrite, RefusesModulesItCannotRewrite) {
  REQUIRE_WAT2WASM();
  auto lib = wat(kPlumbingLibrary);
  auto simd = build_with("wat2wasm", "(module (func (result i32) (i32x4.extract_lane 0 (i32x4.splat (i32.const 1)))))", ".wat");
  ASSERT_FALSE(simd.empty());
  auto out = rewrite_floats_to_softfloat(simd, lib);
  ASSERT_FALSE(out.ok());  // the engine's loader refuses SIMD before the rewriter sees it
  EXPECT_EQ(out.error().code, "malformed") << out.error().to_string();
  std::vector<uint8_t> junk = {0, 'a', 's', 'm', 2, 0, 0, 0};
  EXPECT_FALSE(rewrite_floats_to_softfloat(junk, lib).ok());
}

TEST(FloatRewrite, MnemonicsCoverTheTrappingSetOnly) {
  int count = 0;
  for (uint32_t op = 0; op < 0x100; ++op) count += trapping_float_mnemonic(op) != nullptr;
  for (uint32_t k = 0; k < 8; ++k) EXPECT_NE(trapping_float_mnemonic(0xfc00 | k), nullptr);
  EXPECT_EQ(trapping_float_mnemonic(0xfc08), nullptr);  // memory.init
  EXPECT_EQ(count, 12 + 28 + 8 + 10);  // compares, arithmetic, trapping truncations, conversions
  EXPECT_STREQ(trapping_float_mnemonic(0xa0), "f64.add");
  EXPECT_STREQ(trapping_float_mnemonic(0xb6), "f32.demote_f64");
  EXPECT_STREQ(trapping_float_mnemonic(0xfc03), "i32.trunc_sat_f64_u");
  for (uint32_t allowed : {0x2aU, 0x2bU, 0x38U, 0x39U, 0x43U, 0x44U, 0xbcU, 0xbdU, 0xbeU, 0xbfU, 0xa7U, 0xacU})
    EXPECT_EQ(trapping_float_mnemonic(allowed), nullptr) << allowed;
}

// ---------------------------------------------------------------- with the real softfloat.wasm

std::vector<uint8_t> softfloat_library() {
  std::ifstream f(GENVM_BINARY_DIR "/src/softfloat/softfloat.wasm", std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
#define REQUIRE_SOFTFLOAT(lib) \
  if (lib.empty()) GTEST_SKIP() << "softfloat.wasm not built (target softfloat_wasm, needs clang for wasm32)"

// A float-heavy C program (every kind of float instruction clang emits: arithmetic, sqrt,
// rounding, min/max, compares, conversions both ways and widths) hashed to one i64: the same
// bits natively and rewritten in deterministic mode.
const char* const kFloatProgram = R"(
typedef unsigned long long u64;
static u64 bits64(double d) { union { double d; u64 u; } x = {d}; return x.u; }
static unsigned bits32(float f) { union { float f; unsigned u; } x = {f}; return x.u; }
static u64 mix(u64 h, u64 v) { return (h ^ v) * 1099511628211ull; }
__attribute__((export_name("run"))) u64 run(int n) {
  u64 h = 1469598103934665603ull;
  double x = 0.1;
  float y = 1.5f;
  for (int i = 1; i < n; ++i) {
    x = x * 1.0000001 + 1.0 / i - __builtin_sqrt((double)i) * 1e-3;
    y = y / 1.01f + (float)i * 0.25f - __builtin_sqrtf(y);
    double z = __builtin_wasm_min_f64(x, (double)y) * __builtin_wasm_max_f64(-x, 3.0);
    h = mix(h, bits64(x));
    h = mix(h, bits32(y));
    h = mix(h, bits64(z));
    h = mix(h, bits64(__builtin_floor(x * 3.3) + __builtin_ceil(z) + __builtin_trunc(-x) + __builtin_rint(x * 0.7)));
    h = mix(h, bits32(__builtin_floorf(y) - __builtin_rintf(y * 0.3f) + __builtin_fabsf(-y)));
    h = mix(h, (u64)(long long)(x * 1000.0));
    h = mix(h, (unsigned)y + (u64)(unsigned long long)(x * x));
    h = mix(h, bits64((double)(h >> 11) + (double)(long long)h + (double)(int)h + (double)(unsigned)h));
    h = mix(h, bits32((float)(h >> 40) + (float)(long long)h + (float)x + (float)(int)i));
    h = mix(h, (x < z) + 2 * (x == z) + 4 * (y > 7.0f) + 8 * (x != x) + 16 * (z <= (double)y));
    h = mix(h, bits64(__builtin_copysign(x, -z) / (z - z)));
  }
  return h;
}
)";

TEST(FloatRewrite, FloatHeavyCProgramGivesTheSameBits) {
  auto lib = softfloat_library();
  REQUIRE_SOFTFLOAT(lib);
  if (!have("clang --version")) GTEST_SKIP() << "clang not installed";
  auto prog = build_with("clang --target=wasm32 -O2 -nostdlib -ffreestanding -Wl,--no-entry", kFloatProgram, ".c");
  ASSERT_FALSE(prog.empty()) << "clang could not build the program";
  SoftFloatReport report;
  auto out = rewrite_floats_to_softfloat(prog, lib, &report);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_GE(report.operations.size(), 25u);
  Instantiated native(prog), det(*out, true);
  for (int n : {1, 2, 10, 3000}) EXPECT_EQ(det.bits("run", {Value::i32(n)}), native.bits("run", {Value::i32(n)})) << n;
}

// Every trapping float instruction, one export each, against the native engine on edge
// operands (NaN results compared as "a NaN": the library's are canonical).
TEST(FloatRewrite, EveryOperationMatchesTheNativeEngine) {
  auto lib = softfloat_library();
  REQUIRE_SOFTFLOAT(lib);
  REQUIRE_WAT2WASM();
  std::string text = "(module\n";
  struct Op { std::string name; std::vector<ValType> params; ValType result; };
  std::vector<Op> ops;
  auto type_of = [](const std::string& s) {
    return s == "f32" ? ValType::F32 : s == "f64" ? ValType::F64 : s == "i32" ? ValType::I32 : ValType::I64;
  };
  for (uint32_t op = 0; op < 0xfc08; op = op == 0xff ? 0xfc00 : op + 1) {
    const char* m = trapping_float_mnemonic(op);
    if (!m) continue;
    std::string name = m, ty = name.substr(0, 3);
    Op o{name, {}, type_of(ty)};
    bool compare = op >= 0x5b && op <= 0x66;
    bool binary = compare || (op >= 0x92 && op <= 0x98) || (op >= 0xa0 && op <= 0xa6);
    if (compare) o.result = ValType::I32;
    // The operand type: the one the mnemonic names after its own (convert_i32_s, demote_f64,
    // trunc_sat_f64_u), else its own.
    ValType in = type_of(ty);
    for (const char* t : {"i32", "i64", "f32", "f64"})
      if (name.find(t, 4) != std::string::npos) in = type_of(t);
    o.params = binary ? std::vector<ValType>{in, in} : std::vector<ValType>{in};
    text += "(func (export \"" + name + "\") (param";
    for (ValType t : o.params) text += std::string(" ") + val_type_name(t);
    text += std::string(") (result ") + val_type_name(o.result) + ") (" + name;
    for (size_t i = 0; i < o.params.size(); ++i) text += " (local.get " + std::to_string(i) + ")";
    text += "))\n";
    ops.push_back(o);
  }
  text += ")";
  auto mod = wat(text);
  ASSERT_FALSE(mod.empty());
  SoftFloatReport report;
  auto out = rewrite_floats_to_softfloat(mod, lib, &report);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(report.operations.size(), ops.size());
  Instantiated native(mod), det(*out, true);
  const uint64_t f64s[] = {0, 0x8000000000000000, 0x3ff0000000000000, 0xbff8000000000000, 0x4004000000000000,
                           0x000fffffffffffff, 0x7fefffffffffffff, 0x7ff0000000000000, 0xfff0000000000000,
                           0x7ff8000000000000, 0xfff4000000000001, 0x41dfffffffc00000, 0xc1e0000000000000,
                           0x43e0000000000000, 0x4330000000000001, 0x3fe0000000000000, 0xc00c000000000000};
  const uint32_t f32s[] = {0, 0x80000000, 0x3f800000, 0xbfc00000, 0x40200000, 0x007fffff, 0x7f7fffff, 0x7f800000,
                           0xff800000, 0x7fc00000, 0xffa00001, 0x4effffff, 0xcf000000, 0x5f000000, 0x3f000000, 0x4b000001};
  const uint64_t ints[] = {0, 1, 0xffffffffffffffff, 0x7fffffff, 0x80000000, 0xffffffff, 0x7fffffffffffffff,
                           0x8000000000000000, 0x20000000000001, 123456789};
  auto operands = [&](ValType t) {
    std::vector<Value> v;
    if (t == ValType::F64) for (uint64_t b : f64s) v.push_back(Value{t, b, 0});
    if (t == ValType::F32) for (uint32_t b : f32s) v.push_back(Value{t, b, 0});
    if (t == ValType::I32) for (uint64_t b : ints) v.push_back(Value{t, uint32_t(b), 0});
    if (t == ValType::I64) for (uint64_t b : ints) v.push_back(Value{t, b, 0});
    return v;
  };
  auto is_nan = [](const Value& v) {
    if (v.type == ValType::F32) return (v.bits & 0x7fffffff) > 0x7f800000;
    if (v.type == ValType::F64) return (v.bits & 0x7fffffffffffffff) > 0x7ff0000000000000;
    return false;
  };
  for (const Op& o : ops) {
    auto as = operands(o.params[0]);
    std::vector<std::vector<Value>> argsets;
    for (const auto& a : as) {
      if (o.params.size() == 1) argsets.push_back({a});
      else for (const auto& b : as) argsets.push_back({a, b});
    }
    for (const auto& args : argsets) {
      Outcome n = native.call(o.name, args), r = det.call(o.name, args);
      ASSERT_EQ(bool(n.trap), bool(r.trap)) << o.name << " " << args[0].bits;
      if (n.trap) continue;
      if (is_nan(n.values[0])) EXPECT_TRUE(is_nan(r.values[0])) << o.name << " " << args[0].bits;
      else EXPECT_EQ(r.values[0].bits, n.values[0].bits) << o.name << " " << args[0].bits << " " << args.back().bits;
    }
  }
}

}  // namespace
}  // namespace genvm::wasm
