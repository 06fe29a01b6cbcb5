// The JIT against the interpreter. The main test runs every command of the spec testsuite twice,
// once per engine, in lockstep, under three option sets (plain; metering with a small fuel
// budget, so runs end out of fuel at many points; deterministic mode with metering), and
// requires identical outcomes: values (type and bits), trap kind and backtrace (module,
// function, wasm offset of every frame), fuel left, the stack-rule counters, and memory bytes.
// Unit tests pin traps at exact offsets, fuel exhaustion, the recursion depth, host calls, the
// per-module fallback and the W^X code.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "common/blake3.h"
#include "common/sanitizers.h"
#include "tools/genvm-wasm/json.h"
#include "wasm/jit/jit.h"
#include "wasm/spectest_host.h"
#include "wasm/wasm.h"

namespace genvm::wasm {
namespace {

namespace fs = std::filesystem;
using genvm_wasm_tool::Json;
using genvm_wasm_tool::JsonParser;

bool have_wabt() { return std::system("wat2wasm --version >/dev/null 2>&1 && wast2json --version >/dev/null 2>&1") == 0; }

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<uint8_t> wat(const std::string& text) {
  char dir[] = "/tmp/genvm-jit-test-XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  fs::path in = fs::path(dir) / "m.wat", out = fs::path(dir) / "m.wasm";
  std::ofstream(in) << text;
  std::string cmd = "wat2wasm --enable-tail-call " + in.string() + " -o " + out.string();
  EXPECT_EQ(std::system(cmd.c_str()), 0) << text;
  auto bytes = read_bytes(out);
  fs::remove_all(dir);
  return bytes;
}

// Everything observable about one call.
std::string describe(const Result<Outcome>& r, Store& s) {
  std::ostringstream o;
  if (!r) return "error " + r.error().to_string();
  if (r->trap) {
    o << "trap " << trap_kind_name(r->trap->kind) << " [" << r->trap->message << "]";
    for (const auto& f : r->trap->frames) o << " (" << f.module << " " << f.func_index << " " << f.func_name << " @" << f.code_offset << ")";
  } else {
    for (const auto& v : r->values) o << val_type_name(v.type) << ":" << v.bits << " ";
  }
  o << " fuel " << s.fuel() << " calls " << s.calls_left() << " values " << s.values_left();
  return o.str();
}

std::string memories(const Store& s) {
  std::string all;
  for (const auto& mv : memories_for_fingerprint(s)) {
    all += mv.module + ":" + std::to_string(mv.index) + ":" + std::to_string(mv.bytes.size()) + ":";
    all.append(reinterpret_cast<const char*>(mv.bytes.data()), mv.bytes.size());
  }
  return all;
}

std::optional<Value> parse_value(const Json& j) {
  std::string t = j.str("type"), v = j.str("value");
  ValType vt;
  if (t == "i32") vt = ValType::I32;
  else if (t == "i64") vt = ValType::I64;
  else if (t == "f32") vt = ValType::F32;
  else if (t == "f64") vt = ValType::F64;
  else if (t == "funcref") vt = ValType::FuncRef;
  else if (t == "externref") vt = ValType::ExternRef;
  else return std::nullopt;
  if (is_ref(vt)) return Value::ref(vt, v == "null" || v.empty() ? 0 : std::stoull(v) + 1);
  if (v.rfind("nan:", 0) == 0) return std::nullopt;
  return Value{vt, std::stoull(v), 0};
}

struct Mode {
  const char* name;
  LoadOptions load;
  bool fuel;
  uint64_t fuel_per_call;
};

// One engine's side of a script.
struct World {
  Store store;
  Linker linker;
  Instance* current = nullptr;
  std::map<std::string, Instance*> named;

  explicit World(const Mode& mode) : store(config(mode)) { define_spectest_imports(store, linker); }
  static StoreConfig config(const Mode& mode) {
    StoreConfig c;
    c.ram_budget = uint64_t(1) << 30;
    c.fuel_enabled = mode.fuel;
    return c;
  }
  Instance* target(const Json& action) {
    std::string m = action.str("module");
    if (m.empty()) return current;
    auto it = named.find(m);
    return it == named.end() ? nullptr : it->second;
  }
};

struct Tally {
  int modules = 0, jit_modules = 0, jit_instances = 0, calls = 0, jit_calls = 0, mismatches = 0;
  std::vector<std::string> refusals;  // distinct reasons
};

// Runs one script's commands in both worlds and counts differences.
void run_script(const Json& script, const fs::path& dir, const Mode& mode, const std::string& file, Tally& tally) {
  World a(mode), b(mode);  // a: interpreter, b: JIT
  LoadOptions la = mode.load, lb = mode.load;
  lb.engine = Engine::kJit;
  auto mismatch = [&](const Json& cmd, const std::string& what, const std::string& x, const std::string& y) {
    if (++tally.mismatches <= 20)
      ADD_FAILURE() << mode.name << " " << file << ":" << cmd.str("line") << " " << what << "\n  interp: " << x << "\n  jit:    " << y;
  };
  for (const auto& cmd : script.get("commands")->items) {
    const std::string type = cmd.str("type");
    if (type == "module" || type == "assert_uninstantiable" || type == "assert_unlinkable") {
      auto bytes = read_bytes(dir / cmd.str("filename"));
      auto ma = Module::load(bytes, la);
      auto mb = Module::load(bytes, lb);
      if (!ma || !mb) {
        if (bool(ma) != bool(mb)) mismatch(cmd, "load", ma ? "ok" : ma.error().to_string(), mb ? "ok" : mb.error().to_string());
        continue;
      }
      ++tally.modules;
      if ((*mb)->impl().jit_code) {
        ++tally.jit_modules;
      } else {
        std::string why = engine_note(**mb);
        why = why.substr(why.rfind(": ") + 2);
        if (std::find(tally.refusals.begin(), tally.refusals.end(), why) == tally.refusals.end()) tally.refusals.push_back(why);
      }
      std::string name = type == "module" ? cmd.str("name") : "";
      a.store.set_fuel(mode.fuel_per_call);
      b.store.set_fuel(mode.fuel_per_call);
      auto ia = a.linker.instantiate(a.store, *ma, name);
      auto ib = b.linker.instantiate(b.store, *mb, name);
      std::string da = ia ? "ok" : ia.error().to_string(), db = ib ? "ok" : ib.error().to_string();
      if (da != db || a.store.fuel() != b.store.fuel()) mismatch(cmd, "instantiate", da + " fuel " + std::to_string(a.store.fuel()), db + " fuel " + std::to_string(b.store.fuel()));
      if (ia && ib && type == "module") {
        if ((*ib)->impl().jit) ++tally.jit_instances;
        a.current = *ia;
        b.current = *ib;
        if (!name.empty()) {
          a.named[name] = *ia;
          b.named[name] = *ib;
        }
      }
    } else if (type == "register") {
      std::string n = cmd.str("name");
      Instance* xa = n.empty() ? a.current : a.named[n];
      Instance* xb = n.empty() ? b.current : b.named[n];
      if (xa && xb) {
        a.linker.define_instance(cmd.str("as"), *xa);
        b.linker.define_instance(cmd.str("as"), *xb);
      }
    } else if (type == "action" || type == "assert_return" || type == "assert_trap" || type == "assert_exhaustion") {
      const Json& act = *cmd.get("action");
      Instance* xa = a.target(act);
      Instance* xb = b.target(act);
      if (!xa || !xb) continue;
      if (act.str("type") == "get") {
        auto ga = xa->get_global(act.str("field")), gb = xb->get_global(act.str("field"));
        if (bool(ga) != bool(gb) || (ga && ga->bits != gb->bits)) mismatch(cmd, "get", ga ? std::to_string(ga->bits) : "-", gb ? std::to_string(gb->bits) : "-");
        continue;
      }
      FuncInst* fa = xa->get_func(act.str("field"));
      FuncInst* fb = xb->get_func(act.str("field"));
      if (!fa || !fb) continue;
      std::vector<Value> args;
      bool ok = true;
      if (const Json* js = act.get("args"))
        for (const auto& j : js->items) {
          auto v = parse_value(j);
          if (!v) ok = false;
          else args.push_back(*v);
        }
      if (!ok) continue;
      a.store.set_fuel(mode.fuel_per_call);
      b.store.set_fuel(mode.fuel_per_call);
      auto ra = a.store.call(fa, args);
      auto rb = b.store.call(fb, args);
      ++tally.calls;
      if (xb->impl().jit) ++tally.jit_calls;
      std::string da = describe(ra, a.store), db = describe(rb, b.store);
      if (da != db) mismatch(cmd, "call " + act.str("field"), da, db);
      else if (memories(a.store) != memories(b.store)) mismatch(cmd, "memory after " + act.str("field"), "", "differs");
    }
  }
}

std::vector<fs::path> spec_files() {
  std::vector<fs::path> out;
  for (const char* d : {"/testdata/wasm-spec", "/testdata/wasm-spec-tail-call"}) {
    fs::path dir = fs::path(GENVM_SHARED_DIR).string() + d;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".wast") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Under a sanitizer each mode runs a third of the spec files (file i in mode i % 3). The
// sanitizers check the JIT's compiler and the runtime it calls, whose paths depend on the
// module far more than on the mode: every file still goes through them under ASan and UBSan
// once, each mode on a third of the files, in a third of the time (all three modes on every
// file were 10 of the sanitizer run's 17 minutes of tests). The main build runs every file in
// every mode.
constexpr int kModeShards = kAddressSanitizer ? 3 : 1;

// The spec scripts of one mode test (one process under ctest), converted by wast2json.
class WasmJitSpec : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!have_wabt()) return;
    char tmpl[] = "/tmp/genvm-jit-spec-XXXXXX";
    if (!mkdtemp(tmpl)) return;
    tmp_ = new fs::path(tmpl);
  }
  static void TearDownTestSuite() {
    if (tmp_) fs::remove_all(*tmp_);
    delete tmp_;
    tmp_ = nullptr;
  }
  // The script of `wast` as wast2json writes it (with its modules beside it in `dir`).
  static std::optional<Json> convert(const fs::path& wast, const fs::path& dir) {
    fs::create_directories(dir);
    fs::path json = dir / (wast.stem().string() + ".json");
    std::string cmd = "wast2json --enable-tail-call '" + wast.string() + "' -o '" + json.string() + "' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) return std::nullopt;  // the spec ctest reports such a file
    std::ifstream in(json);
    std::stringstream ss;
    ss << in.rdbuf();
    auto script = JsonParser(ss.str()).parse();
    if (!script || !script->get("commands")) return std::nullopt;
    return std::move(*script);
  }
  void run_mode(const Mode& mode, int shard) {
    if (!have_wabt()) GTEST_SKIP() << "wabt (wat2wasm, wast2json) not installed: install the Debian package wabt";
    std::vector<fs::path> files = spec_files();
    if (!tmp_ || files.empty()) GTEST_SKIP() << "no spec testsuite under " << GENVM_SHARED_DIR << "/testdata";
    Tally t;
    int scripts = 0;
    for (std::size_t i = 0; i < files.size(); ++i) {
      if (static_cast<int>(i % kModeShards) != shard % kModeShards) continue;
      fs::path dir = *tmp_ / files[i].stem();
      auto json = convert(files[i], dir);
      if (!json) continue;
      ++scripts;
      run_script(*json, dir, mode, files[i].filename().string(), t);
    }
    std::printf("[%s] scripts %d of %zu; modules %d, taken by the JIT %d, instances on the JIT %d; calls %d, on the JIT %d; mismatches %d\n",
                mode.name, scripts, files.size(), t.modules, t.jit_modules, t.jit_instances, t.calls, t.jit_calls, t.mismatches);
    for (const auto& r : t.refusals) std::printf("  refused: %s\n", r.c_str());
    EXPECT_EQ(t.mismatches, 0);
    // The JIT must take most of the suite's modules, or this test proves little.
    EXPECT_GT(t.jit_modules * 10, t.modules * 7);
    EXPECT_GT(t.jit_calls, 0);
  }
  static inline fs::path* tmp_ = nullptr;
};

