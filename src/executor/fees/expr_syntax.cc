// Tokenizer and parser of the fee expression language (grammar in expr.h).
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/bigint.h"
#include "common/calldata.h"
#include "executor/fees/expr.h"
#include "executor/fees/expr_internal.h"

namespace genvm::executor::fees::expr {

namespace {

enum class Tok : std::uint8_t {
  kName, kNumber, kString, kPlus, kMinus, kStar, kSlash, kLParen, kRParen, kLt, kGt, kLe, kGe,
  kEqEq, kNe, kLet, kEq, kIn, kIf, kThen, kElse, kBackslash, kLBracket, kRBracket, kLBrace,
  kRBrace, kComma, kSemicolon, kDot, kEof,
};

struct Token;
struct StrPart {
  bool is_interpolation = false;
  std::string literal;
  std::vector<Token> tokens;  // of the interpolation, without an end token
};
struct Token {
  Tok kind = Tok::kEof;
  std::string text;  // a name
  Rational number;
  std::vector<StrPart> parts;  // a string
};

ExprError syntax(std::string message) { return ExprError{Failure::kSyntax, std::move(message)}; }
ExprError too_deep() { return ExprError{Failure::kLimit, "expression nested too deeply"}; }

std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::kName: return "ident `" + t.text + "`";
    case Tok::kNumber: return "number `" + t.number.to_string() + "`";
    case Tok::kString: return "string";
    case Tok::kPlus: return "`+`";
    case Tok::kMinus: return "`-`";
    case Tok::kStar: return "`*`";
    case Tok::kSlash: return "`/`";
    case Tok::kLParen: return "`(`";
    case Tok::kRParen: return "`)`";
    case Tok::kLt: return "`<`";
    case Tok::kGt: return "`>`";
    case Tok::kLe: return "`<=`";
    case Tok::kGe: return "`>=`";
    case Tok::kEqEq: return "`==`";
    case Tok::kNe: return "`!=`";
    case Tok::kLet: return "`let`";
    case Tok::kEq: return "`=`";
    case Tok::kIn: return "`in`";
    case Tok::kIf: return "`if`";
    case Tok::kThen: return "`then`";
    case Tok::kElse: return "`else`";
    case Tok::kBackslash: return "`\\`";
    case Tok::kLBracket: return "`[`";
    case Tok::kRBracket: return "`]`";
    case Tok::kLBrace: return "`{`";
    case Tok::kRBrace: return "`}`";
    case Tok::kComma: return "`,`";
    case Tok::kSemicolon: return "`;`";
    case Tok::kDot: return "`.`";
    case Tok::kEof: return "end of input";
  }
  return "token";
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

class Tokenizer {
 public:
  Tokenizer(std::string_view input, const Limits& limits) : in_(input), limits_(limits) {}

  ExprOutcome<std::vector<Token>> tokenize() {
    std::vector<Token> out;
    for (;;) {
      auto t = next();
      if (!t) return t.take_error();
      bool end = t->kind == Tok::kEof;
      out.push_back(std::move(*t));
      if (end) return out;
    }
  }

 private:
  // Whitespace, and `#` comments: a '#' followed by a space, a newline or the end of the input
  // runs to the end of its line; any other '#' is left for next() to reject.
  void skip_trivia() {
    for (;;) {
      while (pos_ < in_.size() && is_space(in_[pos_])) ++pos_;
      if (pos_ >= in_.size() || in_[pos_] != '#') return;
      if (pos_ + 1 < in_.size() && in_[pos_ + 1] != ' ' && in_[pos_ + 1] != '\n') return;
      while (pos_ < in_.size() && in_[pos_] != '\n') ++pos_;
    }
  }

  std::string_view digits() {
    std::size_t start = pos_;
    while (pos_ < in_.size() && is_digit(in_[pos_])) ++pos_;
    return in_.substr(start, pos_ - start);
  }

  // Leading zeros are allowed ("007" is 7). A digit string longer than the number bound could
  // hold is refused before it is converted.
  ExprOutcome<BigInt> decimal(std::string_view d) {
    while (d.size() > 1 && d[0] == '0') d.remove_prefix(1);
    if (d.size() * 10 / 3 > limits_.max_number_bits) {
      return ExprError{Failure::kLimit, "number literal too long"};
    }
    auto v = BigInt::parse_decimal(d);
    if (!v) return syntax("invalid number `" + std::string(d) + "`");
    return *v;
  }

