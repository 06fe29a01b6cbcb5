// Fuzz target: any blob through archive_from_code and, when it parses, the plan of its
// runner.json (no runner directory, so Depends on packaged runners fail cleanly), and the
// plan's files as a FileTree in which every mapped path finds its own bytes.
#include <cstddef>
#include <cstdint>

#include "runners/file_tree.h"
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
  if (!plan) return 0;
  auto tree = FileTree::build(plan->files);
  if (!tree) return 0;
  // Every mapped path must resolve to its own contents.
  for (const auto& [path, contents] : plan->files) {
    std::uint32_t node = 0;
    if (tree->resolve(FileTree::kRoot, path, node) != FileTree::Lookup::kFound ||
        tree->node(node).contents.data() != contents.data()) {
      __builtin_trap();
    }
  }
  return 0;
}
