// The evaluator of the fee expression language: call-by-need over persistent environments.
#include <cstddef>
#include <string>
#include <utility>

#include "executor/fees/expr.h"
#include "executor/fees/expr_internal.h"

namespace genvm::executor::fees::expr {

std::string_view Value::type_name() const {
  switch (kind()) {
    case Kind::kNumber: return "number";
    case Kind::kBool: return "bool";
    case Kind::kString: return "string";
    case Kind::kArray: return "array";
    case Kind::kObject: return "object";
    case Kind::kFunction: return "function";
  }
  return "value";
}

const std::string* Value::if_string() const {
  auto p = std::get_if<std::shared_ptr<const std::string>>(&v_);
  return p ? p->get() : nullptr;
}
const Value::Array* Value::if_array() const {
  auto p = std::get_if<std::shared_ptr<const Array>>(&v_);
  return p ? p->get() : nullptr;
}
const Value::Object* Value::if_object() const {
  auto p = std::get_if<std::shared_ptr<const Object>>(&v_);
  return p ? p->get() : nullptr;
}
const Function* Value::if_function() const {
  auto p = std::get_if<std::shared_ptr<const Function>>(&v_);
  return p ? p->get() : nullptr;
}

std::string display(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNumber: return v.if_number()->to_string();
    case Value::Kind::kBool: return *v.if_bool() ? "true" : "false";
    case Value::Kind::kString: return *v.if_string();
    case Value::Kind::kArray: {
      std::string out = "[";
      bool first = true;
      for (const Value& e : *v.if_array()) {
        if (!first) out += ", ";
        first = false;
        out += display(e);
      }
      return out + "]";
    }
    case Value::Kind::kObject: {
      std::string out = "{ ";
      for (const auto& [k, e] : *v.if_object()) out += k + " = " + display(e) + "; ";
      return out + "}";
    }
    case Value::Kind::kFunction: {
      const Function& f = *v.if_function();
      return f.is_builtin ? "<host-fn>" : "<fn " + f.param + ">";
    }
  }
  return {};
}

std::string to_string(const ExprError& e) {
  if (e.failure == Failure::kVmError) return "vmError: " + e.message;
  return e.message;
}

