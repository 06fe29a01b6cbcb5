// Debug modes: disabled < safe < safe-unbounded < unsafe < unsafe-tracing.
//
// The level is a per-run request field (default `disabled`), forwarded to the executor as
// `--debug-mode <level>`. Each level adds to the previous one:
//   level            capture    adds
//   disabled         disabled   production default; logs go to the manager's own log
//   safe             bounded    logs, stdout, stderr captured (bounded); deterministic
//   safe-unbounded   unbounded  Trace gl_call output emitted; deterministic
//   unsafe           unbounded  `:latest` / `:test` runner ids may be resolved
//   unsafe-tracing   unbounded  real wall-clock time in deterministic mode (RuntimeMicroSec)
// An unknown name is an error, never a downgrade.
#pragma once

#include <cstddef>
#include <string_view>

#include "common/result.h"

namespace genvm {

enum class DebugMode : int {
  kDisabled = 0,
  kSafe = 1,
  kSafeUnbounded = 2,
  kUnsafe = 3,
  kUnsafeTracing = 4,
};

// What of a run's logs, stdout and stderr reaches its result.
enum class Capture : int {
  kDisabled,   // nothing: stdout/stderr to /dev/null, logs forwarded to the manager's log
  kBounded,    // the newest kBoundedLogEntries logs and a kBoundedStreamTailBytes tail per stream
  kUnbounded,  // everything
};

// Bounded capture keeps at most this many of the most recent log entries (oldest dropped)...
inline constexpr std::size_t kBoundedLogEntries = 128;
// ...and the last this many bytes of stdout and of stderr each.
inline constexpr std::size_t kBoundedStreamTailBytes = 4 * 1024 * 1024;

inline constexpr DebugMode kDefaultDebugMode = DebugMode::kDisabled;

// "disabled", "safe", "safe-unbounded", "unsafe", "unsafe-tracing"; anything else is an error
// with code "unknown_debug_mode".
Result<DebugMode> parse_debug_mode(std::string_view name);
std::string_view to_string(DebugMode mode);
std::string_view to_string(Capture capture);

Capture capture(DebugMode mode);
// Trace gl_call output is emitted (safe-unbounded and above).
bool allows_tracing(DebugMode mode);
// `:latest` / `:test` runner ids may be resolved (unsafe and above).
bool allows_latest_resolution(DebugMode mode);
// Real time is exposed in deterministic mode (unsafe-tracing only).
bool allows_nondeterminism(DebugMode mode);
// Levels above `safe` trade away a bound or determinism: only trusted callers may ask for them.
bool is_privileged(DebugMode mode);

inline bool operator<(DebugMode a, DebugMode b) { return static_cast<int>(a) < static_cast<int>(b); }
inline bool operator<=(DebugMode a, DebugMode b) { return !(b < a); }
inline bool operator>(DebugMode a, DebugMode b) { return b < a; }
inline bool operator>=(DebugMode a, DebugMode b) { return !(a < b); }

}  // namespace genvm
