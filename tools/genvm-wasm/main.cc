// genvm-wasm: a command-line front for the engine. See --help.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "tools/genvm-wasm/tool.h"

using namespace genvm::wasm;
using namespace genvm_wasm_tool;

bool genvm_wasm_tool::read_file(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

bool genvm_wasm_tool::parse_engine(const std::string& s, Engine& out) {
  if (s == "interp") out = Engine::kInterp;
  else if (s == "jit") out = Engine::kJit;
  else return false;
  return true;
}

FuseOption genvm_wasm_tool::parse_fuse_option(int argc, char** argv, int& i, CompileOptions& out,
                                              std::string& error) {
  const std::string a = argv[i];
  if (a == "--no-fuse") {
    out.fuse = false;
    return FuseOption::kTaken;
  }
  if (a != "--fuse-off") return FuseOption::kNotFuse;
  if (i + 1 >= argc) {
    error = "--fuse-off needs NAMES (comma-separated fusion families)";
    return FuseOption::kBad;
  }
  auto mask = parse_fuse_families(argv[++i]);
  if (!mask) {
    std::string known;
    for (uint32_t f = 0; f < uint32_t(FuseFamily::kCount); ++f)
      known += std::string(f ? "," : "") + fuse_family_name(FuseFamily(f));
    error = "--fuse-off: " + mask.error().message + " (families: " + known + ")";
    return FuseOption::kBad;
  }
  out.fuse_off |= *mask;
  return FuseOption::kTaken;
}

namespace {

const char kUsage[] =
    "usage: genvm-wasm <command> ...\n"
    "  validate FILE.wasm                      print `ok` or the first error (exit 1)\n"
    "  invoke FILE.wasm FUNC [ARGS...] [--fuel N] [--det]\n"
    "                                          call an export; prints results one per line;\n"
    "                                          on a trap prints `trap: wasm_trap <kind>`, exit 3\n"
    "                                          (and the backtrace on stderr)\n"
    "  run PROG.wasm [ARGS...] [--dir HOST[:GUEST]]... [--env K=V]... [--fuel N] [--det]\n"
    "                                          run a WASI preview1 command (_start); --det:\n"
    "                                          deterministic mode (float instructions trap)\n"
    "  spectest FILE.wast|FILE.json... [--allow-failures N] [--reencode] [--softfloat LIB.wasm]\n"
    "                                          run spec testsuite files; last line is\n"
    "                                          `N passed, N failed, N skipped`; --reencode:\n"
    "                                          each module read and written back first;\n"
    "                                          --softfloat: each module rewritten onto LIB,\n"
    "                                          run with --det\n"
    "  softfloat IN.wasm LIB.wasm OUT.wasm     rewrite IN's float instructions into calls to\n"
    "                                          the softfloat library LIB (for --det runs);\n"
    "                                          prints what it replaced\n"
    "  dump FILE.wasm [DEFINED_FUNC_INDEX] [--metering] [--det] [--jit]\n"
    "                                          listing of the compiled code (one function,\n"
    "                                          or all and the trap-offset table); a module\n"
    "                                          that does not load prints `error: ...`, exit 1;\n"
    "                                          --jit: the JIT's x86-64 code instead\n"
    "  compile FILE.wasm [--engine interp|jit] [--det] [--metering] [--runs N]\n"
    "                                          load FILE stage by stage (default --engine jit)\n"
    "                                          and print each stage's CPU ms, min of N runs\n"
    "                                          (read, validate, bodies: body validation and\n"
    "                                          slot code, jit), and MB/s: code section bytes\n"
    "                                          per CPU second of the jit stage, of the load;\n"
    "                                          the JIT's note and a digest of its code\n"
    "invoke, run and spectest take --engine interp|jit (default interp): jit runs what the\n"
    "baseline JIT compiles (x86-64) and the rest on the interpreter; a JIT note goes to stderr\n"
    "invoke, run, spectest, dump and compile take --no-fuse (slot code without any fused form)\n"
    "and --fuse-off NAMES (comma-separated fusion families left out; an unknown name is an\n"
    "error that lists the families); both are for measuring what each fusion is worth\n";

int die(const std::string& msg, int code = 2) {
  std::cerr << "genvm-wasm: " << msg << "\n";
  return code;
}

bool parse_u64(const std::string& s, uint64_t& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(s.c_str(), &end, 0);
  return errno == 0 && *end == 0;
}

std::optional<Value> parse_arg(ValType t, const std::string& s) {
  char* end = nullptr;
  errno = 0;
  switch (t) {
    case ValType::I32:
    case ValType::I64: {
      bool neg = !s.empty() && s[0] == '-';
      uint64_t v = neg ? uint64_t(std::strtoll(s.c_str(), &end, 0)) : std::strtoull(s.c_str(), &end, 0);
      if (s.empty() || *end || errno) return std::nullopt;
      return t == ValType::I32 ? Value::i32(int32_t(uint32_t(v))) : Value::i64(int64_t(v));
    }
    case ValType::F32: {
      float f = std::strtof(s.c_str(), &end);
      if (s.empty() || *end) return std::nullopt;
      return Value::f32(f);
    }
    case ValType::F64: {
      double f = std::strtod(s.c_str(), &end);
      if (s.empty() || *end) return std::nullopt;
      return Value::f64(f);
    }
    default:
      if (s == "null") return Value::ref(t, 0);
      return std::nullopt;
  }
}

void print_value(const Value& v) {
  switch (v.type) {
    case ValType::I32: std::printf("%" PRId32 "\n", v.as_i32()); break;
    case ValType::I64: std::printf("%" PRId64 "\n", v.as_i64()); break;
    case ValType::F32: std::printf("f32:0x%08" PRIx32 " %.9g\n", uint32_t(v.bits), double(v.as_f32())); break;
    case ValType::F64: std::printf("f64:0x%016" PRIx64 " %.17g\n", v.bits, v.as_f64()); break;
    default: std::printf("%s:%s\n", val_type_name(v.type), v.bits ? "non-null" : "null"); break;
  }
}

int cmd_validate(int argc, char** argv) {
  if (argc != 1) return die("validate takes exactly one FILE.wasm");
  std::vector<uint8_t> bytes;
  if (!read_file(argv[0], bytes)) return die(std::string("cannot read ") + argv[0]);
  auto m = Module::load(bytes);
  if (!m) {
    std::printf("%s\n", m.error().to_string().c_str());
    return 1;
  }
  std::printf("ok\n");
  return 0;
}

int cmd_invoke(int argc, char** argv) {
  std::vector<std::string> pos;
  LoadOptions lo;
  StoreConfig sc;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    std::string fuse_error;
    FuseOption fuse = parse_fuse_option(argc, argv, i, lo.compile, fuse_error);
    if (fuse == FuseOption::kBad) return die(fuse_error);
    if (fuse == FuseOption::kTaken) {
      continue;
    } else if (a == "--det") {
      lo.deterministic = true;
    } else if (a == "--engine") {
      if (i + 1 >= argc || !parse_engine(argv[i + 1], lo.engine)) return die("--engine needs interp or jit");
      ++i;
    } else if (a == "--fuel") {
      if (i + 1 >= argc || !parse_u64(argv[i + 1], sc.fuel)) return die("--fuel needs a number");
      ++i;
      lo.metering = true;
      sc.fuel_enabled = true;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() < 2) return die("invoke needs FILE.wasm FUNC [ARGS...]");
  std::vector<uint8_t> bytes;
  if (!read_file(pos[0], bytes)) return die("cannot read " + pos[0]);
  auto m = Module::load(bytes, lo);
  if (!m) return die(m.error().to_string(), 1);
  if (lo.engine == Engine::kJit) std::fprintf(stderr, "%s\n", engine_note(**m).c_str());
  Store store(sc);
  Linker linker;
  // Spectest-like stubs: every function import returns zeros, so kernels with stray imports run.
  for (const auto& im : (*m)->imports()) {
    if (im.kind != 'f') return die("unsupported import " + im.module + "." + im.name, 1);
    const FuncType& ft = im.func_type;
    linker.define_host(store, im.module, im.name, ft,
                       [](Caller&, std::span<const Value>, std::span<Value>) -> std::optional<Trap> { return std::nullopt; });
  }
  auto inst = linker.instantiate(store, *m, "main");
  if (!inst) {
    if (inst.error().message.rfind("wasm_trap", 0) == 0) {
      std::printf("trap: %s\n", inst.error().message.c_str());
      return 3;
    }
    return die(inst.error().to_string(), 1);
  }
  FuncInst* f = (*inst)->get_func(pos[1]);
  if (!f) return die("no exported function " + pos[1], 1);
  const FuncType& ft = func_type(f);
  if (pos.size() - 2 != ft.params.size())
    return die("function " + pos[1] + " takes " + std::to_string(ft.params.size()) + " arguments " + ft.to_string());
  std::vector<Value> args;
  for (size_t i = 0; i < ft.params.size(); ++i) {
    auto v = parse_arg(ft.params[i], pos[i + 2]);
    if (!v) return die("bad argument " + pos[i + 2] + " for " + val_type_name(ft.params[i]));
    args.push_back(*v);
  }
  store.set_fuel(sc.fuel);
  auto out = store.call(f, args);
  if (!out) return die(out.error().to_string(), 1);
  if (out->trap) {
    std::printf("trap: %s\n", out->trap->public_string().c_str());
    // The backtrace goes to stderr: stdout stays the one line scripts compare.
    std::fprintf(stderr, "%s", format_backtrace(out->trap->frames).c_str());
    return 3;
  }
  for (const auto& v : out->values) print_value(v);
  if (sc.fuel_enabled) std::fprintf(stderr, "fuel left: %" PRIu64 "\n", store.fuel());
  return 0;
}

int cmd_spectest(int argc, char** argv) {
  std::vector<std::string> files;
  long allow = 0;
  SpecOptions so;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    std::string fuse_error;
    FuseOption fuse = parse_fuse_option(argc, argv, i, so.compile, fuse_error);
    if (fuse == FuseOption::kBad) return die(fuse_error);
    if (fuse == FuseOption::kTaken) {
      continue;
    } else if (a == "--reencode") {
      so.reencode = true;
    } else if (a == "--softfloat") {
      if (i + 1 >= argc) return die("--softfloat needs LIB.wasm");
      if (!read_file(argv[i + 1], so.softfloat_library) || so.softfloat_library.empty())
        return die(std::string("cannot read ") + argv[i + 1]);
      ++i;
    } else if (a == "--engine") {
      if (i + 1 >= argc || !parse_engine(argv[i + 1], so.engine)) return die("--engine needs interp or jit");
      ++i;
    } else if (a == "--allow-failures") {
      uint64_t n;
      if (i + 1 >= argc || !parse_u64(argv[i + 1], n)) return die("--allow-failures needs a number");
      allow = long(n);
      ++i;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) return die("spectest needs at least one FILE.wast or FILE.json");
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& f : files) spectest_file(f, &passed, &failed, &skipped, so);
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  std::fflush(stdout);
  return failed > allow ? 1 : 0;
}

int cmd_run(int argc, char** argv) {
  RunOptions opts;
  std::string prog;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    std::string fuse_error;
    FuseOption fuse = parse_fuse_option(argc, argv, i, opts.compile, fuse_error);
    if (fuse == FuseOption::kBad) return die(fuse_error);
    if (fuse == FuseOption::kTaken) {
      continue;
    } else if (prog.empty() && a == "--dir") {
      if (i + 1 >= argc) return die("--dir needs HOSTDIR[:GUESTDIR]");
      std::string d = argv[++i];
      auto c = d.find(':');
      if (c == std::string::npos) opts.dirs.emplace_back(d, d);
      else opts.dirs.emplace_back(d.substr(0, c), d.substr(c + 1));
    } else if (a == "--engine") {
      if (i + 1 >= argc || !parse_engine(argv[i + 1], opts.engine)) return die("--engine needs interp or jit");
      ++i;
    } else if (prog.empty() && a == "--env") {
      if (i + 1 >= argc) return die("--env needs K=V");
      opts.env.push_back(argv[++i]);
    } else if (prog.empty() && a == "--det") {
      opts.deterministic = true;
    } else if (prog.empty() && a == "--fuel") {
      if (i + 1 >= argc || !parse_u64(argv[i + 1], opts.fuel_amount)) return die("--fuel needs a number");
      ++i;
      opts.fuel = true;
    } else if (prog.empty()) {
      prog = a;
      opts.args.push_back(a);
    } else if (a == "--det") {
      opts.deterministic = true;  // like the options below: ours, not the guest's
    } else if (a == "--dir" || a == "--env" || a == "--fuel") {
      // Options may also follow the program; they are ours, not the guest's.
      if (i + 1 >= argc) return die(a + " needs a value");
      std::string v = argv[++i];
      if (a == "--dir") {
        auto c = v.find(':');
        if (c == std::string::npos) opts.dirs.emplace_back(v, v);
        else opts.dirs.emplace_back(v.substr(0, c), v.substr(c + 1));
      } else if (a == "--env") {
        opts.env.push_back(v);
      } else {
        if (!parse_u64(v, opts.fuel_amount)) return die("--fuel needs a number");
        opts.fuel = true;
      }
    } else {
      opts.args.push_back(a);
    }
  }
  if (prog.empty()) return die("run needs PROG.wasm");
  return run_wasi(prog, opts);
}