  ExprOutcome<Rational> number() {
    auto whole = decimal(digits());
    if (!whole) return whole.take_error();
    Rational value = Rational::integer(*whole);
    if (pos_ < in_.size() && in_[pos_] == '.') {
      ++pos_;
      std::string_view frac = digits();
      if (frac.empty()) return syntax("expected digits after decimal point");
      auto f = decimal(frac);
      if (!f) return f.take_error();
      BigInt scale(1);
      for (std::size_t i = 0; i < frac.size(); ++i) scale = scale * BigInt(10);
      value = value + Rational::fraction(*f, scale);
    }
    if (pos_ < in_.size() && (in_[pos_] == 'e' || in_[pos_] == 'E')) {
      ++pos_;
      bool negative = false;
      if (pos_ < in_.size() && in_[pos_] == '-') {
        negative = true;
        ++pos_;
      } else if (pos_ < in_.size() && in_[pos_] == '+') {
        ++pos_;
      }
      std::string_view exp_digits = digits();
      if (exp_digits.empty()) return syntax("expected digits after exponent");
      auto exp = decimal(exp_digits);
      if (!exp) return exp.take_error();
      std::optional<std::uint64_t> e = exp->to_uint64();
      if (!e || *e > 0xffffffffu) return syntax("invalid number `" + std::string(exp_digits) + "`");
      // 10^e has about 3.33 * e bits.
      if (*e > limits_.max_number_bits * 3 / 10) return ExprError{Failure::kLimit, "number exponent too large"};
      BigInt factor(1);
      for (std::uint64_t i = 0; i < *e; ++i) factor = factor * BigInt(10);
      Rational f = Rational::integer(std::move(factor));
      value = negative ? value / f : value * f;
    }
    return value;
  }

  // After the opening quote.
  ExprOutcome<Token> string_literal() {
    Token t;
    t.kind = Tok::kString;
    std::string lit;
    auto flush = [&] {
      if (lit.empty()) return;
      StrPart p;
      p.literal = std::move(lit);
      lit.clear();
      t.parts.push_back(std::move(p));
    };
    for (;;) {
      if (pos_ >= in_.size()) return syntax("unterminated string literal");
      char c = in_[pos_++];
      if (c == '"') break;
      if (c != '\\') {
        lit.push_back(c);
        continue;
      }
      if (pos_ >= in_.size()) return syntax("unterminated string literal");
      char e = in_[pos_++];
      switch (e) {
        case '(': {
          flush();
          auto tokens = interpolation();
          if (!tokens) return tokens.take_error();
          StrPart p;
          p.is_interpolation = true;
          p.tokens = std::move(*tokens);
          t.parts.push_back(std::move(p));
          break;
        }
        case 'n': lit.push_back('\n'); break;
        case 't': lit.push_back('\t'); break;
        case 'r': lit.push_back('\r'); break;
        case '\\': lit.push_back('\\'); break;
        case '"': lit.push_back('"'); break;
        default: return syntax(std::string("unexpected character `") + e + "`");
      }
    }
    flush();
    return t;
  }

  // The tokens of a "\(...)" up to its matching ')', which is consumed and not returned.
  ExprOutcome<std::vector<Token>> interpolation() {
    if (++nesting_ > limits_.max_nesting) return too_deep();
    std::vector<Token> tokens;
    std::size_t depth = 1;
    for (;;) {
      auto t = next();
      if (!t) return t.take_error();
      if (t->kind == Tok::kLParen) ++depth;
      if (t->kind == Tok::kRParen && --depth == 0) break;
      if (t->kind == Tok::kEof) return syntax("unterminated string literal");
      tokens.push_back(std::move(*t));
    }
    --nesting_;
    return tokens;
  }

