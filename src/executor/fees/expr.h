// The fee expression language (impl-spec 04-fees.rst, "The Expression Language"): a small, pure,
// call-by-need lambda calculus over exact rationals, booleans, strings, arrays and objects,
// in which operators write what each fee charge costs.
//
//   Outcome<Program, ExprError> p = parse("\\a = a.pages * 3");
//   Outcome<Value, ExprError> f = evaluate(*p);                     // a function
//   Value attrs = Value::object({{"pages", Value::number(Rational::integer(2))}});
//   Outcome<Value, ExprError> cost = apply(*f, attrs);               // 6
//
// Syntax (as the public evaluator reads it):
//   expr    ::= let NAME = expr in expr | if expr then expr else expr | \NAME+ = expr | cmp
//   cmp     ::= sum (('<'|'>'|'<='|'>='|'=='|'!=') sum)*          (left-associative)
//   sum     ::= product (('+'|'-') product)*       product ::= unary (('*'|'/') unary)*
//   unary   ::= '-' unary | app                    app     ::= postfix postfix*
//   postfix ::= primary ('.' (NAME | STRING))*
//   primary ::= NUMBER | NAME | STRING | '[' (expr (',' expr)*)? ']' | '{' (KEY '=' expr ';')* '}'
//             | '(' expr ')'
// NUMBER is digits with an optional fraction and exponent (`12`, `1.5`, `15e-4`), exact. STRING
// is "..." with \n \t \r \\ \" escapes and \(expr) interpolation. `# ` starts a comment to the end
// of the line ('#' then a space, a newline or the end). `let` is not recursive: recursion is
// written with a Y combinator. Builtins: floor, toString, hasKey, arrayLen, arrayGetElem, pow,
// and vmError (ends the charge with the VM error its string names). Arguments are passed lazily
// and forced at most once; builtins, operators, conditions, arrays and objects are strict.
//
// Untrusted-input bounds (ours; the public evaluator has none, its inputs being the operator's
// config and the host's gas_data): syntax nesting, evaluator recursion, evaluation steps, number
// size and string size are limited by Limits, and exceeding one is a kLimit error, the same on
// every machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "executor/fees/outcome.h"
#include "executor/fees/rational.h"

namespace genvm::executor::fees::expr {

enum class Failure : std::uint8_t {
  kSyntax,             // the text is not an expression
  kType,               // a value of the wrong kind (`1 + true`, `if 1 then ...`)
  kUndefinedVariable,  // a name bound nowhere
  kMissingKey,         // `obj.key` on an object without it
  kIndexOutOfRange,    // arrayGetElem past the end, or a fractional / negative index
  kDivisionByZero,
  kRecursion,          // a lazy value that needs itself (or whose computation failed before)
  kLimit,              // one of Limits exceeded
  kVmError,            // `vmError "code"`: message holds the code as the script wrote it
};

struct ExprError {
  Failure failure = Failure::kSyntax;
  std::string message;
};

template <class T>
using ExprOutcome = Outcome<T, ExprError>;

struct Limits {
  std::size_t max_nesting = 256;        // parentheses, lets, lambdas, strings inside strings
  std::size_t max_eval_depth = 1500;    // the evaluator's own recursion
  std::uint64_t max_steps = 2'000'000;  // evaluation steps of one evaluate() or apply()
  std::size_t max_number_bits = 8192;   // of a numerator or denominator
  std::size_t max_string_bytes = 1 << 20;
};

struct Node;      // a syntax tree node (expr_internal.h)
struct Function;  // a closure or a (partially applied) builtin (expr_internal.h)

class Value {
 public:
  using Array = std::vector<Value>;
  using Object = std::map<std::string, Value, std::less<>>;
  enum class Kind : std::uint8_t { kNumber, kBool, kString, kArray, kObject, kFunction };

  Value() : v_(Rational()) {}  // the number 0
  static Value number(Rational r) { return Value(std::move(r)); }
  static Value boolean(bool b) { return Value(b); }
  static Value string(std::string s) { return Value(std::make_shared<const std::string>(std::move(s))); }
  static Value array(Array a) { return Value(std::make_shared<const Array>(std::move(a))); }
  static Value object(Object o) { return Value(std::make_shared<const Object>(std::move(o))); }
  static Value function(std::shared_ptr<const Function> f) { return Value(std::move(f)); }

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  // "number", "bool", "string", "array", "object", "function": the names type errors use.
  std::string_view type_name() const;

  // nullptr when the kind differs.
  const Rational* if_number() const { return std::get_if<Rational>(&v_); }
  const bool* if_bool() const { return std::get_if<bool>(&v_); }
  const std::string* if_string() const;
  const Array* if_array() const;
  const Object* if_object() const;
  const Function* if_function() const;

 private:
  template <class T>
  explicit Value(T v) : v_(std::move(v)) {}
  // Index order must match Kind. Containers are shared: values are immutable once built.
  std::variant<Rational, bool, std::shared_ptr<const std::string>, std::shared_ptr<const Array>,
               std::shared_ptr<const Object>, std::shared_ptr<const Function>>
      v_;
};

// A parsed expression. Cheap to copy; closures keep the parts of it they need alive.
class Program {
 public:
  const std::shared_ptr<const Node>& root() const { return root_; }

 private:
  friend ExprOutcome<Program> parse(std::string_view, const Limits&);
  std::shared_ptr<const Node> root_;
};

ExprOutcome<Program> parse(std::string_view source, const Limits& limits = {});
// Evaluates with no free variables: a name bound nowhere is kUndefinedVariable when it is used.
ExprOutcome<Value> evaluate(const Program& program, const Limits& limits = {});
// Calls `function` (a closure or a builtin) with `argument`.
ExprOutcome<Value> apply(const Value& function, Value argument, const Limits& limits = {});

// The text `toString` and "\(...)" produce: numbers as "n" or "n/d", booleans as true/false,
// strings as they are, arrays as "[a, b]", objects as "{ k = v; }", functions as "<host-fn>" or
// "<fn PARAM>".
std::string display(const Value& v);

// One line for logs: "type error: expected number, got bool".
std::string to_string(const ExprError& e);

}  // namespace genvm::executor::fees::expr
