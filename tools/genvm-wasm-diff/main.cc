// genvm-wasm-diff: runs a module made by `wasm-opt --translate-to-fuzz` in our engine the way
// tests/wasm_diff/node_runner.mjs runs it in V8, and prints the same lines, so that the two
// outputs can be compared byte for byte:
//
//   call <export>          before each exported function is called (zero arguments)
//   log <value>            each fuzzing-support.log-{i32,i64,f32,f64} call
//   result [<value>...]    the call returned
//   trap                   the call trapped (the kind is not compared: V8 does not name it)
//   instantiate trap       instantiation trapped; nothing follows
//
// Values: i32:<signed> i64:<signed> f32:<8 hex bits> f64:<16 hex bits>, NaNs as f32:nan /
// f64:nan (NaN bits may legitimately differ between engines), funcref:null|nonnull,
// externref:null|nonnull.
//
// --engine interp|jit picks our engine (default interp; a module the JIT cannot compile runs on
// the interpreter, and the JIT's note goes to stderr). --detail adds lines node cannot print,
// for comparing our two engines with each other (tests/wasm_diff/run.sh strips them before the
// comparison with node):
//
//   detail trap <kind> <offset>...   after "trap": the kind and every frame's wasm offset
//   detail fuel <left>               after each call's result or trap: the fuel left
//   detail out_of_fuel               before exit 4
//
// The module runs with fuel metering (deterministic mode off). Exit codes: 0 ran to the end;
// 1 our engine rejected the module (a "load error" line is printed: V8 accepted it, so that is
// a difference too); 2 bad usage or unreadable file; 4 out of fuel (the comparison is skipped).
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "wasm/wasm.h"

