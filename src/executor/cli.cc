#include "executor/cli.h"

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "common/debug_mode.h"
#include "common/exe_dir.h"

namespace genvm::executor {

const char* const kUsage =
    "usage: genvm [--log-fd=N] [--log-level=LEVEL] [--config=FILE] run [FLAGS]\n"
    "                                                            run one contract execution\n"
    "       genvm check FILE                                     validate a contract module\n"
    "       genvm parse-version-pattern                          print the version a contract on\n"
    "                                                            stdin asks for (v0.1.0, v*.*.*)\n"
    "       genvm --help | --version\n"
    "\n"
    "run reads the ExecutionData (calldata) from stdin, or from --execution-data, runs the\n"
    "contract, and delivers the result to the host with consume_result. No timeout: stop it with\n"
    "SIGKILL. Every flag takes its value as --flag=value or as the next argument; each flag may be\n"
    "given once, except --host.\n"
    "  --host URI               host i (in order): unix://PATH, fd://N, tcp://HOST:PORT; host i\n"
    "                           serves the methods the execution data's method_hosts routes to it\n"
    "  --execution-data SRC     -, a path or fd://N (default -: stdin)\n"
    "  --debug-mode LEVEL       disabled|safe|safe-unbounded|unsafe|unsafe-tracing (default disabled)\n"
    "  --permissions LETTERS    from wscnu: w write storage, s send messages, c call others,\n"
    "                           n spawn nondet, u register runners (default wscn; may be empty)\n"
    "  --genvm-id ID            the run's id, in its log lines\n"
    "  --sync                   sync mode: leader results are checked, no validator vote runs\n"
    "  --module-llm URI         LLM module for prompts in nondet blocks (frames: u32 big-endian\n"
    "  --module-web URI         length + calldata); without one those calls are refused\n"
    "  --nondet-fuel N          fuel of each non-deterministic block (default 2^38)\n"
    "  --module-cache DIR       keep compiled contracts in DIR (<blake3>-d?m?f?j?.gvmc) so a\n"
    "                           repeated contract starts without compiling; default: env\n"
    "                           GENVM_MODULE_CACHE, else the config's cache_dir, else none. DIR\n"
    "                           (runner snapshots, checked-archive marks too) must be this uid's\n"
    "                           and not writable by group or others, else it is not used (one\n"
    "                           warning);\n"
    "                           entries are sealed with DIR/seal.key (made 0600 on first use). A\n"
    "                           cache problem never fails the run.\n"
    "Global (before the command, also accepted after run):\n"
    "  --log-fd N               descriptor for the JSON-lines log (default 2: stderr)\n"
    "  --log-level LEVEL        trace|debug|info|warn|error (default info)\n"
    "  --config FILE            a GenVM config (YAML): fee rules (its `fees` block), runners_dir,\n"
    "                           registry_dir, cache_dir, engine; default: ${exeDir}/../config/\n"
    "                           genvm.yaml (the public executor's) when it exists, else the\n"
    "                           fee rules compiled in (docs/PROTOCOLS.md, ### Fees) and no cache\n"
    "Runners (contracts that are not raw wasm): the --config file's runners_dir and\n"
    "registry_dir (latest.json), else ${exeDir}/../../../runners and ${exeDir}/../data; the\n"
    "environment's GENVM_RUNNERS_DIR (and GENVM_RUNNERS_REGISTRY) overrides both.\n"
    "Engine: env GENVM_ENGINE, else the --config file's `engine` key: interp (the reference\n"
    "interpreter) or jit (x86-64; a module it cannot compile runs on the interpreter); default\n"
    "jit where the CPU has LZCNT, BMI1, POPCNT and SSE4.1, else interp. Another value: exit 2.\n"
    "A leader run has no leader_nondet_results in the execution data, a validator run has them.\n"
    "Exit: 0 result delivered, 1 not delivered (host failure), 2 bad input.\n"
    "check validates FILE as a contract module (loads, imports only genlayer_sdk and\n"
    "wasi_snapshot_preview1, exports _start); prints ok or one error line.\n";

namespace {

Error usage(std::string line) { return make_error("bad_usage", std::move(line)); }

// Walks the arguments: `--name=value` / `--name value` / `--flag`, refusing repeats.
class Args {
 public:
  explicit Args(std::span<const std::string_view> a) : a_(a) {}
  bool done() const { return i_ >= a_.size(); }
  std::string_view peek() const { return a_[i_]; }
  std::string_view next() { return a_[i_++]; }

  // Splits the current flag into name and inline value; advances past the name.
  struct Flag {
    std::string_view name;
    std::optional<std::string_view> inline_value;
  };
  Flag flag() {
    std::string_view s = next();
    auto eq = s.find('=');
    if (eq == std::string_view::npos) return {s, std::nullopt};
    return {s.substr(0, eq), s.substr(eq + 1)};
  }
  Result<std::string_view> value(const Flag& f, std::string_view what) {
    if (f.inline_value) return *f.inline_value;
    if (done()) return usage(std::string(f.name) + " needs " + std::string(what));
    return next();
  }
  Status once(std::string_view name) {
    if (!seen_.insert(std::string(name)).second) return usage(std::string(name) + " given twice");
    return {};
  }

