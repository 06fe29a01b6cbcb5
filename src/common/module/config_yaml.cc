#include "common/module/config_yaml.h"

#include <cmath>

namespace genvm::module {

Result<std::optional<std::uint64_t>> yaml_duration_ms(const YAML::Node& n, const std::string& key) {
  if (!n || n.IsNull()) return std::optional<std::uint64_t>();
  std::string text = n.IsScalar() ? n.Scalar() : std::string();
  double scale = 1;
  if (text.ends_with("ms")) {
    text.resize(text.size() - 2), scale = 0.001;
  } else if (text.ends_with("s")) {
    text.resize(text.size() - 1);
  } else if (text.ends_with("m")) {
    text.resize(text.size() - 1), scale = 60;
  }
  double s = -1;
  try {
    s = YAML::Load(text).as<double>() * scale;
  } catch (const YAML::Exception&) {
  }
  if (!(s > 0) || s > 86400 || !std::isfinite(s)) {
    return make_error("bad_config", key + ": not a duration in (0, 1 day] (seconds, or \"500ms\", \"1.5s\", \"3m\")");
  }
  return std::optional<std::uint64_t>(static_cast<std::uint64_t>(s * 1000));
}

}  // namespace genvm::module
