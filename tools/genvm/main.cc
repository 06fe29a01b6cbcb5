// genvm: run one contract execution to completion and deliver its result to the host.
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/debug_mode.h"
#include "executor/run.h"
#include "executor/wasm_check.h"

namespace {

constexpr const char* kUsage =
    "usage: genvm run --execution-data (-|PATH|fd://N) --host URI [--host URI]...\n"
    "                 [--debug-mode LEVEL] [--permissions [wscn]] [--genvm-id ID] [--log-fd N] [--sync]\n"
    "                 [--nondet-fuel N] [--module-llm URI] [--module-web URI] [--module-cache DIR]\n"
    "       genvm check FILE\n"
    "       genvm --help\n"
    "\n"
    "run    reads the execution data (calldata), runs the contract, and delivers the result to\n"
    "       the host with consume_result. Hosts: unix://PATH, fd://N, tcp://HOST:PORT; host i\n"
    "       serves the methods execution data's method_hosts routes to it.\n"
    "       --debug-mode disabled|safe|safe-unbounded|unsafe|unsafe-tracing (default disabled)\n"
    "       --permissions letters: w write storage, s send messages, c call others, n spawn nondet\n"
    "       --log-fd N: JSON lines about the run. No timeout: stop it with SIGKILL.\n"
    "       --nondet-fuel N: fuel of each non-deterministic block (default 2^32).\n"
    "       --module-llm/--module-web: module sockets for prompts / web calls in nondet blocks\n"
    "       (frames: u32 big-endian length + calldata); without one those calls are refused.\n"
    "       --module-cache DIR: keep compiled contracts in DIR (files <blake3>-d?m?.gvmc) so a\n"
    "       repeated contract starts without compiling; default: env GENVM_MODULE_CACHE, and no\n"
    "       cache when neither is set. DIR must be writable only by the operator (cached code\n"
    "       is not re-validated). A cache that cannot be written never fails the run.\n"
    "       Leader run without leader_nondet_results in the execution data, validator run with.\n"
    "       Exit: 0 result delivered, 1 not delivered (host failure), 2 bad input.\n"
    "check  validates FILE as a contract module (loads, imports only genlayer_sdk and\n"
    "       wasi_snapshot_preview1, exports _start); prints ok or one error line.\n";

int bad(const std::string& line) {
  std::fprintf(stderr, "genvm: %s\n", line.c_str());
  return 2;
}

int run_cmd(int argc, char** argv) {
  genvm::executor::RunOptions opts;
  bool have_data = false;
  bool have_cache = false;
  for (int i = 2; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--execution-data") {
      const char* v = value();
      if (!v) return bad("--execution-data needs -, a path or fd://N");
      opts.execution_data = v;
      have_data = true;
    } else if (a == "--host") {
      const char* v = value();
      if (!v) return bad("--host needs a URI");
      opts.hosts.emplace_back(v);
    } else if (a == "--debug-mode") {
      const char* v = value();
      if (!v) return bad("--debug-mode needs a level");
      auto m = genvm::parse_debug_mode(v);
      if (!m) return bad(m.error().to_string());
      opts.debug = *m;
    } else if (a == "--permissions") {
      const char* v = value();
      if (!v) return bad("--permissions needs letters from wscn (may be empty)");
      auto p = genvm::executor::parse_permissions(v);
      if (!p) return bad(p.error().to_string());
      opts.permissions = *p;
    } else if (a == "--genvm-id") {
      const char* v = value();
      if (!v) return bad("--genvm-id needs an id");
      opts.genvm_id = v;
    } else if (a == "--log-fd") {
      const char* v = value();
      int fd = -1;
      std::string_view s = v ? v : "";
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), fd);
      if (!v || ec != std::errc() || p != s.data() + s.size() || fd < 0) return bad("--log-fd needs a descriptor number");
      opts.log_fd = fd;
    } else if (a == "--nondet-fuel") {
      const char* v = value();
      std::uint64_t fuel = 0;
      std::string_view s = v ? v : "";
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), fuel);
      if (!v || ec != std::errc() || p != s.data() + s.size() || fuel == 0) return bad("--nondet-fuel needs a positive number");
      opts.nondet_fuel = fuel;
    } else if (a == "--module-llm" || a == "--module-web") {
      const char* v = value();
      if (!v || !*v) return bad(std::string(a) + " needs a URI");
      (a == "--module-llm" ? opts.module_llm : opts.module_web) = v;
    } else if (a == "--module-cache") {
      const char* v = value();
      if (!v || !*v) return bad("--module-cache needs a directory");
      opts.module_cache = v;
      have_cache = true;
    } else if (a == "--sync") {
      opts.sync = true;
    } else {
      return bad("unknown argument '" + std::string(a) + "' (see genvm --help)");
    }
  }
  if (!have_data) return bad("--execution-data is required");
  if (!have_cache) {
    const char* env = std::getenv("GENVM_MODULE_CACHE");
    if (env && *env) opts.module_cache = env;
  }
  if (opts.hosts.empty()) return bad("at least one --host is required");
  std::string err;
  int code = genvm::executor::run_execution(opts, &err);
  if (code != 0) std::fprintf(stderr, "genvm: %s\n", err.c_str());
  return code;
}

int check_cmd(int argc, char** argv) {
  if (argc != 3) return bad("check needs exactly one FILE");
  auto bytes = genvm::executor::read_source(argv[2]);
  if (!bytes) return bad(bytes.error().to_string());
  auto s = genvm::executor::check_contract_module(*bytes);
  if (!s) {
    std::printf("%s\n", s.error().to_string().c_str());
    return 1;
  }
  std::printf("ok\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return bad("missing command (see genvm --help)");
  std::string_view cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "run") return run_cmd(argc, argv);
  if (cmd == "check") return check_cmd(argc, argv);
  return bad("unknown command '" + std::string(cmd) + "' (see genvm --help)");
}
