#include "modules/greybox/script_config.h"

#include <algorithm>

#include "common/module/config_yaml.h"

namespace genvm::greybox {

namespace {

Error bad(const std::string& key, const std::string& why) { return make_error("bad_config", key + ": " + why); }

std::string with_exe_dir(std::string s, const std::string& exe_dir) {
  for (std::size_t at; (at = s.find("${exeDir}")) != std::string::npos;) s.replace(at, 9, exe_dir);
  return s;
}

Result<std::string> string_key(const YAML::Node& root, const char* key, std::string fallback, const std::string& exe_dir) {
  const YAML::Node n = root[key];
  if (!n || n.IsNull()) return with_exe_dir(std::move(fallback), exe_dir);
  if (!n.IsScalar()) return bad(key, "not a string");
  return with_exe_dir(n.Scalar(), exe_dir);
}

Result<std::uint64_t> count_key(const YAML::Node& root, const char* key, std::uint64_t fallback, std::uint64_t min) {
  const YAML::Node n = root[key];
  if (!n || n.IsNull()) return fallback;
  const std::string t = n.IsScalar() ? n.Scalar() : "";
  if (t.empty() || t.size() > 19 || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad(key, "not a non-negative integer");
  }
  std::uint64_t v = std::stoull(t);
  if (v < min) return bad(key, "below " + std::to_string(min));
  return v;
}

}  // namespace

Result<ScriptConfig> read_script_config(const YAML::Node& root, const std::string& exe_dir, const std::string& default_script) {
  ScriptConfig c;
  auto script = string_key(root, "lua_script_path", "${exeDir}/../config/" + default_script, exe_dir);
  if (!script) return script.take_error();
  c.script_path = std::move(*script);
  for (auto [key, out] : {std::pair{"lua_path", &c.lua_path}, std::pair{"data_dir", &c.data_dir},
                          std::pair{"log_level", &c.log_level}}) {
    auto v = string_key(root, key, *out, exe_dir);
    if (!v) return v.take_error();
    *out = std::move(*v);
  }
  auto memory = count_key(root, "lua_memory_limit", c.limits.memory_bytes, 1u << 20);
  if (!memory) return memory.take_error();
  c.limits.memory_bytes = static_cast<std::size_t>(*memory);
  auto instructions = count_key(root, "lua_instruction_limit", c.limits.instructions, 10'000);
  if (!instructions) return instructions.take_error();
  c.limits.instructions = *instructions;
  auto time = module::yaml_duration_ms(root["lua_time_limit"], "lua_time_limit");
  if (!time) return time.take_error();
  if (*time) c.limits.wall_ms = **time;
  return c;
}

}  // namespace genvm::greybox
