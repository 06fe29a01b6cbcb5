// The pattern of a `re:` version selector, matched without backtracking.
//
//   auto p = VersionPattern::compile("^v0\\.3\\.[0-9]+$");
//   if (!p) fail(p.error().message);   // code "bad_pattern"
//   bool hit = p->search("v0.3.12");   // anywhere in the text, as ECMAScript's search
//
// A selector comes from an unauthenticated request, so neither the compile nor the match may
// be driven deep or long by it: std::regex recursed once per nesting level (and per input
// character) and backtracked, so one request of nested parentheses took the manager down.
// Here the pattern is at most kMaxVersionPatternBytes, groups nest at most
// kMaxVersionPatternNesting deep (the parser recurses once per level, no more), counted
// repetitions expand into at most kMaxVersionPatternProgram instructions, and the match is a
// Thompson NFA simulation with an explicit stack: time O(program x text), memory O(program).
//
// The subset (ECMAScript syntax, what version keys need): literals; `.` (any character but
// \n and \r); classes `[...]`, `[^...]` with ranges and the escapes below; `^` and `$` (the
// whole text; no multiline); `\b` `\B`; `\d \D \w \W \s \S`; `\t \n \r \f \v \0`, `\xHH`, and
// a backslash before any punctuation; groups `(...)`, `(?:...)`; `|`; `* + ?` and `{n}`
// `{n,}` `{n,m}` (n, m at most 32), each optionally followed by `?` (lazy and greedy match the
// same texts). Anything else (backreferences, lookaround, named groups, `\u`, an unknown
// letter escape) is refused, never guessed at.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace genvm::manager {

inline constexpr std::size_t kMaxVersionPatternBytes = 256;
inline constexpr std::size_t kMaxVersionPatternNesting = 16;
inline constexpr std::size_t kMaxVersionPatternProgram = 4096;
inline constexpr std::uint32_t kMaxVersionPatternRepeat = 32;

class VersionPattern {
 public:
  // Error code "bad_pattern"; the message says what is wrong and where (never echoes more than
  // the pattern's first bytes).
  static Result<VersionPattern> compile(std::string_view pattern);
  bool search(std::string_view text) const;
  std::size_t program_size() const { return prog_.size(); }

  struct Inst {
    enum class Op : std::uint8_t { kByte, kAny, kClass, kSplit, kJmp, kBol, kEol, kWordB, kNotWordB, kMatch } op;
    std::uint8_t byte = 0;
    std::uint32_t x = 0, y = 0;  // kSplit: both targets; kJmp: x; kClass: the class index
  };

 private:
  std::vector<Inst> prog_;
  std::vector<std::bitset<256>> classes_;
  friend class VersionPatternCompiler;
};

}  // namespace genvm::manager