  ExprOutcome<Token> next() {
    skip_trivia();
    Token t;
    if (pos_ >= in_.size()) return t;  // kEof
    char c = in_[pos_];
    if (c == '"') {
      ++pos_;
      return string_literal();
    }
    if (is_digit(c) || (c == '.' && pos_ + 1 < in_.size() && is_digit(in_[pos_ + 1]))) {
      auto n = number();
      if (!n) return n.take_error();
      t.kind = Tok::kNumber;
      t.number = std::move(*n);
      return t;
    }
    if (is_alpha(c) || c == '_') {
      std::size_t start = pos_;
      while (pos_ < in_.size() && (is_alpha(in_[pos_]) || is_digit(in_[pos_]) || in_[pos_] == '_')) ++pos_;
      std::string_view word = in_.substr(start, pos_ - start);
      if (word == "let") t.kind = Tok::kLet;
      else if (word == "in") t.kind = Tok::kIn;
      else if (word == "if") t.kind = Tok::kIf;
      else if (word == "then") t.kind = Tok::kThen;
      else if (word == "else") t.kind = Tok::kElse;
      else {
        t.kind = Tok::kName;
        t.text = std::string(word);
      }
      return t;
    }
    ++pos_;
    auto followed_by_eq = [&] {
      if (pos_ < in_.size() && in_[pos_] == '=') {
        ++pos_;
        return true;
      }
      return false;
    };
    switch (c) {
      case '+': t.kind = Tok::kPlus; break;
      case '-': t.kind = Tok::kMinus; break;
      case '*': t.kind = Tok::kStar; break;
      case '/': t.kind = Tok::kSlash; break;
      case '(': t.kind = Tok::kLParen; break;
      case ')': t.kind = Tok::kRParen; break;
      case '\\': t.kind = Tok::kBackslash; break;
      case '[': t.kind = Tok::kLBracket; break;
      case ']': t.kind = Tok::kRBracket; break;
      case '{': t.kind = Tok::kLBrace; break;
      case '}': t.kind = Tok::kRBrace; break;
      case ',': t.kind = Tok::kComma; break;
      case ';': t.kind = Tok::kSemicolon; break;
      case '.': t.kind = Tok::kDot; break;
      case '=': t.kind = followed_by_eq() ? Tok::kEqEq : Tok::kEq; break;
      case '<': t.kind = followed_by_eq() ? Tok::kLe : Tok::kLt; break;
      case '>': t.kind = followed_by_eq() ? Tok::kGe : Tok::kGt; break;
      case '!':
        if (!followed_by_eq()) return syntax("unexpected character `!`");
        t.kind = Tok::kNe;
        break;
      default: return syntax(std::string("unexpected character `") + c + "`");
    }
    return t;
  }

  std::string_view in_;
  const Limits& limits_;
  std::size_t pos_ = 0;
  std::size_t nesting_ = 0;
};

std::shared_ptr<Node> make(Node::Kind kind) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  return n;
}

class Parser {
 public:
  // `tokens` ends with an end token.
  Parser(std::vector<Token> tokens, const Limits& limits, std::size_t nesting)
      : tokens_(std::move(tokens)), limits_(limits), nesting_(nesting) {}