TEST_F(WasmJitSpec, Plain) { run_mode({"plain", LoadOptions{}, false, 0}, 0); }

// Metered, with a budget small enough that many calls end out of fuel.
TEST_F(WasmJitSpec, FuelAndMetering) {
  LoadOptions lo;
  lo.metering = true;
  run_mode({"fuel", lo, true, 3000}, 1);
}

// Deterministic mode: float instructions trap where they stand.
TEST_F(WasmJitSpec, Deterministic) {
  LoadOptions lo;
  lo.metering = true;
  lo.deterministic = true;
  run_mode({"det", lo, true, 1000000}, 2);
}

// ---- unit tests ----

Result<Outcome> call_with(Store& s, FuncInst* f, std::vector<Value> args) { return s.call(f, args); }

struct Loaded {
  std::shared_ptr<const Module> module;
  std::unique_ptr<Store> store;
  Instance* inst = nullptr;
};

Loaded instantiate(const std::vector<uint8_t>& bytes, Engine engine, LoadOptions lo = {}, StoreConfig sc = {},
                const std::function<void(Store&, Linker&)>& imports = {}) {
  Loaded r;
  lo.engine = engine;
  auto m = Module::load(bytes, lo);
  EXPECT_TRUE(m) << (m ? "" : m.error().to_string());
  if (!m) return r;
  r.module = *m;
  r.store = std::make_unique<Store>(sc);
  Linker linker;
  if (imports) imports(*r.store, linker);
  auto i = linker.instantiate(*r.store, r.module, "t");
  EXPECT_TRUE(i) << (i ? "" : i.error().to_string());
  if (i) r.inst = *i;
  return r;
}

// Calls `func` under both engines; expects the JIT to have taken the module and both to agree.
std::string both(const std::vector<uint8_t>& bytes, const std::string& func, std::vector<Value> args,
                 LoadOptions lo = {}, StoreConfig sc = {}, uint64_t fuel = 0) {
  std::string out[2];
  for (int k = 0; k < 2; ++k) {
    Loaded r = instantiate(bytes, k ? Engine::kJit : Engine::kInterp, lo, sc);
    if (!r.inst) return "instantiate failed";
    if (k) {
      EXPECT_TRUE(r.inst->impl().jit) << engine_note(*r.module);
    }
    r.store->set_fuel(fuel);
    out[k] = describe(call_with(*r.store, r.inst->get_func(func), args), *r.store);
  }
  EXPECT_EQ(out[0], out[1]);
  return out[1];
}

TEST(WasmJit, TrapsAtExactOffsets) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  auto bytes = wat(R"((module (memory 1)
    (func $inner (param i32) (result i32)
      local.get 0 i32.const 7 i32.div_u drop
      local.get 0 i32.load offset=65533)
    (func (export "outer") (param i32) (result i32)
      i32.const 1 drop
      local.get 0 call $inner)
    (func (export "div") (param i32 i32) (result i32) local.get 0 local.get 1 i32.rem_s)
    (func (export "unreach") unreachable)))");
  // 65533 + 4 > 65536: the load traps; the frames are the load and the call.
  std::string s = both(bytes, "outer", {Value::i32(0)});
  EXPECT_NE(s.find("trap memory_out_of_bounds"), std::string::npos) << s;
  EXPECT_NE(s.find("(t 0  @"), std::string::npos) << s;
  EXPECT_NE(s.find("(t 1  @"), std::string::npos) << s;
  // The reported offset is the load's own byte position: 0x28 (i32.load) in the module bytes.
  Loaded r = instantiate(bytes, Engine::kJit);
  auto out = call_with(*r.store, r.inst->get_func("outer"), {Value::i32(0)});
  ASSERT_TRUE(out && out->trap);
  ASSERT_EQ(out->trap->frames.size(), 2u);
  EXPECT_EQ(bytes[out->trap->frames[0].code_offset], 0x28);
  EXPECT_EQ(bytes[out->trap->frames[1].code_offset], 0x10);  // call
  EXPECT_NE(both(bytes, "div", {Value::i32(1), Value::i32(0)}).find("integer_divide_by_zero"), std::string::npos);
  // rem_s of INT_MIN by -1 is 0 (x86's idiv would fault).
  EXPECT_NE(both(bytes, "div", {Value::i32(INT32_MIN), Value::i32(-1)}).find("i32:0 "), std::string::npos);
  EXPECT_NE(both(bytes, "unreach", {}).find("trap unreachable"), std::string::npos);
}