// genvm-wasm dump FILE [INDEX] [--metering] [--det]
int cmd_dump(int argc, char** argv) {
  std::string file;
  std::optional<uint32_t> index;
  LoadOptions opts;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    uint64_t n = 0;
    std::string fuse_error;
    FuseOption fuse = parse_fuse_option(argc, argv, i, opts.compile, fuse_error);
    if (fuse == FuseOption::kBad) return die(fuse_error);
    if (fuse == FuseOption::kTaken) continue;
    if (a == "--metering") opts.metering = true;
    else if (a == "--det") opts.deterministic = true;
    else if (a == "--jit") opts.engine = Engine::kJit;
    else if (file.empty()) file = a;
    else if (!index && parse_u64(a, n) && n <= UINT32_MAX) index = uint32_t(n);
    else return die("dump: unexpected argument " + a + " (see --help)");
  }
  if (file.empty()) return die("dump: missing FILE.wasm (see --help)");
  std::vector<uint8_t> bytes;
  if (!read_file(file, bytes)) return die("cannot read " + file);
  auto m = Module::load(bytes, opts);
  if (!m) {
    std::printf("error: %s\n", m.error().to_string().c_str());
    return 1;
  }
  if (opts.engine == Engine::kJit) std::fputs(dump_jit(**m).c_str(), stdout);
  else std::fputs((index ? dump_function(**m, *index) : dump_module(**m)).c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string cmd = argv[1];
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      if (cmd == "run" && i > 2) break;  // after the program: the guest's own argument
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  if (cmd == "validate") return cmd_validate(argc - 2, argv + 2);
  if (cmd == "invoke") return cmd_invoke(argc - 2, argv + 2);
  if (cmd == "spectest") return cmd_spectest(argc - 2, argv + 2);
  if (cmd == "run") return cmd_run(argc - 2, argv + 2);
  if (cmd == "fuzzexec" && argc == 3) return fuzz_exec(argv[2]);  // debug: see fuzzexec.cc
  if (cmd == "dump") return cmd_dump(argc - 2, argv + 2);
  if (cmd == "compile") return compile_main(argc - 2, argv + 2);
  if (cmd == "softfloat") return softfloat_main(argc - 2, argv + 2);
  return die("unknown command " + cmd + " (see --help)");
}
