// genvm-supervise: run a command under the supervisor (own session and group, a cgroup where
// the machine allows, the guard, a deadline) and print the result as one JSON object. Like
// timeout(1), but nothing the command forks escapes.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "supervisor/supervisor.h"

extern char** environ;

namespace {

namespace sv = genvm::supervisor;

constexpr const char* kUsage =
    "usage: genvm-supervise [options] -- CMD [ARGS...]\n"
    "Runs CMD in its own session, process group and (where the machine allows) cgroup, and\n"
    "prints the result as one JSON object on stdout. Exit code: the command's; 124 on timeout;\n"
    "128+n when the command or this supervisor was stopped by signal n; 127 when CMD could not\n"
    "start.\n"
    "  --timeout DUR        kill the whole tree after DUR (e.g. 10s, 500ms, 2m; plain = seconds)\n"
    "  --grace DUR          SIGTERM -> DUR -> SIGKILL (default 2s)\n"
    "  --linger DUR         after CMD exits, read output its children still hold for DUR,\n"
    "                       then end them (default 1s; reported as left_running)\n"
    "  --capture MODE       disabled | bounded | unbounded (default bounded)\n"
    "  --pass NAME          pass NAME from our env (beyond the essential allowlist)\n"
    "  --define NAME=VALUE  set NAME in the command's env\n"
    "  --path-prefix DIR    prepend DIR to the command's PATH\n"
    "  --cwd DIR            run in DIR\n"
    "  --log-fd N           give the command a JSON-lines log pipe on fd N (>= 3)\n"
    "  --memory-max BYTES   memory limit of the whole tree (K/M/G suffixes: KiB/MiB/GiB)\n"
    "  --pids-max N         process limit of the whole tree\n"
    "  --no-containment     process groups only, no cgroup or pid namespace\n"
    "  --pid-namespace      a pid namespace per run instead of a cgroup (no memory/pids limits;\n"
    "                       needs CAP_SYS_ADMIN: refused with one line where the kernel says no)\n"
    "  --no-guard           no guard process (a kill -9 of this supervisor leaves the tree)\n"
    "  --verbose            log the containment mode in force to stderr (one JSON line)\n"
    "  --help               this text\n";

int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  int saved = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  ssize_t ignored = ::write(g_signal_pipe[1], &b, 1);
  (void)ignored;
  errno = saved;
}

[[noreturn]] void die(const std::string& line) {
  std::fprintf(stderr, "genvm-supervise: %s\n", line.c_str());
  std::exit(2);
}

bool parse_u64(std::string_view s, std::uint64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

sv::Millis parse_duration(const std::string& flag, std::string_view s) {
  std::uint64_t mult = 1000;
  if (s.ends_with("ms")) {
    mult = 1;
    s.remove_suffix(2);
  } else if (s.ends_with("s")) {
    s.remove_suffix(1);
  } else if (s.ends_with("m")) {
    mult = 60000;
    s.remove_suffix(1);
  } else if (s.ends_with("h")) {
    mult = 3600000;
    s.remove_suffix(1);
  }
  std::uint64_t v = 0;
  if (!parse_u64(s, v) || v > (1ULL << 40)) die(flag + ": not a duration (e.g. 10s, 500ms, 2m)");
  return sv::Millis(static_cast<long long>(v * mult));
}

std::uint64_t parse_bytes(const std::string& flag, std::string_view s) {
  std::uint64_t mult = 1;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'M' || s.back() == 'G')) {
    mult = s.back() == 'K' ? 1024ULL : s.back() == 'M' ? 1024ULL * 1024 : 1024ULL * 1024 * 1024;
    s.remove_suffix(1);
  }
  std::uint64_t v = 0;
  if (!parse_u64(s, v) || v == 0 || v > (1ULL << 50)) die(flag + ": not a positive byte count");
  return v * mult;
}

void log_to_stderr(std::string_view line) { std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data()); }

}  // namespace

