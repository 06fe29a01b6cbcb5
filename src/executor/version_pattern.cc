#include "executor/version_pattern.h"

#include <cstring>
#include <string_view>

#include "common/calldata.h"

namespace genvm::executor {

Result<std::string> contract_version_pattern(std::span<const std::uint8_t> code) {
  static constexpr std::uint8_t kWasmMagic[4] = {0, 'a', 's', 'm'};
  static constexpr std::uint8_t kZipMagic[4] = {'P', 'K', 3, 4};
  if (code.size() >= 4 && std::memcmp(code.data(), kWasmMagic, 4) == 0) return std::string("v0.1.0");
  if (code.size() >= 4 && std::memcmp(code.data(), kZipMagic, 4) == 0) {
    return make_error("unsupported_runner", "runner archives are not read by this executor");
  }
  std::string_view text(reinterpret_cast<const char*>(code.data()), code.size());
  if (!calldata::is_valid_utf8(text)) return make_error("invalid_contract not_utf8_text", "the contract is not UTF-8 text");
  std::string_view line = text.substr(0, text.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  for (std::string_view prefix : {"//", "#", "--"}) {
    if (!line.starts_with(prefix)) continue;
    std::string_view rest = line.substr(prefix.size());
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
    if (rest.starts_with("v")) return std::string(rest);
    break;
  }
  return std::string("v*.*.*");
}

}  // namespace genvm::executor
