// genvm-calldata: converts calldata between its text form and its binary (or hex) encoding,
// and prints seeded random values for interop tests. See --help.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "common/calldata.h"

namespace {

namespace cd = genvm::calldata;

constexpr const char* kUsage =
    "usage: genvm-calldata <command> [options]\n"
    "\n"
    "Converts GenVM calldata between its text form and its binary encoding.\n"
    "\n"
    "commands:\n"
    "  encode [--hex] [--lines]  read the text form on stdin, write the encoding to stdout\n"
    "                            (--hex: as lower-case hex and a newline)\n"
    "  decode [--hex] [--lines]  read the encoding (--hex: as hex text, whitespace ignored)\n"
    "                            on stdin, write the text form and a newline\n"
    "  random [--seed N] [--count K] [--depth D] [--hex]\n"
    "                            print K seeded random values, one per line, as text\n"
    "                            (or --hex encodings); the same N gives the same values\n"
    "\n"
    "  --lines   one value per input line, one result per output line (needs --hex);\n"
    "            an error names its 1-based line\n"
    "  --help    this text\n"
    "\n"
    "text form: null true false 123 -5 \"str\\n\" b#00ff addr#<40 hex> [1, 2] {\"k\": 1}\n"
    "errors: one line 'genvm-calldata: <code>: <message>' on stderr, exit 1; usage errors exit 2\n";

int usage_error(const std::string& what) {
  std::fprintf(stderr, "genvm-calldata: usage: %s (see --help)\n", what.c_str());
  return 2;
}

int fail(const genvm::Error& e, const std::string& where = "") {
  std::fprintf(stderr, "genvm-calldata: %s: %s%s\n", e.code.c_str(), where.c_str(), e.message.c_str());
  return 1;
}

std::string read_stdin() {
  std::string data;
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) data.append(buf, n);
  return data;
}

void write_stdout(const void* data, size_t size) { std::fwrite(data, 1, size, stdout); }

std::string to_hex(const std::vector<uint8_t>& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

genvm::Result<std::vector<uint8_t>> from_hex(std::string_view text) {
  std::vector<uint8_t> out;
  int high = -1;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    int d = (c >= '0' && c <= '9') ? c - '0'
            : (c >= 'a' && c <= 'f') ? c - 'a' + 10
            : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                     : -1;
    if (d < 0) return genvm::make_error("bad_hex", "not a hex digit at character " + std::to_string(i + 1));
    if (high < 0) {
      high = d;
    } else {
      out.push_back(static_cast<uint8_t>(high << 4 | d));
      high = -1;
    }
  }
  if (high >= 0) return genvm::make_error("bad_hex", "odd number of hex digits");
  return out;
}

// Splits on '\n'; a final empty piece (text ending in a newline) is not a line.
std::vector<std::string_view> split_lines(std::string_view all) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < all.size()) {
    size_t end = all.find('\n', start);
    if (end == std::string_view::npos) end = all.size();
    lines.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

int run_encode(bool hex, bool lines) {
  std::string input = read_stdin();
  if (!lines) {
    genvm::Result<cd::Value> v = cd::parse_text(input);
    if (!v) return fail(v.error());
    std::vector<uint8_t> wire = cd::encode(*v);
    if (hex) {
      std::string h = to_hex(wire) + "\n";
      write_stdout(h.data(), h.size());
    } else {
      write_stdout(wire.data(), wire.size());
    }
    return 0;
  }
  std::string out;
  std::vector<uint8_t> wire;
  size_t n = 0;
  for (std::string_view line : split_lines(input)) {
    ++n;
    genvm::Result<cd::Value> v = cd::parse_text(line);
    if (!v) return fail(v.error(), "line " + std::to_string(n) + ": ");
    wire.clear();
    cd::encode_to(*v, wire);
    out += to_hex(wire);
    out += '\n';
  }
  write_stdout(out.data(), out.size());
  return 0;
}

int run_decode(bool hex, bool lines) {
  std::string input = read_stdin();
  if (!lines) {
    std::vector<uint8_t> wire;
    if (hex) {
      genvm::Result<std::vector<uint8_t>> b = from_hex(input);
      if (!b) return fail(b.error());
      wire = std::move(*b);
    } else {
      wire.assign(input.begin(), input.end());
    }
    genvm::Result<cd::Value> v = cd::decode(wire);
    if (!v) return fail(v.error());
    std::string text = cd::to_text(*v) + "\n";
    write_stdout(text.data(), text.size());
    return 0;
  }
  std::string out;
  size_t n = 0;
  for (std::string_view line : split_lines(input)) {
    ++n;
    std::string where = "line " + std::to_string(n) + ": ";
    genvm::Result<std::vector<uint8_t>> b = from_hex(line);
    if (!b) return fail(b.error(), where);
    genvm::Result<cd::Value> v = cd::decode(*b);
    if (!v) return fail(v.error(), where);
    out += cd::to_text(*v);
    out += '\n';
  }
  write_stdout(out.data(), out.size());
  return 0;
}

int run_random(uint64_t seed, uint64_t count, uint64_t depth, bool hex) {
  std::mt19937_64 rng(seed);
  std::string out;
  for (uint64_t i = 0; i < count; ++i) {
    cd::Value v = cd::random_value(rng, depth);
    out += hex ? to_hex(cd::encode(v)) : cd::to_text(v);
    out += '\n';
    if (out.size() > (1 << 20)) {
      write_stdout(out.data(), out.size());
      out.clear();
    }
  }
  write_stdout(out.data(), out.size());
  return 0;
}

bool parse_u64(const char* s, uint64_t* out) {
  if (*s == '\0') return false;
  uint64_t v = 0;
  for (const char* p = s; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
    uint64_t d = static_cast<uint64_t>(*p - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage_error("missing command");
  std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  bool hex = false;
  bool lines = false;
  uint64_t seed = 0, count = 1, depth = 4;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--hex") {
      hex = true;
    } else if (arg == "--lines" && command != "random") {
      lines = true;
    } else if ((arg == "--seed" || arg == "--count" || arg == "--depth") && command == "random") {
      if (i + 1 >= argc) return usage_error(arg + " needs a number");
      uint64_t* target = arg == "--seed" ? &seed : arg == "--count" ? &count : &depth;
      if (!parse_u64(argv[++i], target)) return usage_error(arg + " needs a decimal number");
    } else {
      return usage_error("unknown option '" + arg + "' for '" + command + "'");
    }
  }
  if (lines && !hex) return usage_error("--lines needs --hex");
  if (command == "encode") return run_encode(hex, lines);
  if (command == "decode") return run_decode(hex, lines);
  if (command == "random") {
    if (depth > 64) return usage_error("--depth is at most 64");
    return run_random(seed, count, depth, hex);
  }
  return usage_error("unknown command '" + command + "'");
}
