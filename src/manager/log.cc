#include "manager/log.h"

#include <unistd.h>

#include <cerrno>

namespace genvm::manager {

namespace {
constexpr std::string_view kNames[] = {"trace", "debug", "info", "warn", "error"};
}

std::optional<LogLevel> parse_log_level(std::string_view name) {
  std::string lower;
  for (char c : name) lower += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  if (lower == "warning") return LogLevel::kWarn;
  for (std::size_t i = 0; i < std::size(kNames); ++i) {
    if (lower == kNames[i]) return static_cast<LogLevel>(i);
  }
  return std::nullopt;
}

std::string_view to_string(LogLevel level) { return kNames[static_cast<std::size_t>(level)]; }

void Log::line(std::string_view json_object, LogLevel level) {
  if (fd_ < 0 || level < level_) return;
  std::string buf(json_object);
  buf += '\n';
  std::size_t off = 0;
  while (off < buf.size()) {
    ssize_t n = ::write(fd_, buf.data() + off, buf.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a log that cannot be written must not take the manager down
    off += static_cast<std::size_t>(n);
  }
}

}  // namespace genvm::manager
