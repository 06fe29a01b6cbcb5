// `genvm-wasm spectest`: runs the WebAssembly spec testsuite's commands (via wabt's wast2json).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "tools/genvm-wasm/json.h"
#include "tools/genvm-wasm/tool.h"
#include "wasm/rewrite.h"
#include "wasm/spectest_host.h"

namespace genvm_wasm_tool {

using namespace genvm::wasm;
namespace fs = std::filesystem;

namespace {

std::optional<ValType> parse_type(const std::string& t) {
  if (t == "i32") return ValType::I32;
  if (t == "i64") return ValType::I64;
  if (t == "f32") return ValType::F32;
  if (t == "f64") return ValType::F64;
  if (t == "funcref") return ValType::FuncRef;
  if (t == "externref") return ValType::ExternRef;
  return std::nullopt;
}

// Externref values in the tests are small integers; we store n as n+1 so 0 stays null.
std::optional<Value> parse_value(const Json& j) {
  auto t = parse_type(j.str("type"));
  if (!t) return std::nullopt;
  std::string v = j.str("value");
  if (is_ref(*t)) {
    if (v == "null" || v.empty()) return Value::ref(*t, 0);
    return Value::ref(*t, std::stoull(v) + 1);
  }
  uint64_t bits = std::stoull(v);
  return Value{*t, bits, 0};
}

std::string show(const Value& v) {
  char buf[96];
  switch (v.type) {
    case ValType::I32: std::snprintf(buf, sizeof buf, "i32:%u", uint32_t(v.bits)); break;
    case ValType::I64: std::snprintf(buf, sizeof buf, "i64:%llu", (unsigned long long)v.bits); break;
    case ValType::F32: std::snprintf(buf, sizeof buf, "f32:0x%08x(%g)", uint32_t(v.bits), double(v.as_f32())); break;
    case ValType::F64: std::snprintf(buf, sizeof buf, "f64:0x%016llx(%g)", (unsigned long long)v.bits, v.as_f64()); break;
    default: std::snprintf(buf, sizeof buf, "%s:%s", val_type_name(v.type), v.bits ? "non-null" : "null"); break;
  }
  return buf;
}

std::string show_expected(const Json& j) { return j.str("type") + ":" + j.str("value", "<any>"); }

bool matches(const Json& expected, const Value& got) {
  auto t = parse_type(expected.str("type"));
  if (!t || *t != got.type) return false;
  std::string v = expected.str("value");
  if (*t == ValType::F32) {
    uint32_t b = uint32_t(got.bits);
    bool nan = (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu);
    if (v == "nan:canonical") return nan && (b & 0x7fffffffu) == 0x7fc00000u;
    if (v == "nan:arithmetic") return nan && (b & 0x00400000u);
    return b == uint32_t(std::stoull(v));
  }
  if (*t == ValType::F64) {
    uint64_t b = got.bits;
    bool nan = (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0x000fffffffffffffull);
    if (v == "nan:canonical") return nan && (b & 0x7fffffffffffffffull) == 0x7ff8000000000000ull;
    if (v == "nan:arithmetic") return nan && (b & 0x0008000000000000ull);
    return b == std::stoull(v);
  }
  if (is_ref(*t)) {
    if (v.empty()) return got.bits != 0;  // any non-null reference
    if (v == "null") return got.bits == 0;
    return got.bits == std::stoull(v) + 1;
  }
  if (*t == ValType::I32) return uint32_t(got.bits) == uint32_t(std::stoull(v));
  return got.bits == std::stoull(v);
}

// The spec's trap texts -> our kinds.
bool trap_matches(const std::string& text, TrapKind k) {
  auto has = [&](const char* s) { return text.find(s) != std::string::npos; };
  switch (k) {
    case TrapKind::kUnreachable: return has("unreachable");
    case TrapKind::kMemoryOutOfBounds: return has("out of bounds memory access") || has("memory");
    case TrapKind::kTableOutOfBounds: return has("undefined element") || has("out of bounds table access");
    case TrapKind::kIndirectCallToNull: return has("uninitialized element");
    case TrapKind::kBadSignature: return has("indirect call type mismatch");
    case TrapKind::kIntegerOverflow: return has("integer overflow");
    case TrapKind::kIntegerDivideByZero: return has("integer divide by zero");
    case TrapKind::kBadConversionToInteger: return has("invalid conversion to integer");
    case TrapKind::kStackOverflow: return has("call stack exhausted") || has("exhaust");
    default: return false;
  }
}

struct Runner {
  std::string file;
  fs::path dir;
  Store store;
  Linker linker;
  Instance* current = nullptr;
  std::map<std::string, Instance*> named;
  int passed = 0, failed = 0, skipped = 0;