// Floats outside deterministic mode: the interpreter's exact bits (canonical NaNs, min/max of
// zeros and NaNs, nearest ties to even, unsigned 64-bit conversions rounding once) and its
// truncation traps (kind and offset), each checked against the interpreter and a known value.
TEST(WasmJit, FloatsHaveTheInterpretersBitsAndTraps) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  auto bytes = wat(R"((module
    (func (export "add32") (param f32 f32) (result f32) local.get 0 local.get 1 f32.add)
    (func (export "div64") (param f64 f64) (result f64) local.get 0 local.get 1 f64.div)
    (func (export "sqrt32") (param f32) (result f32) local.get 0 f32.sqrt)
    (func (export "min32") (param f32 f32) (result f32) local.get 0 local.get 1 f32.min)
    (func (export "max64") (param f64 f64) (result f64) local.get 0 local.get 1 f64.max)
    (func (export "nearest32") (param f32) (result f32) local.get 0 f32.nearest)
    (func (export "floor64") (param f64) (result f64) local.get 0 f64.floor)
    (func (export "neg64") (param f64) (result f64) local.get 0 f64.neg)
    (func (export "copysign32") (param f32 f32) (result f32) local.get 0 local.get 1 f32.copysign)
    (func (export "demote") (param f64) (result f32) local.get 0 f32.demote_f64)
    (func (export "u64_to_f32") (param i64) (result f32) local.get 0 f32.convert_i64_u)
    (func (export "u64_to_f64") (param i64) (result f64) local.get 0 f64.convert_i64_u)
    (func (export "u32_to_f32") (param i32) (result f32) local.get 0 f32.convert_i32_u)
    (func (export "trunc_s32") (param f32) (result i32) local.get 0 i32.trunc_f32_s)
    (func (export "trunc_u64") (param f64) (result i64) local.get 0 i64.trunc_f64_u)
    (func (export "sat_s32") (param f64) (result i32) local.get 0 i32.trunc_sat_f64_s)
    (func (export "sat_u64") (param f32) (result i64) local.get 0 i64.trunc_sat_f32_u)
    (func (export "eq64") (param f64 f64) (result i32) local.get 0 local.get 1 f64.eq)
    (func (export "ne32") (param f32 f32) (result i32) local.get 0 local.get 1 f32.ne)
    (func (export "lt_branch") (param f32 f32) (result i32)
      block local.get 0 local.get 1 f32.lt br_if 0 i32.const 0 return end i32.const 1)
    (func (export "ge_value") (param f64 f64) (result i32) local.get 0 local.get 1 f64.ge)))");
  auto f32 = [](uint32_t b) { return Value{ValType::F32, b, 0}; };
  auto f64 = [](uint64_t b) { return Value{ValType::F64, b, 0}; };
  auto has = [&](const std::string& func, std::vector<Value> args, const std::string& want) {
    std::string got = both(bytes, func, std::move(args));
    EXPECT_NE(got.find(want), std::string::npos) << func << ": " << got;
  };
  const uint32_t qnan_payload = 0x7fa00001u, neg_nan = 0xffc00000u;
  has("add32", {f32(qnan_payload), f32(0x3f800000u)}, "f32:2143289344 ");   // canonical 0x7fc00000
  has("add32", {f32(0x7f800000u), f32(0xff800000u)}, "f32:2143289344 ");    // inf + -inf
  has("div64", {f64(0), f64(0)}, "f64:9221120237041090560 ");               // 0x7ff8000000000000
  has("sqrt32", {f32(0xbf800000u)}, "f32:2143289344 ");                     // sqrt(-1)
  has("min32", {f32(0x80000000u), f32(0)}, "f32:2147483648 ");              // min(-0, +0) = -0
  has("min32", {f32(0), f32(0x80000000u)}, "f32:2147483648 ");
  has("min32", {f32(neg_nan), f32(0x3f800000u)}, "f32:2143289344 ");
  has("min32", {f32(0x3f800000u), f32(0x40000000u)}, "f32:1065353216 ");    // 1.0
  has("max64", {f64(0x8000000000000000ull), f64(0)}, "f64:0 ");             // max(-0, +0) = +0
  has("max64", {f64(0x3ff0000000000000ull), f64(0x7ff4000000000000ull)}, "f64:9221120237041090560 ");
  has("nearest32", {f32(0x40200000u)}, "f32:1073741824 ");                  // 2.5 -> 2.0
  has("nearest32", {f32(0x40600000u)}, "f32:1082130432 ");                  // 3.5 -> 4.0
  has("nearest32", {f32(0xbf000000u)}, "f32:2147483648 ");                  // -0.5 -> -0
  has("floor64", {f64(0xbff8000000000000ull)}, "f64:13835058055282163712 ");  // -1.5 -> -2
  has("neg64", {f64(0x7ff8000000000001ull)}, "f64:18444492273895866369 ");  // a bit flip, NaN kept
  has("copysign32", {f32(0x3f800000u), f32(neg_nan)}, "f32:3212836864 ");   // -1.0
  has("demote", {f64(0x7ff0000000000001ull)}, "f32:2143289344 ");
  has("u64_to_f32", {Value::i64(-1)}, "f32:1602224128 ");                   // 2^64
  has("u64_to_f32", {Value::i64(int64_t(0x8000008000000001ull))}, "f32:1593835521 ");  // rounds up once
  has("u64_to_f64", {Value::i64(int64_t(0x8000000000000401ull))}, "f64:4890909195324358657 ");
  has("u32_to_f32", {Value::i32(-1)}, "f32:1333788672 ");                   // 2^32
  has("trunc_s32", {f32(0xc0400000u)}, "i32:4294967293 ");                  // -3.0
  has("trunc_s32", {f32(0x7fc00000u)}, "trap bad_conversion_to_integer");
  has("trunc_s32", {f32(0x4f000000u)}, "trap integer_overflow");            // 2^31
  has("trunc_s32", {f32(0xcf000000u)}, "i32:2147483648 ");                  // -2^31 is in range
  has("trunc_u64", {f64(0x43e0000000000000ull)}, "i64:9223372036854775808 ");  // 2^63
  has("trunc_u64", {f64(0xbfe0000000000000ull)}, "i64:0 ");                 // -0.5 truncates to 0
  has("trunc_u64", {f64(0xbff0000000000000ull)}, "trap integer_overflow");  // -1
  has("sat_s32", {f64(0x7ff8000000000000ull)}, "i32:0 ");
  has("sat_s32", {f64(0xc1e0000000200000ull)}, "i32:2147483648 ");          // -2^31 - 1 saturates
  has("sat_s32", {f64(0x41dfffffffc00000ull)}, "i32:2147483647 ");          // 2^31 - 1
  has("sat_u64", {f32(0x7f800000u)}, "i64:18446744073709551615 ");
  has("sat_u64", {f32(0xbf800000u)}, "i64:0 ");
  has("eq64", {f64(0x7ff8000000000000ull), f64(0x7ff8000000000000ull)}, "i32:0 ");
  has("eq64", {f64(0), f64(0x8000000000000000ull)}, "i32:1 ");
  has("ne32", {f32(0x7fc00000u), f32(0x7fc00000u)}, "i32:1 ");
  has("lt_branch", {f32(0x7fc00000u), f32(0x3f800000u)}, "i32:0 ");
  has("lt_branch", {f32(0), f32(0x3f800000u)}, "i32:1 ");
  has("ge_value", {f64(0x7ff8000000000000ull), f64(0)}, "i32:0 ");
  has("ge_value", {f64(0), f64(0)}, "i32:1 ");
  // A trapping truncation reports its own offset (0xa8: i32.trunc_f32_s).
  Loaded r = instantiate(bytes, Engine::kJit);
  auto out = call_with(*r.store, r.inst->get_func("trunc_s32"), {f32(0x7f800000u)});
  ASSERT_TRUE(out && out->trap);
  ASSERT_EQ(out->trap->frames.size(), 1u);
  EXPECT_EQ(bytes[out->trap->frames[0].code_offset], 0xa8);
}

// Tail calls: constant depth (a chain far deeper than the call-stack limit), the refund before
// the callee's check (an overflow is reported at the return_call, in the caller's frame),
// indirect ones with their traps, and a host callee called in place.
TEST(WasmJit, TailCallsRunAtConstantDepth) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  auto bytes = wat(R"((module
    (import "env" "twice" (func $twice (param i64) (result i64)))
    (import "env" "fail" (func $fail (param i64) (result i64)))
    (type $t (func (param i64 i64) (result i64)))
    (table 2 funcref) (elem (i32.const 0) $count)
    (func $count (param i64 i64) (result i64)
      local.get 0 i64.eqz if local.get 1 return end
      local.get 0 i64.const 1 i64.sub local.get 1 local.get 0 i64.add return_call $count)
    (func (export "count") (param i64) (result i64) local.get 0 i64.const 0 return_call $count)
    (func (export "indirect") (param i64 i32) (result i64)
      local.get 0 i64.const 0 local.get 1 return_call_indirect (type $t))
    (func $big (param i64) (result i64) (local i64 i64 i64 i64 i64 i64 i64 i64 i64 i64) local.get 0)
    (func (export "into_big") (param i64) (result i64) local.get 0 return_call $big)
    (func (export "host") (param i64) (result i64) local.get 0 return_call $twice)
    (func (export "host_fail") (param i64) (result i64) local.get 0 return_call $fail)))");
  auto imports = [](Store& s, Linker& l) {
    using V = ValType;
    l.define_host(s, "env", "twice", FuncType{{V::I64}, {V::I64}},
                  [](Caller&, std::span<const Value> in, std::span<Value> out) -> std::optional<Trap> {
                    out[0] = Value::i64(2 * in[0].as_i64());
                    return std::nullopt;
                  });
    l.define_host(s, "env", "fail", FuncType{{V::I64}, {V::I64}},
                  [](Caller&, std::span<const Value> in, std::span<Value>) -> std::optional<Trap> {
                    return Trap{TrapKind::kHostExit, "exit", int32_t(in[0].as_i64()), nullptr, {}};
                  });
  };
  struct Case {
    const char* func;
    std::vector<Value> args;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"count", {Value::i64(100000)}, "i64:5000050000 "},  // 100000 levels, limit 1024 frames
      {"indirect", {Value::i64(10), Value::i32(0)}, "i64:55 "},
      {"indirect", {Value::i64(10), Value::i32(1)}, "trap indirect_call_to_null"},
      {"indirect", {Value::i64(10), Value::i32(7)}, "trap table_out_of_bounds"},
      {"host", {Value::i64(21)}, "i64:42 "},
      {"host_fail", {Value::i64(3)}, "trap host_exit"},
  };
  for (const Case& c : cases) {
    std::string out[2];
    for (int k = 0; k < 2; ++k) {
      Loaded r = instantiate(bytes, k ? Engine::kJit : Engine::kInterp, {}, {}, imports);
      ASSERT_TRUE(r.inst);
      EXPECT_EQ(bool(r.inst->impl().jit), k == 1) << engine_note(*r.module);
      out[k] = describe(call_with(*r.store, r.inst->get_func(c.func), c.args), *r.store);
    }
    EXPECT_EQ(out[0], out[1]) << c.func;
    EXPECT_NE(out[1].find(c.want), std::string::npos) << c.func << ": " << out[1];
  }
  // A value-stack limit sweep over a tail call into a larger frame: the same limit overflows
  // (at the same place) under both engines.
  int fits = 0, overflows = 0;
  for (uint32_t limit = 1; limit <= 24; ++limit) {
    std::string out[2];
    for (int k = 0; k < 2; ++k) {
      StoreConfig sc;
      sc.value_stack_limit = limit;
      Loaded r = instantiate(bytes, k ? Engine::kJit : Engine::kInterp, {}, sc, imports);
      ASSERT_TRUE(r.inst);
      out[k] = describe(call_with(*r.store, r.inst->get_func("into_big"), {Value::i64(7)}), *r.store);
    }
    EXPECT_EQ(out[0], out[1]) << "limit " << limit;
    if (out[1].find("i64:7 ") != std::string::npos) ++fits;
    if (out[1].find("trap stack_overflow") != std::string::npos) ++overflows;
  }
  EXPECT_GT(fits, 0);
  EXPECT_GT(overflows, 0);
}

