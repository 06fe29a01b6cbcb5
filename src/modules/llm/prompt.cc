#include "modules/llm/prompt.h"

#include <algorithm>

namespace genvm::llm {

std::optional<ImageKind> sniff_image(std::span<const std::uint8_t> d) {
  static constexpr std::uint8_t kPng[] = {0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A};
  // JPEG: SOI then any marker (GenVM's sniff wants the JFIF APP0 marker E0 only, which refuses
  // Exif JPEGs — FF D8 FF E1 — from every phone camera; we accept any marker byte).
  if (d.size() >= sizeof(kPng) && std::equal(std::begin(kPng), std::end(kPng), d.begin())) return ImageKind::kPng;
  if (d.size() >= 4 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF && d[3] >= 0xC0 && d[3] != 0xFF) return ImageKind::kJpeg;
  return std::nullopt;
}

std::string_view media_type(ImageKind k) { return k == ImageKind::kPng ? "image/png" : "image/jpeg"; }

std::string fill_slots(std::string_view text, const std::map<std::string, std::string>& slots) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    auto open = text.find("#{", i);
    if (open == std::string_view::npos) break;
    auto close = text.find('}', open + 2);
    if (close == std::string_view::npos) break;
    out.append(text.substr(i, open - i));
    auto it = slots.find(std::string(text.substr(open + 2, close - open - 2)));
    if (it != slots.end()) {
      out += it->second;
    } else {
      out.append(text.substr(open, close + 1 - open));
    }
    i = close + 1;
  }
  out.append(text.substr(i));
  return out;
}

namespace {

Result<ProviderPrompt, PromptRefusal> too_large(std::size_t n, std::uint64_t limit) {
  return PromptRefusal{"PROMPT_TOO_LARGE", std::to_string(n) + " bytes, the limit is " + std::to_string(limit)};
}

}  // namespace

Result<ProviderPrompt, PromptRefusal> prompt_from_payload(const LlmConfig& config, const module::PromptPayload& payload) {
  if (payload.images.size() > kMaxImages) {
    return PromptRefusal{"TOO_MANY_IMAGES", std::to_string(payload.images.size()) + " images, at most 2"};
  }
  ProviderPrompt p;
  for (const auto& img : payload.images) {
    if (img.size() > kMaxImageBytes) return PromptRefusal{"IMAGE_TOO_LARGE", std::to_string(img.size()) + " bytes, at most 5 MiB"};
    auto kind = sniff_image(img);
    if (!kind) return PromptRefusal{"INVALID_IMAGE", "not a PNG or JPEG image"};
    p.images.push_back({*kind, img});
  }
  if (payload.prompt.size() > config.max_prompt_bytes) return too_large(payload.prompt.size(), config.max_prompt_bytes);
  p.user = payload.prompt;
  p.format = payload.response_format == module::OutputFormat::kJson ? AnswerFormat::kJson : AnswerFormat::kText;
  if (p.format == AnswerFormat::kJson) p.system = "respond with a valid json object";  // lib-llm.lua's
  p.temperature = config.temperature;
  p.max_tokens = config.max_tokens;
  p.seed = config.seed;
  return p;
}

Result<ProviderPrompt, PromptRefusal> prompt_from_template(const LlmConfig& config,
                                                           const module::PromptTemplatePayload& payload) {
  const PromptTemplate* t = &config.eq_comparative;
  if (payload.kind == module::Template::kEqNonComparativeLeader) t = &config.eq_non_comparative_leader;
  if (payload.kind == module::Template::kEqNonComparativeValidator) t = &config.eq_non_comparative_validator;
  std::size_t slot_bytes = 0;
  for (const auto& [k, v] : payload.fields) slot_bytes += v.size();
  // Bounded before filling: a slot may appear several times in a template.
  if (slot_bytes > config.max_prompt_bytes) return too_large(slot_bytes, config.max_prompt_bytes);
  ProviderPrompt p;
  p.system = t->system;
  p.user = fill_slots(t->user, payload.fields);
  if (p.user.size() > config.max_prompt_bytes) return too_large(p.user.size(), config.max_prompt_bytes);
  p.format = payload.expects_bool() ? AnswerFormat::kBool : AnswerFormat::kText;
  p.temperature = config.temperature;
  p.max_tokens = config.template_max_tokens;
  p.seed = config.seed;
  return p;
}

}  // namespace genvm::llm
