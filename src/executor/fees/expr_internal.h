// Internals of the fee expression language shared by its parser (expr_syntax.cc) and its
// evaluator (expr_eval.cc): the syntax tree, closures and their environments, lazy values.
// Nothing outside src/executor/fees/expr*.cc includes this.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "executor/fees/expr.h"

namespace genvm::executor::fees::expr {

using NodePtr = std::shared_ptr<const Node>;

enum class BinaryOp : std::uint8_t { kAdd, kSub, kMul, kDiv, kLt, kGt, kLe, kGe, kEq, kNe };

struct StringPiece {
  std::string literal;  // used when `interpolation` is null
  NodePtr interpolation;
};

struct Node {
  enum class Kind : std::uint8_t {
    kNumber,   // number
    kName,     // name
    kBinary,   // op, children {lhs, rhs}
    kNegate,   // children {operand}
    kLet,      // name, children {value, body}
    kIf,       // children {condition, then, else}
    kLambda,   // name (the parameter), children {body}
    kApply,    // children {function, argument}
    kArray,    // children: the elements
    kString,   // pieces
    kObject,   // keys[i] = children[i], in source order (a later duplicate wins)
    kField,    // name (the key), children {object}
  };
  Kind kind;
  BinaryOp op = BinaryOp::kAdd;
  Rational number;
  std::string name;
  std::vector<NodePtr> children;
  std::vector<std::string> keys;
  std::vector<StringPiece> pieces;
};

struct Thunk;
using ThunkPtr = std::shared_ptr<Thunk>;

// A persistent environment: each binding points at the one it shadows. Only ever extended, so a
// closure's environment is fixed when the closure is made. Chains are as long as the lexical
// nesting, not the call depth.
struct Env {
  std::string name;
  ThunkPtr value;
  std::shared_ptr<const Env> parent;
};
using EnvPtr = std::shared_ptr<const Env>;

// A lazy value: an expression and the environment to evaluate it in, replaced by its value the
// first time it is forced. A thunk being forced that is forced again needs itself; one whose
// computation failed stays in that state, so a later force reports kRecursion (as the public
// evaluator does: a failed computation is not retried).
struct Thunk {
  enum class State : std::uint8_t { kDeferred, kForcing, kForced };
  State state = State::kDeferred;
  NodePtr expr;
  EnvPtr env;
  Value value;
};

enum class Builtin : std::uint8_t { kFloor, kToString, kHasKey, kArrayLen, kArrayGetElem, kPow, kVmError };

struct Function {
  // A closure: `\param = body` with its environment.
  std::string param;
  NodePtr body;
  EnvPtr env;
  // A builtin (when is_builtin): the arguments it has taken so far.
  bool is_builtin = false;
  Builtin builtin = Builtin::kFloor;
  std::vector<Value> bound;
};

}  // namespace genvm::executor::fees::expr
