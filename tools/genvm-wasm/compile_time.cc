// genvm-wasm compile: loads a module stage by stage, as Module::load does, and prints the CPU
// time of each stage (bench/jit_compile.sh reads its output). It drives the engine's internal
// stage entry points (wasm/module.h, wasm/jit/jit.h) read-only, so each stage can be timed alone.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "tools/genvm-wasm/tool.h"
#include "wasm/jit/jit.h"
#include "wasm/leb128.h"
#include "wasm/module.h"

using namespace genvm::wasm;
using genvm::Status;

namespace genvm_wasm_tool {
namespace {

// CPU time of the whole process (every thread), in seconds.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Payload size of the code section (id 10), 0 when there is none; the module is known to read.
size_t code_section_bytes(const std::vector<uint8_t>& b) {
  size_t pos = 8;  // after the magic and the version
  while (pos < b.size()) {
    const uint8_t id = b[pos++];
    Leb size = read_leb(b.data(), pos, b.size(), 32, false);
    if (size.error) return 0;
    if (id == 10) return size.value;
    pos = size.next + size.value;
  }
  return 0;
}

struct StageTimes {
  double read = 0, validate = 0, bodies = 0, jit = 0, total = 0;
};

// Exit 2 for a usage error, 1 for a module that does not load (as the other commands).
int fail(const std::string& msg, int code = 1) {
  std::fprintf(stderr, "genvm-wasm: compile: %s\n", msg.c_str());
  return code;
}

double mb_per_s(size_t bytes, double seconds) { return seconds > 0 ? double(bytes) / 1e6 / seconds : 0; }

}  // namespace

int compile_main(int argc, char** argv) {
  std::string file;
  LoadOptions lo;
  lo.engine = Engine::kJit;
  uint64_t runs = 1;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    std::string fuse_error;
    FuseOption fuse = parse_fuse_option(argc, argv, i, lo.compile, fuse_error);
    if (fuse == FuseOption::kBad) return fail(fuse_error, 2);
    if (fuse == FuseOption::kTaken) {
      continue;
    } else if (a == "--det") {
      lo.deterministic = true;
    } else if (a == "--metering") {
      lo.metering = true;
    } else if (a == "--engine") {
      if (i + 1 >= argc || !parse_engine(argv[i + 1], lo.engine)) return fail("--engine needs interp or jit", 2);
      ++i;
    } else if (a == "--runs") {
      char* end = nullptr;
      runs = i + 1 < argc ? std::strtoull(argv[i + 1], &end, 10) : 0;
      if (runs == 0 || runs > 1000 || !end || *end) return fail("--runs needs a number from 1 to 1000", 2);
      ++i;
    } else if (file.empty() && !a.empty() && a[0] != '-') {
      file = a;
    } else {
      return fail("unexpected argument " + a + " (see --help)", 2);
    }
  }
  if (file.empty()) return fail("missing FILE.wasm (see --help)", 2);
  std::vector<uint8_t> bytes;
  if (!read_file(file, bytes)) return fail("cannot read " + file, 2);

  // Each stage's minimum over the runs, and the minimum of the runs' totals (a loaded machine
  // only ever adds time).
  StageTimes best;
  std::string note;
  size_t functions = 0;
  uint64_t digest = 0;
  for (uint64_t r = 0; r < runs; ++r) {
    StageTimes t;
    double t0 = cpu_seconds();
    auto m = read_module(bytes);
    double t1 = cpu_seconds();
    t.read = t1 - t0;
    if (!m) return fail(m.error().to_string());
    (*m)->options = lo;
    Status v = validate_module(**m);
    double t2 = cpu_seconds();
    t.validate = t2 - t1;
    if (!v) return fail(v.error().to_string());
    Status c = compile_functions(**m);
    double t3 = cpu_seconds();
    t.bodies = t3 - t2;
    if (!c) return fail(c.error().to_string());
    if (lo.engine == Engine::kJit) {
      auto code = jit::compile_module(**m, &note);
      t.jit = cpu_seconds() - t3;
      if (!code) return fail(note);
      digest = jit::code_digest(*code);
    }
    t.total = cpu_seconds() - t0;
    functions = (*m)->bodies.size();
    if (r == 0 || t.read < best.read) best.read = t.read;
    if (r == 0 || t.validate < best.validate) best.validate = t.validate;
    if (r == 0 || t.bodies < best.bodies) best.bodies = t.bodies;
    if (r == 0 || t.jit < best.jit) best.jit = t.jit;
    if (r == 0 || t.total < best.total) best.total = t.total;
  }
  const size_t code_bytes = code_section_bytes(bytes);
  std::printf("file %s\n", file.c_str());
  std::printf("wasm bytes %zu, code section bytes %zu, functions %zu, runs %" PRIu64 "\n", bytes.size(), code_bytes,
              functions, runs);
  std::printf("cpu ms (each the min over the runs): read %.1f, validate %.1f, bodies %.1f, jit %.1f, total %.1f\n", best.read * 1e3,
              best.validate * 1e3, best.bodies * 1e3, best.jit * 1e3, best.total * 1e3);
  if (lo.engine == Engine::kJit) std::printf("jit MB/s %.1f\n", mb_per_s(code_bytes, best.jit));
  std::printf("load MB/s %.1f\n", mb_per_s(code_bytes, best.total));
  if (!note.empty()) std::printf("%s, code digest %016" PRIx64 "\n", note.c_str(), digest);
  return 0;
}

}  // namespace genvm_wasm_tool