// local.get is a reference to the local until the local changes: the hazards of that.
TEST(WasmJit, LocalReferencesSeeTheOldValue) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  auto bytes = wat(R"((module
    (func (export "swap") (param i32 i32) (result i32 i32) local.get 1 local.get 0)
    (func (export "set") (param i32) (result i32)
      local.get 0 local.get 0 i32.const 5 local.set 0 local.get 0 i32.add i32.add)
    (func (export "tee") (param i32) (result i32)
      local.get 0 i32.const 1 i32.add local.tee 0 local.get 0 i32.mul)
    (func (export "swap_if") (param i32 i32 i32) (result i32 i32)
      local.get 1 local.get 0 local.get 2 br_if 0 return)
    (func (export "branch") (param i32) (result i32)
      local.get 0
      block (param i32) (result i32) local.get 0 br_if 0 i32.const 9 local.set 0 end
      local.get 0 i32.add)))");
  EXPECT_NE(both(bytes, "swap", {Value::i32(1), Value::i32(2)}).find("i32:2 i32:1 "), std::string::npos);
  // br_if to the function label returns on one path only: the other must still see both.
  EXPECT_NE(both(bytes, "swap_if", {Value::i32(1), Value::i32(2), Value::i32(0)}).find("i32:2 i32:1 "), std::string::npos);
  EXPECT_NE(both(bytes, "swap_if", {Value::i32(1), Value::i32(2), Value::i32(1)}).find("i32:2 i32:1 "), std::string::npos);
  EXPECT_NE(both(bytes, "set", {Value::i32(3)}).find("i32:11 "), std::string::npos);   // 3 + (5 + 3)
  EXPECT_NE(both(bytes, "tee", {Value::i32(3)}).find("i32:16 "), std::string::npos);   // 4 * 4
  EXPECT_NE(both(bytes, "branch", {Value::i32(0)}).find("i32:9 "), std::string::npos); // 0 + 9
  EXPECT_NE(both(bytes, "branch", {Value::i32(2)}).find("i32:4 "), std::string::npos); // 2 + 2
}

// Results wait in the six pool registers (compiler.cc, kPool) until consumed: the points where
// they must be in their slots instead, each with values in the pool when it comes.
TEST(WasmJit, PooledResultsSurviveEverySpillPoint) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  auto bytes = wat(R"((module
    (memory 1)
    (func $id (param i32) (result i32) local.get 0)
    (table 1 funcref) (elem (i32.const 0) $id)
    ;; eight results pending at once: the two deepest give their registers up
    (func (export "deep") (param i32) (result i32)
      (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add (i32.add
        (i32.mul (local.get 0) (i32.const 2)) (i32.mul (local.get 0) (i32.const 3)))
        (i32.mul (local.get 0) (i32.const 5))) (i32.mul (local.get 0) (i32.const 7)))
        (i32.mul (local.get 0) (i32.const 11))) (i32.mul (local.get 0) (i32.const 13)))
        (i32.mul (local.get 0) (i32.const 17))) (i32.mul (local.get 0) (i32.const 19))))
    ;; pending across a direct call, an indirect call, memory.grow and memory.fill
    (func (export "calls") (param i32) (result i32)
      (i32.add (i32.add (i32.add
        (i32.mul (local.get 0) (i32.const 3))
        (call $id (i32.add (local.get 0) (i32.const 1))))
        (call_indirect (param i32) (result i32) (i32.add (local.get 0) (i32.const 2)) (i32.const 0)))
        (i32.add (memory.grow (i32.const 0)) (i32.add (local.get 0) (i32.const 4)))))
    (func (export "fill") (param i32) (result i32)
      (i32.mul (local.get 0) (i32.const 3))
      (memory.fill (i32.const 0) (local.get 0) (i32.const 8))
      (i32.load8_u (i32.const 7))
      i32.add)
    ;; a br_if whose taken path copies pending values and whose fall-through keeps them
    (func (export "br_if") (param i32) (result i32 i32)
      (block (result i32 i32)
        (i32.mul (local.get 0) (i32.const 3))
        (i32.add (local.get 0) (i32.const 1))
        (br_if 0 (i32.and (local.get 0) (i32.const 1)))
        (i32.const 100) i32.add))
    ;; ten results carried by one branch (a rep movsq run) and by a return
    (func (export "many") (param i32) (result i32 i32 i32 i32 i32 i32 i32 i32 i32 i32)
      (block (result i32 i32 i32 i32 i32 i32 i32 i32 i32 i32)
        (i32.add (local.get 0) (i32.const 1)) (i32.add (local.get 0) (i32.const 2))
        (i32.add (local.get 0) (i32.const 3)) (i32.add (local.get 0) (i32.const 4))
        (i32.add (local.get 0) (i32.const 5)) (i32.add (local.get 0) (i32.const 6))
        (i32.add (local.get 0) (i32.const 7)) (i32.add (local.get 0) (i32.const 8))
        (i32.add (local.get 0) (i32.const 9)) (i32.add (local.get 0) (i32.const 10))
        (br_if 0 (local.get 0))
        return))
    ;; a pending result written to a local that a pending reference still reads
    (func (export "tee") (param i32) (result i32)
      local.get 0
      (i32.mul (local.get 0) (i32.const 10)) local.tee 0
      (i32.add (local.get 0) (i32.const 1))
      i32.add i32.add)
    ;; floats and compares read pooled operands
    (func (export "floats") (param f64 i64) (result i64)
      (i64.add (i64.trunc_f64_s (f64.mul (f64.add (local.get 0) (local.get 0)) (f64.convert_i64_s (local.get 1))))
               (i64.extend_i32_u (i64.lt_s (i64.mul (local.get 1) (i64.const 3)) (i64.add (local.get 1) (i64.const 9))))))))");
  EXPECT_NE(both(bytes, "deep", {Value::i32(2)}).find("i32:154 "), std::string::npos);    // 2 * 77
  EXPECT_NE(both(bytes, "calls", {Value::i32(5)}).find("i32:38 "), std::string::npos);    // 15 + 6 + 7 + (1 + 9)
  EXPECT_NE(both(bytes, "fill", {Value::i32(9)}).find("i32:36 "), std::string::npos);     // 27 + 9
  EXPECT_NE(both(bytes, "br_if", {Value::i32(3)}).find("i32:9 i32:4 "), std::string::npos);
  EXPECT_NE(both(bytes, "br_if", {Value::i32(4)}).find("i32:12 i32:105 "), std::string::npos);
  for (int32_t x : {0, 7})
    EXPECT_NE(both(bytes, "many", {Value::i32(x)}).find("i32:" + std::to_string(x + 1) + " i32:" + std::to_string(x + 2) + " "),
              std::string::npos);
  EXPECT_NE(both(bytes, "many", {Value::i32(7)}).find("i32:17 "), std::string::npos);
  EXPECT_NE(both(bytes, "tee", {Value::i32(2)}).find("i32:43 "), std::string::npos);     // 2 + 20 + 21
  EXPECT_NE(both(bytes, "floats", {Value::f64(1.5), Value::i64(4)}).find("i64:13 "), std::string::npos);  // 12 + (12 < 13)
}

