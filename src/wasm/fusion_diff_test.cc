// Differential test of CompileOptions::fuse: every module of the spec testsuite, the fuzz
// corpus and the benchmark kernels runs in two worlds, one loaded with the fused forms
// (the default) and one without, and each call must end the same way in both: the same
// result bits, or the same trap kind with the same backtrace (function indices and wasm
// offsets), and the same fuel left. Metering is on in both worlds, so fuel is compared too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/json.h"
#include "wasm/fusion.h"
#include "wasm/module.h"
#include "wasm/ops.h"
#include "wasm/spectest_host.h"
#include "wasm/wasm.h"

namespace genvm::wasm {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kFuelPerCall = 20'000'000;
constexpr uint64_t kBenchFuel = 2'000'000'000;  // a kernel's bench(1) runs to its end

bool have_tool(const char* probe) { return std::system(probe) == 0; }

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A scratch directory removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/genvm-fusion-diff-XXXXXX";
    const char* p = mkdtemp(tmpl);
    EXPECT_NE(p, nullptr);
    path = p ? p : "/tmp";
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// How one call (or load, or instantiation) ended, as text: what the two worlds must agree on.
std::string describe(const Result<Outcome>& r, uint64_t fuel_left) {
  std::ostringstream o;
  if (!r.ok()) return "error " + r.error().to_string();
  if (r->trap) {
    o << "trap " << trap_kind_name(r->trap->kind);
    for (const TrapFrame& f : r->trap->frames) o << " [" << f.func_index << "@" << f.code_offset << "]";
  } else {
    o << "values";
    for (const Value& v : r->values) o << " " << int(v.type) << ":" << v.bits;
  }
  o << " fuel_left " << fuel_left;
  return o.str();
}

StoreConfig fuel_config() {
  StoreConfig cfg;
  cfg.fuel_enabled = true;
  return cfg;
}

// One world: a store, a linker with the spectest imports and dummies, the named instances.
struct World {
  LoadOptions lo;
  Store store;
  Linker linker;
  std::map<std::string, Instance*> named;
  Instance* current = nullptr;
  uint64_t fuel = kFuelPerCall;  // given to every call

  explicit World(CompileOptions co) : store(fuel_config()) {
    lo.metering = true;
    lo.compile = co;
    define_spectest_imports(store, linker);
  }

  // Loads and instantiates; "" on success, else how it failed. Function imports nobody
  // defined get a host function returning zeros (binaryen's fuzzing-support logging calls).
  std::string instantiate(std::span<const uint8_t> bytes, const std::string& name) {
    auto mod = Module::load(bytes, lo);
    if (!mod.ok()) return "load " + mod.error().to_string();
    for (const auto& imp : (*mod)->imports()) {
      if (imp.kind != 'f' || linker.lookup(imp.module, imp.name)) continue;
      FuncType ft = imp.func_type;
      linker.define_host(store, imp.module, imp.name, ft, [ft](Caller&, std::span<const Value>, std::span<Value> out) {
        for (size_t i = 0; i < out.size() && i < ft.results.size(); ++i) out[i] = Value::zero(ft.results[i]);
        return std::optional<Trap>();
      });
    }
    store.set_fuel(kFuelPerCall);
    auto inst = linker.instantiate(store, *mod, name);
    if (!inst.ok()) return "instantiate " + inst.error().to_string();
    current = *inst;
    if (!name.empty()) named[name] = current;
    return "";
  }

  Instance* instance(const std::string& name) {
    if (name.empty()) return current;
    auto it = named.find(name);
    return it == named.end() ? nullptr : it->second;
  }

  std::string invoke(const std::string& module, const std::string& field, const std::vector<Value>& args) {
    Instance* inst = instance(module);
    if (!inst) return "no instance";
    auto e = inst->get_export(field);
    if (!e || e->kind != Extern::kFunc) return "no function export " + field;
    store.set_fuel(fuel);
    store.clear_interrupt();
    auto r = store.call(*e, args);
    return describe(r, store.fuel());
  }
};

// Both worlds side by side; every step's outcome is compared.
struct Pair {
  World fused, plain;
  std::string where;
  size_t compared = 0;
  std::map<std::string, size_t>* tally = nullptr;  // outcome kinds ("values", "trap out_of_fuel", ...)

  // Fused (the default) against `other` (default: no fusion at all).
  explicit Pair(CompileOptions other = unfused()) : fused(CompileOptions{}), plain(other) {}
  static CompileOptions unfused() {
    CompileOptions o;
    o.fuse = false;
    return o;
  }

