#include "executor/log.h"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>

namespace genvm::executor {

Result<LogLevel> parse_log_level(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "trace") return LogLevel::kTrace;
  if (lower == "debug") return LogLevel::kDebug;
  if (lower == "info") return LogLevel::kInfo;
  if (lower == "warn" || lower == "warning") return LogLevel::kWarn;
  if (lower == "error") return LogLevel::kError;
  return make_error("bad_log_level", "unknown log level '" + std::string(name) +
                                         "' (expected trace, debug, info, warn or error)");
}

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return "trace";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "info";
}

namespace {

// Length of the well-formed UTF-8 sequence at s[i], or 0.
std::size_t utf8_len(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  }
  if (n == 2 && c < 0xc2) return 0;                                  // overlong
  if (n == 3 && c == 0xe0 && b(i + 1) < 0xa0) return 0;              // overlong
  if (n == 3 && c == 0xed && b(i + 1) >= 0xa0) return 0;             // surrogate
  if (n == 4 && (c > 0xf4 || (c == 0xf0 && b(i + 1) < 0x90) || (c == 0xf4 && b(i + 1) >= 0x90))) return 0;
  return n;
}

}  // namespace

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t n = utf8_len(s, i);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f || n == 0) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
      i += 1;
      continue;
    } else {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    i += 1;
  }
  out += '"';
  return out;
}

LogValue LogValue::str(std::string_view s) {
  LogValue v;
  v.json_ = json_quote(s);
  return v;
}

LogValue LogValue::num(std::int64_t x) {
  LogValue v;
  v.json_ = std::to_string(x);
  return v;
}

LogValue LogValue::num(std::uint64_t x) {
  LogValue v;
  v.json_ = std::to_string(x);
  return v;
}

void Logger::write(LogLevel level, std::string_view target, std::string_view message,
                   std::initializer_list<LogField> fields) const {
  if (!enabled(level)) return;
  std::string line = "{\"level\":\"" + std::string(to_string(level)) + "\",\"target\":" + json_quote(target) +
                     ",\"message\":" + json_quote(message);
  for (const auto& [k, v] : fields) line += "," + json_quote(k) + ":" + v.json();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch());
  line += ",\"ts\":\"" + std::to_string(ms.count()) + "\"}\n";
  // Best effort, one write: a log that cannot be written must not change the run.
  [[maybe_unused]] ssize_t n = ::write(fd_, line.data(), line.size());
}

}  // namespace genvm::executor
