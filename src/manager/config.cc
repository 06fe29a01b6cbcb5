#include "manager/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace genvm::manager {
namespace {

Error bad(std::string message) { return make_error("bad_config", std::move(message)); }

Status check_keys(const YAML::Node& node, std::string_view where, const std::set<std::string>& allowed) {
  if (!node.IsMap()) return bad(std::string(where) + ": must be a mapping");
  for (const auto& kv : node) {
    auto k = kv.first.as<std::string>();
    if (!allowed.count(k)) return bad(std::string(where) + ": unknown key \"" + k + "\"");
  }
  return {};
}

Result<std::uint64_t> positive(const YAML::Node& n, std::string_view name) {
  std::uint64_t v = 0;
  try {
    auto s = n.as<std::string>();
    if (s.empty() || s.size() > 18 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return bad(std::string(name) + ": must be a positive integer");
    }
    v = std::stoull(s);
  } catch (const YAML::Exception&) {
    return bad(std::string(name) + ": must be a positive integer");
  }
  if (v == 0) return bad(std::string(name) + ": must be at least 1");
  return v;
}

Result<Millis> duration(const YAML::Node& n, std::string_view name) {
  if (!n.IsScalar()) return bad(std::string(name) + ": must be a duration string like \"5m\"");
  auto d = parse_duration(n.as<std::string>());
  if (!d) return bad(std::string(name) + ": " + d.error().message);
  return *d;
}

Result<std::vector<std::string>> strings(const YAML::Node& n, std::string_view name) {
  if (!n.IsSequence()) return bad(std::string(name) + ": must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : n) {
    if (!item.IsScalar()) return bad(std::string(name) + ": must be a list of strings");
    out.push_back(item.as<std::string>());
  }
  return out;
}

Status parse_permits(const YAML::Node& n, PermitsConfig& p) {
  if (n.IsNull()) return {};  // null keeps every default, as the public manager does
  if (auto s = check_keys(n, "permits", {"total", "per_gib", "sync", "nondet"}); !s) return s;
  if (n["total"] && !n["total"].IsNull()) {
    auto v = positive(n["total"], "permits.total");
    if (!v) return v.take_error();
    p.total = *v;
  }
  if (n["per_gib"]) {
    auto text = n["per_gib"].as<std::string>();
    text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
    auto slash = text.find('/');
    YAML::Node num(text.substr(0, slash));
    auto a = positive(num, "permits.per_gib");
    if (!a) return a.take_error();
    p.per_gib_num = *a;
    if (slash != std::string::npos) {
      YAML::Node den(text.substr(slash + 1));
      auto b = positive(den, "permits.per_gib denominator");
      if (!b) return b.take_error();
      p.per_gib_den = *b;
    }
  }
  if (n["sync"]) {
    auto v = positive(n["sync"], "permits.sync");
    if (!v) return v.take_error();
    p.sync = *v;
  }
  if (n["nondet"]) {
    auto v = positive(n["nondet"], "permits.nondet");
    if (!v) return v.take_error();
    p.nondet = *v;
  }
  return {};
}

Status parse_modules(const YAML::Node& n, ModulesConfig& m) {
  if (n.IsNull()) return {};
  if (auto s = check_keys(n, "modules", {"llm", "web", "runtime_dir", "start_timeout", "stop_timeout"}); !s) return s;
  for (const char* type : {"llm", "web"}) {
    const YAML::Node& p = n[type];
    if (!p || p.IsNull()) continue;
    std::string where = std::string("modules.") + type;
    if (auto s = check_keys(p, where, {"binary", "default_config", "autostart"}); !s) return s;
    ModuleProgram& prog = std::string_view(type) == "llm" ? m.llm : m.web;
    for (const char* k : {"binary", "default_config"}) {
      if (!p[k]) continue;
      if (!p[k].IsScalar()) return bad(where + "." + k + ": must be a path");
      (std::string_view(k) == "binary" ? prog.binary : prog.default_config) = p[k].as<std::string>();
    }
    if (p["autostart"]) {
      if (!p["autostart"].IsScalar()) return bad(where + ".autostart: must be true or false");
      prog.autostart = p["autostart"].as<bool>();
    }
  }
  if (n["runtime_dir"]) {
    if (!n["runtime_dir"].IsScalar()) return bad("modules.runtime_dir: must be a path");
    m.runtime_dir = n["runtime_dir"].as<std::string>();
  }
  for (const char* k : {"start_timeout", "stop_timeout"}) {
    if (!n[k]) continue;
    auto d = duration(n[k], std::string("modules.") + k);
    if (!d) return d.take_error();
    if (d->count() <= 0) return bad(std::string("modules.") + k + ": must be positive");
    (std::string_view(k) == "start_timeout" ? m.start_timeout : m.stop_timeout) = *d;
  }
  return {};
}

Result<Config> parse_root(const YAML::Node& root) {
  Config c;
  if (root.IsNull()) return c;  // an empty file is every default
  if (auto s = check_keys(root, "config",
                          {"executors_dir", "manifest_path", "executor", "executor_protocol", "log_level", "env_pass_through",
                           "execution_retention", "max_message_bytes", "permits", "debug_mode", "trusted", "containment",
                           "host", "port", "socket", "threads", "blocking_threads", "log_disable", "extra_args",
                           "connections", "modules", "executor_memory_max", "retention", "ownership",
                           "allowed_origins"});
      !s) {
    return s.take_error();
  }
  if (root["executor"]) {
    auto v = strings(root["executor"], "executor");
    if (!v) return v.take_error();
    if (v->empty() || v->front().empty()) return bad("executor: must name a program");
    c.executor = std::move(*v);
  }
  if (root["executor_protocol"]) {
    auto v = root["executor_protocol"].as<std::string>();
    if (v == "genvm") c.executor_protocol = Config::ExecutorProtocol::kGenvm;
    else if (v == "plain") c.executor_protocol = Config::ExecutorProtocol::kPlain;
    else return bad("executor_protocol: must be genvm or plain");
  }
  if (c.executor_protocol == Config::ExecutorProtocol::kPlain && c.executor.empty()) {
    return bad("executor_protocol: plain needs an executor argv");
  }
  for (const char* k : {"executors_dir", "manifest_path"}) {
    if (!root[k]) continue;
    if (!root[k].IsScalar()) return bad(std::string(k) + ": must be a path");
    (std::string_view(k) == "executors_dir" ? c.executors_dir : c.manifest_path) = root[k].as<std::string>();
  }
  // The public BaseConfig's runtime knobs (install/config/genvm-manager.yaml), accepted so that
  // file works as it stands: one io thread serves everything here, and every line is ours.
  for (const char* k : {"threads", "blocking_threads"}) {
    if (root[k] && !positive(root[k], k)) return bad(std::string(k) + ": must be a positive integer");
  }
  if (root["log_disable"] && !root["log_disable"].IsScalar()) return bad("log_disable: must be a string");
  if (root["log_level"]) {
    auto v = root["log_level"].as<std::string>();
    if (!parse_log_level(v)) return bad("log_level: must be trace, debug, info, warn or error");
    c.log_level = *parse_log_level(v);
  }
  if (root["env_pass_through"]) {
    auto v = strings(root["env_pass_through"], "env_pass_through");
    if (!v) return v.take_error();
    c.env_pass_through = std::move(*v);
  }
  if (root["execution_retention"]) {
    auto d = duration(root["execution_retention"], "execution_retention");
    if (!d) return d.take_error();
    c.execution_retention = *d;
  }
  if (root["max_message_bytes"]) {
    auto v = positive(root["max_message_bytes"], "max_message_bytes");
    if (!v) return v.take_error();
    // Below the header plus a small payload nothing works; above 1 GiB one frame could take
    // the machine.
    if (*v < 64 || *v > (1ull << 30)) return bad("max_message_bytes: must be between 64 and 1073741824");
    c.max_message_bytes = *v;
  }
  if (const auto& m = root["executor_memory_max"]) {
    if (m.IsScalar() && m.as<std::string>() == "0") {
      c.executor_memory_max_bytes = 0;
    } else {
      auto v = positive(m, "executor_memory_max");
      if (!v) return v.take_error();
      c.executor_memory_max_bytes = *v;
    }
  }
  if (root["permits"]) {
    if (auto s = parse_permits(root["permits"], c.permits); !s) return s.take_error();
  }
  if (const auto& d = root["debug_mode"]) {
    if (auto s = check_keys(d, "debug_mode", {"untrusted_max", "on_untrusted_above_max"}); !s) return s.take_error();
    if (d["untrusted_max"]) {
      auto m = parse_debug_mode(d["untrusted_max"].as<std::string>());
      if (!m) return bad("debug_mode.untrusted_max: " + m.error().to_string());
      if (*m >= DebugMode::kUnsafe) {
        return bad("debug_mode.untrusted_max: unsafe levels may never be granted to untrusted callers");
      }
      c.debug.untrusted_max = *m;
    }
    if (d["on_untrusted_above_max"]) {
      auto v = d["on_untrusted_above_max"].as<std::string>();
      if (v == "reject") c.debug.clamp = false;
      else if (v == "clamp") c.debug.clamp = true;
      else return bad("debug_mode.on_untrusted_above_max: must be reject or clamp");
    }
  }
  if (const auto& t = root["trusted"]) {
    if (auto s = check_keys(t, "trusted", {"uids", "tokens"}); !s) return s.take_error();
    if (t["uids"]) {
      if (!t["uids"].IsSequence()) return bad("trusted.uids: must be a list of user ids");
      for (const auto& u : t["uids"]) {
        auto s = u.as<std::string>();
        if (s.empty() || s.size() > 10 || !std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
          return bad("trusted.uids: \"" + s + "\" is not a user id");
        }
        c.trusted_uids.push_back(static_cast<uid_t>(std::stoul(s)));
      }
    }
    if (t["tokens"]) {
      auto v = strings(t["tokens"], "trusted.tokens");
      if (!v) return v.take_error();
      for (const auto& tok : *v) {
        // A short token is guessable; refusing it at startup beats trusting it.
        if (tok.size() < 16) return bad("trusted.tokens: a token must be at least 16 characters");
      }
      c.trusted_tokens = std::move(*v);
    }
  }
  if (const auto& e = root["extra_args"]) {
    if (auto s = check_keys(e, "extra_args", {"untrusted_allowed"}); !s) return s.take_error();
    if (e["untrusted_allowed"]) {
      auto v = strings(e["untrusted_allowed"], "extra_args.untrusted_allowed");
      if (!v) return v.take_error();
      for (const auto& a : *v) {
        if (a.empty()) return bad("extra_args.untrusted_allowed: an entry is empty");
        if (is_reserved_executor_flag(a)) {
          return bad("extra_args.untrusted_allowed: \"" + a + "\" is a flag the manager owns (refused from every caller)");
        }
      }
      c.extra_args.untrusted_allowed = std::move(*v);
    }
  }
  if (const auto& n = root["connections"]) {
    if (auto s = check_keys(n, "connections", {"max", "idle_timeout", "max_queued_bytes", "stall_timeout", "max_per_peer"});
        !s) {
      return s.take_error();
    }
    if (n["max_per_peer"]) {
      auto v = positive(n["max_per_peer"], "connections.max_per_peer");
      if (!v) return v.take_error();
      c.connections.max_per_peer = *v;
    }
    if (n["max"]) {
      auto v = positive(n["max"], "connections.max");
      if (!v) return v.take_error();
      c.connections.max = *v;
    }
    if (n["max_queued_bytes"]) {
      auto v = positive(n["max_queued_bytes"], "connections.max_queued_bytes");
      if (!v) return v.take_error();
      if (*v < 1024) return bad("connections.max_queued_bytes: must be at least 1024");
      c.connections.max_queued_bytes = *v;
    }
    for (const char* k : {"idle_timeout", "stall_timeout"}) {
      if (!n[k]) continue;
      auto d = duration(n[k], std::string("connections.") + k);
      if (!d) return d.take_error();
      if (d->count() <= 0) return bad(std::string("connections.") + k + ": must be positive");
      (std::string_view(k) == "idle_timeout" ? c.connections.idle_timeout : c.connections.stall_timeout) = *d;
    }
  }
  if (const auto& r = root["retention"]) {
    if (auto s = check_keys(r, "retention", {"max_bytes", "max_bytes_per_peer"}); !s) return s.take_error();
    for (const char* k : {"max_bytes", "max_bytes_per_peer"}) {
      if (!r[k]) continue;
      auto v = positive(r[k], std::string("retention.") + k);
      if (!v) return v.take_error();
      (std::string_view(k) == "max_bytes" ? c.retention.max_bytes : c.retention.max_bytes_per_peer) = *v;
    }
  }
  if (root["ownership"]) {
    auto v = root["ownership"].IsScalar() ? root["ownership"].as<std::string>() : std::string();
    if (v == "shared") c.ownership = RunOwnership::kShared;
    else if (v == "per_caller") c.ownership = RunOwnership::kPerCaller;
    else return bad("ownership: must be shared or per_caller");
  }
  if (root["allowed_origins"]) {
    auto v = strings(root["allowed_origins"], "allowed_origins");
    if (!v) return v.take_error();
    c.allowed_origins = std::move(*v);
  }
  if (root["modules"]) {
    if (auto s = parse_modules(root["modules"], c.modules); !s) return s.take_error();
  }
  if (root["containment"]) c.containment = root["containment"].as<bool>();
  if (root["host"]) c.host = root["host"].as<std::string>();
  if (root["port"]) {
    auto p = root["port"].as<int>();
    if (p < 0 || p > 65535) return bad("port: must be 0..65535");
    c.port = static_cast<std::uint16_t>(p);
  }
  if (root["socket"]) c.socket = root["socket"].as<std::string>();
  return c;
}

}  // namespace

Result<Config> parse_config(std::string_view yaml_text) {
  try {
    return parse_root(YAML::Load(std::string(yaml_text)));
  } catch (const YAML::Exception& e) {
    return bad(e.what());
  }
}

Result<Config> load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return bad("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_config(ss.str());
}

std::uint64_t resolve_total_permits(const PermitsConfig& p, std::uint64_t mem_available_bytes) {
  std::uint64_t total;
  if (p.total) {
    total = *p.total;
  } else {
    // Whole GiB first so the multiply cannot overflow for any real machine.
    std::uint64_t gib = mem_available_bytes >> 30;
    total = gib * p.per_gib_num / p.per_gib_den;
  }
  return std::max({total, p.sync, p.nondet});
}

std::uint64_t read_mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

}  // namespace genvm::manager