  bool instantiate(std::span<const uint8_t> bytes, const std::string& name) {
    std::string a = fused.instantiate(bytes, name), b = plain.instantiate(bytes, name);
    EXPECT_EQ(a, b) << where << ": load/instantiate";
    ++compared;
    return a.empty() && b.empty();
  }
  void invoke(const std::string& module, const std::string& field, const std::vector<Value>& args) {
    std::string a = fused.invoke(module, field, args), b = plain.invoke(module, field, args);
    EXPECT_EQ(a, b) << where << ": invoke " << field;
    ++compared;
    // The kind: "values", "error", or "trap <kind>".
    if (tally) ++(*tally)[a.substr(0, a.find(' ', a.starts_with("trap ") ? 5 : 0))];
  }
  // All function exports of the module just instantiated, zero arguments, in export order.
  void run_all_exports(std::span<const uint8_t> bytes) {
    auto mod = Module::load(bytes, fused.lo);
    if (!mod.ok()) return;
    for (const auto& ex : (*mod)->exports()) {
      if (ex.kind != 'f') continue;
      std::vector<Value> args;
      for (ValType t : ex.func_type.params) args.push_back(Value::zero(t));
      invoke("", ex.name, args);
    }
  }
  void register_as(const std::string& as, const std::string& name) {
    for (World* w : {&fused, &plain}) {
      Instance* inst = w->instance(name);
      if (inst) w->linker.define_instance(as, *inst);
    }
  }
};

// A wast2json argument or expected value; nullopt for what the test does not model (v128).
std::optional<Value> json_value(const JsonValue& v) {
  const JsonValue* t = v.find("type");
  const JsonValue* val = v.find("value");
  if (!t || !val || !val->is_string()) return std::nullopt;
  const std::string& ty = t->text();
  std::optional<uint64_t> bits = parse_decimal_u64(val->text());
  if (ty == "externref" || ty == "funcref") {
    if (val->text() == "null") return Value::ref(ty == "funcref" ? ValType::FuncRef : ValType::ExternRef, 0);
    if (ty == "externref" && bits) return Value::ref(ValType::ExternRef, *bits);
    return std::nullopt;
  }
  if (!bits) return std::nullopt;
  if (ty == "i32") return Value{ValType::I32, uint64_t(uint32_t(*bits)), 0};
  if (ty == "i64") return Value{ValType::I64, *bits, 0};
  if (ty == "f32") return Value::f32_bits(uint32_t(*bits));
  if (ty == "f64") return Value::f64_bits(*bits);
  return std::nullopt;
}

// Runs one .wast's commands (through wast2json) in both worlds: every module, invalid and
// malformed ones too (the two must fail alike), every invoke action.
void run_wast(const fs::path& wast, const fs::path& tmp, std::map<std::string, size_t>& tally) {
  fs::path json = tmp / (wast.stem().string() + ".json");
  std::string cmd = "wast2json --enable-tail-call '" + wast.string() + "' -o '" + json.string() + "' >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) return;  // a file wabt cannot convert (counted by the spec ctest)
  std::ifstream in(json);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto doc = parse_json(text);
  ASSERT_TRUE(doc.ok()) << json;
  const JsonValue* cmds = doc->find("commands");
  ASSERT_NE(cmds, nullptr);
  Pair pair;
  pair.tally = &tally;
  for (const JsonValue& c : cmds->items()) {
    const JsonValue* type = c.find("type");
    if (!type) continue;
    const std::string& ty = type->text();
    const JsonValue* line = c.find("line");
    pair.where = wast.filename().string() + ":" + (line ? line->text() : "?");
    const JsonValue* file = c.find("filename");
    const JsonValue* mt = c.find("module_type");
    bool binary = file && (!mt || mt->text() == "binary");
    if (ty == "module" || ty == "assert_invalid" || ty == "assert_malformed" || ty == "assert_unlinkable" ||
        ty == "assert_uninstantiable") {
      if (!binary) continue;
      const JsonValue* name = c.find("name");
      auto bytes = read_bytes(tmp / file->text());
      pair.instantiate(bytes, ty == "module" && name ? name->text() : "");
      continue;
    }
    if (ty == "register") {
      const JsonValue* as = c.find("as");
      const JsonValue* name = c.find("name");
      if (as) pair.register_as(as->text(), name ? name->text() : "");
      if (as && !name) {
        for (World* w : {&pair.fused, &pair.plain})
          if (w->current) w->linker.define_instance(as->text(), *w->current);
      }
      continue;
    }
    const JsonValue* action = c.find("action");
    if (!action) continue;
    const JsonValue* at = action->find("type");
    if (!at || at->text() != "invoke") continue;
    std::vector<Value> args;
    bool modelled = true;
    if (const JsonValue* a = action->find("args")) {
      for (const JsonValue& v : a->items()) {
        auto val = json_value(v);
        if (!val) modelled = false;
        else args.push_back(*val);
      }
    }
    if (!modelled) continue;
    const JsonValue* mod = action->find("module");
    pair.invoke(mod ? mod->text() : "", action->find("field")->text(), args);
  }
  tally["steps"] += pair.compared;
}

void print_tally(const char* what, const std::map<std::string, size_t>& tally) {
  std::printf("%s:", what);
  for (const auto& [k, n] : tally) std::printf(" %s=%zu", k.c_str(), n);
  std::printf("\n");
}

std::vector<fs::path> spec_files() {
  std::vector<fs::path> out;
  std::vector<std::string> dirs;
  const char* env = std::getenv("GENVM_SPEC_TESTSUITE");
  dirs.push_back(env && *env ? env : GENVM_SHARED_DIR "/testdata/wasm-spec");
  const char* tail = std::getenv("GENVM_SPEC_TESTSUITE_TAIL_CALL");
  dirs.push_back(tail && *tail ? tail : GENVM_SHARED_DIR "/testdata/wasm-spec-tail-call");
  for (const auto& d : dirs) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".wast") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(WasmFusionDiff, SpecTestsuiteRunsAlikeFusedAndUnfused) {
  if (!have_tool("wast2json --version >/dev/null 2>&1")) GTEST_SKIP() << "wast2json (wabt) not installed";
  auto files = spec_files();
  ASSERT_FALSE(files.empty()) << "no spec testsuite (GENVM_SPEC_TESTSUITE)";
  TempDir tmp;
  std::map<std::string, size_t> tally;
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    run_wast(f, tmp.path, tally);
  }
  print_tally("spec testsuite", tally);
  // wast2json converts every file of the suite; most steps are invokes that return values.
  EXPECT_GT(tally["values"], 10000u);
  EXPECT_GT(tally["steps"], 20000u);
}