  const SpecOptions& opts;
  explicit Runner(const SpecOptions& o) : store(spectest_store_config()), opts(o) {}

  static StoreConfig spectest_store_config() {
    StoreConfig c;
    c.ram_budget = uint64_t(8) << 30;
    return c;
  }

  void fail(const Json& cmd, const std::string& what) {
    ++failed;
    std::cout << file << ":" << cmd.str("line") << ": " << cmd.str("type") << ": " << what << "\n";
  }

  // rewrite: with --reencode, the module goes through our writer first; with --softfloat, it is
  // rewritten onto the library and loaded in deterministic mode (modules that are meant not to
  // load are loaded as they are).
  genvm::Result<std::shared_ptr<const Module>> load(const std::string& filename, bool rewrite = false) {
    std::ifstream in(dir / filename, std::ios::binary);
    if (!in) return genvm::make_error("io", "cannot read " + filename);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LoadOptions lo;
    if (rewrite && opts.reencode) {
      auto out = reencode_module(bytes);
      if (!out) return genvm::make_error("reencode", out.error().to_string());
      bytes = std::move(*out);
    }
    if (!opts.softfloat_library.empty()) {
      lo.deterministic = true;
      if (rewrite) {
        auto out = rewrite_floats_to_softfloat(bytes, opts.softfloat_library);
        if (!out) return genvm::make_error("softfloat", out.error().to_string());
        bytes = std::move(*out);
      }
    }
    lo.engine = opts.engine;
    lo.compile = opts.compile;
    auto m = Module::load(bytes, lo);
    // GENVM_SPEC_VIA_BLOB=1: every module that loads is loaded again from its compiled blob (the
    // `genvm run --module-cache` path), and that copy is the one the script runs.
    if (m && std::getenv("GENVM_SPEC_VIA_BLOB")) {
      // Any key serves a blob made and read in one process; fixed so a failure reproduces.
      static constexpr genvm::wasm::SealKey kKey = {0x67, 0x65, 0x6e, 0x76, 0x6d};
      auto blob = (*m)->serialize_compiled(kKey);
      if (!blob) return blob.take_error();
      return Module::load_with_compiled(bytes, lo, *blob, kKey);
    }
    return m;
  }

  Instance* target(const Json& action) {
    std::string m = action.str("module");
    if (m.empty()) return current;
    auto it = named.find(m);
    return it == named.end() ? nullptr : it->second;
  }

  // Runs an action: values or a trap; nullopt with `err` set on a harness problem.
  std::optional<Outcome> act(const Json& action, std::string& err) {
    Instance* inst = target(action);
    if (!inst) {
      err = "no module for action";
      return std::nullopt;
    }
    std::string field = action.str("field");
    if (action.str("type") == "get") {
      auto g = inst->get_global(field);
      if (!g) {
        err = "no global " + field;
        return std::nullopt;
      }
      Outcome o;
      o.values.push_back(*g);
      return o;
    }
    FuncInst* f = inst->get_func(field);
    if (!f) {
      err = "no function " + field;
      return std::nullopt;
    }
    std::vector<Value> args;
    if (const Json* a = action.get("args"))
      for (const auto& j : a->items) {
        auto v = parse_value(j);
        if (!v) {
          err = "unsupported argument type " + j.str("type");
          return std::nullopt;
        }
        args.push_back(*v);
      }
    auto r = store.call(f, args);
    if (!r) {
      err = r.error().to_string();
      return std::nullopt;
    }
    return std::move(*r);
  }