  ExprOutcome<NodePtr> whole() {
    auto e = expression();
    if (!e) return e;
    if (peek().kind != Tok::kEof) return syntax("unexpected token " + describe(peek()));
    return e;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  Token advance() {
    Token t = std::move(tokens_[pos_]);
    if (pos_ + 1 < tokens_.size()) ++pos_;  // the end token stays put
    return t;
  }
  ExprOutcome<void> expect(Tok kind, std::string_view what) {
    Token t = advance();
    if (t.kind != kind) return syntax("expected " + std::string(what) + ", got " + describe(t));
    return {};
  }

  // Counts syntax nesting for the duration of one recursive step.
  struct Nest {
    explicit Nest(Parser& p) : p(p) { ++p.nesting_; }
    ~Nest() { --p.nesting_; }
    bool too_deep() const { return p.nesting_ > p.limits_.max_nesting; }
    Parser& p;
  };

  ExprOutcome<NodePtr> expression() {
    Nest nest(*this);
    if (nest.too_deep()) return too_deep();
    switch (peek().kind) {
      case Tok::kLet: return let();
      case Tok::kIf: return conditional();
      case Tok::kBackslash: return lambda();
      default: return comparison();
    }
  }

  ExprOutcome<NodePtr> lambda() {
    advance();
    // `\x y = body` is `\x = \y = body`.
    std::vector<std::string> params;
    for (;;) {
      Token t = advance();
      if (t.kind != Tok::kName) return syntax("expected identifier, got " + describe(t));
      params.push_back(std::move(t.text));
      if (peek().kind == Tok::kEq) break;
    }
    if (auto s = expect(Tok::kEq, "`=`"); !s) return s.take_error();
    auto body = expression();
    if (!body) return body;
    NodePtr e = std::move(*body);
    for (std::size_t i = params.size(); i-- > 0;) {
      auto n = make(Node::Kind::kLambda);
      n->name = std::move(params[i]);
      n->children = {std::move(e)};
      e = std::move(n);
    }
    return e;
  }

  ExprOutcome<NodePtr> let() {
    advance();
    Token name = advance();
    if (name.kind != Tok::kName) return syntax("expected identifier, got " + describe(name));
    if (auto s = expect(Tok::kEq, "`=`"); !s) return s.take_error();
    auto value = expression();
    if (!value) return value;
    if (auto s = expect(Tok::kIn, "`in`"); !s) return s.take_error();
    auto body = expression();
    if (!body) return body;
    auto n = make(Node::Kind::kLet);
    n->name = std::move(name.text);
    n->children = {std::move(*value), std::move(*body)};
    return NodePtr(std::move(n));
  }

  ExprOutcome<NodePtr> conditional() {
    advance();
    auto cond = expression();
    if (!cond) return cond;
    if (auto s = expect(Tok::kThen, "`then`"); !s) return s.take_error();
    auto then_branch = expression();
    if (!then_branch) return then_branch;
    if (auto s = expect(Tok::kElse, "`else`"); !s) return s.take_error();
    auto else_branch = expression();
    if (!else_branch) return else_branch;
    auto n = make(Node::Kind::kIf);
    n->children = {std::move(*cond), std::move(*then_branch), std::move(*else_branch)};
    return NodePtr(std::move(n));
  }

  static NodePtr binary(BinaryOp op, NodePtr lhs, NodePtr rhs) {
    auto n = make(Node::Kind::kBinary);
    n->op = op;
    n->children = {std::move(lhs), std::move(rhs)};
    return n;
  }

  ExprOutcome<NodePtr> comparison() {
    auto lhs = sum();
    if (!lhs) return lhs;
    NodePtr e = std::move(*lhs);
    for (;;) {
      BinaryOp op;
      switch (peek().kind) {
        case Tok::kLt: op = BinaryOp::kLt; break;
        case Tok::kGt: op = BinaryOp::kGt; break;
        case Tok::kLe: op = BinaryOp::kLe; break;
        case Tok::kGe: op = BinaryOp::kGe; break;
        case Tok::kEqEq: op = BinaryOp::kEq; break;
        case Tok::kNe: op = BinaryOp::kNe; break;
        default: return e;
      }
      advance();
      auto rhs = sum();
      if (!rhs) return rhs;
      e = binary(op, std::move(e), std::move(*rhs));
    }
  }

  ExprOutcome<NodePtr> sum() {
    auto lhs = product();
    if (!lhs) return lhs;
    NodePtr e = std::move(*lhs);
    for (;;) {
      BinaryOp op;
      if (peek().kind == Tok::kPlus) op = BinaryOp::kAdd;
      else if (peek().kind == Tok::kMinus) op = BinaryOp::kSub;
      else return e;
      advance();
      auto rhs = product();
      if (!rhs) return rhs;
      e = binary(op, std::move(e), std::move(*rhs));
    }
  }

  ExprOutcome<NodePtr> product() {
    auto lhs = unary();
    if (!lhs) return lhs;
    NodePtr e = std::move(*lhs);
    for (;;) {
      BinaryOp op;
      if (peek().kind == Tok::kStar) op = BinaryOp::kMul;
      else if (peek().kind == Tok::kSlash) op = BinaryOp::kDiv;
      else return e;
      advance();
      auto rhs = unary();
      if (!rhs) return rhs;
      e = binary(op, std::move(e), std::move(*rhs));
    }
  }

  ExprOutcome<NodePtr> unary() {
    if (peek().kind != Tok::kMinus) return application();
    Nest nest(*this);
    if (nest.too_deep()) return too_deep();
    advance();
    auto operand = unary();
    if (!operand) return operand;
    auto n = make(Node::Kind::kNegate);
    n->children = {std::move(*operand)};
    return NodePtr(std::move(n));
  }

  bool at_primary_start() const {
    switch (peek().kind) {
      case Tok::kNumber: case Tok::kName: case Tok::kLParen: case Tok::kLBracket:
      case Tok::kLBrace: case Tok::kString:
        return true;
      default:
        return false;
    }
  }

  ExprOutcome<NodePtr> application() {
    auto f = postfix();
    if (!f) return f;
    NodePtr e = std::move(*f);
    while (at_primary_start()) {
      auto arg = postfix();
      if (!arg) return arg;
      auto n = make(Node::Kind::kApply);
      n->children = {std::move(e), std::move(*arg)};
      e = std::move(n);
    }
    return e;
  }

  // A key written as a name or as a string without interpolation ("" included).
  static ExprOutcome<std::string> key_of(Token t, std::string_view what) {
    if (t.kind == Tok::kName) return std::move(t.text);
    if (t.kind != Tok::kString) return syntax("expected " + std::string(what) + ", got " + describe(t));
    if (t.parts.empty()) return std::string();
    if (t.parts.size() == 1 && !t.parts[0].is_interpolation) return std::move(t.parts[0].literal);
    return syntax("unexpected token interpolation in attribute name");
  }

  // `obj.key` binds tighter than application: `f a.b` is `f (a.b)`.
  ExprOutcome<NodePtr> postfix() {
    auto p = primary();
    if (!p) return p;
    NodePtr e = std::move(*p);
    while (peek().kind == Tok::kDot) {
      advance();
      auto key = key_of(advance(), "field name");
      if (!key) return key.take_error();
      auto n = make(Node::Kind::kField);
      n->name = std::move(*key);
      n->children = {std::move(e)};
      e = std::move(n);
    }
    return e;
  }

  ExprOutcome<NodePtr> primary() {
    Token t = advance();
    switch (t.kind) {
      case Tok::kNumber: {
        auto n = make(Node::Kind::kNumber);
        n->number = std::move(t.number);
        return NodePtr(std::move(n));
      }
      case Tok::kName: {
        auto n = make(Node::Kind::kName);
        n->name = std::move(t.text);
        return NodePtr(std::move(n));
      }
      case Tok::kLParen: {
        auto e = expression();
        if (!e) return e;
        if (auto s = expect(Tok::kRParen, "`)`"); !s) return s.take_error();
        return e;
      }
      case Tok::kLBracket: {
        auto n = make(Node::Kind::kArray);
        if (peek().kind != Tok::kRBracket) {
          for (;;) {
            auto e = expression();
            if (!e) return e;
            n->children.push_back(std::move(*e));
            if (peek().kind != Tok::kComma) break;
            advance();
          }
        }
        if (auto s = expect(Tok::kRBracket, "`]`"); !s) return s.take_error();
        return NodePtr(std::move(n));
      }
      case Tok::kString: return string_node(std::move(t));
      case Tok::kLBrace: {
        // `{ name = expr; ... }`, `{}` included.
        auto n = make(Node::Kind::kObject);
        while (peek().kind != Tok::kRBrace) {
          auto key = key_of(advance(), "attribute name");
          if (!key) return key.take_error();
          if (auto s = expect(Tok::kEq, "`=`"); !s) return s.take_error();
          auto e = expression();
          if (!e) return e;
          if (auto s = expect(Tok::kSemicolon, "`;`"); !s) return s.take_error();
          n->keys.push_back(std::move(*key));
          n->children.push_back(std::move(*e));
        }
        advance();
        return NodePtr(std::move(n));
      }
      default:
        return syntax("unexpected token " + describe(t));
    }
  }

  ExprOutcome<NodePtr> string_node(Token t) {
    auto n = make(Node::Kind::kString);
    for (StrPart& part : t.parts) {
      StringPiece piece;
      if (!part.is_interpolation) {
        piece.literal = std::move(part.literal);
      } else {
        part.tokens.push_back(Token{});  // the end token
        Parser sub(std::move(part.tokens), limits_, nesting_);
        auto e = sub.whole();
        if (!e) return e;
        piece.interpolation = std::move(*e);
      }
      n->pieces.push_back(std::move(piece));
    }
    return NodePtr(std::move(n));
  }

  std::vector<Token> tokens_;
  const Limits& limits_;
  std::size_t nesting_;
  std::size_t pos_ = 0;
};

}  // namespace

ExprOutcome<Program> parse(std::string_view source, const Limits& limits) {
  if (!calldata::is_valid_utf8(source)) return syntax("expression is not UTF-8 text");
  auto tokens = Tokenizer(source, limits).tokenize();
  if (!tokens) return tokens.take_error();
  auto root = Parser(std::move(*tokens), limits, 0).whole();
  if (!root) return root.take_error();
  Program p;
  p.root_ = std::move(*root);
  return p;
}

}  // namespace genvm::executor::fees::expr