// The fuzz corpus: the wasm_diff transcripts' modules (cases/*.wat), its saved regressions,
// the module-cache fuzzer's seeds (each `flags | u16 length | module | blob`), and modules
// binaryen makes from fixed-seed bytes, as tests/wasm_diff/run.sh does.
using Corpus = std::vector<std::pair<std::string, std::vector<uint8_t>>>;
Corpus fuzz_corpus() {
  Corpus corpus;
  TempDir tmp;
  const fs::path src = GENVM_SOURCE_DIR;
  bool have_wat2wasm = have_tool("wat2wasm --version >/dev/null 2>&1");
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(src / "tests/wasm_diff/cases", ec)) {
    if (e.path().extension() != ".wat" || !have_wat2wasm) continue;
    fs::path out = tmp.path / (e.path().stem().string() + ".wasm");
    std::string cmd = "wat2wasm '" + e.path().string() + "' -o '" + out.string() + "' 2>/dev/null";
    if (std::system(cmd.c_str()) == 0) corpus.emplace_back(e.path().string(), read_bytes(out));
  }
  // A bytecode interpreter's byte fetch and dispatch without the fetch-dispatch shape (no
  // generated module has one): br_table on a loaded byte, also trapping in the load.
  if (have_wat2wasm) {
    fs::path in = tmp.path / "br_table_byte.wat", out = tmp.path / "br_table_byte.wasm";
    std::ofstream(in) << R"((module (memory 1)
      (data (i32.const 100) "\00\01\02\07\01\00")
      (func $run (export "run") (param $pc i32) (result i32) (local $acc i32)
        (loop $next
          (block $halt (block $add1 (block $add10 (block $double
            (br_table $double $add10 $add1 $halt (i32.load8_u offset=100 (local.get $pc))))
            (local.set $acc (i32.shl (local.get $acc) (i32.const 1))) (local.set $pc (i32.add (local.get $pc) (i32.const 1))) (br $next))
            (local.set $acc (i32.add (local.get $acc) (i32.const 10))) (local.set $pc (i32.add (local.get $pc) (i32.const 1))) (br $next))
            (local.set $acc (i32.add (local.get $acc) (i32.const 1))) (local.set $pc (i32.add (local.get $pc) (i32.const 1))) (br $next)))
        (local.get $acc))
      (func (export "from_101") (result i32) (call $run (i32.const 1)))
      (func (export "traps") (result i32) (call $run (i32.const 65436)))
      (func (export "plain") (param i32) (result i32)
        (block $b (block $a (br_table $a $b (i32.load8_u (local.get 0)))) (return (i32.const 1))) (i32.const 2))))";
    std::string cmd = "wat2wasm '" + in.string() + "' -o '" + out.string() + "' 2>/dev/null";
    if (std::system(cmd.c_str()) == 0) corpus.emplace_back("br_table on a loaded byte", read_bytes(out));
  }
  for (const auto& e : fs::directory_iterator(src / "tests/wasm_diff/regressions", ec))
    if (e.path().extension() == ".wasm") corpus.emplace_back(e.path().string(), read_bytes(e.path()));
  for (const auto& e : fs::directory_iterator(src / "fuzz/module_cache_fuzz", ec)) {
    auto b = read_bytes(e.path());
    if (b.size() < 3) continue;
    size_t n = size_t(b[1]) | size_t(b[2]) << 8;
    if (3 + n <= b.size()) corpus.emplace_back(e.path().string(), std::vector<uint8_t>(b.begin() + 3, b.begin() + 3 + long(n)));
  }
  if (have_tool("wasm-opt --version >/dev/null 2>&1")) {
    for (uint32_t seed = 1; seed <= 60; ++seed) {
      std::vector<uint8_t> bytes(4096);
      uint64_t x = 0x9e3779b97f4a7c15ull * seed;
      for (auto& b : bytes) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b = uint8_t(x);
      }
      fs::path in = tmp.path / ("seed" + std::to_string(seed) + ".bin"), out = in;
      out.replace_extension(".wasm");
      std::ofstream(in, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), long(bytes.size()));
      std::string cmd = "wasm-opt '" + in.string() + "' -ttf -o '" + out.string() +
                        "' --mvp-features --enable-bulk-memory --enable-sign-ext --enable-nontrapping-float-to-int"
                        " --enable-multivalue --enable-tail-call --enable-mutable-globals 2>/dev/null";
      if (std::system(cmd.c_str()) == 0) corpus.emplace_back("ttf seed " + std::to_string(seed), read_bytes(out));
    }
  }
  return corpus;
}

