// Fuzz target: any blob through archive_from_code and, when it parses, the plan of its
// runner.json (no runner directory, so Depends on packaged runners fail cleanly).
#include <cstddef>
#include <cstdint>

#include "runners/runners.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace genvm::runners;
  auto blob = std::make_shared<const std::string>(reinterpret_cast<const char*>(data), size);
  ArchiveLimits limits;
  limits.max_entries = 256;
  auto arch = archive_from_code(blob, limits);
  if (!arch) return 0;
  PlanOptions options;
  options.ram_budget = 64u << 20;
  auto plan = make_plan(std::make_shared<const Archive>(std::move(*arch)), nullptr, options);
  (void)plan;
  return 0;
}