  void run_command(const Json& cmd) {
    std::string type = cmd.str("type");
    if (type == "module") {
      auto m = load(cmd.str("filename"), true);
      if (!m) return fail(cmd, "module failed to load: " + m.error().to_string());
      auto inst = linker.instantiate(store, *m, cmd.str("name"));
      if (!inst) return fail(cmd, "module failed to instantiate: " + inst.error().to_string());
      current = *inst;
      if (!cmd.str("name").empty()) named[cmd.str("name")] = current;
      ++passed;
    } else if (type == "register") {
      std::string n = cmd.str("name");
      Instance* inst = n.empty() ? current : (named.count(n) ? named[n] : nullptr);
      if (!inst) return fail(cmd, "no module to register");
      linker.define_instance(cmd.str("as"), *inst);
      ++passed;
    } else if (type == "action") {
      std::string err;
      auto o = act(*cmd.get("action"), err);
      if (!o) return fail(cmd, err);
      if (o->trap) return fail(cmd, "unexpected trap " + o->trap->public_string());
      ++passed;
    } else if (type == "assert_return") {
      std::string err;
      auto o = act(*cmd.get("action"), err);
      if (!o) return fail(cmd, err);
      if (o->trap) return fail(cmd, cmd.get("action")->str("field") + ": unexpected trap " + o->trap->public_string());
      const Json* exp = cmd.get("expected");
      size_t n = exp ? exp->items.size() : 0;
      bool ok = n == o->values.size();
      for (size_t i = 0; ok && i < n; ++i) ok = matches(exp->items[i], o->values[i]);
      if (!ok) {
        std::string e, g;
        for (size_t i = 0; i < n; ++i) e += show_expected(exp->items[i]) + " ";
        for (const auto& v : o->values) g += show(v) + " ";
        return fail(cmd, cmd.get("action")->str("field") + ": expected " + e + "got " + g);
      }
      ++passed;
    } else if (type == "assert_trap" || type == "assert_exhaustion") {
      std::string err;
      auto o = act(*cmd.get("action"), err);
      if (!o) return fail(cmd, err);
      if (!o->trap) return fail(cmd, cmd.get("action")->str("field") + ": expected trap \"" + cmd.str("text") + "\", got values");
      // A rewritten float-to-int conversion traps with `unreachable` (the library only says
      // whether it would trap, not why).
      bool rewritten_conversion = !opts.softfloat_library.empty() && o->trap->kind == TrapKind::kUnreachable &&
                                  (cmd.str("text") == "integer overflow" || cmd.str("text") == "invalid conversion to integer");
      if (!rewritten_conversion && !trap_matches(cmd.str("text"), o->trap->kind))
        return fail(cmd, "expected trap \"" + cmd.str("text") + "\", got " + o->trap->public_string());
      ++passed;
    } else if (type == "assert_invalid" || type == "assert_malformed") {
      if (cmd.str("module_type") == "text") {
        ++skipped;
        return;
      }
      auto m = load(cmd.str("filename"));
      if (m) return fail(cmd, "module loaded but expected \"" + cmd.str("text") + "\"");
      ++passed;
    } else if (type == "assert_unlinkable" || type == "assert_uninstantiable") {
      auto m = load(cmd.str("filename"), true);
      if (!m) return fail(cmd, "module failed to load: " + m.error().to_string());
      auto inst = linker.instantiate(store, *m);
      if (inst) return fail(cmd, "module instantiated but expected \"" + cmd.str("text") + "\"");
      std::string want = type == "assert_unlinkable" ? "unlinkable" : "uninstantiable";
      if (inst.error().code != want) return fail(cmd, "expected " + want + ", got " + inst.error().to_string());
      ++passed;
    } else {
      ++skipped;
    }
  }
};


}  // namespace

int spectest_file(const std::string& path, int* passed, int* failed, int* skipped, const SpecOptions& opts) {
  Runner r(opts);
  r.file = fs::path(path).filename().string();
  fs::path json_path;
  fs::path tmp;
  if (path.size() > 5 && path.substr(path.size() - 5) == ".wast") {
    char tmpl[] = "/tmp/genvm-spectest-XXXXXX";
    if (!mkdtemp(tmpl)) {
      std::cerr << "error: cannot create a temp dir\n";
      return 2;
    }
    tmp = tmpl;
    json_path = tmp / (fs::path(path).stem().string() + ".json");
    std::string cmd = "wast2json --enable-tail-call '" + path + "' -o '" + json_path.string() + "' >/dev/null 2>" + (tmp / "err").string();
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream e(tmp / "err");
      std::string line;
      std::getline(e, line);
      std::cout << r.file << ": wast2json failed: " << line << "\n";
      fs::remove_all(tmp);
      ++*failed;
      return 1;
    }
  } else {
    json_path = path;
  }
  r.dir = json_path.parent_path();
  std::ifstream in(json_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  auto j = JsonParser(text).parse();
  if (!j || !j->get("commands")) {
    std::cout << r.file << ": cannot parse " << json_path << "\n";
    if (!tmp.empty()) fs::remove_all(tmp);
    ++*failed;
    return 1;
  }
  define_spectest_imports(r.store, r.linker);
  for (const auto& cmd : j->get("commands")->items) r.run_command(cmd);
  if (!tmp.empty()) fs::remove_all(tmp);
  *passed += r.passed;
  *failed += r.failed;
  *skipped += r.skipped;
  return r.failed ? 1 : 0;
}

}  // namespace genvm_wasm_tool
