#include "executor/engine_choice.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>

#include "wasm/jit/jit.h"

namespace genvm::executor {

std::string_view engine_name(wasm::Engine e) { return e == wasm::Engine::kJit ? "jit" : "interp"; }

Result<wasm::Engine> parse_engine_name(std::string_view name, std::string_view source) {
  if (name == "interp") return wasm::Engine::kInterp;
  if (name == "jit") return wasm::Engine::kJit;
  return make_error("engine", std::string(source) + ": '" + std::string(name) + "' is not an engine (interp or jit)");
}

Result<EngineChoice> choose_engine(const std::string& config_file) {
  if (const char* env = std::getenv("GENVM_ENGINE"); env && *env) {
    auto e = parse_engine_name(env, "GENVM_ENGINE");
    if (!e) return e.take_error();
    return EngineChoice{*e, "GENVM_ENGINE=" + std::string(env)};
  }
  if (!config_file.empty()) {
    std::string name;
    try {
      YAML::Node root = YAML::LoadFile(config_file);
      if (root["engine"]) name = root["engine"].as<std::string>();
    } catch (const YAML::Exception& e) {
      return make_error("engine_config", config_file + ": " + e.what());
    }
    if (!name.empty()) {
      auto e = parse_engine_name(name, config_file + ": engine");
      if (!e) return e.take_error();
      return EngineChoice{*e, "the --config file's engine key"};
    }
  }
  if (wasm::jit::cpu_supports_jit()) return EngineChoice{wasm::Engine::kJit, "default: this CPU supports the JIT"};
  return EngineChoice{wasm::Engine::kInterp, "default: this CPU lacks an instruction set the JIT emits"};
}

}  // namespace genvm::executor
