// The command line every module binary shares (genvm-module-web, genvm-module-llm):
//
//   genvm-module-X [--config FILE] [--bind ADDRESS] [--die-with-parent] [--help]
//
//   auto cl = module::parse_module_command_line(argc, argv, "${exeDir}/../config/genvm-module-web.yaml");
//   if (!cl) { one line, exit 1 }   if (cl->help) { print usage, exit 0 }
//
// Flags take `--flag value` or `--flag=value`. --die-with-parent is applied here (the module
// gets SIGTERM when its starter exits). `config_path` comes back with ${exeDir} replaced by the
// folder of the running binary, which `exe_dir` also holds (config files expand it too).
#pragma once

#include <string>

#include "common/result.h"

namespace genvm::module {

struct ModuleCommandLine {
  bool help = false;
  std::string config_path;
  std::string bind;  // empty: the configuration's bind_address
  std::string exe_dir;
};

Result<ModuleCommandLine> parse_module_command_line(int argc, char** argv, const std::string& default_config);

}  // namespace genvm::module
