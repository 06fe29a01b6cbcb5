#include "manager/version_pattern.h"

#include <limits>
#include <optional>
#include <string>

namespace genvm::manager {

namespace {

constexpr std::uint32_t kUnbounded = std::numeric_limits<std::uint32_t>::max();

bool is_word(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::bitset<256> digit_set() {
  std::bitset<256> s;
  for (int c = '0'; c <= '9'; ++c) s.set(c);
  return s;
}
std::bitset<256> word_set() {
  std::bitset<256> s;
  for (int c = 0; c < 256; ++c) {
    if (is_word(static_cast<unsigned char>(c))) s.set(c);
  }
  return s;
}
// ECMAScript's \s within one byte: tab, LF, VT, FF, CR, space, NBSP.
std::bitset<256> space_set() {
  std::bitset<256> s;
  for (int c : {'\t', '\n', '\v', '\f', '\r', ' '}) s.set(c);
  s.set(0xA0);
  return s;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

// Recursive descent, one level per group (bounded by kMaxVersionPatternNesting), into a small
// tree, then the tree into NFA instructions.
class VersionPatternCompiler {
 public:
  explicit VersionPatternCompiler(std::string_view p) : p_(p) {}

  Result<VersionPattern> run() {
    if (p_.size() > kMaxVersionPatternBytes) {
      return make_error("bad_pattern", "the pattern is " + std::to_string(p_.size()) + " bytes; at most " +
                                           std::to_string(kMaxVersionPatternBytes) + " are accepted");
    }
    std::uint32_t root = parse_alt(0);
    if (failed_) return make_error("bad_pattern", error_);
    if (pos_ < p_.size()) return make_error("bad_pattern", "unmatched `)` at offset " + std::to_string(pos_));
    emit(root);
    if (failed_) return make_error("bad_pattern", error_);
    push({VersionPattern::Inst::Op::kMatch});
    if (failed_) return make_error("bad_pattern", error_);
    out_.classes_ = std::move(classes_);
    return std::move(out_);
  }

 private:
  struct Node {
    enum class Kind { kEmpty, kByte, kAny, kClass, kBol, kEol, kWordB, kNotWordB, kConcat, kAlt, kRepeat } kind;
    std::uint8_t byte = 0;
    std::uint32_t cls = 0;
    std::uint32_t min = 0, max = 0;
    std::vector<std::uint32_t> kids = {};
  };
  using Op = VersionPattern::Inst::Op;

  std::uint32_t fail(std::string why) {
    if (!failed_) {
      failed_ = true;
      error_ = std::move(why);
    }
    return 0;
  }
  std::uint32_t node(Node n) {
    nodes_.push_back(std::move(n));
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }
  bool eof() const { return pos_ >= p_.size(); }
  char peek() const { return p_[pos_]; }
  std::string at() const { return " at offset " + std::to_string(pos_); }

  std::uint32_t parse_alt(std::size_t depth) {
    std::vector<std::uint32_t> branches{parse_concat(depth)};
    while (!failed_ && !eof() && peek() == '|') {
      ++pos_;
      branches.push_back(parse_concat(depth));
    }
    if (branches.size() == 1) return branches[0];
    return node({Node::Kind::kAlt, 0, 0, 0, 0, std::move(branches)});
  }

  std::uint32_t parse_concat(std::size_t depth) {
    std::vector<std::uint32_t> items;
    while (!failed_ && !eof() && peek() != '|' && peek() != ')') items.push_back(parse_repeat(depth));
    if (items.empty()) return node({Node::Kind::kEmpty});
    if (items.size() == 1) return items[0];
    return node({Node::Kind::kConcat, 0, 0, 0, 0, std::move(items)});
  }

  static bool is_quantifier(char c) { return c == '*' || c == '+' || c == '?' || c == '{'; }

  std::uint32_t parse_repeat(std::size_t depth) {
    bool assertion = false;
    std::uint32_t atom = parse_atom(depth, assertion);
    if (failed_ || eof() || !is_quantifier(peek())) return atom;
    if (assertion) return fail("an assertion cannot be repeated" + at());
    std::uint32_t min = 0, max = kUnbounded;
    char q = p_[pos_++];
    if (q == '+') {
      min = 1;
    } else if (q == '?') {
      max = 1;
    } else if (q == '{') {
      auto number = [&]() -> std::optional<std::uint32_t> {
        std::size_t start = pos_;
        std::uint32_t v = 0;
        while (!eof() && peek() >= '0' && peek() <= '9') {
          if (pos_ - start >= 4) return std::nullopt;  // far above the repeat cap either way
          v = v * 10 + static_cast<std::uint32_t>(peek() - '0');
          ++pos_;
        }
        if (pos_ == start) return std::nullopt;
        return v;
      };
      auto n = number();
      if (!n) return fail("`{` must start a repetition {n}, {n,} or {n,m} (escape it as \\{)" + at());
      min = max = *n;
      if (!eof() && peek() == ',') {
        ++pos_;
        max = kUnbounded;
        if (!eof() && peek() != '}') {
          auto m = number();
          if (!m) return fail("bad repetition bound" + at());
          max = *m;
        }
      }
      if (eof() || peek() != '}') return fail("unterminated repetition" + at());
      ++pos_;
      if (max != kUnbounded && max < min) return fail("repetition bounds out of order" + at());
      if (min > kMaxVersionPatternRepeat || (max != kUnbounded && max > kMaxVersionPatternRepeat)) {
        return fail("a repetition bound above " + std::to_string(kMaxVersionPatternRepeat) + at());
      }
    }
    if (!eof() && peek() == '?') ++pos_;  // lazy: for a yes/no search, the same as greedy
    if (!eof() && is_quantifier(peek())) return fail("nothing to repeat" + at());
    return node({Node::Kind::kRepeat, 0, 0, min, max, {atom}});
  }

  std::uint32_t literal(std::uint8_t c) { return node({Node::Kind::kByte, c}); }
  std::uint32_t set(std::bitset<256> s) {
    classes_.push_back(s);
    return node({Node::Kind::kClass, 0, static_cast<std::uint32_t>(classes_.size() - 1)});
  }

  std::uint32_t parse_atom(std::size_t depth, bool& assertion) {
    char c = p_[pos_++];
    switch (c) {
      case '(': {
        if (depth + 1 > kMaxVersionPatternNesting) {
          return fail("groups nest deeper than " + std::to_string(kMaxVersionPatternNesting) + at());
        }
        if (!eof() && peek() == '?') {
          if (pos_ + 1 < p_.size() && p_[pos_ + 1] == ':') {
            pos_ += 2;
          } else {
            return fail("only (?:...) groups are supported (no lookaround or named groups)" + at());
          }
        }
        std::uint32_t inner = parse_alt(depth + 1);
        if (failed_) return 0;
        if (eof() || peek() != ')') return fail("unterminated group" + at());
        ++pos_;
        return inner;
      }
      case ')': return fail("unmatched `)`" + at());
      case '[': return parse_class();
      case '.': {
        std::bitset<256> s;
        s.set();
        s.reset('\n');
        s.reset('\r');
        return set(s);
      }
      case '^': assertion = true; return node({Node::Kind::kBol});
      case '$': assertion = true; return node({Node::Kind::kEol});
      case '*':
      case '+':
      case '?':
      case '{': --pos_; return fail("nothing to repeat" + at());
      case '\\': {
        if (eof()) return fail("a trailing backslash");
        char e = peek();
        if (e == 'b' || e == 'B') {
          ++pos_;
          assertion = true;
          return node({e == 'b' ? Node::Kind::kWordB : Node::Kind::kNotWordB});
        }
        std::bitset<256> s;
        if (!escape(s, /*in_class=*/false)) return 0;
        return s.count() == 1 ? literal(static_cast<std::uint8_t>(first(s))) : set(s);
      }
      default: return literal(static_cast<std::uint8_t>(c));
    }
  }

  static std::size_t first(const std::bitset<256>& s) {
    for (std::size_t i = 0; i < 256; ++i) {
      if (s.test(i)) return i;
    }
    return 0;
  }

  // After a backslash: the set it stands for (one byte for a character escape).
  bool escape(std::bitset<256>& out, bool in_class) {
    char e = p_[pos_++];
    auto one = [&](unsigned char c) {
      out.set(c);
      return true;
    };
    switch (e) {
      case 'd': out |= digit_set(); return true;
      case 'D': out |= ~digit_set(); return true;
      case 'w': out |= word_set(); return true;
      case 'W': out |= ~word_set(); return true;
      case 's': out |= space_set(); return true;
      case 'S': out |= ~space_set(); return true;
      case 't': return one('\t');
      case 'n': return one('\n');
      case 'r': return one('\r');
      case 'f': return one('\f');
      case 'v': return one('\v');
      case 'b':
        if (in_class) return one('\b');
        break;
      case '0':
        if (eof() || peek() < '0' || peek() > '9') return one('\0');
        break;
      case 'x': {
        if (pos_ + 2 > p_.size() || hex_digit(p_[pos_]) < 0 || hex_digit(p_[pos_ + 1]) < 0) {
          fail("\\x needs two hex digits" + at());
          return false;
        }
        int v = hex_digit(p_[pos_]) * 16 + hex_digit(p_[pos_ + 1]);
        pos_ += 2;
        return one(static_cast<unsigned char>(v));
      }
      default: {
        auto u = static_cast<unsigned char>(e);
        bool alnum = is_word(u);
        if (!alnum && u < 0x80) return one(u);  // \. \- \\ \/ ...: the character itself
        break;
      }
    }
    --pos_;
    fail(std::string("unsupported escape \\") + e + at());
    return false;
  }

  std::uint32_t parse_class() {
    std::bitset<256> s;
    bool negate = false;
    if (!eof() && peek() == '^') {
      negate = true;
      ++pos_;
    }
    // One member: a byte (returned) or, for \d and the like, a set (returns -1).
    auto member = [&](std::bitset<256>& into) -> int {
      char c = p_[pos_++];
      if (c != '\\') return static_cast<unsigned char>(c);
      if (eof()) {
        fail("a trailing backslash");
        return -2;
      }
      std::bitset<256> e;
      char k = peek();
      if (!escape(e, /*in_class=*/true)) return -2;
      if (k == 'd' || k == 'D' || k == 'w' || k == 'W' || k == 's' || k == 'S') {
        into |= e;
        return -1;
      }
      return static_cast<int>(first(e));
    };
    while (!failed_) {
      if (eof()) return fail("unterminated class");
      if (peek() == ']') {
        ++pos_;
        break;
      }
      int lo = member(s);
      if (lo == -2) return 0;
      if (lo == -1) continue;
      if (pos_ + 1 < p_.size() && peek() == '-' && p_[pos_ + 1] != ']') {
        ++pos_;
        std::bitset<256> ignored;
        int hi = member(ignored);
        if (hi == -2) return 0;
        if (hi == -1) return fail("a class escape cannot end a range" + at());
        if (hi < lo) return fail("range out of order in class" + at());
        for (int b = lo; b <= hi; ++b) s.set(static_cast<std::size_t>(b));
      } else {
        s.set(static_cast<std::size_t>(lo));
      }
    }
    if (failed_) return 0;
    if (negate) s.flip();
    return set(s);
  }

  void push(VersionPattern::Inst i) {
    if (out_.prog_.size() >= kMaxVersionPatternProgram) {
      fail("the pattern expands to more than " + std::to_string(kMaxVersionPatternProgram) + " instructions");
      return;
    }
    out_.prog_.push_back(i);
  }
  std::uint32_t here() const { return static_cast<std::uint32_t>(out_.prog_.size()); }

  // Recursion here follows the tree, whose depth the parser bounded.
  void emit(std::uint32_t n) {
    if (failed_) return;
    const Node& nd = nodes_[n];
    switch (nd.kind) {
      case Node::Kind::kEmpty: return;
      case Node::Kind::kByte: return push({Op::kByte, nd.byte});
      case Node::Kind::kAny: return push({Op::kAny});
      case Node::Kind::kClass: return push({Op::kClass, 0, nd.cls});
      case Node::Kind::kBol: return push({Op::kBol});
      case Node::Kind::kEol: return push({Op::kEol});
      case Node::Kind::kWordB: return push({Op::kWordB});
      case Node::Kind::kNotWordB: return push({Op::kNotWordB});
      case Node::Kind::kConcat:
        for (std::uint32_t k : nd.kids) emit(k);
        return;
      case Node::Kind::kAlt: {
        // split L1, next; L1: a; jmp end; next: split L2, next2; ... last: z; end:
        std::vector<std::uint32_t> jumps;
        for (std::size_t i = 0; i < nd.kids.size() && !failed_; ++i) {
          bool last = i + 1 == nd.kids.size();
          std::uint32_t split = here();
          if (!last) push({Op::kSplit});
          emit(nd.kids[i]);
          if (!last) {
            jumps.push_back(here());
            push({Op::kJmp});
            if (failed_) return;
            out_.prog_[split].x = split + 1;
            out_.prog_[split].y = here();
          }
        }
        if (failed_) return;
        for (std::uint32_t j : jumps) out_.prog_[j].x = here();
        return;
      }
      case Node::Kind::kRepeat: {
        std::uint32_t kid = nd.kids[0];
        for (std::uint32_t i = 0; i < nd.min && !failed_; ++i) emit(kid);
        if (nd.max == kUnbounded) {
          std::uint32_t loop = here();
          push({Op::kSplit});
          emit(kid);
          push({Op::kJmp, 0, loop});
          if (failed_) return;
          out_.prog_[loop].x = loop + 1;
          out_.prog_[loop].y = here();
          return;
        }
        for (std::uint32_t i = nd.min; i < nd.max && !failed_; ++i) {
          std::uint32_t split = here();
          push({Op::kSplit});
          emit(kid);
          if (failed_) return;
          out_.prog_[split].x = split + 1;
          out_.prog_[split].y = here();
        }
        return;
      }
    }
  }

  std::string_view p_;
  std::size_t pos_ = 0;
  bool failed_ = false;
  std::string error_;
  std::vector<Node> nodes_;
  std::vector<std::bitset<256>> classes_;
  VersionPattern out_;
};

Result<VersionPattern> VersionPattern::compile(std::string_view pattern) {
  return VersionPatternCompiler(pattern).run();
}

bool VersionPattern::search(std::string_view text) const {
  const std::size_t n = text.size();
  // Thread lists as sparse sets; `seen` marks the instructions visited in this step's closure.
  std::vector<std::uint32_t> clist, nlist, stack;
  std::vector<std::size_t> seen(prog_.size(), std::numeric_limits<std::size_t>::max());
  std::size_t mark = 0;
  clist.reserve(prog_.size());
  nlist.reserve(prog_.size());
  // Follows every empty transition from `pc` at position i; consuming instructions go to
  // `list`. True when Match is reachable.
  auto closure = [&](std::vector<std::uint32_t>& list, std::uint32_t pc, std::size_t i) {
    stack.clear();
    stack.push_back(pc);
    while (!stack.empty()) {
      std::uint32_t at = stack.back();
      stack.pop_back();
      if (seen[at] == mark) continue;
      seen[at] = mark;
      const Inst& in = prog_[at];
      auto before = [&] { return i > 0 && is_word(static_cast<unsigned char>(text[i - 1])); };
      auto after = [&] { return i < n && is_word(static_cast<unsigned char>(text[i])); };
      switch (in.op) {
        case Inst::Op::kMatch: return true;
        case Inst::Op::kJmp: stack.push_back(in.x); break;
        case Inst::Op::kSplit:
          stack.push_back(in.y);
          stack.push_back(in.x);
          break;
        case Inst::Op::kBol:
          if (i == 0) stack.push_back(at + 1);
          break;
        case Inst::Op::kEol:
          if (i == n) stack.push_back(at + 1);
          break;
        case Inst::Op::kWordB:
          if (before() != after()) stack.push_back(at + 1);
          break;
        case Inst::Op::kNotWordB:
          if (before() == after()) stack.push_back(at + 1);
          break;
        default: list.push_back(at); break;
      }
    }
    return false;
  };
  ++mark;
  for (std::size_t i = 0;; ++i) {
    // Unanchored search: a fresh thread starts at every position (after the surviving ones,
    // which for a yes/no answer makes no difference).
    if (closure(clist, 0, i)) return true;
    if (i == n) return false;
    ++mark;
    nlist.clear();
    auto c = static_cast<unsigned char>(text[i]);
    for (std::uint32_t pc : clist) {
      const Inst& in = prog_[pc];
      bool ok = (in.op == Inst::Op::kByte && in.byte == c) || in.op == Inst::Op::kAny ||
                (in.op == Inst::Op::kClass && classes_[in.x].test(c));
      if (ok && closure(nlist, pc + 1, i + 1)) return true;
    }
    std::swap(clist, nlist);
  }
}

}  // namespace genvm::manager