// Every module of the corpus, every function export with zero arguments, in both worlds.
void run_corpus(const Corpus& corpus, CompileOptions other, std::map<std::string, size_t>& tally) {
  for (const auto& [name, bytes] : corpus) {
    Pair pair(other);
    pair.tally = &tally;
    pair.where = name;
    if (pair.instantiate(bytes, "")) pair.run_all_exports(bytes);
    tally["steps"] += pair.compared;
  }
}

TEST(WasmFusionDiff, FuzzCorpusRunsAlikeFusedAndUnfused) {
  Corpus corpus = fuzz_corpus();
  ASSERT_GE(corpus.size(), 20u) << "the fuzz corpus is missing (tests/wasm_diff, fuzz/module_cache_fuzz)";
  std::map<std::string, size_t> tally;
  tally["modules"] = corpus.size();
  run_corpus(corpus, Pair::unfused(), tally);
  print_tally("fuzz corpus", tally);
  EXPECT_GT(tally["steps"], corpus.size());
}

std::vector<fs::path> bench_kernels(const char* suffix) {
  std::vector<fs::path> kernels;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(GENVM_BINARY_DIR) / "bench/wasm", ec))
    if (e.path().string().ends_with(suffix)) kernels.push_back(e.path());
  std::sort(kernels.begin(), kernels.end());
  return kernels;
}

// Each kernel's `bench(1)` in both worlds; every one returns within the fuel.
void run_kernels(const std::vector<fs::path>& kernels, CompileOptions other, std::map<std::string, size_t>& tally) {
  for (const auto& k : kernels) {
    auto bytes = read_bytes(k);
    Pair pair(other);
    pair.tally = &tally;
    pair.fused.fuel = pair.plain.fuel = kBenchFuel;
    pair.where = k.filename().string();
    ASSERT_TRUE(pair.instantiate(bytes, "")) << k;
    size_t before = tally["values"];
    pair.invoke("", "bench", {Value::i32(1)});
    EXPECT_EQ(tally["values"], before + 1) << k << " bench(1) did not return within the fuel";
  }
}

// Every bench/wasm kernel's `bench(1)` (the no-WASI build; vm's bench(2) needs over 2e9 fuel).
TEST(WasmFusionDiff, BenchKernelsRunAlikeFusedAndUnfused) {
  auto kernels = bench_kernels(".nowasi.wasm");
  if (kernels.empty()) GTEST_SKIP() << "bench/wasm kernels not built (target bench_wasm, needs clang for wasm32)";
  std::map<std::string, size_t> tally;
  run_kernels(kernels, Pair::unfused(), tally);
  print_tally("bench kernels", tally);
}

