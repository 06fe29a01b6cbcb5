// The manager's own log: one JSON object per line on a file descriptor (stderr by default),
// each at a level; lines below the current level are not written (POST /log/level moves it).
// Single-threaded by contract, like the registry that writes most lines.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace genvm::manager {

// genvm_common's logger::Level.
enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError };
// Level::from_str: any case, and "warning" for warn.
std::optional<LogLevel> parse_log_level(std::string_view name);
std::string_view to_string(LogLevel level);  // "trace" .. "error"

class Log {
 public:
  explicit Log(int fd = 2, LogLevel level = LogLevel::kInfo) : fd_(fd), level_(level) {}
  // Appends '\n'; a short write is retried.
  void line(std::string_view json_object, LogLevel level = LogLevel::kInfo);
  int fd() const { return fd_; }
  void set_level(LogLevel level) { level_ = level; }
  LogLevel level() const { return level_; }

 private:
  int fd_;
  LogLevel level_;
};

}  // namespace genvm::manager