TEST(WasmJit, FuelRunsOutAtTheSamePoint) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  auto bytes = wat(R"((module
    (func $leaf (param i32) (result i32) local.get 0 i32.const 3 i32.mul)
    (func (export "loop") (param i32) (result i32) (local i32)
      block loop
        local.get 0 i32.eqz br_if 1
        local.get 1 local.get 0 call $leaf i32.add local.set 1
        local.get 0 i32.const 1 i32.sub local.set 0
        br 0 end end local.get 1)))");
  LoadOptions lo;
  lo.metering = true;
  StoreConfig sc;
  sc.fuel_enabled = true;
  // Every budget from 0 to well past the run's cost: the same trap point and the same fuel left.
  int out_of_fuel = 0;
  for (uint64_t fuel = 0; fuel < 400; fuel += 7) {
    std::string s = both(bytes, "loop", {Value::i32(10)}, lo, sc, fuel);
    if (s.find("out_of_fuel") != std::string::npos) ++out_of_fuel;
  }
  EXPECT_GT(out_of_fuel, 10);
  // Interrupts are polled at the same points: a set flag stops the first region entry.
  for (int k = 0; k < 2; ++k) {
    Loaded r = instantiate(bytes, k ? Engine::kJit : Engine::kInterp, lo, sc);
    r.store->set_fuel(1000);
    r.store->interrupt();
    auto out = call_with(*r.store, r.inst->get_func("loop"), {Value::i32(10)});
    ASSERT_TRUE(out && out->trap);
    EXPECT_EQ(out->trap->kind, TrapKind::kInterrupt);
  }
}

TEST(WasmJit, RecursionTrapsAtTheInterpretersDepth) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  auto bytes = wat(R"((module
    (global $depth (mut i32) (i32.const 0))
    (func $f (export "f") (param i32) (result i32) (local i64 i64)
      global.get $depth i32.const 1 i32.add global.set $depth
      local.get 0 i32.const 1 i32.add call $f)
    (func (export "depth") (result i32) global.get $depth)))");
  for (uint32_t limit : {1024u, 100u, 7u}) {
    StoreConfig sc;
    sc.call_stack_limit = limit;
    uint32_t depth[2];
    for (int k = 0; k < 2; ++k) {
      Loaded r = instantiate(bytes, k ? Engine::kJit : Engine::kInterp, {}, sc);
      auto out = call_with(*r.store, r.inst->get_func("f"), {Value::i32(0)});
      ASSERT_TRUE(out && out->trap);
      EXPECT_EQ(out->trap->kind, TrapKind::kStackOverflow);
      EXPECT_EQ(r.store->calls_left(), limit);  // a trap refunds nothing: as before the call
      depth[k] = uint32_t(call_with(*r.store, r.inst->get_func("depth"), {})->values[0].as_i32());
    }
    EXPECT_EQ(depth[0], limit);
    EXPECT_EQ(depth[1], depth[0]);
    both(bytes, "f", {Value::i32(0)}, {}, sc);
  }
  // The value-stack rule too (each frame charges 2 locals + 2 operands).
  StoreConfig sc;
  sc.value_stack_limit = 401;
  std::string s = both(bytes, "f", {Value::i32(0)}, {}, sc);
  EXPECT_NE(s.find("stack_overflow"), std::string::npos);
}

// Limits deeper than the native stack can hold at 16 bytes a level run on the interpreter, so
// the trap depth is still the limit's (200000 levels fit an 8 MiB main thread; 600000 do not).
TEST(WasmJit, DeepLimitsNeverDependOnTheNativeStack) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  auto bytes = wat(R"((module
    (global $depth (mut i32) (i32.const 0))
    (func $f (export "f") (param i32) global.get $depth i32.const 1 i32.add global.set $depth local.get 0 call $f)
    (func (export "depth") (result i32) global.get $depth)))");
  for (uint32_t limit : {200000u, 600000u}) {
    StoreConfig sc;
    sc.call_stack_limit = limit;
    sc.value_stack_limit = 2 * limit + 10;
    for (int k = 0; k < 2; ++k) {
      Loaded r = instantiate(bytes, k ? Engine::kJit : Engine::kInterp, {}, sc);
      auto out = call_with(*r.store, r.inst->get_func("f"), {Value::i32(0)});
      ASSERT_TRUE(out && out->trap);
      EXPECT_EQ(out->trap->kind, TrapKind::kStackOverflow);
      EXPECT_EQ(out->trap->frames.size(), 20u);  // max_trap_frames: the innermost ones
      EXPECT_EQ(uint32_t(call_with(*r.store, r.inst->get_func("depth"), {})->values[0].as_i32()), limit);
    }
  }
}

TEST(WasmJit, HostCallsAndTheirTraps) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  auto bytes = wat(R"((module
    (import "env" "add" (func $add (param i32 i64) (result i64)))
    (import "env" "fail" (func $fail (param i32)))
    (memory (export "memory") 1)
    (func (export "go") (param i32) (result i64)
      i32.const 0 local.get 0 i32.store
      local.get 0 i64.const 40 call $add)
    (func (export "boom") (param i32) local.get 0 call $fail)))");
  for (int k = 0; k < 2; ++k) {
    Loaded r = instantiate(bytes, k ? Engine::kJit : Engine::kInterp, {}, {}, [](Store& s, Linker& l) {
      using V = ValType;
      l.define_host(s, "env", "add", FuncType{{V::I32, V::I64}, {V::I64}},
                    [](Caller& c, std::span<const Value> in, std::span<Value> out) -> std::optional<Trap> {
                      uint32_t word = 0;
                      if (!c.read(0, &word, 4)) return Trap{TrapKind::kHostError, "no memory", 0, nullptr, {}};
                      out[0] = Value::i64(in[0].as_i32() + in[1].as_i64() + word);
                      return std::nullopt;
                    });
      l.define_host(s, "env", "fail", FuncType{{V::I32}, {}},
                    [](Caller&, std::span<const Value> in, std::span<Value>) -> std::optional<Trap> {
                      return Trap{TrapKind::kHostExit, "exit", in[0].as_i32(), nullptr, {}};
                    });
    });
    ASSERT_TRUE(r.inst);
    EXPECT_EQ(bool(r.inst->impl().jit), k == 1);
    auto out = call_with(*r.store, r.inst->get_func("go"), {Value::i32(2)});
    ASSERT_TRUE(out && !out->trap);
    EXPECT_EQ(out->values[0].as_i64(), 44);
    out = call_with(*r.store, r.inst->get_func("boom"), {Value::i32(9)});
    ASSERT_TRUE(out && out->trap);
    EXPECT_EQ(out->trap->kind, TrapKind::kHostExit);
    EXPECT_EQ(out->trap->exit_code, 9);
    ASSERT_EQ(out->trap->frames.size(), 1u);
    EXPECT_EQ(bytes[out->trap->frames[0].code_offset], 0x10);  // the call of the host function
  }
}

// JIT code calling wasm functions of an instance on the interpreter (an import, a table entry):
// the interpreter runs them nested; results, traps and backtraces are those of an all-interpreter
// run.
TEST(WasmJit, CallsIntoInterpreterInstances) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  auto lib = wat(R"((module
    (func (export "f") (param f32) (result f32) local.get 0 return_call $double)
    (func $boom (export "boom") (param i32) (result i32) local.get 0 f32.convert_i32_s drop unreachable)
    (func $double (param f32) (result f32) local.get 0 local.get 0 f32.add)
    (table (export "t") 2 funcref) (elem (i32.const 0) $boom)))");
  auto user = wat(R"((module
    (import "m" "f" (func $f (param f32) (result f32)))
    (import "m" "boom" (func $boom (param i32) (result i32)))
    (import "m" "t" (table 2 funcref))
    (type $t (func (param i32) (result i32)))
    (func (export "g") (param f32) (result f32) local.get 0 call $f)
    (func (export "h") (param i32) (result i32) local.get 0 call $boom)
    (func (export "k") (param i32 i32) (result i32) local.get 0 local.get 1 call_indirect (type $t))
    (func (export "tg") (param f32) (result f32) local.get 0 return_call $f)
    (func (export "tk") (param i32 i32) (result i32) local.get 0 local.get 1 return_call_indirect (type $t))
    (func (export "tk_outer") (param i32 i32) (result i32) local.get 0 local.get 1 call 6 i32.const 1 i32.add)))");
  std::string out[2];
  for (int k = 0; k < 2; ++k) {
    LoadOptions lo;
    lo.engine = k ? Engine::kJit : Engine::kInterp;
    auto ml = Module::load(lib, LoadOptions{}), mu = Module::load(user, lo);  // lib: interpreter
    ASSERT_TRUE(ml && mu);
    Store s;
    Linker l;
    auto il = l.instantiate(s, *ml, "lib");
    ASSERT_TRUE(il);
    l.define_instance("m", **il);
    auto iu = l.instantiate(s, *mu, "user");
    ASSERT_TRUE(iu);
    EXPECT_FALSE((*il)->impl().jit);
    EXPECT_EQ(bool((*iu)->impl().jit), k == 1);
    out[k] = describe(call_with(s, (*iu)->get_func("g"), {Value::f32(2.0f)}), s) + " | " +
             describe(call_with(s, (*iu)->get_func("h"), {Value::i32(1)}), s) + " | " +
             describe(call_with(s, (*iu)->get_func("k"), {Value::i32(1), Value::i32(0)}), s) + " | " +
             describe(call_with(s, (*iu)->get_func("k"), {Value::i32(1), Value::i32(1)}), s) + " | " +
             describe(call_with(s, (*iu)->get_func("k"), {Value::i32(1), Value::i32(5)}), s) + " | " +
             describe(call_with(s, (*iu)->get_func("tg"), {Value::f32(3.0f)}), s) + " | " +
             describe(call_with(s, (*iu)->get_func("tk"), {Value::i32(1), Value::i32(0)}), s) + " | " +
             describe(call_with(s, (*iu)->get_func("tk_outer"), {Value::i32(1), Value::i32(0)}), s) + " | " +
             describe(call_with(s, (*iu)->get_func("tk"), {Value::i32(1), Value::i32(1)}), s);
  }
  EXPECT_EQ(out[0], out[1]);
  EXPECT_NE(out[1].find("f32:1082130432"), std::string::npos) << out[1];  // 4.0f
  EXPECT_NE(out[1].find("(lib 1  @"), std::string::npos) << out[1];      // the interpreter's frame
  EXPECT_NE(out[1].find("indirect_call_to_null"), std::string::npos) << out[1];
  EXPECT_NE(out[1].find("table_out_of_bounds"), std::string::npos) << out[1];
}

