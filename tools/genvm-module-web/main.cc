// genvm-module-web: serves GenVM's web module protocol (src/common/module) on a unix socket or a
// 127.0.0.1 TCP port: WebRequest through libcurl and WebRender through one headless Chromium
// (started here, kept running), both with the URL and address checks of src/modules/web.
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "common/module/command_line.h"
#include "common/module/server.h"
#include "modules/web/config.h"
#include "modules/web/fetch.h"
#include "modules/web/web_module.h"

namespace {

constexpr const char* kUsage =
    "usage: genvm-module-web [--config FILE] [--bind ADDRESS] [--die-with-parent]\n"
    "\n"
    "Serves the web module of GenVM's executor-module protocol: each connection starts with the\n"
    "executor's hello frame, then request frames (u32 big-endian length + calldata), each answered\n"
    "by one frame. Point an executor at it with --module-web=unix://PATH (or HOST:PORT).\n"
    "\n"
    "  --config FILE       YAML compatible with GenVM's genvm-module-web.yaml (default\n"
    "                      ${exeDir}/../config/genvm-module-web.yaml); keys used: bind_address,\n"
    "                      extra_tld, always_allow_hosts, and ours: tld_list_path,\n"
    "                      request_timeout, connect_timeout (seconds), resolve (HOST:PORT:ADDR),\n"
    "                      ca_file (the CA bundle TLS is verified against),\n"
    "                      max_concurrent_requests, render_max_connections,\n"
    "                      render_connection_max_bytes, render_idle_timeout,\n"
    "                      render_memory_limit (bytes), render_js_heap_mb,\n"
    "                      max_wait_after_loaded, render_timeout, chromium_path,\n"
    "                      chromium_flags (extra browser flags); lua_script_path (the greybox\n"
    "                      script running Request / Render, default\n"
    "                      ${exeDir}/../config/genvm-web-default.lua), lua_path, data_dir,\n"
    "                      log_level, lua_memory_limit, lua_instruction_limit, lua_time_limit\n"
    "  --bind ADDRESS      overrides bind_address: unix://PATH, or IPV4:PORT (e.g. 127.0.0.1:3032)\n"
    "  --die-with-parent   exit when the process that started this one exits\n"
    "  --help              this text\n"
    "\n"
    "WebRequest: GET POST HEAD PUT DELETE OPTIONS PATCH over http/https; ports 80/443 and listed\n"
    "TLDs unless the host is in always_allow_hosts; every connected address must be globally\n"
    "routable unless allow-listed; at most 10 redirects, each checked again, never https->http;\n"
    "the body stops at the executor's size limit. WebRender: text, html or screenshot of the\n"
    "page in headless Chromium (one browser, started now and restarted if it dies; a fresh\n"
    "browser context per render), wait_after_loaded clamped to max_wait_after_loaded; every\n"
    "connection the browser opens goes through the module's own proxy, which applies the same\n"
    "URL and address checks (and the resolve pins). SIGTERM/SIGINT/SIGHUP stop the browser and\n"
    "remove its profile; stale profiles of modules that are gone are removed at a browser start.\n";

int fail(const std::string& line) {
  std::fprintf(stderr, "genvm-module-web: %s\n", line.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  auto cl = genvm::module::parse_module_command_line(argc, argv, "${exeDir}/../config/genvm-module-web.yaml");
  if (!cl) return fail(cl.error().message);
  if (cl->help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  auto config = genvm::web::load_web_config(cl->config_path, cl->exe_dir);
  if (!config) return fail(config.error().to_string());
  if (!cl->bind.empty()) config->bind_address = cl->bind;
  if (config->bind_address.empty()) return fail("no bind_address in the configuration and no --bind");
  if (auto s = genvm::web::init_http(); !s) return fail(s.error().to_string());
  // SIGTERM / SIGINT / SIGHUP end the browser and remove its profile before the module exits
  // (blocked here, before any thread starts, and taken by one thread below). A SIGKILL leaves
  // the profile to the stale sweep of the next module's browser start.
  sigset_t ending;
  sigemptyset(&ending);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&ending, sig);
  pthread_sigmask(SIG_BLOCK, &ending, nullptr);
  auto web = genvm::web::WebModule::create(*config);
  if (!web) return fail(web.error().to_string());
  if (auto s = (*web)->start_browser(); !s) {
    // Requests still work; each render tries to start the browser again.
    std::fprintf(stderr, "genvm-module-web: %s (WebRender will retry)\n", s.error().to_string().c_str());
  }
  auto listener = genvm::module::ModuleListener::bind(config->bind_address);
  if (!listener) return fail(listener.error().to_string());
  ::signal(SIGPIPE, SIG_IGN);
  std::fprintf(stderr, "genvm-module-web: listening on %s (%zu TLDs)\n", (*listener)->address().c_str(),
               (*web)->policy().tld_count());
  const genvm::web::WebModule& module = **web;
  std::thread([&module, ending] {
    int sig = 0;
    if (sigwait(&ending, &sig) != 0) return;
    std::fprintf(stderr, "genvm-module-web: signal %d: stopping the browser\n", sig);
    module.browser().shutdown();
    std::_Exit(128 + sig);
  }).detach();
  (*listener)->serve([&module](const genvm::module::Hello& h, const genvm::calldata::Value& request) {
    return module.answer(h, request);
  });
  return 0;
}
