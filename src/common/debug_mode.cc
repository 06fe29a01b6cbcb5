#include "common/debug_mode.h"

#include <array>
#include <string>

namespace genvm {
namespace {

struct Row {
  DebugMode mode;
  std::string_view name;
  Capture capture;
  bool tracing;
  bool latest_resolution;
  bool nondeterminism;
};

// The seed's table, one row per level, in order.
constexpr std::array<Row, 5> kTable{{
    {DebugMode::kDisabled, "disabled", Capture::kDisabled, false, false, false},
    {DebugMode::kSafe, "safe", Capture::kBounded, false, false, false},
    {DebugMode::kSafeUnbounded, "safe-unbounded", Capture::kUnbounded, true, false, false},
    {DebugMode::kUnsafe, "unsafe", Capture::kUnbounded, true, true, false},
    {DebugMode::kUnsafeTracing, "unsafe-tracing", Capture::kUnbounded, true, true, true},
}};

const Row& row(DebugMode mode) { return kTable[static_cast<std::size_t>(mode)]; }

}  // namespace

Result<DebugMode> parse_debug_mode(std::string_view name) {
  for (const Row& r : kTable) {
    if (r.name == name) return r.mode;
  }
  return make_error("unknown_debug_mode",
                    "unknown debug mode '" + std::string(name) +
                        "' (expected disabled, safe, safe-unbounded, unsafe or unsafe-tracing)");
}

std::string_view to_string(DebugMode mode) { return row(mode).name; }

std::string_view to_string(Capture capture) {
  switch (capture) {
    case Capture::kDisabled: return "disabled";
    case Capture::kBounded: return "bounded";
    case Capture::kUnbounded: return "unbounded";
  }
  return "disabled";
}

Capture capture(DebugMode mode) { return row(mode).capture; }
bool allows_tracing(DebugMode mode) { return row(mode).tracing; }
bool allows_latest_resolution(DebugMode mode) { return row(mode).latest_resolution; }
bool allows_nondeterminism(DebugMode mode) { return row(mode).nondeterminism; }
bool is_privileged(DebugMode mode) { return mode > DebugMode::kSafe; }

}  // namespace genvm