// The read/write/execute bits ("r-x") of the mapping that holds addr, from /proc/self/maps;
// empty when no mapping does.
std::string mapping_permissions(const void* addr) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uintptr_t lo = 0, hi = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) != 3) continue;
    if (uintptr_t(addr) >= lo && uintptr_t(addr) < hi) return std::string(perms).substr(0, 3);
  }
  return "";
}

TEST(WasmJit, CodeIsMappedExecutableButNotWritable) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  Loaded r = instantiate(wat(R"((module (func (export "f") (result i32) i32.const 1)))"), Engine::kJit);
  ASSERT_TRUE(r.module && r.module->impl().jit_code);
  const uint8_t* code = r.module->impl().jit_code->code->base();
  EXPECT_EQ(mapping_permissions(code), "r-x");
  std::string listing = dump_jit(*r.module);
  EXPECT_NE(listing.find("func 0"), std::string::npos) << listing;
  EXPECT_NE(listing.find("ret"), std::string::npos) << listing;
}


// ---- JIT code from the compiled-module cache (module_cache.cc's JIT section) ----

constexpr SealKey kCacheKey = {7, 1, 7, 2, 7, 3, 7, 4, 7, 5, 7, 6, 7, 7, 7, 8, 7, 9, 7, 10, 7, 11, 7, 12, 7, 13, 7, 14, 7, 15, 7, 16};

// What the JIT section has to carry: direct and indirect calls (call sites for backtraces),
// br_table (jump tables, stored as offsets), a loop (fuel regions), memory, globals, a trap three
// calls deep, a host import, and recursion deep enough for the stack rule.
const char* kCachedModule = R"((module
  (import "env" "host" (func $host (param i32) (result i32)))
  (type $ii (func (param i32) (result i32)))
  (memory 1)
  (global $g (mut i32) (i32.const 7))
  (table 2 funcref)
  (elem (i32.const 0) $double)
  (func $double (type $ii) (i32.mul (local.get 0) (i32.const 2)))
  (func (export "indirect") (param i32 i32) (result i32) (call_indirect (type $ii) (local.get 1) (local.get 0)))
  (func (export "switch") (param i32) (result i32)
    (block $c (block $b (block $a (br_table $a $b $c (local.get 0)))
      (return (i32.const 10))) (return (i32.const 20))) (i32.const 30))
  (func (export "sum") (param $n i32) (result i32) (local $acc i32)
    (block $out (loop $l
      (br_if $out (i32.eqz (local.get $n)))
      (local.set $acc (i32.add (local.get $acc) (call $host (local.get $n))))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $l)))
    (global.set $g (local.get $acc))
    (i32.store (i32.const 8) (local.get $acc))
    (i32.load (i32.const 8)))
  (func $deep (param i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0))
      (then (i32.load (i32.const 70000)))
      (else (call $deep (i32.sub (local.get 0) (i32.const 1))))))
  (func (export "trap") (result i32) (call $deep (i32.const 3)))
  (func $rec (export "rec") (param i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0)) (then (i32.const 0))
      (else (i32.add (i32.const 1) (call $rec (i32.sub (local.get 0) (i32.const 1))))))))
)";

void define_cache_host(Store& s, Linker& l) {
  l.define_host(s, "env", "host", FuncType{{ValType::I32}, {ValType::I32}},
                [](Caller&, std::span<const Value> in, std::span<Value> out) -> std::optional<Trap> {
                  out[0] = Value::i32(in[0].as_i32() * 3);
                  return std::nullopt;
                });
}

// Every call of kCachedModule under fuel budgets from plenty down to running out in the middle:
// values, traps with their backtraces, fuel left and the stack-rule counters. `on_jit` says
// whether the instance ran on JIT code.
std::string cached_transcript(const std::shared_ptr<const Module>& m, bool* on_jit) {
  std::string out;
  for (uint64_t fuel : {uint64_t(1000000), uint64_t(900), uint64_t(333), uint64_t(40)}) {
    StoreConfig sc;
    sc.fuel_enabled = true;
    sc.call_stack_limit = 300;
    Store store(sc);
    Linker linker;
    define_cache_host(store, linker);
    auto inst = linker.instantiate(store, m, "cached");
    if (!inst) return "instantiate: " + inst.error().to_string();
    *on_jit = bool((*inst)->impl().jit);
    auto call = [&](const char* name, std::vector<Value> args) {
      store.set_fuel(fuel);
      out += std::string(name) + ": " + describe(call_with(store, (*inst)->get_func(name), std::move(args)), store) + "\n";
    };
    call("indirect", {Value::i32(0), Value::i32(21)});
    call("indirect", {Value::i32(1), Value::i32(21)});
    call("indirect", {Value::i32(5), Value::i32(21)});
    for (int k = 0; k < 4; ++k) call("switch", {Value::i32(k)});
    call("sum", {Value::i32(20)});
    call("trap", {});
    call("rec", {Value::i32(50)});
    call("rec", {Value::i32(1000)});
  }
  return out;
}

LoadOptions jit_metered() {
  LoadOptions lo;
  lo.metering = true;
  lo.engine = Engine::kJit;
  return lo;
}

// Offset of has_jit in a blob (module_cache.cc's layout: 64 bytes of header, three counts, the
// functions, code words and offset pairs).
size_t jit_flag_at(const ModuleImpl& m) {
  return 64 + 12 + m.compiled.size() * 28 + m.code.size() * 4 + m.code_offsets.size() * 8;
}

std::vector<uint8_t> reseal_with_cache_key(std::vector<uint8_t> b) {
  b.resize(b.size() - 32);
  auto h = blake3::keyed_hash(kCacheKey, b);
  b.insert(b.end(), h.begin(), h.end());
  return b;
}

TEST(WasmJitCache, CodeFromTheBlobIsMappedNotCompiledAndRunsLikeAFreshCompile) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  if (!jit::cpu_supports_jit()) GTEST_SKIP() << "this CPU cannot run the JIT";
  auto bytes = wat(kCachedModule);
  auto fresh = Module::load(bytes, jit_metered());
  ASSERT_TRUE(fresh) << fresh.error().to_string();
  ASSERT_EQ(jit_code_origin(**fresh), JitCodeOrigin::kCompiled) << engine_note(**fresh);
  auto blob = (*fresh)->serialize_compiled(kCacheKey);
  ASSERT_TRUE(blob);
  auto cached = Module::load_with_compiled(bytes, jit_metered(), *blob, kCacheKey);
  ASSERT_TRUE(cached) << cached.error().to_string();
  EXPECT_EQ(jit_code_origin(**cached), JitCodeOrigin::kFromCache);
  EXPECT_NE(engine_note(**cached).find("from the module cache"), std::string::npos) << engine_note(**cached);
  EXPECT_EQ(engine_note(**fresh).find("from the module cache"), std::string::npos) << engine_note(**fresh);

  // The same code, at another address, with the same tables.
  const jit::ModuleCode& a = *(*fresh)->impl().jit_code;
  const jit::ModuleCode& b = *(*cached)->impl().jit_code;
  ASSERT_EQ(a.code->size(), b.code->size());
  EXPECT_NE(a.code->base(), b.code->base());
  EXPECT_EQ(std::memcmp(a.code->base(), b.code->base(), a.code->size()), 0);
  EXPECT_EQ(a.func_start, b.func_start);
  EXPECT_EQ(a.call_sites, b.call_sites);
  EXPECT_EQ(a.data_ranges, b.data_ranges);
  EXPECT_FALSE(b.data_ranges.empty()) << "br_table's jump table";

  bool fresh_on_jit = false, cached_on_jit = false;
  const std::string want = cached_transcript(*fresh, &fresh_on_jit);
  EXPECT_TRUE(fresh_on_jit);
  EXPECT_NE(want.find("i32:42 "), std::string::npos) << want;
  EXPECT_NE(want.find("i32:30 "), std::string::npos) << want;
  EXPECT_NE(want.find("i32:630 "), std::string::npos) << want;  // 3 * (1 + ... + 20)
  EXPECT_NE(want.find("table_out_of_bounds"), std::string::npos) << want;
  EXPECT_NE(want.find("memory_out_of_bounds"), std::string::npos) << want;
  EXPECT_NE(want.find("stack_overflow"), std::string::npos) << want;
  EXPECT_NE(want.find("out_of_fuel"), std::string::npos) << want;
  EXPECT_NE(want.find(" 5 "), std::string::npos) << "a backtrace frame of $deep: " << want;
  EXPECT_EQ(cached_transcript(*cached, &cached_on_jit), want);
  EXPECT_TRUE(cached_on_jit);

  // The cached module writes the same blob again (a rewrite changes nothing).
  auto again = (*cached)->serialize_compiled(kCacheKey);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *blob);

  // Mapped W^X like compiled code.
  EXPECT_EQ(mapping_permissions(b.code->base()), "r-x");
}

