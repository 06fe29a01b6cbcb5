#include "executor/runner_location.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "common/exe_dir.h"

namespace genvm::executor {

namespace {

const char* env_value(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

}  // namespace

Result<RunnerLocation> locate_runners(const std::string& config_file) {
  const std::string exe_dir = executable_dir();
  RunnerLocation where{expand_exe_dir("${exeDir}/../../../runners", exe_dir),
                       expand_exe_dir("${exeDir}/../data", exe_dir), ""};
  if (!config_file.empty()) {
    try {
      YAML::Node root = YAML::LoadFile(config_file);
      if (root["runners_dir"]) where.runners_dir = expand_exe_dir(root["runners_dir"].as<std::string>(), exe_dir);
      if (root["registry_dir"]) where.registry_dir = expand_exe_dir(root["registry_dir"].as<std::string>(), exe_dir);
      if (root["cache_dir"]) where.cache_dir = expand_exe_dir(root["cache_dir"].as<std::string>(), exe_dir);
    } catch (const YAML::Exception& e) {
      return make_error("runner_location", config_file + ": " + e.what());
    }
  }
  if (const char* dir = env_value("GENVM_RUNNERS_DIR")) {
    where.runners_dir = dir;
    where.registry_dir = dir;
  }
  if (const char* registry = env_value("GENVM_RUNNERS_REGISTRY")) where.registry_dir = registry;
  return where;
}

}  // namespace genvm::executor
