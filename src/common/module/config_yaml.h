// What the modules' YAML configurations share (genvm-module-web, genvm-module-llm).
//
//   auto ms = yaml_duration_ms(root["timeout"], "timeout");   // nullopt when absent
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "common/result.h"

namespace genvm::module {

// A duration: a number of seconds, or GenVM's Timeout spelling ("500ms", "1.5s", "3m"), in
// (0, 1 day]; nullopt when the key is absent or null; error "bad_config" naming `key` else.
Result<std::optional<std::uint64_t>> yaml_duration_ms(const YAML::Node& n, const std::string& key);

}  // namespace genvm::module