// A module touching every family of instructions the compiler emits (integer, float and
// conversion arithmetic, every load/store width, memory and table instructions, branches and
// br_table, direct, indirect, host and tail calls, globals, select, references), for the digest
// below.
const char* kEveryFamilyModule = R"((module
  (import "env" "host" (func $host (param i32) (result i32)))
  (type $ii (func (param i32) (result i32)))
  (memory 1 4)
  (global $g (mut i64) (i64.const 5))
  (global $f (mut f64) (f64.const 1.5))
  (table $t 4 8 funcref)
  (elem (i32.const 0) $ints $host)
  (data (i32.const 16) "abcdefgh")
  (func $ints (type $ii) (local $x i64)
    (local.set $x (i64.extend_i32_s (local.get 0)))
    (local.set $x (i64.add (i64.mul (local.get $x) (i64.const 3)) (i64.rotl (local.get $x) (i64.const 7))))
    (local.set $x (i64.xor (i64.div_s (local.get $x) (i64.const 5)) (i64.rem_u (local.get $x) (i64.const 9))))
    (local.set $x (i64.or (i64.shr_u (local.get $x) (i64.const 3)) (i64.popcnt (i64.clz (i64.ctz (local.get $x))))))
    (i32.add
      (i32.wrap_i64 (local.get $x))
      (select (i32.div_u (local.get 0) (i32.const 7)) (i32.rem_s (local.get 0) (i32.const 3))
              (i32.ge_u (local.get 0) (i32.shl (i32.const 1) (i32.and (local.get 0) (i32.const 15)))))))
  (func (export "floats") (param f64 f32) (result i64)
    (global.set $f (f64.add (global.get $f) (f64.sqrt (f64.abs (local.get 0)))))
    (i64.add
      (i64.trunc_f64_s (f64.nearest (f64.div (global.get $f) (f64.promote_f32 (f32.max (local.get 1) (f32.const 1))))))
      (i64.add
        (i64.extend_i32_u (i32.trunc_sat_f32_u (f32.floor (f32.mul (local.get 1) (f32.convert_i32_s (i32.const 3))))))
        (i64.reinterpret_f64 (f64.copysign (f64.min (local.get 0) (f64.ceil (f64.const 2.25))) (f64.neg (local.get 0)))))))
  (func (export "memory") (param i32) (result i64)
    (i32.store8 (local.get 0) (i32.const 200))
    (i32.store16 offset=2 (local.get 0) (i32.const 40000))
    (i64.store32 offset=4 (local.get 0) (i64.const 0x1234567890))
    (f32.store offset=8 (local.get 0) (f32.const 2.5))
    (memory.fill (i32.const 100) (i32.const 7) (i32.const 32))
    (memory.copy (i32.const 200) (i32.const 16) (i32.const 8))
    (drop (memory.grow (i32.const 1)))
    (i64.add
      (i64.add (i64.load8_s (local.get 0)) (i64.load16_u offset=2 (local.get 0)))
      (i64.add (i64.load32_s offset=4 (local.get 0))
        (i64.add (i64.extend_i32_u (memory.size)) (i64.load (i32.const 200))))))
  (func (export "branches") (param i32) (result i32) (local $acc i32)
    (block $out
      (loop $l
        (br_if $out (i32.eqz (local.get 0)))
        (block $c (block $b (block $a
          (br_table $a $b $c $out (i32.rem_u (local.get 0) (i32.const 5))))
          (local.set $acc (i32.add (local.get $acc) (i32.const 1))) (br $c))
          (local.set $acc (call $host (local.get $acc))))
        (local.set $acc (i32.add (local.get $acc)
          (if (result i32) (i32.lt_s (local.get 0) (i32.const 3)) (then (i32.const 10)) (else (i32.const 20)))))
        (local.set 0 (i32.sub (local.get 0) (i32.const 1)))
        (br $l)))
    (local.get $acc))
  (func (export "calls") (param i32) (result i32)
    (i32.add (call_indirect (type $ii) (local.get 0) (i32.and (local.get 0) (i32.const 1)))
             (call $ints (local.get 0))))
  (func $tail (param i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0)) (then (i32.const 0))
      (else (return_call_indirect (type $ii) (i32.sub (local.get 0) (i32.const 1)) (i32.const 3)))))
  (func (export "tables") (param i32) (result i32)
    (table.set $t (i32.const 3) (ref.func $tail))
    (drop (table.grow $t (ref.null func) (i32.const 2)))
    (i32.add (table.size $t)
      (i32.add (ref.is_null (table.get $t (i32.const 5)))
        (return_call $tail (local.get 0)))))
  (func (export "wrapup") (result i64)
    (global.set $g (i64.shl (global.get $g) (i64.const 2)))
    (if (i64.eqz (global.get $g)) (then unreachable))
    (global.get $g))
  (elem declare func $tail))
)";

// The machine code compile_module emits for kEveryFamilyModule under each option set, pinned to
// the kJitBuild that names it. A change to the compiler's output fails here until kJitBuild is
// bumped (so cached blobs of the old code are refused, jit.h) and the digests below are
// updated; a compiler change that leaves the output alone (a faster compile) passes untouched.
TEST(WasmJitCache, TheEmittedCodeIsTheOneItsJitBuildNames) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  if (!jit::cpu_supports_jit()) GTEST_SKIP() << "this CPU cannot run the JIT";
  constexpr uint32_t kPinnedJitBuild = 2;
  constexpr uint64_t kPinned[4] = {0x99f1580dd45a56d7ull, 0x673970f2add162a9ull, 0x2403a830a2a6dee1ull, 0xa15f22c3cee74d06ull};  // (deterministic, metering): 00, 01, 10, 11
  auto bytes = wat(kEveryFamilyModule);
  std::string got;
  bool differs = false;
  for (int k = 0; k < 4; ++k) {
    LoadOptions lo;
    lo.deterministic = k & 2;
    lo.metering = k & 1;
    lo.engine = Engine::kJit;
    auto m = Module::load(bytes, lo);
    ASSERT_TRUE(m) << m.error().to_string();
    ASSERT_TRUE((*m)->impl().jit_code) << engine_note(**m);
    uint64_t d = jit::code_digest(*(*m)->impl().jit_code);
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%016llxull", static_cast<unsigned long long>(d));
    got += std::string(k ? ", " : "") + hex;
    differs |= d != kPinned[k];
  }
  if (jit::kJitBuild == kPinnedJitBuild)
    EXPECT_FALSE(differs) << "the JIT's emitted code changed: bump jit::kJitBuild (jit.h), then set "
                             "kPinnedJitBuild to it and kPinned to {" << got << "}";
  else
    ADD_FAILURE() << "kJitBuild is " << jit::kJitBuild << ": set kPinnedJitBuild to it and kPinned to {" << got << "}";
}

// The file of the /proc/self/maps line holding addr ("" for an anonymous mapping).
std::string mapping_file(const void* addr) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uintptr_t lo = 0, hi = 0;
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &path_at) < 2) continue;
    if (uintptr_t(addr) >= lo && uintptr_t(addr) < hi) return path_at > 0 ? line.substr(size_t(path_at)) : "";
  }
  return "";
}

