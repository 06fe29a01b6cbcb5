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

std::optional<PromptRefusal> check_images(const std::vector<calldata::Bytes>& images) {
  if (images.size() > kMaxImages) return PromptRefusal{"TOO_MANY_IMAGES", std::to_string(images.size()) + " images, at most 2"};
  for (const auto& img : images) {
    if (img.size() > kMaxImageBytes) return PromptRefusal{"IMAGE_TOO_LARGE", std::to_string(img.size()) + " bytes, at most 5 MiB"};
    if (!sniff_image(img)) return PromptRefusal{"INVALID_IMAGE", "not a PNG or JPEG image"};
  }
  return std::nullopt;
}

}  // namespace genvm::llm