namespace {

using genvm::wasm::FuncType;
using genvm::wasm::Trap;
using genvm::wasm::TrapKind;
using genvm::wasm::Value;
using genvm::wasm::ValType;

constexpr int kExitLoadError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitOutOfFuel = 4;
constexpr uint64_t kDefaultFuel = 2'000'000'000;

void usage(FILE* to) {
  std::fprintf(to,
               "usage: genvm-wasm-diff [--fuel N] [--engine interp|jit] [--detail] FILE.wasm\n"
               "  Calls every exported function of FILE.wasm with zero arguments, printing\n"
               "  call/log/result/trap lines (the format of tests/wasm_diff/node_runner.mjs).\n"
               "  --fuel N       fuel for the whole module (default %" PRIu64 "); exit 4 if it runs out\n"
               "  --engine E     interp (default) or jit; the JIT's note about the module on stderr\n"
               "  --detail       also 'detail trap KIND OFFSETS' and 'detail fuel LEFT' lines\n",
               kDefaultFuel);
}

// One line, written at once and flushed, so a crash cannot lose lines that were printed.
void emit(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

std::string format_value(const Value& v) {
  char buf[64];
  switch (v.type) {
    case ValType::I32:
      std::snprintf(buf, sizeof buf, "i32:%" PRId32, v.as_i32());
      break;
    case ValType::I64:
      std::snprintf(buf, sizeof buf, "i64:%" PRId64, v.as_i64());
      break;
    case ValType::F32:
      if (std::isnan(v.as_f32())) return "f32:nan";
      std::snprintf(buf, sizeof buf, "f32:%08" PRIx32, static_cast<uint32_t>(v.bits));
      break;
    case ValType::F64:
      if (std::isnan(v.as_f64())) return "f64:nan";
      std::snprintf(buf, sizeof buf, "f64:%016" PRIx64, v.bits);
      break;
    case ValType::FuncRef:
      return v.bits == 0 ? "funcref:null" : "funcref:nonnull";
    case ValType::ExternRef:
      return v.bits == 0 ? "externref:null" : "externref:nonnull";
    default:
      std::snprintf(buf, sizeof buf, "%s:?", genvm::wasm::val_type_name(v.type));
      break;
  }
  return buf;
}

bool parse_u64(const char* s, uint64_t* out) {
  if (*s < '0' || *s > '9') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

struct RunConfig {
  uint64_t fuel = kDefaultFuel;
  genvm::wasm::Engine engine = genvm::wasm::Engine::kInterp;
  bool detail = false;
};

int run(const std::string& path, const RunConfig& rc) {
  const uint64_t fuel = rc.fuel;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "genvm-wasm-diff: cannot read %s\n", path.c_str());
    return kExitUsage;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  genvm::wasm::LoadOptions load_opts;
  load_opts.deterministic = false;
  load_opts.metering = true;
  load_opts.engine = rc.engine;
  auto module = genvm::wasm::Module::load(bytes, load_opts);
  if (!module) {
    emit("load error " + module.error().to_string());
    return kExitLoadError;
  }
  if (rc.engine == genvm::wasm::Engine::kJit) std::fprintf(stderr, "%s\n", genvm::wasm::engine_note(**module).c_str());

  genvm::wasm::StoreConfig cfg;
  cfg.fuel_enabled = true;
  cfg.fuel = fuel;
  genvm::wasm::Store store(cfg);
  store.set_fuel(fuel);

  genvm::wasm::Linker linker;
  const std::pair<const char*, ValType> kLogs[] = {
      {"log-i32", ValType::I32}, {"log-i64", ValType::I64},
      {"log-f32", ValType::F32}, {"log-f64", ValType::F64}};
  for (const auto& [name, type] : kLogs) {
    linker.define_host(store, "fuzzing-support", name, FuncType{{type}, {}},
                       [](genvm::wasm::Caller&, std::span<const Value> args,
                          std::span<Value>) -> std::optional<Trap> {
                         emit("log " + format_value(args[0]));
                         return std::nullopt;
                       });
  }

  const std::string out_of_fuel = genvm::wasm::trap_kind_name(TrapKind::kOutOfFuel);
  auto instance = linker.instantiate(store, *module);
  if (!instance) {
    const genvm::Error& e = instance.error();
    if (genvm::wasm::instantiate_error(e) == genvm::wasm::InstantiateError::kUninstantiable) {
      if (e.message.find(out_of_fuel) != std::string::npos) {
        if (rc.detail) emit("detail out_of_fuel");
        std::fprintf(stderr, "genvm-wasm-diff: skipped: out of fuel while instantiating\n");
        return kExitOutOfFuel;
      }
      emit("instantiate trap");
      return 0;
    }
    emit("load error " + e.to_string());
    return kExitLoadError;
  }

  for (const auto& exp : (*module)->exports()) {
    if (exp.kind != 'f') continue;
    genvm::wasm::FuncInst* f = (*instance)->get_func(exp.name);
    emit("call " + exp.name);
    std::vector<Value> args;
    for (ValType t : genvm::wasm::func_type(f).params) args.push_back(Value::zero(t));
    auto outcome = store.call(f, args);
    if (!outcome) {
      std::fprintf(stderr, "genvm-wasm-diff: calling %s: %s\n", exp.name.c_str(),
                   outcome.error().to_string().c_str());
      return kExitLoadError;
    }
    if (!outcome->ok()) {
      if (outcome->trap->kind == TrapKind::kOutOfFuel) {
        if (rc.detail) emit("detail out_of_fuel");
        std::fprintf(stderr, "genvm-wasm-diff: skipped: out of fuel in %s\n", exp.name.c_str());
        return kExitOutOfFuel;
      }
      emit("trap");
      if (rc.detail) {
        std::string line = std::string("detail trap ") + genvm::wasm::trap_kind_name(outcome->trap->kind);
        for (const auto& frame : outcome->trap->frames) line += " " + std::to_string(frame.code_offset);
        emit(line);
        emit("detail fuel " + std::to_string(store.fuel()));
      }
      continue;
    }
    std::string line = "result";
    for (const Value& v : outcome->values) line += " " + format_value(v);
    emit(line);
    if (rc.detail) emit("detail fuel " + std::to_string(store.fuel()));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  RunConfig rc;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    }
    if (a == "--fuel") {
      if (i + 1 >= argc || !parse_u64(argv[i + 1], &rc.fuel)) {
        std::fprintf(stderr, "genvm-wasm-diff: --fuel needs a non-negative integer\n");
        return kExitUsage;
      }
      ++i;
    } else if (a == "--engine") {
      std::string e = i + 1 < argc ? argv[i + 1] : "";
      if (e == "interp") rc.engine = genvm::wasm::Engine::kInterp;
      else if (e == "jit") rc.engine = genvm::wasm::Engine::kJit;
      else {
        std::fprintf(stderr, "genvm-wasm-diff: --engine needs interp or jit\n");
        return kExitUsage;
      }
      ++i;
    } else if (a == "--detail") {
      rc.detail = true;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "genvm-wasm-diff: unknown option %s (see --help)\n", a.c_str());
      return kExitUsage;
    } else if (path.empty()) {
      path = a;
    } else {
      std::fprintf(stderr, "genvm-wasm-diff: expected one FILE.wasm (see --help)\n");
      return kExitUsage;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "genvm-wasm-diff: missing FILE.wasm (see --help)\n");
    return kExitUsage;
  }
  return run(path, rc);
}