int main(int argc, char** argv) {
  sv::ExecuteRequest req;
  req.capture = genvm::Capture::kBounded;
  sv::EnvOptions env;
  sv::SupervisorOptions options;
  bool verbose = false;
  int i = 1;
  auto value = [&](const std::string& flag) -> std::string {
    if (i + 1 >= argc) die(flag + " needs a value");
    return argv[++i];
  };
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--timeout") {
      req.timeout = parse_duration(a, value(a));
      if (req.timeout->count() == 0) die("--timeout must be positive");
    } else if (a == "--grace") {
      req.grace = parse_duration(a, value(a));
    } else if (a == "--linger") {
      req.linger = parse_duration(a, value(a));
    } else if (a == "--capture") {
      std::string m = value(a);
      if (m == "disabled") req.capture = genvm::Capture::kDisabled;
      else if (m == "bounded") req.capture = genvm::Capture::kBounded;
      else if (m == "unbounded") req.capture = genvm::Capture::kUnbounded;
      else die("--capture: '" + m + "' is not disabled, bounded or unbounded");
    } else if (a == "--pass") {
      env.pass_through.push_back(value(a));
    } else if (a == "--define") {
      std::string d = value(a);
      auto eq = d.find('=');
      if (eq == std::string::npos || eq == 0) die("--define: expected NAME=VALUE, got '" + d + "'");
      env.define.emplace_back(d.substr(0, eq), d.substr(eq + 1));
    } else if (a == "--path-prefix") {
      env.path_prefixes.push_back(value(a));
    } else if (a == "--cwd") {
      req.cwd = value(a);
    } else if (a == "--log-fd") {
      std::uint64_t fd = 0;
      if (!parse_u64(value(a), fd) || fd < 3 || fd > 1023) die("--log-fd: expected a number from 3 to 1023");
      req.log_fd = static_cast<int>(fd);
    } else if (a == "--memory-max") {
      req.limits.memory_max_bytes = parse_bytes(a, value(a));
    } else if (a == "--pids-max") {
      std::uint64_t n = 0;
      if (!parse_u64(value(a), n) || n == 0) die("--pids-max: expected a positive number");
      req.limits.pids_max = n;
    } else if (a == "--no-containment") {
      options.containment = false;
    } else if (a == "--pid-namespace") {
      options.prefer_pid_namespace = true;
    } else if (a == "--no-guard") {
      options.guard = false;
    } else if (a == "--verbose") {
      verbose = true;
    } else {
      die("unknown option '" + a + "' (see --help)");
    }
  }
  if (i >= argc) die("no command given (usage: genvm-supervise [options] -- CMD [ARGS...])");
  if (options.prefer_pid_namespace && !options.containment) die("--pid-namespace and --no-containment contradict");
  // We run one command: every process it leaves behind is reparented to us (not to init),
  // whatever group, session or cgroup it moved to, so left_running is the truth and the
  // teardown reaches it, with or without containment.
  options.adopt_orphans = true;
  for (; i < argc; ++i) req.argv.emplace_back(argv[i]);
  req.env = sv::build_env(env, environ);

  // SIGINT/SIGTERM/SIGHUP stop the run (the whole tree), then we exit 128+n.
  if (::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) die("pipe: " + std::string(std::strerror(errno)));
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);
  req.cancel_fd = g_signal_pipe[0];

  if (verbose) options.log = log_to_stderr;
  int code = 0;
  {
    sv::Supervisor sup(options);
    if (int refusal = sup.pid_namespace_refusal()) {
      die(std::string("--pid-namespace: the kernel refused a pid namespace (unshare(CLONE_NEWPID): ") +
          std::strerror(refusal) + (refusal == EPERM ? "; needs CAP_SYS_ADMIN)" : ")"));
    }
    if ((req.limits.memory_max_bytes || req.limits.pids_max) && sup.containment() == sv::Containment::kProcessGroup &&
        verbose) {
      log_to_stderr("{\"event\":\"limits_weakened\",\"why\":\"no cgroup: memory is RLIMIT_AS per process, pids not enforced\"}");
    }
    genvm::Result<sv::ExecuteResult> r = sup.execute(req);
    if (!r) die(r.error().to_string());
    std::string json = sv::to_json(*r);
    std::fwrite(json.data(), 1, json.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    if (r->interrupted_by) code = 128 + r->interrupted_by;
    else if (r->timed_out) code = 124;
    else code = r->exit_code;
  }
  return code;
}