 private:
  std::span<const std::string_view> a_;
  std::size_t i_ = 0;
  std::set<std::string> seen_;
};

template <typename T>
bool parse_number(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// --log-fd / --log-level / --config, wherever they appear. Returns false when `f` is none.
Result<bool> global_option(Args& args, const Args::Flag& f, RunOptions& o) {
  if (f.name == "--log-fd") {
    if (auto s = args.once(f.name); !s) return s.take_error();
    auto v = args.value(f, "a descriptor number");
    if (!v) return v.take_error();
    int fd = -1;
    if (!parse_number(*v, fd) || fd < 0) return usage("--log-fd needs a descriptor number, not '" + std::string(*v) + "'");
    o.log_fd = fd;
    return true;
  }
  if (f.name == "--config") {
    if (auto s = args.once(f.name); !s) return s.take_error();
    auto v = args.value(f, "a file");
    if (!v) return v.take_error();
    if (v->empty()) return usage("--config needs a file");
    o.fees_config = std::string(*v);
    return true;
  }
  if (f.name == "--log-level") {
    if (auto s = args.once(f.name); !s) return s.take_error();
    auto v = args.value(f, "a level");
    if (!v) return v.take_error();
    auto level = parse_log_level(*v);
    if (!level) return usage("--log-level: " + level.error().message);
    o.log_level = *level;
    return true;
  }
  return false;
}

Status parse_run_flags(Args& args, RunOptions& o, bool& help) {
  bool have_cache = false;
  while (!args.done()) {
    Args::Flag f = args.flag();
    auto g = global_option(args, f, o);
    if (!g) return g.take_error();
    if (*g) continue;
    if (f.name == "--sync") {
      if (f.inline_value) return usage("--sync takes no value");
      if (auto s = args.once(f.name); !s) return s;
      o.sync = true;
      continue;
    }
    if (f.name == "--help" || f.name == "-h") {
      help = true;
      return {};
    }
    if (f.name != "--host") {
      static const std::set<std::string_view> kKnown = {"--execution-data", "--debug-mode", "--permissions",
                                                         "--genvm-id",       "--nondet-fuel", "--module-llm",
                                                         "--module-web",     "--module-cache"};
      if (!kKnown.count(f.name)) return usage("unknown argument '" + std::string(f.name) + "' (see genvm --help)");
      if (auto s = args.once(f.name); !s) return s;
    }
    auto v = args.value(f, "a value");
    if (!v) return v.take_error();
    std::string value(*v);
    if (f.name == "--host") {
      if (value.empty()) return usage("--host needs a URI");
      o.hosts.push_back(value);
    } else if (f.name == "--execution-data") {
      o.execution_data = value;
    } else if (f.name == "--debug-mode") {
      auto m = parse_debug_mode(value);
      if (!m) return usage("--debug-mode: " + m.error().to_string());
      o.debug = *m;
    } else if (f.name == "--permissions") {
      auto p = parse_permissions(value);
      if (!p) return usage("--permissions: " + p.error().message);
      o.permissions = *p;
    } else if (f.name == "--genvm-id") {
      std::uint64_t id = 0;
      if (!parse_number(value, id)) return usage("--genvm-id needs an unsigned integer, not '" + value + "'");
      o.genvm_id = value;
    } else if (f.name == "--nondet-fuel") {
      std::uint64_t fuel = 0;
      if (!parse_number(value, fuel) || fuel == 0) return usage("--nondet-fuel needs a positive number");
      o.nondet_fuel = fuel;
    } else if (f.name == "--module-llm") {
      if (value.empty()) return usage("--module-llm needs a URI");
      o.module_llm = value;
    } else if (f.name == "--module-web") {
      if (value.empty()) return usage("--module-web needs a URI");
      o.module_web = value;
    } else if (f.name == "--module-cache") {
      if (value.empty()) return usage("--module-cache needs a directory");
      o.module_cache = value;
      have_cache = true;
    }
  }
  if (o.hosts.empty()) return usage("at least one --host is required");
  if (!have_cache) {
    const char* env = std::getenv("GENVM_MODULE_CACHE");
    if (env && *env) o.module_cache = env;
  }
  return {};
}

}  // namespace

std::string default_config_file(const std::string& exe_dir) {
  std::string path = expand_exe_dir("${exeDir}/../config/genvm.yaml", exe_dir);
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) ? path : std::string();
}

Result<Command> parse_command_line(std::span<const std::string_view> argv) {
  Args args(argv);
  Command cmd;
  // Global options, then the command.
  while (!args.done() && args.peek().starts_with("-")) {
    Args::Flag f = args.flag();
    if (f.name == "--help" || f.name == "-h") return Command{Command::Kind::kHelp, {}, {}};
    if (f.name == "--version" || f.name == "-V") return Command{Command::Kind::kVersion, {}, {}};
    auto g = global_option(args, f, cmd.run);
    if (!g) return g.take_error();
    if (!*g) return usage("unknown argument '" + std::string(f.name) + "' (see genvm --help)");
  }
  if (args.done()) return usage("missing command (see genvm --help)");
  std::string_view name = args.next();
  if (name == "help") return Command{Command::Kind::kHelp, {}, {}};
  if (name == "run") {
    cmd.kind = Command::Kind::kRun;
    bool help = false;
    auto s = parse_run_flags(args, cmd.run, help);
    if (help) return Command{Command::Kind::kHelp, {}, {}};
    if (!s) return s.take_error();
    if (cmd.run.fees_config.empty()) cmd.run.fees_config = default_config_file(executable_dir());
    return cmd;
  }
  if (name == "parse-version-pattern") {
    if (!args.done()) return usage("parse-version-pattern takes no arguments (the contract is read from stdin)");
    cmd.kind = Command::Kind::kParseVersionPattern;
    return cmd;
  }
  if (name == "check") {
    if (args.done()) return usage("check needs exactly one FILE");
    std::string_view file = args.next();
    if (file == "--help" || file == "-h") return Command{Command::Kind::kHelp, {}, {}};
    if (!args.done()) return usage("check needs exactly one FILE");
    cmd.kind = Command::Kind::kCheck;
    cmd.check_file = std::string(file);
    return cmd;
  }
  return usage("unknown command '" + std::string(name) + "' (see genvm --help)");
}

}  // namespace genvm::executor