// Each family switched off alone (CompileOptions::fuse_off) against all of them on: the fuzz
// corpus and the kernels run alike (what a measurement per family compares must be correct).
class WasmFusionFamilyDiff : public testing::TestWithParam<uint32_t> {};
TEST_P(WasmFusionFamilyDiff, OneFamilyOffRunsAlike) {
  CompileOptions other;
  other.fuse_off = fuse_bit(FuseFamily(GetParam()));
  Corpus corpus = fuzz_corpus();
  ASSERT_GE(corpus.size(), 20u);
  std::map<std::string, size_t> tally;
  auto kernels = bench_kernels(".nowasi.wasm");
  run_corpus(corpus, other, tally);
  run_kernels(kernels, other, tally);
  EXPECT_GT(tally["steps"], corpus.size());
  // And the switch is not idle: some module compiles differently without the family.
  for (const auto& k : kernels) corpus.emplace_back(k.string(), read_bytes(k));
  size_t changed = 0;
  for (const auto& [name, bytes] : corpus) {
    LoadOptions on, off;
    off.compile = other;
    auto a = Module::load(bytes, on), b = Module::load(bytes, off);
    if (a.ok() && b.ok() && (*a)->impl().code != (*b)->impl().code) ++changed;
  }
  EXPECT_GT(changed, 0u) << fuse_family_name(FuseFamily(GetParam())) << " off changes no module's code";
}
INSTANTIATE_TEST_SUITE_P(Families, WasmFusionFamilyDiff, testing::Range(0u, uint32_t(FuseFamily::kCount)),
                         [](const testing::TestParamInfo<uint32_t>& i) {
                           return std::string(fuse_family_name(FuseFamily(i.param)));
                         });

TEST(WasmFusionDiff, FuseFamilyNamesParse) {
  auto m = parse_fuse_families("outer_inner,load,jump_threading");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, fuse_bit(FuseFamily::kOuterInner) | fuse_bit(FuseFamily::kLoad) | fuse_bit(FuseFamily::kJumpThreading));
  EXPECT_EQ(*parse_fuse_families(""), 0u);
  EXPECT_FALSE(parse_fuse_families("outer_inner,nope").ok());
}

// An instruction of plain slot code: a numeric op, a plain load or store, or one of the
// instructions a single wasm instruction compiles to without fusion.
bool is_plain(uint32_t op) {
  if (op < kUnreachable || (op >= kLoadBase && op < kImmBase)) return true;
  return (op >= kUnreachable && op <= kFuelCheck) || op == kCallLocal;
}

// Fusion off really is plain slot code, and on the same kernels fusion on is not.
TEST(WasmFusionDiff, FuseOffEmitsOnlyPlainSlotCode) {
  std::vector<fs::path> kernels;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(GENVM_BINARY_DIR) / "bench/wasm", ec))
    if (e.path().extension() == ".wasm") kernels.push_back(e.path());
  if (kernels.empty()) GTEST_SKIP() << "bench/wasm kernels not built (target bench_wasm, needs clang for wasm32)";
  for (const auto& k : kernels) {
    auto bytes = read_bytes(k);
    // Every fused form belongs to a family: all of them left out is fusion off.
    LoadOptions all_off;
    all_off.metering = true;
    all_off.compile.fuse_off = kAllFuseFamilies;
    LoadOptions off = all_off;
    off.compile = CompileOptions{false, 0};
    auto a = Module::load(bytes, all_off), b = Module::load(bytes, off);
    ASSERT_TRUE(a.ok() && b.ok()) << k;
    EXPECT_EQ((*a)->impl().code, (*b)->impl().code) << k;
    for (bool fuse : {false, true}) {
      LoadOptions lo;
      lo.metering = true;
      lo.compile.fuse = fuse;
      auto m = Module::load(bytes, lo);
      ASSERT_TRUE(m.ok()) << k;
      const std::vector<uint32_t>& code = (*m)->impl().code;
      size_t fused = 0;
      for (size_t pc = 0; pc < code.size(); pc += instr_words(&code[pc])) fused += is_plain(code[pc]) ? 0 : 1;
      if (fuse) EXPECT_GT(fused, 0u) << k;
      else EXPECT_EQ(fused, 0u) << k << ": fused instructions with CompileOptions::fuse off";
    }
  }
}

}  // namespace
}  // namespace genvm::wasm
