// The LLM module's configuration: a YAML file compatible with GenVM's genvm-module-llm.yaml.
//
//   auto c = load_llm_config("/etc/genvm/genvm-module-llm.yaml", exe_dir);
//
// GenVM's keys read (docs/PROTOCOLS.md, "## Modules"): bind_address, timeout, backends (enabled,
// host, provider, key, models {enabled, supports_json, supports_image,
// use_max_completion_tokens, timeout}, meta.priority, timeout), prompt_templates (the three, each
// {system, user}). `${ENV[NAME]}` in a string is the environment variable, `${exeDir}` the
// binary's folder. Ours: connect_timeout and first_byte_timeout (also per backend), retries,
// retry_backoff, max_prompt_bytes, ca_file, temperature, seed, max_tokens, template_max_tokens,
// gen_per_token (also per model); the script's
// keys (greybox/script_config.h). GenVM's vm_count, signer and thread-pool keys are accepted and
// not used.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "modules/greybox/script_config.h"

namespace genvm::llm {

// kMock is the module's built-in backend "mock" (LlmModule::backend), never read from a file:
// its answers come from the run's host_data mock table (mock_answer), no request is made.
enum class ProviderKind { kOpenAiCompatible, kOllama, kAnthropic, kGoogle, kMock };
// "openai-compatible", "ollama", "anthropic", "google" (GenVM's kebab-case names); not "mock".
Result<ProviderKind> provider_kind_from_name(const std::string& name);

struct ModelConfig {
  std::string name;
  bool supports_json = false;
  bool supports_image = false;
  bool use_max_completion_tokens = false;
  std::optional<std::uint64_t> timeout_ms;
  std::optional<std::uint64_t> gen_per_token;
};

struct BackendConfig {
  std::string name;
  std::string host;  // base URL, e.g. https://api.openai.com (no trailing slash)
  ProviderKind provider = ProviderKind::kOpenAiCompatible;
  std::string key;
  std::int64_t priority = 0;  // meta.priority; higher is tried first
  std::optional<std::uint64_t> timeout_ms;
  std::optional<std::uint64_t> connect_timeout_ms;     // the top level's when absent
  std::optional<std::uint64_t> first_byte_timeout_ms;  // the top level's when absent
  std::vector<ModelConfig> models;  // enabled ones only, sorted by name
};

struct PromptTemplate {
  std::string system;
  std::string user;
};

struct LlmConfig {
  std::string bind_address;
  // Only enabled backends whose key resolved; sorted as they are tried: priority descending,
  // then name descending (GenVM's default script's order).
  std::vector<BackendConfig> backends;
  std::vector<std::string> skipped_backends;  // "name: why" for the start-up log line
  PromptTemplate eq_comparative, eq_non_comparative_leader, eq_non_comparative_validator;
  std::uint64_t timeout_ms = 180'000;  // one provider request (GenVM's `timeout: 3m`)
  // A backend that accepts nothing or answers nothing must not cost the whole `timeout`: the TCP
  // (and TLS) connect is bounded by connect_timeout, and a request with no byte moving either way
  // for first_byte_timeout (the wait for a non-streamed answer's first byte, or a stall after it)
  // is abandoned as TIMEOUT, so the script falls back to the next model at once.
  std::uint64_t connect_timeout_ms = 10'000;
  std::uint64_t first_byte_timeout_ms = 60'000;
  std::uint32_t retries = 2;  // extra attempts on one model after a transient failure
  std::uint64_t retry_backoff_ms = 500;  // doubled per attempt
  std::uint64_t max_prompt_bytes = 1u << 20;  // a prompt (or filled template) above this is refused
  std::string ca_file;
  double temperature = 0.7;  // GenVM's lib-llm.lua defaults
  std::optional<std::uint64_t> seed;
  std::uint32_t max_tokens = 8000;
  std::uint32_t template_max_tokens = 1000;
  std::uint64_t gen_per_token = 0;  // GenVM's default script charges 0 per token today
  // Ours: genvm-module-llm starts with no usable backend, answering only from mocks (the
  // built-in mock backend); without it an empty backend list refuses to start.
  bool mock_only = false;
  // lua_script_path (default ${exeDir}/../config/genvm-llm-default.lua), lua_path, data_dir,
  // log_level and our lua_* limits (greybox/script_config.h).
  greybox::ScriptConfig script;
};

// Error "bad_config" naming the key. getenv is read for `${ENV[...]}`.
Result<LlmConfig> load_llm_config(const std::string& path, const std::string& exe_dir);
Result<LlmConfig> parse_llm_config(const std::string& yaml_text, const std::string& exe_dir);

}  // namespace genvm::llm
