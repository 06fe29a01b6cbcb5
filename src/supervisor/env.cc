// The isolated env: a child sees the essentials plus what its request declares, nothing else.
#include <array>
#include <cstring>

#include "supervisor/supervisor.h"

namespace genvm::supervisor {
namespace {

// Enough to find binaries and behave normally; not configurable (declare extras by name).
constexpr std::array<std::string_view, 29> kEssentialEnv = {
    "PATH",     "HOME",         "SHELL",      "USER",           "LOGNAME",         "TMPDIR",
    "TEMP",     "TMP",          "LANG",       "LC_ALL",         "LC_CTYPE",        "TERM",
    "COLORTERM", "FORCE_COLOR", "NO_COLOR",   "CI",             "NODE_OPTIONS",    "COREPACK_HOME",
    "PNPM_HOME", "RUSTUP_HOME", "CARGO_HOME", "GOPATH",         "GOMODCACHE",      "GOCACHE",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
};

}  // namespace

std::span<const std::string_view> essential_env_names() { return kEssentialEnv; }

std::map<std::string, std::string> build_env(const EnvOptions& options, const char* const* source) {
  std::map<std::string, std::string> src;
  for (const char* const* e = source; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    src.emplace(std::string(*e, eq), std::string(eq + 1));  // the first of duplicates wins
  }
  std::map<std::string, std::string> env;
  auto copy = [&](const std::string& name) {
    auto it = src.find(name);
    if (it != src.end()) env[name] = it->second;  // missing: absent, never ""
  };
  for (std::string_view name : kEssentialEnv) copy(std::string(name));
  for (const std::string& name : options.pass_through) copy(name);
  for (const auto& [name, value] : options.define) env[name] = value;
  if (!options.path_prefixes.empty()) {
    std::string path;
    for (const std::string& p : options.path_prefixes) {
      // PATH cannot name a directory holding ':'; split, it would become two entries.
      if (p.empty() || p.find(':') != std::string::npos) continue;
      if (!path.empty()) path += ':';
      path += p;
    }
    auto it = env.find("PATH");
    if (it != env.end() && !it->second.empty()) path = path.empty() ? it->second : path + ":" + it->second;
    if (!path.empty()) env["PATH"] = path;
  }
  return env;
}

}  // namespace genvm::supervisor
