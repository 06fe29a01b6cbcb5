#include "executor/fees/config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <set>
#include <string>

namespace genvm::executor::fees {

namespace {

Error config_error(std::string message) { return make_error("fees_config", std::move(message)); }

Status check_keys(const YAML::Node& map, const std::string& where, const std::set<std::string>& allowed) {
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) return config_error(where + ": a key is not a string");
    std::string key = kv.first.Scalar();
    if (!allowed.contains(key)) return config_error(where + "." + key + ": unknown key");
  }
  return {};
}

Result<std::string> text(const YAML::Node& map, const std::string& where, const char* key) {
  YAML::Node n = map[key];
  if (!n.IsDefined() || n.IsNull()) return config_error(where + "." + key + ": missing");
  if (!n.IsScalar()) return config_error(where + "." + key + ": not a string");
  return n.Scalar();
}

Result<std::uint8_t> bucket_index(const YAML::Node& n, const std::string& where) {
  if (!n.IsScalar()) return config_error(where + ": not a bucket number");
  const std::string& s = n.Scalar();
  if (s.empty() || s.size() > 3 || s.find_first_not_of("0123456789") != std::string::npos) {
    return config_error(where + ": bucket number must be an integer 0..255, got `" + s + "`");
  }
  int v = std::atoi(s.c_str());
  if (v > 255) return config_error(where + ": bucket number " + s + " exceeds 255");
  return static_cast<std::uint8_t>(v);
}

Result<BucketRule> bucket_rule(const YAML::Node& fees, const char* name) {
  std::string where = std::string("fees.") + name;
  YAML::Node n = fees[name];
  if (!n.IsDefined() || n.IsNull()) return config_error(where + ": missing");
  if (!n.IsMap()) return config_error(where + ": not a map");
  if (auto s = check_keys(n, where, {"bucket_no", "subtract_on_start_expr", "delta_expr"}); !s) return s.take_error();
  BucketRule rule;
  YAML::Node b = n["bucket_no"];
  if (!b.IsDefined() || b.IsNull()) return config_error(where + ".bucket_no: missing");
  if (b.IsSequence()) {
    for (std::size_t i = 0; i < b.size(); ++i) {
      auto idx = bucket_index(b[i], where + ".bucket_no[" + std::to_string(i) + "]");
      if (!idx) return idx.error();
      rule.bucket_no.push_back(*idx);
    }
  } else {
    auto idx = bucket_index(b, where + ".bucket_no");
    if (!idx) return idx.error();
    rule.bucket_no.push_back(*idx);
  }
  if (rule.bucket_no.empty()) return config_error(where + ".bucket_no: must name at least one bucket");
  if (n["subtract_on_start_expr"].IsDefined()) {
    auto s = text(n, where, "subtract_on_start_expr");
    if (!s) return s.error();
    rule.subtract_on_start_expr = std::move(*s);
  }
  auto d = text(n, where, "delta_expr");
  if (!d) return d.error();
  rule.delta_expr = std::move(*d);
  return rule;
}

Result<FeesConfig> from_yaml(const YAML::Node& root) {
  if (!root.IsMap()) return config_error("the config is not a map");
  YAML::Node fees = root["fees"];
  if (!fees.IsDefined() || fees.IsNull()) return config_error("fees: missing");
  if (!fees.IsMap()) return config_error("fees: not a map");
  if (auto s = check_keys(fees, "fees", {"expr_prelude", "storage", "message_receipt", "nondet_output", "message_fee", "event"});
      !s) {
    return s.take_error();
  }
  FeesConfig c;
  auto prelude = text(fees, "fees", "expr_prelude");
  if (!prelude) return prelude.error();
  c.expr_prelude = std::move(*prelude);
  struct Slot {
    const char* name;
    BucketRule* rule;
  };
  for (Slot slot : {Slot{"storage", &c.storage}, Slot{"message_receipt", &c.message_receipt},
                    Slot{"nondet_output", &c.nondet_output}, Slot{"message_fee", &c.message_fee},
                    Slot{"event", &c.event}}) {
    auto r = bucket_rule(fees, slot.name);
    if (!r) return r.error();
    *slot.rule = std::move(*r);
  }
  return c;
}

}  // namespace

Result<FeesConfig> parse_fees_config(std::string_view yaml_text) {
  try {
    return from_yaml(YAML::Load(std::string(yaml_text)));
  } catch (const YAML::Exception& e) {
    return config_error(std::string("not YAML: ") + e.what());
  }
}

Result<FeesConfig> load_fees_config(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return config_error("cannot read " + path);
  std::ostringstream text;
  text << f.rdbuf();
  if (!f.good() && !f.eof()) return config_error("cannot read " + path);
  auto c = parse_fees_config(text.str());
  if (!c) return config_error(path + ": " + c.error().message);
  return c;
}

const FeesConfig& default_fees_config() {
  // The embedded text is tested to parse (config_test.cc), so a failure here is a build defect.
  static const FeesConfig config = [] {
    auto c = parse_fees_config(default_fees_yaml());
    if (!c) std::abort();
    return std::move(*c);
  }();
  return config;
}

}  // namespace genvm::executor::fees
