// What the module sends a provider, built from a contract's request: the checks on a Prompt's
// images, the filling of the three templates' `#{...}` slots, and the provider-neutral prompt.
//
//   auto p = prompt_from_payload(config, payload);           // ExecPrompt
//   auto t = prompt_from_template(config, template_payload); // ExecPromptTemplate
//
// These are the steps GenVM's lib-llm.lua does in exec_prompt_transform and
// exec_prompt_template_transform; a Lua greybox layer would take their place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/module/protocol.h"
#include "modules/llm/config.h"

namespace genvm::llm {

inline constexpr std::size_t kMaxImages = 2;
inline constexpr std::size_t kMaxImageBytes = 5u * 1024 * 1024;

enum class ImageKind { kPng, kJpeg };
// By content (the signature bytes), as GenVM's ImageType::sniff; nullopt for anything else.
std::optional<ImageKind> sniff_image(std::span<const std::uint8_t> data);
std::string_view media_type(ImageKind k);  // image/png, image/jpeg

// What the answer must be: text, a JSON object, or a bool read from a JSON object's "result".
enum class AnswerFormat { kText, kJson, kBool };

struct Image {
  ImageKind kind;
  calldata::Bytes data;
};

struct ProviderPrompt {
  std::optional<std::string> system;
  std::string user;
  std::vector<Image> images;
  AnswerFormat format = AnswerFormat::kText;
  double temperature = 0.7;
  std::uint32_t max_tokens = 8000;
  std::optional<std::uint64_t> seed;
  bool needs_json() const { return format != AnswerFormat::kText; }
};

// A refusal the contract sees: causes for module::Answer::user_error.
struct PromptRefusal {
  std::string cause;  // TOO_MANY_IMAGES, IMAGE_TOO_LARGE, INVALID_IMAGE, PROMPT_TOO_LARGE
  std::string detail;
};

Result<ProviderPrompt, PromptRefusal> prompt_from_payload(const LlmConfig& config, const module::PromptPayload& payload);
Result<ProviderPrompt, PromptRefusal> prompt_from_template(const LlmConfig& config,
                                                           const module::PromptTemplatePayload& payload);

// Every `#{name}` whose name is a key of `slots` becomes its value; other text (and unknown
// slots) stays as written. Values are inserted once, never re-scanned.
std::string fill_slots(std::string_view text, const std::map<std::string, std::string>& slots);

}  // namespace genvm::llm
