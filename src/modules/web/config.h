// The web module's configuration: a YAML file compatible with GenVM's genvm-module-web.yaml.
//
//   auto c = load_web_config("/etc/genvm/genvm-module-web.yaml", exe_dir);
//
// Keys read (docs/PROTOCOLS.md, "## Modules"): bind_address, extra_tld, always_allow_hosts
// (GenVM's), and ours: tld_list_path, request_timeout, connect_timeout (seconds) and resolve
// (curl-style "HOST:PORT:ADDRESS" pins), ca_file (a CA bundle TLS is verified against instead
// of the system's), max_concurrent_requests; for WebRender max_wait_after_loaded (GenVM's) and
// ours chromium_path, chromium_flags, render_timeout, render_max_connections,
// render_connection_max_bytes, render_idle_timeout (seconds), render_memory_limit (bytes),
// render_js_heap_mb; the script's keys (greybox/script_config.h). GenVM's
// webdriver, vm_count, signer and thread-pool keys are accepted and not used. `${exeDir}` in a path is the binary's folder.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "modules/greybox/script_config.h"

namespace genvm::web {

struct WebConfig {
  std::string bind_address;  // "unix://PATH" or "127.0.0.1:PORT"; empty: none given
  std::vector<std::string> extra_tld;
  std::vector<std::string> always_allow_hosts;  // hosts exempt from the port, TLD and address checks
  std::string tld_list_path = "/usr/share/publicsuffix/public_suffix_list.dat";
  std::uint64_t request_timeout_ms = 300'000;  // the public module's client timeout
  std::uint64_t connect_timeout_ms = 30'000;
  std::vector<std::string> resolve;
  std::string ca_file;  // extra CA bundle for TLS verification; empty: the system's
  // WebRequest transfers at once in the module (each may buffer up to fetch.h's kMaxAnswerBody).
  std::uint32_t max_concurrent_requests = 8;
  // WebRender (browser.h): the browser binary, flags added to ours, GenVM's clamp of
  // wait_after_loaded, and our bound on one page load.
  std::string chromium_path = "/usr/bin/chromium";
  std::vector<std::string> chromium_flags;
  std::uint64_t max_wait_after_loaded_ms = 60'000;
  std::uint64_t render_timeout_ms = 30'000;
  // The render proxy (render_proxy.h) every connection of the browser goes through: open
  // connections at once, bytes one connection may carry (each way), and how long one may idle.
  std::uint32_t render_max_connections = 64;
  std::uint64_t render_connection_max_bytes = 64u << 20;
  std::uint64_t render_idle_timeout_ms = 30'000;
  // The browser's memory: its cgroup's limit (all its processes; 0: none) and V8's old-space
  // limit per renderer (--max-old-space-size, MiB; 0: Chromium's default).
  std::uint64_t render_memory_limit = 2ull << 30;
  std::uint64_t render_js_heap_mb = 512;
  // lua_script_path (default ${exeDir}/../config/genvm-web-default.lua), lua_path, data_dir,
  // log_level and our lua_* limits (greybox/script_config.h).
  greybox::ScriptConfig script;
};

// Error "bad_config" naming the key.
Result<WebConfig> load_web_config(const std::string& path, const std::string& exe_dir);
Result<WebConfig> parse_web_config(const std::string& yaml_text, const std::string& exe_dir);

}  // namespace genvm::web
