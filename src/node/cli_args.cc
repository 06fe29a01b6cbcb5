#include "node/cli_args.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "node/state.h"

namespace genvm::node {

namespace {

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool looks_like_word(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
          c == '.' || c == ' ')) {
      return false;
    }
  }
  return !(s[0] >= '0' && s[0] <= '9') && s != "null" && s != "true" && s != "false";
}

constexpr const char* kSyntax =
    "an argument is calldata text: 5, -3, \"text\" (quoted), addr#<40 hex> or 0x<40 hex>, b#<hex>, [1, 2], "
    "{\"k\": 1}, true, null; @FILE or @- reads it from a file or stdin, b@FILE or b@- passes raw bytes";

// The text parser's message may quote the offending token whole ("unexpected 'xxxx…' at
// column 2"); cut that quote like any other.
std::string bounded_parser_message(const std::string& m) {
  std::size_t open = m.find('\''), close = m.rfind('\'');
  if (open == std::string::npos || close <= open + 1 + kQuoteMax) return m.substr(0, 4 * kQuoteMax);
  return m.substr(0, open) + quote_prefix(std::string_view(m).substr(open + 1, close - open - 1)) + m.substr(close + 1);
}

}  // namespace

std::string quote_prefix(std::string_view s) {
  std::string out = "'";
  for (std::size_t i = 0; i < s.size() && i < kQuoteMax; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    out.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
  }
  out += "'";
  if (s.size() > kQuoteMax) out += "... (" + std::to_string(s.size()) + " characters)";
  return out;
}

Result<calldata::Bytes> read_input_file(const std::string& path, std::size_t max) {
  const bool is_stdin = path == "-";
  const std::string name = is_stdin ? "standard input" : path;
  int fd = is_stdin ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("bad_file", "cannot read " + name + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    bool own;
    ~Closer() {
      if (own) ::close(fd);
    }
  } closer{fd, !is_stdin};
  struct stat sb {};
  if (::fstat(fd, &sb) != 0) return make_error("bad_file", "cannot read " + name + ": " + std::strerror(errno));
  if (S_ISDIR(sb.st_mode)) return make_error("bad_file", name + " is a directory, not a file");
  if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode) && !S_ISCHR(sb.st_mode) && !S_ISSOCK(sb.st_mode)) {
    return make_error("bad_file", name + " is not a regular file");
  }
  if (S_ISREG(sb.st_mode) && static_cast<std::uint64_t>(sb.st_size) > max) {
    return make_error("bad_file", name + " is " + std::to_string(sb.st_size) + " bytes, more than the " +
                                      std::to_string(max) + " accepted");
  }
  calldata::Bytes out;
  std::uint8_t buf[65536];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return make_error("bad_file", "cannot read " + name + ": " + std::strerror(errno));
    if (r == 0) break;
    if (out.size() + static_cast<std::size_t>(r) > max) {
      return make_error("bad_file", name + " holds more than the " + std::to_string(max) + " bytes accepted");
    }
    out.insert(out.end(), buf, buf + r);
  }
  return out;
}

Result<calldata::Value> ArgReader::parse(std::string_view raw, std::size_t index) {
  const std::string which = "argument " + std::to_string(index);
  auto from_source = [&](std::string_view path) -> Result<calldata::Bytes> {
    if (path.empty()) return make_error("bad_arg", which + ": @ needs a file name, or - for stdin");
    if (path == "-") {
      if (stdin_used_) return make_error("bad_arg", which + ": standard input (@-) can be read only once");
      stdin_used_ = true;
    }
    auto b = read_input_file(std::string(path), kMaxArgBytes);
    if (!b) return make_error("bad_arg", which + ": " + b.error().message);
    return b;
  };
  if (raw.starts_with("b@")) {
    auto b = from_source(raw.substr(2));
    if (!b) return b.take_error();
    return calldata::Value(std::move(*b));
  }
  if (raw.starts_with("@")) {
    auto b = from_source(raw.substr(1));
    if (!b) return b.take_error();
    std::string_view text(reinterpret_cast<const char*>(b->data()), b->size());
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    auto v = calldata::parse_text(text);
    if (!v) {
      return make_error("bad_arg", which + " (from " + std::string(raw.substr(1) == "-" ? "stdin" : raw.substr(1)) +
                                       ") " + quote_prefix(text) + " is not calldata text: " +
                                       bounded_parser_message(v.error().message));
    }
    return v;
  }
  if (raw.starts_with("0x") || raw.starts_with("0X")) {
    std::string_view h = raw.substr(2);
    bool all_hex = !h.empty();
    for (char c : h) all_hex = all_hex && is_hex(c);
    if (all_hex && h.size() == 40) {
      auto a = parse_address(std::string("0x") + std::string(h));
      if (a) return calldata::Value(*a);
    }
    return make_error("bad_arg", which + " " + quote_prefix(raw) + ": 0x is an address only with exactly 40 hex digits" +
                                     (all_hex ? " (this has " + std::to_string(h.size()) + ")" : "") +
                                     "; bytes are b#<hex>, numbers are decimal");
  }
  auto v = calldata::parse_text(raw);
  if (v) return v;
  if (looks_like_word(raw)) {
    return make_error("bad_arg", which + " " + quote_prefix(raw) + " is not calldata text: a string is quoted, \"" +
                                     std::string(raw.substr(0, kQuoteMax)) + "\" (in a shell: '\"...\"')");
  }
  return make_error("bad_arg", which + " " + quote_prefix(raw) + " is not calldata text (" + bounded_parser_message(v.error().message) +
                                   "); " + kSyntax);
}

}  // namespace genvm::node
