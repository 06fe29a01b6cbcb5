// genvm-manager: owns every executor's lifecycle behind the manager socket protocol and the
// HTTP API. See docs/PROTOCOLS.md (## Manager) for the config keys and their defaults.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/exe_dir.h"
#include "common/json.h"
#include "manager/config.h"
#include "manager/log.h"
#include "manager/modules.h"
#include "manager/registry.h"
#include "manager/server.h"
#include "manager/versioning.h"

namespace {

constexpr const char* kUsage =
    "usage: genvm-manager [--config FILE] [--manifest-path FILE] [--host H --port P | --socket PATH]\n"
    "\n"
    "Runs genvm executors on request: the manager socket protocol on GET /ws (binary frames\n"
    "u16 method | u64 request id | calldata), the HTTP API (/genvm/run, /genvm/{id}, /status,\n"
    "/permits, /log/level, /vm-error/describe, /contract/detect-version, /manifest/reload,\n"
    "/metrics, /module/start, /module/stop, /module/restart, /llm/check). A run's executor\n"
    "is <executors_dir>/<version>/bin/genvm for the line its selector resolves to in the\n"
    "manifest. Logs JSON lines to stderr. SIGTERM/SIGINT: no new\n"
    "runs, every run finishes with cause `shutdown`, exit 0. The LLM and web modules are\n"
    "genvm-module-llm / genvm-module-web child processes (config `modules`; default: beside\n"
    "this binary), started by POST /module/start or modules.<type>.autostart; runs that need\n"
    "modules get one connection to each.\n"
    "\n"
    "  --config FILE   YAML configuration (every key optional; see docs/PROTOCOLS.md)\n"
    "  --manifest-path FILE  the executor manifest (default from config, else\n"
    "                  ${exeDir}/../data/manifest.yaml); executors default to ${exeDir}/../executor\n"
    "  --host H        TCP address to listen on (default from config, 127.0.0.1)\n"
    "  --port P        TCP port (default from config, 3999; 0 picks a free one)\n"
    "  --socket PATH   listen on a unix socket instead of TCP\n"
    "  --print-port    print the bound TCP port on stdout once listening\n"
    "  --help          this text\n"
    "\n"
    "Config keys that decide who may reach what (docs/PROTOCOLS.md, \"Trust model\"):\n"
    "  ownership: shared        (default, the public manager's model) any connection may\n"
    "                           attach to, read, cancel and ack any run; keep the listener on\n"
    "                           loopback or a unix socket. per_caller: a run is its caller's\n"
    "                           (bearer token, unix uid, else its connection) and /status lists\n"
    "                           only the caller's runs.\n"
    "  allowed_origins: []      browser origins that may use the manager; any other request\n"
    "                           with an Origin (or a page's Sec-Fetch-Site) is refused with 403\n"
    "  connections.max_per_peer open connections of one peer (TCP address, unix uid); default\n"
    "                           half of connections.max; one past it is answered 429\n"
    "  retention.max_bytes / retention.max_bytes_per_peer\n"
    "                           what finished, unacked runs may hold (default 1 GiB / 256 MiB);\n"
    "                           over a cap the oldest is forgotten. A run keeps its outcome,\n"
    "                           never its request.\n"
    "A `re:` version selector is a bounded pattern: at most 256 bytes, groups 16 deep.\n";

int fail(const std::string& line) {
  std::fprintf(stderr, "genvm-manager: %s\n", line.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace genvm::manager;
  using genvm::JsonWriter;
  std::string config_path, host, socket_path, manifest_path;
  std::optional<int> port;
  bool print_port = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)name;
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--config") {
      const char* v = value("--config");
      if (!v) return fail("--config needs a file");
      config_path = v;
    } else if (a == "--manifest-path") {
      const char* v = value("--manifest-path");
      if (!v) return fail("--manifest-path needs a file");
      manifest_path = v;
    } else if (a == "--host") {
      const char* v = value("--host");
      if (!v) return fail("--host needs an address");
      host = v;
    } else if (a == "--port") {
      const char* v = value("--port");
      char* end = nullptr;
      long p = v ? std::strtol(v, &end, 10) : -1;
      if (!v || *end != '\0' || p < 0 || p > 65535) return fail("--port needs a number 0..65535");
      port = static_cast<int>(p);
    } else if (a == "--socket") {
      const char* v = value("--socket");
      if (!v) return fail("--socket needs a path");
      socket_path = v;
    } else if (a == "--print-port") {
      print_port = true;
    } else {
      return fail("unknown argument \"" + a + "\" (see --help)");
    }
  }
  if (!socket_path.empty() && (!host.empty() || port)) return fail("--socket excludes --host/--port");

  Config config;
  if (!config_path.empty()) {
    auto c = load_config(config_path);
    if (!c) return fail(config_path + ": " + c.error().message);
    config = std::move(*c);
  }
  if (!host.empty()) config.host = host;
  if (port) config.port = static_cast<std::uint16_t>(*port);
  if (!socket_path.empty()) config.socket = socket_path;
  if (!host.empty() || port) config.socket.clear();
  if (!manifest_path.empty()) config.manifest_path = manifest_path;
  // The public defaults, relative to this binary: ${exeDir}/../executor and
  // ${exeDir}/../data/manifest.yaml; ${exeDir} in a configured path means the same directory.
  std::string exe_dir = genvm::executable_dir();
  if (config.executors_dir.empty()) config.executors_dir = "${exeDir}/../executor";
  if (config.manifest_path.empty()) config.manifest_path = "${exeDir}/../data/manifest.yaml";
  config.executors_dir = genvm::expand_exe_dir(config.executors_dir, exe_dir);
  config.manifest_path = genvm::expand_exe_dir(config.manifest_path, exe_dir);

  boost::asio::io_context io;
  Log log(2);
  log.set_level(config.log_level);
  // A manifest that cannot be read stops the start (versioning.rs Ctx::new), before anything
  // else is logged.
  if (auto m = load_manifest(config.manifest_path); !m) return fail(m.error().message);
  // Declared before the registry, so it outlives every run's module lease.
  ModuleSet modules(io, config.modules, log);
  Registry registry(io, config, log);
  if (genvm::Status m = registry.load_manifest(); !m) return fail(m.error().message);
  registry.set_modules(&modules);
  {
    // modules.<type>.autostart: started (default config) before the listener opens.
    std::optional<genvm::Status> started;
    modules.autostart([&](genvm::Status s) { started = std::move(s); });
    while (!started) io.run_one();
    if (!*started) return fail(started->error().message);
  }
  Server server(io, registry, config, log);
  genvm::Status listening = config.socket.empty() ? server.listen_tcp(config.host, config.port)
                                                  : server.listen_unix(config.socket);
  if (!listening) return fail(listening.error().to_string());
  {
    JsonWriter w;
    w.begin_object().key("event").string("listening");
    if (config.socket.empty()) {
      w.key("host").string(config.host).key("port").unsigned_number(server.tcp_port());
    } else {
      w.key("socket").string(config.socket);
    }
    w.key("ownership").string(config.ownership == genvm::manager::RunOwnership::kShared ? "shared" : "per_caller");
    w.end_object();
    log.line(w.take());
  }
  if (config.socket.empty() && config.ownership == genvm::manager::RunOwnership::kShared) {
    // Shared ownership trusts the network position: every client that reaches the listener may
    // read and cancel every run.
    boost::system::error_code ec;
    auto addr = boost::asio::ip::make_address(config.host, ec);
    if (ec || !addr.is_loopback()) {
      JsonWriter w;
      w.begin_object().key("event").string("shared_ownership_on_a_network_address").key("host").string(config.host);
      w.key("hint").string("any client that reaches it may use every run; set ownership: per_caller").end_object();
      log.line(w.take(), genvm::manager::LogLevel::kWarn);
    }
  }
  if (print_port) {
    std::printf("%u\n", static_cast<unsigned>(server.tcp_port()));
    std::fflush(stdout);
  }

  boost::asio::signal_set signals(io, SIGTERM, SIGINT);
  boost::asio::steady_timer poll(io);
  auto give_up = std::chrono::steady_clock::now();
  // After shutdown: exit once every session has written what it had and closed, or after 5 s
  // (a client that never reads must not hold up our exit).
  std::function<void()> wait_for_sessions = [&] {
    if (server.live_sessions() == 0 || std::chrono::steady_clock::now() > give_up) {
      io.stop();
      return;
    }
    poll.expires_after(std::chrono::milliseconds(20));
    poll.async_wait([&](const boost::system::error_code& e) {
      if (!e) wait_for_sessions();
    });
  };
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    log.line("{\"event\":\"signal\",\"signal\":" + std::to_string(sig) + "}");
    registry.shutdown([&] {
      // Every run is terminal and its event queued to its subscribers.
      server.stop();
      give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      wait_for_sessions();
    });
  });
  io.run();
  return 0;
}
