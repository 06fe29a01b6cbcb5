#include "modules/web/config.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <tuple>

#include <yaml-cpp/yaml.h>

#include "common/module/config_yaml.h"

namespace genvm::web {

namespace {

std::string expand(std::string s, const std::string& exe_dir) {
  static const std::string kExeDir = "${exeDir}";
  for (std::size_t at = s.find(kExeDir); at != std::string::npos; at = s.find(kExeDir, at + exe_dir.size())) {
    s.replace(at, kExeDir.size(), exe_dir);
  }
  return s;
}

Result<std::vector<std::string>> string_list(const YAML::Node& n, const char* key) {
  std::vector<std::string> out;
  if (!n || n.IsNull()) return out;
  if (!n.IsSequence()) return make_error("bad_config", std::string(key) + " is not a list");
  for (const auto& item : n) {
    if (!item.IsScalar()) return make_error("bad_config", std::string(key) + " holds a non-string");
    out.push_back(item.Scalar());
  }
  return out;
}

Result<std::uint64_t> seconds_ms(const YAML::Node& n, const char* key, std::uint64_t fallback) {
  auto ms = module::yaml_duration_ms(n, key);
  if (!ms) return ms.take_error();
  return ms->value_or(fallback);
}

// A non-negative integer key, or `fallback` when absent.
Result<std::uint64_t> unsigned_key(const YAML::Node& n, const char* key, std::uint64_t fallback,
                                   std::uint64_t max = UINT64_MAX) {
  if (!n || n.IsNull()) return fallback;
  std::uint64_t v = 0;
  try {
    if (!n.IsScalar() || n.Scalar().empty() || n.Scalar()[0] == '-') throw YAML::Exception(YAML::Mark(), "");
    v = n.as<std::uint64_t>();
  } catch (const YAML::Exception&) {
    return make_error("bad_config", std::string(key) + " is not a non-negative integer");
  }
  if (v > max) return make_error("bad_config", std::string(key) + " is above " + std::to_string(max));
  return v;
}

}  // namespace

Result<WebConfig> parse_web_config(const std::string& text, const std::string& exe_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return make_error("bad_config", e.what());
  }
  WebConfig c;
  if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  if (!root.IsMap()) return make_error("bad_config", "the configuration is not a map");
  auto script = greybox::read_script_config(root, exe_dir, "genvm-web-default.lua");
  if (!script) return script.take_error();
  c.script = std::move(*script);
  try {
    if (root["bind_address"] && !root["bind_address"].IsNull()) {
      c.bind_address = expand(root["bind_address"].as<std::string>(), exe_dir);
    }
    if (root["tld_list_path"]) c.tld_list_path = expand(root["tld_list_path"].as<std::string>(), exe_dir);
    if (root["ca_file"] && !root["ca_file"].IsNull()) c.ca_file = expand(root["ca_file"].as<std::string>(), exe_dir);
    if (root["chromium_path"]) c.chromium_path = expand(root["chromium_path"].as<std::string>(), exe_dir);
  } catch (const YAML::Exception& e) {
    return make_error("bad_config", std::string("bind_address / tld_list_path / ca_file / chromium_path: ") + e.what());
  }
  auto tld = string_list(root["extra_tld"], "extra_tld");
  if (!tld) return tld.take_error();
  c.extra_tld = std::move(*tld);
  auto allow = string_list(root["always_allow_hosts"], "always_allow_hosts");
  if (!allow) return allow.take_error();
  c.always_allow_hosts = std::move(*allow);
  auto resolve = string_list(root["resolve"], "resolve");
  if (!resolve) return resolve.take_error();
  c.resolve = std::move(*resolve);
  auto flags = string_list(root["chromium_flags"], "chromium_flags");
  if (!flags) return flags.take_error();
  c.chromium_flags = std::move(*flags);
  auto max_wait = seconds_ms(root["max_wait_after_loaded"], "max_wait_after_loaded", c.max_wait_after_loaded_ms);
  if (!max_wait) return max_wait.take_error();
  c.max_wait_after_loaded_ms = *max_wait;
  auto render = seconds_ms(root["render_timeout"], "render_timeout", c.render_timeout_ms);
  if (!render) return render.take_error();
  c.render_timeout_ms = *render;
  auto idle = seconds_ms(root["render_idle_timeout"], "render_idle_timeout", c.render_idle_timeout_ms);
  if (!idle) return idle.take_error();
  c.render_idle_timeout_ms = *idle;
  for (auto [key, field, max] : {std::tuple<const char*, std::uint64_t*, std::uint64_t>{
                                     "render_connection_max_bytes", &c.render_connection_max_bytes, UINT64_MAX},
                                 {"render_memory_limit", &c.render_memory_limit, UINT64_MAX},
                                 {"render_js_heap_mb", &c.render_js_heap_mb, 1u << 20}}) {
    auto v = unsigned_key(root[key], key, *field, max);
    if (!v) return v.take_error();
    *field = *v;
  }
  for (auto [key, field] : {std::pair<const char*, std::uint32_t*>{"max_concurrent_requests", &c.max_concurrent_requests},
                            {"render_max_connections", &c.render_max_connections}}) {
    auto v = unsigned_key(root[key], key, *field, 4096);
    if (!v) return v.take_error();
    if (*v == 0) return make_error("bad_config", std::string(key) + " must be at least 1");
    *field = static_cast<std::uint32_t>(*v);
  }
  auto request = seconds_ms(root["request_timeout"], "request_timeout", c.request_timeout_ms);
  if (!request) return request.take_error();
  c.request_timeout_ms = *request;
  auto connect = seconds_ms(root["connect_timeout"], "connect_timeout", c.connect_timeout_ms);
  if (!connect) return connect.take_error();
  c.connect_timeout_ms = *connect;
  return c;
}

Result<WebConfig> load_web_config(const std::string& path, const std::string& exe_dir) {
  std::ifstream f(path);
  if (!f) return make_error("bad_config", "cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  auto c = parse_web_config(ss.str(), exe_dir);
  if (!c) return make_error("bad_config", path + ": " + c.error().message);
  return c;
}

}  // namespace genvm::web
