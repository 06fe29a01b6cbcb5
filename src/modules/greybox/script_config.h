// The script keys both modules' YAML configurations share (GenVM's names where GenVM has them):
//
//   lua_script_path   the script (default ${exeDir}/../config/genvm-<llm|web>-default.lua, the
//                     install layout; the build tree has the same file at the same place)
//   lua_path          package.path for require (GenVM's; default empty: no require)
//   data_dir          __dflt.data_dir (GenVM's)
//   log_level         the lowest script log level printed (GenVM's key; default info)
//   lua_memory_limit  ours: bytes one state may hold (default 256 MiB)
//   lua_instruction_limit  ours: Lua instructions per entry-point call (default 2e9)
//   lua_time_limit    ours: one entry-point call, host calls included (default 30m)
//
//   auto s = read_script_config(root, exe_dir, "genvm-llm-default.lua");
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "modules/greybox/lua_vm.h"

namespace genvm::greybox {

struct ScriptConfig {
  std::string script_path;
  std::string lua_path;
  std::string data_dir;
  std::string log_level = "info";
  Limits limits;
};

// Error "bad_config" naming the key.
Result<ScriptConfig> read_script_config(const YAML::Node& root, const std::string& exe_dir, const std::string& default_script);

}  // namespace genvm::greybox
