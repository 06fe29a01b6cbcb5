// Logger: the executor's structured log, one JSON object per line on the `--log-fd` descriptor,
// the shape the public manager's log reader takes (run.rs read_log_pipe): a `level` field
// (trace, debug, info, warn, error), then `target`, `message`, the record's own fields, `ts`
// (milliseconds since the epoch, as a string).
//
//   Logger log(fd, LogLevel::kInfo);
//   log.info("run", "result delivered", {{"kind", LogValue::str("Return")}});
//
// Writing is best effort: a line that cannot be written never changes a run's result, and a
// logger on fd -1 writes nothing. One write(2) per line, so lines from one process never
// interleave.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace genvm::executor {

enum class LogLevel : int { kTrace = 0, kDebug = 1, kInfo = 2, kWarn = 3, kError = 4 };
// "trace", "debug", "info", "warn" (also "warning"), "error", any case; else "bad_log_level".
Result<LogLevel> parse_log_level(std::string_view name);
std::string_view to_string(LogLevel level);

// A field's value, already as JSON text.
class LogValue {
 public:
  static LogValue str(std::string_view s);
  static LogValue num(std::int64_t v);
  static LogValue num(std::uint64_t v);
  const std::string& json() const { return json_; }

 private:
  std::string json_;
};
using LogField = std::pair<std::string_view, LogValue>;

class Logger {
 public:
  Logger() = default;  // writes nothing
  Logger(int fd, LogLevel min_level) : fd_(fd), min_(min_level) {}

  bool enabled(LogLevel level) const { return fd_ >= 0 && level >= min_; }
  void write(LogLevel level, std::string_view target, std::string_view message,
             std::initializer_list<LogField> fields = {}) const;
  void debug(std::string_view target, std::string_view message, std::initializer_list<LogField> f = {}) const {
    write(LogLevel::kDebug, target, message, f);
  }
  void info(std::string_view target, std::string_view message, std::initializer_list<LogField> f = {}) const {
    write(LogLevel::kInfo, target, message, f);
  }
  void warn(std::string_view target, std::string_view message, std::initializer_list<LogField> f = {}) const {
    write(LogLevel::kWarn, target, message, f);
  }
  void error(std::string_view target, std::string_view message, std::initializer_list<LogField> f = {}) const {
    write(LogLevel::kError, target, message, f);
  }

 private:
  int fd_ = -1;
  LogLevel min_ = LogLevel::kInfo;
};

// `s` as a JSON string literal (quotes included); control characters as \u00XX, invalid UTF-8
// bytes as \u00XX of the byte (a log line stays valid JSON whatever a contract printed).
std::string json_quote(std::string_view s);

}  // namespace genvm::executor