namespace {

ExprError type_error(std::string_view expected, const Value& got) {
  return ExprError{Failure::kType,
                   "type error: expected " + std::string(expected) + ", got " + std::string(got.type_name())};
}

ExprOutcome<Rational> number_of(const Value& v) {
  if (const Rational* r = v.if_number()) return *r;
  return type_error("number", v);
}

struct BuiltinName {
  std::string_view name;
  Builtin id;
  std::size_t arity;
};
constexpr BuiltinName kBuiltins[] = {
    {"floor", Builtin::kFloor, 1},         {"toString", Builtin::kToString, 1},
    {"hasKey", Builtin::kHasKey, 2},       {"arrayLen", Builtin::kArrayLen, 1},
    {"arrayGetElem", Builtin::kArrayGetElem, 2}, {"pow", Builtin::kPow, 2},
    {"vmError", Builtin::kVmError, 1},
};

const BuiltinName* find_builtin(std::string_view name) {
  for (const BuiltinName& b : kBuiltins) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

std::size_t arity_of(Builtin id) {
  for (const BuiltinName& b : kBuiltins) {
    if (b.id == id) return b.arity;
  }
  return 1;
}

Value builtin_value(Builtin id, std::vector<Value> bound) {
  auto f = std::make_shared<Function>();
  f->is_builtin = true;
  f->builtin = id;
  f->bound = std::move(bound);
  return Value::function(std::move(f));
}

ThunkPtr forced(Value v) {
  auto t = std::make_shared<Thunk>();
  t->state = Thunk::State::kForced;
  t->value = std::move(v);
  return t;
}

class Evaluator {
 public:
  explicit Evaluator(const Limits& limits) : limits_(limits) {}

  // A dispatcher with a small frame: each kind is its own out-of-line function, so the native
  // stack a level of expression nesting costs is the dispatcher plus one kind's locals (the
  // evaluator recurses natively; max_eval_depth bounds how far).
  ExprOutcome<Value> eval(const Node& n, const EnvPtr& env) {
    if (++steps_ > limits_.max_steps || depth_ >= limits_.max_eval_depth) return over_limit();
    Depth depth(*this);
    switch (n.kind) {
      case Node::Kind::kNumber: return literal(n);
      case Node::Kind::kName: return name(n, env);
      case Node::Kind::kBinary: return binary(n, env);
      case Node::Kind::kNegate: return negate(n, env);
      case Node::Kind::kLet: return let(n, env);
      case Node::Kind::kIf: return conditional(n, env);
      case Node::Kind::kLambda: return lambda(n, env);
      case Node::Kind::kApply: return application(n, env);
      case Node::Kind::kArray: return array(n, env);
      case Node::Kind::kString: return string(n, env);
      case Node::Kind::kObject: return object(n, env);
      case Node::Kind::kField: return field(n, env);
    }
    return ExprError{Failure::kSyntax, "unknown node"};
  }

  [[gnu::noinline, gnu::cold]] ExprOutcome<Value> over_limit() const {
    if (steps_ > limits_.max_steps) return ExprError{Failure::kLimit, "expression takes too many steps"};
    return ExprError{Failure::kLimit, "expression recurses too deeply"};
  }

  [[gnu::noinline]] static ExprOutcome<Value> literal(const Node& n) { return Value::number(n.number); }

  ExprOutcome<Value> call(const Value& callee, ThunkPtr arg) {
    const Function* f = callee.if_function();
    if (!f) return type_error("function", callee);
    if (!f->is_builtin) {
      EnvPtr inner = std::make_shared<const Env>(Env{f->param, std::move(arg), f->env});
      return eval(*f->body, inner);
    }
    // Builtins are strict in every argument.
    auto v = force(*arg);
    if (!v) return v;
    return builtin(*f, std::move(*v));
  }

 private:
  struct Depth {
    explicit Depth(Evaluator& e) : e(e) { ++e.depth_; }
    ~Depth() { --e.depth_; }
    Evaluator& e;
  };

  [[gnu::noinline]] ExprOutcome<Value> force(Thunk& t) {
    switch (t.state) {
      case Thunk::State::kForced: return t.value;
      case Thunk::State::kForcing:
        return ExprError{Failure::kRecursion, "infinite recursion while forcing a lazy value"};
      case Thunk::State::kDeferred: break;
    }
    t.state = Thunk::State::kForcing;
    auto v = eval(*t.expr, t.env);
    if (!v) return v;  // stays kForcing: a failed computation is not retried
    t.state = Thunk::State::kForced;
    t.value = *v;
    t.expr.reset();
    t.env.reset();
    return v;
  }

  [[gnu::noinline]] ExprOutcome<Value> negate(const Node& n, const EnvPtr& env) {
    auto v = eval(*n.children[0], env);
    if (!v) return v;
    auto r = number_of(*v);
    if (!r) return r.take_error();
    return Value::number(-*r);
  }

  [[gnu::noinline]] ExprOutcome<Value> let(const Node& n, const EnvPtr& env) {
    // Not recursive: the binding's thunk captures the environment without the binding.
    auto t = std::make_shared<Thunk>();
    t->expr = n.children[0];
    t->env = env;
    EnvPtr inner = std::make_shared<const Env>(Env{n.name, std::move(t), env});
    return eval(*n.children[1], inner);
  }

  [[gnu::noinline]] ExprOutcome<Value> conditional(const Node& n, const EnvPtr& env) {
    bool which;
    {
      auto c = eval(*n.children[0], env);
      if (!c) return c;
      const bool* b = c->if_bool();
      if (!b) return type_error("bool", *c);
      which = *b;
    }
    return eval(*n.children[which ? 1 : 2], env);
  }

  [[gnu::noinline]] ExprOutcome<Value> lambda(const Node& n, const EnvPtr& env) {
    auto f = std::make_shared<Function>();
    f->param = n.name;
    f->body = n.children[0];
    f->env = env;
    return Value::function(std::move(f));
  }

  [[gnu::noinline]] ExprOutcome<Value> application(const Node& n, const EnvPtr& env) {
    auto f = eval(*n.children[0], env);
    if (!f) return f;
    // Call by need: the argument goes in unevaluated and is forced if and when it is used.
    auto t = std::make_shared<Thunk>();
    t->expr = n.children[1];
    t->env = env;
    return call(*f, std::move(t));
  }

  [[gnu::noinline]] ExprOutcome<Value> array(const Node& n, const EnvPtr& env) {
    Value::Array items;
    items.reserve(n.children.size());
    for (const NodePtr& c : n.children) {
      auto v = eval(*c, env);
      if (!v) return v;
      items.push_back(std::move(*v));
    }
    return Value::array(std::move(items));
  }

  [[gnu::noinline]] ExprOutcome<Value> object(const Node& n, const EnvPtr& env) {
    Value::Object fields;
    for (std::size_t i = 0; i < n.children.size(); ++i) {
      auto v = eval(*n.children[i], env);
      if (!v) return v;
      fields.insert_or_assign(n.keys[i], std::move(*v));
    }
    return Value::object(std::move(fields));
  }

  [[gnu::noinline]] ExprOutcome<Value> field(const Node& n, const EnvPtr& env) {
    auto o = eval(*n.children[0], env);
    if (!o) return o;
    const Value::Object* obj = o->if_object();
    if (!obj) return type_error("object", *o);
    auto it = obj->find(n.name);
    if (it == obj->end()) return ExprError{Failure::kMissingKey, "object has no key `" + n.name + "`"};
    return it->second;
  }

  [[gnu::noinline]] ExprOutcome<Value> name(const Node& n, const EnvPtr& env) {
    for (const Env* e = env.get(); e != nullptr; e = e->parent.get()) {
      if (e->name == n.name) return force(*e->value);
    }
    if (const BuiltinName* b = find_builtin(n.name)) return builtin_value(b->id, {});
    return ExprError{Failure::kUndefinedVariable, "undefined variable `" + n.name + "`"};
  }

  ExprOutcome<Value> checked(Rational r) {
    if (r.bit_size() > limits_.max_number_bits) return ExprError{Failure::kLimit, "number too large"};
    return Value::number(std::move(r));
  }

  [[gnu::noinline]] ExprOutcome<Value> binary(const Node& n, const EnvPtr& env) {
    auto l = eval(*n.children[0], env);
    if (!l) return l;
    auto r = eval(*n.children[1], env);
    if (!r) return r;
    return operate(n.op, *l, *r);
  }

  [[gnu::noinline]] ExprOutcome<Value> operate(BinaryOp op, const Value& l, const Value& r) {
    switch (op) {
      case BinaryOp::kEq:
      case BinaryOp::kNe: {
        bool equal;
        if (l.if_bool() && r.if_bool()) {
          equal = *l.if_bool() == *r.if_bool();
        } else if (l.if_number() && r.if_number()) {
          equal = *l.if_number() == *r.if_number();
        } else {
          return type_error(l.type_name(), r);
        }
        return Value::boolean(op == BinaryOp::kEq ? equal : !equal);
      }
      case BinaryOp::kDiv: {
        // The divisor is checked first, as the public evaluator does.
        auto b = number_of(r);
        if (!b) return b.take_error();
        if (b->is_zero()) return ExprError{Failure::kDivisionByZero, "division by zero"};
        auto a = number_of(l);
        if (!a) return a.take_error();
        return checked(*a / *b);
      }
      default: break;
    }
    auto a = number_of(l);
    if (!a) return a.take_error();
    auto b = number_of(r);
    if (!b) return b.take_error();
    switch (op) {
      case BinaryOp::kAdd: return checked(*a + *b);
      case BinaryOp::kSub: return checked(*a - *b);
      case BinaryOp::kMul: return checked(*a * *b);
      case BinaryOp::kLt: return Value::boolean(*a < *b);
      case BinaryOp::kGt: return Value::boolean(*a > *b);
      case BinaryOp::kLe: return Value::boolean(*a <= *b);
      case BinaryOp::kGe: return Value::boolean(*a >= *b);
      default: break;
    }
    return ExprError{Failure::kSyntax, "unknown operator"};
  }

  [[gnu::noinline]] ExprOutcome<Value> string(const Node& n, const EnvPtr& env) {
    std::string out;
    for (const StringPiece& p : n.pieces) {
      if (!p.interpolation) {
        out += p.literal;
      } else {
        auto v = eval(*p.interpolation, env);
        if (!v) return v;
        out += display(*v);
      }
      if (out.size() > limits_.max_string_bytes) return ExprError{Failure::kLimit, "string too long"};
    }
    return Value::string(std::move(out));
  }

  [[gnu::noinline]] ExprOutcome<Value> power(const Rational& base, const Value& exponent) {
    auto e = number_of(exponent);
    if (!e) return e.take_error();
    if (!e->is_integer()) return ExprError{Failure::kType, "type error: expected integer, got fraction"};
    BigInt exp = e->numerator();
    bool negative = exp.is_negative();
    if (negative) exp = -exp;
    std::optional<std::uint64_t> n = exp.to_uint64();
    if (!n) return ExprError{Failure::kLimit, "pow exponent too large"};
    // A lower bound of the result's size, so a hopeless power is refused before it is computed.
    std::size_t bits = base.bit_size();
    if (bits > 1 && (bits - 1) > limits_.max_number_bits / *n) return ExprError{Failure::kLimit, "number too large"};
    Rational result = Rational::integer(BigInt(1));
    Rational square = base;
    for (std::uint64_t k = *n; k != 0; k >>= 1) {
      if (k & 1) {
        result = result * square;
        if (result.bit_size() > limits_.max_number_bits) return ExprError{Failure::kLimit, "number too large"};
      }
      if (k > 1) {
        square = square * square;
        if (square.bit_size() > limits_.max_number_bits) return ExprError{Failure::kLimit, "number too large"};
      }
    }
    if (!negative) return Value::number(std::move(result));
    if (result.is_zero()) return ExprError{Failure::kDivisionByZero, "division by zero"};
    return Value::number(result.reciprocal());
  }

  [[gnu::noinline]] ExprOutcome<Value> builtin(const Function& f, Value arg) {
    const Value* first = f.bound.empty() ? &arg : &f.bound[0];
    // A curried builtin checks each argument as it arrives.
    if (f.bound.empty() && arity_of(f.builtin) == 2) {
      switch (f.builtin) {
        case Builtin::kHasKey:
          if (!arg.if_object()) return type_error("object", arg);
          break;
        case Builtin::kArrayGetElem:
          if (!arg.if_array()) return type_error("array", arg);
          break;
        case Builtin::kPow:
          if (!arg.if_number()) return type_error("number", arg);
          break;
        default: break;
      }
      return builtin_value(f.builtin, {std::move(arg)});
    }
    switch (f.builtin) {
      case Builtin::kFloor: {
        auto r = number_of(arg);
        if (!r) return r.take_error();
        return Value::number(r->floor());
      }
      case Builtin::kToString: {
        std::string s = display(arg);
        if (s.size() > limits_.max_string_bytes) return ExprError{Failure::kLimit, "string too long"};
        return Value::string(std::move(s));
      }
      case Builtin::kArrayLen: {
        const Value::Array* a = arg.if_array();
        if (!a) return type_error("array", arg);
        return Value::number(Rational::integer(BigInt(a->size())));
      }
      case Builtin::kVmError: {
        const std::string* s = arg.if_string();
        if (!s) return type_error("string", arg);
        return ExprError{Failure::kVmError, *s};
      }
      case Builtin::kHasKey: {
        const std::string* key = arg.if_string();
        if (!key) return type_error("string", arg);
        return Value::boolean(first->if_object()->contains(*key));
      }
      case Builtin::kArrayGetElem: {
        const Value::Array& items = *first->if_array();
        auto i = number_of(arg);
        if (!i) return i.take_error();
        if (!i->is_integer()) return ExprError{Failure::kIndexOutOfRange, "array index is fractional"};
        std::optional<std::uint64_t> index = i->numerator().to_uint64();
        if (!index || *index >= items.size()) {
          return ExprError{Failure::kIndexOutOfRange, "array index " + i->to_string() + " out of bounds for length " +
                                                         std::to_string(items.size())};
        }
        return items[static_cast<std::size_t>(*index)];
      }
      case Builtin::kPow: return power(*first->if_number(), arg);
    }
    return ExprError{Failure::kSyntax, "unknown builtin"};
  }

  const Limits& limits_;
  std::uint64_t steps_ = 0;
  std::size_t depth_ = 0;
};

}  // namespace

ExprOutcome<Value> evaluate(const Program& program, const Limits& limits) {
  return Evaluator(limits).eval(*program.root(), nullptr);
}

ExprOutcome<Value> apply(const Value& function, Value argument, const Limits& limits) {
  return Evaluator(limits).call(function, forced(std::move(argument)));
}

}  // namespace genvm::executor::fees::expr