TEST(WasmJitCache, ABlobThatIsAFileHasItsCodeMappedFromTheFileElseCopied) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  if (!jit::cpu_supports_jit()) GTEST_SKIP() << "this CPU cannot run the JIT";
  auto bytes = wat(kCachedModule);
  auto fresh = Module::load(bytes, jit_metered());
  ASSERT_TRUE(fresh) << fresh.error().to_string();
  auto blob = (*fresh)->serialize_compiled(kCacheKey);
  ASSERT_TRUE(blob);
  bool on_jit = false;
  const std::string want = cached_transcript(*fresh, &on_jit);
  ASSERT_TRUE(on_jit);
  const jit::ModuleCode& compiled = *(*fresh)->impl().jit_code;

  const char* tmpdir = std::getenv("TMPDIR");
  std::string path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/genvm-jit-blob.XXXXXX";
  int fd = ::mkstemp(path.data());
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, blob->data(), blob->size()), ssize_t(blob->size()));
  void* view = ::mmap(nullptr, blob->size(), PROT_READ, MAP_PRIVATE, fd, 0);
  ASSERT_NE(view, MAP_FAILED);
  Module::Prechecked pre;
  pre.blob_fd = fd;
  auto mapped = Module::load_with_compiled(bytes, jit_metered(),
                                           {static_cast<const uint8_t*>(view), blob->size()}, kCacheKey, pre);
  ASSERT_TRUE(mapped) << mapped.error().to_string();
  EXPECT_EQ(jit_code_origin(**mapped), JitCodeOrigin::kFromCache);
  const jit::ModuleCode& code = *(*mapped)->impl().jit_code;
  EXPECT_TRUE(code.code->file_backed());
  EXPECT_EQ(mapping_permissions(code.code->base()), "r-x");
  EXPECT_EQ(mapping_file(code.code->base()), path) << "the code is a mapping of the blob's file";
  ASSERT_EQ(code.code->size(), compiled.code->size());
  EXPECT_EQ(std::memcmp(code.code->base(), compiled.code->base(), compiled.code->size()), 0);
  // The module owns its mapping: the caller's view, descriptor and file name can all go.
  ::munmap(view, blob->size());
  ::close(fd);
  ::unlink(path.c_str());
  EXPECT_EQ(cached_transcript(*mapped, &on_jit), want);
  EXPECT_TRUE(on_jit);

  // A descriptor the kernel will not map executable (here: opened write-only; in production a
  // noexec mount): the code is copied, and runs the same.
  path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/genvm-jit-blob.XXXXXX";
  fd = ::mkstemp(path.data());
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, blob->data(), blob->size()), ssize_t(blob->size()));
  ::close(fd);
  fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  pre.blob_fd = fd;
  auto copied = Module::load_with_compiled(bytes, jit_metered(), *blob, kCacheKey, pre);
  ::close(fd);
  ::unlink(path.c_str());
  ASSERT_TRUE(copied) << copied.error().to_string();
  EXPECT_FALSE((*copied)->impl().jit_code->code->file_backed());
  EXPECT_EQ(mapping_permissions((*copied)->impl().jit_code->code->base()), "r-x");
  EXPECT_EQ(cached_transcript(*copied, &on_jit), want);
  EXPECT_TRUE(on_jit);
}

TEST(WasmJitCache, ATruncatedOrImplausibleJitSectionIsRefused) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  if (!jit::cpu_supports_jit()) GTEST_SKIP() << "this CPU cannot run the JIT";
  auto bytes = wat(kCachedModule);
  auto fresh = Module::load(bytes, jit_metered());
  ASSERT_TRUE(fresh);
  const ModuleImpl& mi = (*fresh)->impl();
  const jit::ModuleCode& jc = *mi.jit_code;
  ASSERT_GE(jc.call_sites.size(), 2u);
  ASSERT_FALSE(jc.data_ranges.empty());
  auto blob = (*fresh)->serialize_compiled(kCacheKey);
  ASSERT_TRUE(blob);
  const size_t flag = jit_flag_at(mi);
  auto le32 = [&](const std::vector<uint8_t>& b, size_t at) {
    return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 | uint32_t(b[at + 3]) << 24;
  };
  auto put = [](std::vector<uint8_t>& b, size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) b[at + size_t(i)] = uint8_t(v >> (8 * i));
  };
  // The layout as this test reads it: has_jit, then build, ABI, n_bytes, and the three counts.
  ASSERT_EQ(le32(*blob, flag), 1u);
  ASSERT_EQ(le32(*blob, flag + 4), jit::kJitBuild);
  ASSERT_EQ(le32(*blob, flag + 12), uint32_t(jc.code->size()));
  ASSERT_EQ(le32(*blob, flag + 16), uint32_t(jc.func_start.size()));
  const size_t starts = flag + 28, calls = starts + 4 * jc.func_start.size(), tables = calls + 8 * jc.call_sites.size();
  auto refused = [&](const std::vector<uint8_t>& b, const std::string& why) {
    auto r = Module::load_with_compiled(bytes, jit_metered(), b, kCacheKey);
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_EQ(r.error().code, "module_cache") << why;
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
  };
  // Cut anywhere in the JIT section: the seal refuses it, and so do the counts once re-sealed.
  for (size_t cut : {flag + 2, flag + 20, calls + 3, tables + 5, blob->size() - 33}) {
    std::vector<uint8_t> t(blob->begin(), blob->begin() + long(cut));
    refused(t, "seal mismatch");
    t.insert(t.end(), 32, 0);
    refused(reseal_with_cache_key(t), cut > flag + 4 && cut < flag + 28 ? "blob truncated" : "counts do not match");
  }
  auto t = *blob;
  put(t, flag, 2);
  refused(reseal_with_cache_key(t), "JIT flag implausible");
  t = *blob;
  put(t, flag + 4, jit::kJitBuild + 1);
  refused(reseal_with_cache_key(t), "another JIT build");
  t = *blob;
  put(t, flag + 8, jit::code_abi_fingerprint() ^ 1);
  refused(reseal_with_cache_key(t), "another JIT build");
  t = *blob;
  put(t, flag + 12, uint32_t(jc.code->size() + 1));
  refused(reseal_with_cache_key(t), "counts do not match");
  t = *blob;
  put(t, starts, uint32_t(jc.code->size()));  // a function entry past the code
  refused(reseal_with_cache_key(t), "function start outside the code");
  t = *blob;
  put(t, calls, uint32_t(jc.code->size() + 16));  // a return address past the code
  refused(reseal_with_cache_key(t), "call site outside the code");
  t = *blob;
  put(t, calls, jc.call_sites[1].first);  // two calls at one return address
  refused(reseal_with_cache_key(t), "call sites not ascending");
  t = *blob;
  put(t, calls + 4, uint32_t(bytes.size()));  // a call at a wasm offset past the module
  refused(reseal_with_cache_key(t), "call site outside the module");
  t = *blob;
  put(t, tables, uint32_t(jc.code->size() - 4));  // a jump table running off the end
  refused(reseal_with_cache_key(t), "jump table implausible");
  t = *blob;
  put(t, tables + 4, 12);  // not whole entries
  refused(reseal_with_cache_key(t), "jump table implausible");
  // Another function count in the JIT section than in the blob and the module.
  auto small_bytes = wat(R"((module (func (export "f") (result i32) i32.const 1)))");
  auto small = Module::load(small_bytes, jit_metered());
  ASSERT_TRUE(small);
  const size_t small_flag = jit_flag_at((*small)->impl());
  auto sb = (*small)->serialize_compiled(kCacheKey);
  ASSERT_TRUE(sb);
  ASSERT_TRUE(Module::load_with_compiled(small_bytes, jit_metered(), *sb, kCacheKey));
  put(*sb, small_flag + 16, 2);
  auto r = Module::load_with_compiled(small_bytes, jit_metered(), reseal_with_cache_key(*sb), kCacheKey);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("JIT section: function count differs"), std::string::npos) << r.error().message;
  // The untouched blob still loads (the refusals above are the mutations').
  EXPECT_TRUE(Module::load_with_compiled(bytes, jit_metered(), *blob, kCacheKey));
}

TEST(WasmJitCache, ABlobWithoutJitCodeIsCompiledOnTheJitAndOneWithItRunsOnTheInterpreter) {
  if (!have_wabt()) GTEST_SKIP() << "wabt not installed";
  if (!jit::cpu_supports_jit()) GTEST_SKIP() << "this CPU cannot run the JIT";
  auto bytes = wat(kCachedModule);
  LoadOptions interp = jit_metered();
  interp.engine = Engine::kInterp;
  auto on_interp = Module::load(bytes, interp);
  ASSERT_TRUE(on_interp);
  auto interp_blob = (*on_interp)->serialize_compiled(kCacheKey);
  ASSERT_TRUE(interp_blob);
  ASSERT_EQ(interp_blob->size(), jit_flag_at((*on_interp)->impl()) + 4 + 32) << "no JIT section";
  auto compiled = Module::load_with_compiled(bytes, jit_metered(), *interp_blob, kCacheKey);
  ASSERT_TRUE(compiled) << compiled.error().to_string();
  EXPECT_EQ(jit_code_origin(**compiled), JitCodeOrigin::kCompiled) << engine_note(**compiled);
  // Its blob now carries the code: what the executor rewrites the entry with.
  auto jit_blob = (*compiled)->serialize_compiled(kCacheKey);
  ASSERT_TRUE(jit_blob);
  EXPECT_GT(jit_blob->size(), interp_blob->size());
  auto mapped = Module::load_with_compiled(bytes, jit_metered(), *jit_blob, kCacheKey);
  ASSERT_TRUE(mapped);
  EXPECT_EQ(jit_code_origin(**mapped), JitCodeOrigin::kFromCache);
  // The interpreter takes the slot code of a blob with JIT code and leaves the machine code.
  auto interp_again = Module::load_with_compiled(bytes, interp, *jit_blob, kCacheKey);
  ASSERT_TRUE(interp_again);
  EXPECT_EQ(jit_code_origin(**interp_again), JitCodeOrigin::kNone);
  bool on_jit = true;
  const std::string want = cached_transcript(*on_interp, &on_jit);
  EXPECT_FALSE(on_jit);
  EXPECT_EQ(cached_transcript(*interp_again, &on_jit), want);
  EXPECT_FALSE(on_jit);
  EXPECT_EQ(cached_transcript(*compiled, &on_jit), want);
  EXPECT_TRUE(on_jit);
  EXPECT_EQ(cached_transcript(*mapped, &on_jit), want);
  EXPECT_TRUE(on_jit);
}

}  // namespace
}  // namespace genvm::wasm
