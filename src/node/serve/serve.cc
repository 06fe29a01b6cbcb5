#include "node/serve/serve.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "node/serve/http.h"
#include "node/serve/service.h"

namespace genvm::node::serve {

namespace {

HttpServer* g_server = nullptr;
int g_stop_pipe[2] = {-1, -1};

void on_signal(int) {
  char c = 1;
  [[maybe_unused]] auto n = ::write(g_stop_pipe[1], &c, 1);
}

bool parse_int(std::string_view s, long long lo, long long hi, long long* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= lo && *out <= hi;
}

// 127.0.0.0/8 or ::1: only this machine reaches the server (Studio's local mode).
bool is_loopback(const std::string& host) {
  in_addr v4{};
  if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  return ::inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

int usage_error(const std::string& line) {
  std::fprintf(stderr, "genvm-node serve: %s\n", line.c_str());
  return 2;
}

}  // namespace

int serve_main(int argc, char** argv, const std::string& default_genvm) {
  ServeOptions o;
  o.genvm = default_genvm;
  std::string host = "127.0.0.1";
  long long port = 4000;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    long long n = 0;
    auto take = [&] { ++i; return v; };
    if (a == "--help") {
      std::fputs(kServeUsage, stdout);
      return 0;
    } else if (a == "--host" && v) {
      host = take();
    } else if (a == "--port" && v) {
      if (!parse_int(take(), 0, 65535, &port)) return usage_error("--port needs a number from 0 to 65535");
    } else if (a == "--state" && v && *v) {
      o.state_path = take();
    } else if (a == "--genvm" && v && *v) {
      o.genvm = take();
    } else if (a == "--validators" && v) {
      if (!parse_int(take(), 1, 100, &n)) return usage_error("--validators needs a number from 1 to 100");
      o.validators = static_cast<int>(n);
    } else if (a == "--timeout" && v) {
      if (!parse_int(take(), 1, 86400, &n)) return usage_error("--timeout needs seconds from 1 to 86400");
      o.timeout_s = static_cast<int>(n);
    } else if (a == "--finality-window" && v) {
      if (!parse_int(take(), 0, 86400000, &n)) return usage_error("--finality-window needs milliseconds from 0 to 86400000");
      o.finality_ms = n;
    } else if (a == "--debug-mode" && v) {
      auto m = parse_debug_mode(take());
      if (!m) return usage_error("--debug-mode needs one of disabled, safe, safe-unbounded, unsafe, unsafe-tracing");
      o.debug_mode = *m;
    } else if ((a == "--module-llm-config" || a == "--module-web-config") && v && *v) {
      char* real = ::realpath(take(), nullptr);
      if (!real) return usage_error(std::string(a) + ": " + std::strerror(errno));
      (a == "--module-llm-config" ? o.modules.llm_config : o.modules.web_config) = real;
      std::free(real);
    } else {
      return usage_error("unknown or incomplete option '" + std::string(a) + "' (see genvm-node serve --help)");
    }
  }
  o.local = is_loopback(host);
  if (::access(o.genvm.c_str(), X_OK) != 0) {
    return usage_error("the executor '" + o.genvm + "' is not an executable file (use --genvm PATH)");
  }
  // The state file and its schema first (State's own checks: a foreign file is refused), then
  // the queue's table beside it.
  {
    auto st = State::open(o.state_path);
    if (!st) return usage_error(st.error().to_string());
  }
  auto store = open_sqlite_store(o.state_path, o.busy_ms);
  if (!store) return usage_error(store.error().to_string());
  Service svc(o, **store);
  if (auto seeded = svc.seed_validators(); !seeded) return usage_error(seeded.error().to_string());
  Rpc rpc;
  svc.register_methods(rpc);
  auto server = HttpServer::listen(host, static_cast<std::uint16_t>(port), rpc, &svc.events());
  if (!server) return usage_error(server.error().to_string());
  if (::pipe(g_stop_pipe) != 0) return usage_error(std::string("pipe: ") + std::strerror(errno));
  g_server = server->get();
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  svc.start();
  std::thread stopper([&] {
    char c;
    while (::read(g_stop_pipe[0], &c, 1) < 0 && errno == EINTR) {
    }
    svc.stop();
    g_server->stop();
  });
  std::printf("listening on http://%s:%u/api\n", host.c_str(), static_cast<unsigned>((*server)->port()));
  std::fflush(stdout);
  (*server)->run();
  on_signal(0);  // the server ended on its own: release the stopper
  stopper.join();
  return 0;
}

}  // namespace genvm::node::serve
