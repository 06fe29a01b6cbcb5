#include "modules/llm/config.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "common/module/config_yaml.h"

namespace genvm::llm {

namespace {

Error bad(const std::string& key, const std::string& why) { return make_error("bad_config", key + ": " + why); }

// `${exeDir}` and `${ENV[NAME]}`; an unset variable is reported through `missing`.
std::string expand(std::string s, const std::string& exe_dir, std::string* missing) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, 9, "${exeDir}") == 0) {
      out += exe_dir;
      i += 9;
    } else if (s.compare(i, 6, "${ENV[") == 0) {
      auto end = s.find("]}", i + 6);
      if (end == std::string::npos) {
        out += s.substr(i);
        break;
      }
      std::string name = s.substr(i + 6, end - i - 6);
      const char* v = std::getenv(name.c_str());
      if (v == nullptr && missing != nullptr) *missing = name;
      out += v == nullptr ? "" : v;
      i = end + 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

Result<std::string> string_at(const YAML::Node& n, const std::string& key) {
  if (!n || !n.IsScalar()) return bad(key, "missing or not a string");
  return n.Scalar();
}

Result<bool> bool_at(const YAML::Node& n, const std::string& key, bool fallback) {
  if (!n || n.IsNull()) return fallback;
  if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false")) return bad(key, "not true/false");
  return n.Scalar() == "true";
}

Result<std::uint64_t> u64_at(const YAML::Node& n, const std::string& key, std::uint64_t fallback, std::uint64_t max) {
  if (!n || n.IsNull()) return fallback;
  const std::string text = n.IsScalar() ? n.Scalar() : std::string();
  if (text.empty() || text.size() > 19 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad(key, "not a non-negative integer");
  }
  std::uint64_t v = std::stoull(text);
  if (v > max) return bad(key, "above " + std::to_string(max));
  return v;
}

Result<PromptTemplate> read_template(const YAML::Node& templates, const std::string& name) {
  const std::string key = "prompt_templates." + name;
  const YAML::Node t = templates[name];
  if (!t || !t.IsMap()) return bad(key, "missing or not a map");
  PromptTemplate out;
  auto system = string_at(t["system"], key + ".system");
  if (!system) return system.take_error();
  auto user = string_at(t["user"], key + ".user");
  if (!user) return user.take_error();
  out.system = std::move(*system);
  out.user = std::move(*user);
  return out;
}

// One backend; nullopt (and `skipped` says why) when disabled or its key is not in the environment.
Result<std::optional<BackendConfig>> read_backend(const std::string& name, const YAML::Node& b, const std::string& exe_dir,
                                                  std::string* skipped) {
  const std::string key = "backends." + name;
  if (!b.IsMap()) return bad(key, "not a map");
  auto enabled = bool_at(b["enabled"], key + ".enabled", true);
  if (!enabled) return enabled.take_error();
  if (!*enabled) {
    *skipped = name + ": disabled";
    return std::optional<BackendConfig>();
  }
  BackendConfig out;
  out.name = name;
  auto host = string_at(b["host"], key + ".host");
  if (!host) return host.take_error();
  out.host = expand(*host, exe_dir, nullptr);
  while (!out.host.empty() && out.host.back() == '/') out.host.pop_back();
  if (!out.host.starts_with("http://") && !out.host.starts_with("https://")) return bad(key + ".host", "not an http(s) URL");
  auto provider = string_at(b["provider"], key + ".provider");
  if (!provider) return provider.take_error();
  auto kind = provider_kind_from_name(*provider);
  if (!kind) return bad(key + ".provider", kind.error().message);
  out.provider = *kind;
  auto raw_key = string_at(b["key"], key + ".key");
  if (!raw_key) return raw_key.take_error();
  std::string missing;
  out.key = expand(*raw_key, exe_dir, &missing);
  if (!missing.empty()) {
    *skipped = name + ": environment variable " + missing + " is not set";
    return std::optional<BackendConfig>();
  }
  if (b["meta"] && b["meta"].IsMap() && b["meta"]["priority"]) {
    try {
      out.priority = b["meta"]["priority"].as<std::int64_t>();
    } catch (const YAML::Exception&) {
      return bad(key + ".meta.priority", "not an integer");
    }
  }
  for (auto [field, dest] : {std::pair{"timeout", &out.timeout_ms}, std::pair{"connect_timeout", &out.connect_timeout_ms},
                             std::pair{"first_byte_timeout", &out.first_byte_timeout_ms}}) {
    auto d = module::yaml_duration_ms(b[field], key + "." + field);
    if (!d) return d.take_error();
    *dest = *d;
  }
  const YAML::Node models = b["models"];
  if (!models || !models.IsMap()) return bad(key + ".models", "missing or not a map");
  for (const auto& kv : models) {
    ModelConfig m;
    m.name = kv.first.Scalar();
    const std::string mkey = key + ".models." + m.name;
    const YAML::Node& mv = kv.second;
    if (!mv.IsMap() && !mv.IsNull()) return bad(mkey, "not a map");
    auto model_enabled = bool_at(mv["enabled"], mkey + ".enabled", true);
    auto json = bool_at(mv["supports_json"], mkey + ".supports_json", false);
    auto image = bool_at(mv["supports_image"], mkey + ".supports_image", false);
    auto mct = bool_at(mv["use_max_completion_tokens"], mkey + ".use_max_completion_tokens", false);
    for (auto* r : {&model_enabled, &json, &image, &mct}) {
      if (!*r) return r->take_error();
    }
    auto mt = module::yaml_duration_ms(mv["timeout"], mkey + ".timeout");
    if (!mt) return mt.take_error();
    if (mv["gen_per_token"]) {
      auto g = u64_at(mv["gen_per_token"], mkey + ".gen_per_token", 0, UINT64_MAX / 2);
      if (!g) return g.take_error();
      m.gen_per_token = *g;
    }
    if (!*model_enabled) continue;
    m.supports_json = *json, m.supports_image = *image, m.use_max_completion_tokens = *mct, m.timeout_ms = *mt;
    out.models.push_back(std::move(m));
  }
  std::sort(out.models.begin(), out.models.end(), [](const ModelConfig& a, const ModelConfig& b) { return a.name < b.name; });
  if (out.models.empty()) {
    *skipped = name + ": no enabled model";
    return std::optional<BackendConfig>();
  }
  return std::optional<BackendConfig>(std::move(out));
}

}  // namespace

