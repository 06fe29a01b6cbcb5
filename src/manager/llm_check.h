// POST /llm/check (handlers.rs handle_llm_check): each listed provider configuration is asked
// each test prompt directly (no module needs to run), and every pair is reported.
//
//   auto req = parse_llm_check_request(body);          // {configs: [...], test_prompts: [...]}
//   std::string json = run_llm_check(*req);            // blocking: HTTP calls; off the io thread
//
// A configuration is {host, provider, model, key}; the key may be `${ENV[NAME]}` (the manager's
// environment; an unset variable is empty, as the public templater leaves it). A test prompt is
// {system_message?, user_message, temperature?, max_tokens?, use_max_completion_tokens?, seed?,
// images?}; images are refused (a pair with images is reported unavailable). The answer is the
// JSON array [{config_index, prompt_index, available, error, response}] in configs-major order.
// One request per pair through the LLM module's provider client (src/modules/llm/providers.h,
// http_post.h): TLS verified, 30 s to connect, `timeout_ms` for the whole request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/result.h"

namespace genvm::manager {

struct LlmCheckConfig {
  std::string host, provider, model, key;
};

struct LlmCheckPrompt {
  std::optional<std::string> system_message;
  std::string user_message;
  double temperature = 0.7;
  std::uint32_t max_tokens = 100;
  bool use_max_completion_tokens = false;
  std::optional<std::uint64_t> seed;
  bool has_images = false;
};

struct LlmCheckRequest {
  std::vector<LlmCheckConfig> configs;
  std::vector<LlmCheckPrompt> test_prompts;
  std::uint64_t timeout_ms = 60'000;
};

// At most 64 configs and 64 prompts (ours: a check is a handful of calls). Code "bad_request".
Result<LlmCheckRequest> parse_llm_check_request(const JsonValue& body);
std::string run_llm_check(const LlmCheckRequest& req);

}  // namespace genvm::manager
