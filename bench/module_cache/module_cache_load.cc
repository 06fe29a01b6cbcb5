// bench_module_cache FILE.wasm [--det] [--metering] [--runs N]: for each engine, the CPU time of
// a full Module::load and of Module::load_with_compiled from the blob that load wrote (the
// `genvm run --module-cache` hit path, minus the file mapping), each the minimum over N runs, and
// the blob's size. docs/BENCHMARKS.md ("Python start-up") quotes it for python.wasm.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "wasm/wasm.h"

using namespace genvm::wasm;

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

int fail(const std::string& msg) {
  std::fprintf(stderr, "bench_module_cache: %s\n", msg.c_str());
  return 1;
}

const char* origin_name(JitCodeOrigin o) {
  switch (o) {
    case JitCodeOrigin::kNone: return "none";
    case JitCodeOrigin::kCompiled: return "compiled";
    case JitCodeOrigin::kFromCache: return "from the blob";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  std::string file;
  LoadOptions base;
  unsigned long runs = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("usage: bench_module_cache FILE.wasm [--det] [--metering] [--runs N]\n"
                  "  CPU ms of a full load and of a load from the module's compiled blob, per engine\n"
                  "  (min over N runs, default 3), and the blob's size\n");
      return 0;
    }
    if (a == "--det") {
      base.deterministic = true;
    } else if (a == "--metering") {
      base.metering = true;
    } else if (a == "--runs" && i + 1 < argc) {
      char* end = nullptr;
      runs = std::strtoul(argv[++i], &end, 10);
      if (runs == 0 || runs > 1000 || !end || *end) return fail("--runs needs a number from 1 to 1000");
    } else if (file.empty() && !a.empty() && a[0] != '-') {
      file = a;
    } else {
      return fail("unexpected argument " + a + " (see --help)");
    }
  }
  if (file.empty()) return fail("missing FILE.wasm (see --help)");
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail("cannot read " + file);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const SealKey key{1};
  std::printf("%s: %zu bytes of wasm, runs %lu\n", file.c_str(), bytes.size(), runs);
  for (Engine engine : {Engine::kInterp, Engine::kJit}) {
    LoadOptions lo = base;
    lo.engine = engine;
    double best_load = 0, best_hit = 0;
    size_t blob_bytes = 0;
    JitCodeOrigin loaded_origin = JitCodeOrigin::kNone, hit_origin = JitCodeOrigin::kNone;
    for (unsigned long r = 0; r < runs; ++r) {
      double t0 = cpu_seconds();
      auto m = Module::load(bytes, lo);
      double t1 = cpu_seconds();
      if (!m) return fail(m.error().to_string());
      auto blob = (*m)->serialize_compiled(key);
      if (!blob) return fail(blob.error().to_string());
      double t2 = cpu_seconds();
      auto hit = Module::load_with_compiled(bytes, lo, *blob, key);
      double t3 = cpu_seconds();
      if (!hit) return fail(hit.error().to_string());
      if (r == 0 || t1 - t0 < best_load) best_load = t1 - t0;
      if (r == 0 || t3 - t2 < best_hit) best_hit = t3 - t2;
      blob_bytes = blob->size();
      loaded_origin = jit_code_origin(**m);
      hit_origin = jit_code_origin(**hit);
    }
    std::printf("%-6s full load %.1f ms (JIT code: %s), load from the blob %.1f ms (JIT code: %s), blob %zu bytes\n",
                engine == Engine::kJit ? "jit" : "interp", best_load * 1e3, origin_name(loaded_origin), best_hit * 1e3,
                origin_name(hit_origin), blob_bytes);
  }
  return 0;
}