Result<ProviderKind> provider_kind_from_name(const std::string& name) {
  if (name == "openai-compatible") return ProviderKind::kOpenAiCompatible;
  if (name == "ollama") return ProviderKind::kOllama;
  if (name == "anthropic") return ProviderKind::kAnthropic;
  if (name == "google") return ProviderKind::kGoogle;
  return make_error("bad_provider", "`" + name + "` is not openai-compatible, ollama, anthropic or google");
}

Result<LlmConfig> parse_llm_config(const std::string& text, const std::string& exe_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return make_error("bad_config", e.what());
  }
  if (!root || !root.IsMap()) return make_error("bad_config", "the configuration is not a map");
  LlmConfig c;
  try {
    if (root["bind_address"] && !root["bind_address"].IsNull()) {
      c.bind_address = expand(root["bind_address"].as<std::string>(), exe_dir, nullptr);
    }
    if (root["ca_file"] && !root["ca_file"].IsNull()) c.ca_file = expand(root["ca_file"].as<std::string>(), exe_dir, nullptr);
    if (root["temperature"]) c.temperature = root["temperature"].as<double>();
  } catch (const YAML::Exception& e) {
    return make_error("bad_config", std::string("bind_address / ca_file / temperature: ") + e.what());
  }
  if (!(c.temperature >= 0 && c.temperature <= 2)) return bad("temperature", "not in [0, 2]");
  for (auto [key, out] : {std::pair{"timeout", &c.timeout_ms}, std::pair{"connect_timeout", &c.connect_timeout_ms},
                          std::pair{"first_byte_timeout", &c.first_byte_timeout_ms}, std::pair{"retry_backoff", &c.retry_backoff_ms}}) {
    auto d = module::yaml_duration_ms(root[key], key);
    if (!d) return d.take_error();
    if (*d) *out = **d;
  }
  auto retries = u64_at(root["retries"], "retries", c.retries, 10);
  auto max_prompt = u64_at(root["max_prompt_bytes"], "max_prompt_bytes", c.max_prompt_bytes, 32u << 20);
  auto max_tokens = u64_at(root["max_tokens"], "max_tokens", c.max_tokens, 1u << 20);
  auto template_max_tokens = u64_at(root["template_max_tokens"], "template_max_tokens", c.template_max_tokens, 1u << 20);
  auto gen_per_token = u64_at(root["gen_per_token"], "gen_per_token", c.gen_per_token, UINT64_MAX / 2);
  for (auto* r : {&retries, &max_prompt, &max_tokens, &template_max_tokens, &gen_per_token}) {
    if (!*r) return r->take_error();
  }
  c.retries = static_cast<std::uint32_t>(*retries);
  c.max_prompt_bytes = *max_prompt;
  c.max_tokens = static_cast<std::uint32_t>(*max_tokens);
  c.template_max_tokens = static_cast<std::uint32_t>(*template_max_tokens);
  c.gen_per_token = *gen_per_token;
  if (root["seed"] && !root["seed"].IsNull()) {
    auto seed = u64_at(root["seed"], "seed", 0, UINT32_MAX);
    if (!seed) return seed.take_error();
    c.seed = *seed;
  }

  auto mock_only = bool_at(root["mock_only"], "mock_only", false);
  if (!mock_only) return mock_only.take_error();
  c.mock_only = *mock_only;

  auto script = greybox::read_script_config(root, exe_dir, "genvm-llm-default.lua");
  if (!script) return script.take_error();
  c.script = std::move(*script);

  const YAML::Node templates = root["prompt_templates"];
  if (!templates || !templates.IsMap()) return bad("prompt_templates", "missing or not a map");
  for (auto [name, out] : {std::pair{"eq_comparative", &c.eq_comparative},
                           std::pair{"eq_non_comparative_leader", &c.eq_non_comparative_leader},
                           std::pair{"eq_non_comparative_validator", &c.eq_non_comparative_validator}}) {
    auto t = read_template(templates, name);
    if (!t) return t.take_error();
    *out = std::move(*t);
  }

  const YAML::Node backends = root["backends"];
  if (!backends || !backends.IsMap()) return bad("backends", "missing or not a map");
  for (const auto& kv : backends) {
    std::string skipped;
    auto b = read_backend(kv.first.Scalar(), kv.second, exe_dir, &skipped);
    if (!b) return b.take_error();
    if (*b) {
      c.backends.push_back(std::move(**b));
    } else {
      c.skipped_backends.push_back(std::move(skipped));
    }
  }
  std::sort(c.backends.begin(), c.backends.end(), [](const BackendConfig& a, const BackendConfig& b) {
    return a.priority != b.priority ? a.priority > b.priority : a.name > b.name;
  });
  return c;
}

Result<LlmConfig> load_llm_config(const std::string& path, const std::string& exe_dir) {
  std::ifstream in(path);
  if (!in) return make_error("bad_config", "cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_llm_config(ss.str(), exe_dir);
}

}  // namespace genvm::llm
