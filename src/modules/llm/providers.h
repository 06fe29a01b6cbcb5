// The providers' HTTP shapes: the request one prompt becomes, and what is read back.
//
//   HttpCall call = build_request(backend, model, prompt);       // URL, headers, JSON body
//   auto reply = parse_reply(backend.provider, status, body);    // text + token usage
//
// openai-compatible: POST {host}/v1/chat/completions, `Authorization: Bearer KEY`, messages
//   (system, then user with text and image_url data: URLs), temperature, seed, max_tokens or
//   max_completion_tokens (model flag), response_format {type: json_object} for JSON answers.
// ollama: POST {host}/api/chat, stream false, format "json", options {temperature, seed,
//   num_predict}, images as base64.
// anthropic: POST {host}/v1/messages, x-api-key + anthropic-version, system, max_tokens,
//   temperature, base64 image blocks (no JSON mode: the system message asks for JSON).
// google: POST {host}/v1beta/models/{model}:generateContent, x-goog-api-key, system_instruction,
//   contents with inline_data, generationConfig {temperature, seed, maxOutputTokens,
//   responseMimeType application/json}.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "modules/llm/config.h"
#include "modules/llm/prompt.h"

namespace genvm::llm {

struct HttpCall {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // JSON
};

struct TokenUsage {
  std::uint64_t input = 0;
  std::uint64_t output = 0;
  std::uint64_t total = 0;  // input + output when the provider reports no total
};

struct ProviderReply {
  std::string text;  // the model's answer (for JSON formats, the JSON text)
  TokenUsage usage;
};

HttpCall build_request(const BackendConfig& backend, const ModelConfig& model, const ProviderPrompt& prompt);

// Errors (code): "provider_status" (not 2xx; message holds the status and the start of the
// body), "provider_reply" (a 2xx body that is not the provider's shape).
Result<ProviderReply> parse_reply(ProviderKind kind, long status, const std::string& body);

}  // namespace genvm::llm
