// What the module sends a provider: the provider-neutral prompt a script's
// exec_prompt_in_provider call describes, and the checks on a Prompt's images.
//
//   if (auto r = check_images(payload.images)) refuse(*r);   // before the script runs
//
// Building the prompt (the JSON system message, the templates' `#{...}` slots, the size bound)
// is the script's work, as in GenVM's lib-llm.lua (scripts/default.lua).
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

// At most kMaxImages, each at most kMaxImageBytes and a PNG or JPEG by content (GenVM's handler
// checks the same before its script runs): TOO_MANY_IMAGES, IMAGE_TOO_LARGE, INVALID_IMAGE.
std::optional<PromptRefusal> check_images(const std::vector<calldata::Bytes>& images);

}  // namespace genvm::llm
