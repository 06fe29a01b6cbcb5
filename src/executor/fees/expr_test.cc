#include "executor/fees/expr.h"

#include <gtest/gtest.h>

#include <string>

namespace genvm::executor::fees::expr {
namespace {

ExprOutcome<Value> run(std::string_view text, const Limits& limits = {}) {
  auto p = parse(text, limits);
  if (!p) return p.take_error();
  return evaluate(*p, limits);
}

// The value's display text, or "error(<failure>): message".
std::string eval_text(std::string_view text, const Limits& limits = {}) {
  auto v = run(text, limits);
  if (!v) return "error(" + std::to_string(static_cast<int>(v.error().failure)) + "): " + v.error().message;
  return display(*v);
}

Failure failure_of(std::string_view text, const Limits& limits = {}) {
  auto v = run(text, limits);
  EXPECT_FALSE(v.ok()) << text << " gave " << (v ? display(*v) : "");
  return v ? Failure::kSyntax : v.error().failure;
}

Value number(std::int64_t n) { return Value::number(Rational::integer(BigInt(n))); }

TEST(FeeExpr, ArithmeticIsExactOverRationals) {
  EXPECT_EQ(eval_text("1 + 2 * 3"), "7");
  EXPECT_EQ(eval_text("(1 + 2) * 3"), "9");
  EXPECT_EQ(eval_text("7 / 2"), "7/2");
  EXPECT_EQ(eval_text("-7 / 2"), "-7/2");
  EXPECT_EQ(eval_text("1 / 3 + 1 / 6"), "1/2");
  EXPECT_EQ(eval_text("10 - 4 - 3"), "3");  // left-associative
  EXPECT_EQ(eval_text("2 - -3"), "5");
  EXPECT_EQ(eval_text("- 3 * 2"), "-6");
  EXPECT_EQ(eval_text("floor (7 / 2)"), "3");
  EXPECT_EQ(eval_text("floor (-7 / 2)"), "-4");  // toward minus infinity
  EXPECT_EQ(eval_text("floor 5"), "5");
  EXPECT_EQ(eval_text("115792089237316195423570985008687907853269984665640564039457584007913129639935 + 1"),
            "115792089237316195423570985008687907853269984665640564039457584007913129639936");
}

TEST(FeeExpr, NumberLiteralsTakeFractionsExponentsAndLeadingZeros) {
  EXPECT_EQ(eval_text("1.5"), "3/2");
  EXPECT_EQ(eval_text("1.5e3"), "1500");
  EXPECT_EQ(eval_text("15E-4"), "3/2000");
  EXPECT_EQ(eval_text("2e+2"), "200");
  EXPECT_EQ(eval_text("007"), "7");
  EXPECT_EQ(eval_text("0.050"), "1/20");
  // As the public tokenizer: a leading '.' starts a number whose integer part is then missing.
  EXPECT_EQ(failure_of(".5"), Failure::kSyntax);
  EXPECT_EQ(failure_of("1."), Failure::kSyntax);
  EXPECT_EQ(failure_of("1e"), Failure::kSyntax);
}

TEST(FeeExpr, ComparisonsAndEqualityAreTyped) {
  EXPECT_EQ(eval_text("1 < 2"), "true");
  EXPECT_EQ(eval_text("2 <= 2"), "true");
  EXPECT_EQ(eval_text("1 / 3 > 0.33"), "true");
  EXPECT_EQ(eval_text("2 >= 3"), "false");
  EXPECT_EQ(eval_text("1 / 2 == 2 / 4"), "true");
  EXPECT_EQ(eval_text("(1 < 2) == (3 < 4)"), "true");
  EXPECT_EQ(eval_text("(1 < 2) != (3 < 4)"), "false");
  // Comparisons chain left to right, so the second compares a bool with a number.
  EXPECT_EQ(failure_of("1 < 2 < 3"), Failure::kType);
  EXPECT_EQ(failure_of("1 == (1 < 2)"), Failure::kType);
  EXPECT_EQ(failure_of("\"a\" == \"a\""), Failure::kType);
  EXPECT_EQ(failure_of("1 + (1 < 2)"), Failure::kType);
  EXPECT_EQ(failure_of("if 1 then 2 else 3"), Failure::kType);
}

TEST(FeeExpr, LetIsNotRecursiveAndShadows) {
  EXPECT_EQ(eval_text("let x = 2 in let y = x * 3 in y + x"), "8");
  EXPECT_EQ(eval_text("let x = 1 in let x = x + 1 in x"), "2");
  EXPECT_EQ(failure_of("let f = \\n = f n in f 1"), Failure::kUndefinedVariable);
  // A binding shadows a builtin of the same name.
  EXPECT_EQ(eval_text("let floor = 5 in floor"), "5");
  EXPECT_EQ(eval_text("(\\floor = floor + 1) 1"), "2");
}

TEST(FeeExpr, LambdasCurryAndRecurseThroughY) {
  EXPECT_EQ(eval_text("(\\x y = x - y) 5 3"), "2");
  EXPECT_EQ(eval_text("let sub = \\x y = x - y in let from10 = sub 10 in from10 4"), "6");
  // The spec's own example: the non-strict Y combinator works because arguments are lazy.
  EXPECT_EQ(eval_text("let Y = \\f = (\\x = f (x x)) (\\x = f (x x)) in "
                      "let fact = Y (\\rec n = if n <= 1 then 1 else n * rec (n - 1)) in fact 5"),
            "120");
  EXPECT_EQ(eval_text("let Y = \\f = (\\x = f (\\v = x x v)) (\\x = f (\\v = x x v)) in "
                      "Y (\\loop i acc = if i == 0 then acc else loop (i - 1) (acc + i)) 100 0"),
            "5050");
}

TEST(FeeExpr, ArgumentsAndBindingsAreLazyAndForcedOnce) {
  EXPECT_EQ(eval_text("let unused = 1 / 0 in 5"), "5");
  EXPECT_EQ(eval_text("(\\x = 3) (1 / 0)"), "3");
  EXPECT_EQ(eval_text("if 1 < 2 then 1 else 1 / 0"), "1");
  EXPECT_EQ(eval_text("let ok = 1 in if ok > 0 then ok else undefinedName"), "1");
  EXPECT_EQ(failure_of("(\\x = x) (1 / 0)"), Failure::kDivisionByZero);
  // Strict positions force even an unused value: array elements, object fields, operands.
  EXPECT_EQ(eval_text("let a = [1, 1 / 0] in 5"), "5");  // the binding itself is lazy
  EXPECT_EQ(failure_of("arrayLen [1, 1 / 0]"), Failure::kDivisionByZero);
  EXPECT_EQ(failure_of("{ a = 1 / 0; }.b"), Failure::kDivisionByZero);
  // Memoized: a binding used 2^20 times through doubling is computed once per level (the step
  // bound would stop it otherwise).
  EXPECT_EQ(eval_text("let Y = \\f = (\\x = f (\\v = x x v)) (\\x = f (\\v = x x v)) in "
                      "let twice = Y (\\rec n = if n == 0 then 1 else (let h = rec (n - 1) in h + h)) in twice 20"),
            "1048576");
}

TEST(FeeExpr, AFailedLazyValueIsNotRetried) {
  // The closure captures `bad`; its first force fails with the script's VM error, and a later
  // call that forces it again gets the recursion error, as the public evaluator reports it.
  auto f = run("let bad = vmError \"fee below_minimum\" in \\a = if a then bad else 1");
  ASSERT_TRUE(f) << f.error().message;
  auto first = apply(*f, Value::boolean(true));
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().failure, Failure::kVmError);
  EXPECT_EQ(first.error().message, "fee below_minimum");
  auto other = apply(*f, Value::boolean(false));
  ASSERT_TRUE(other);
  EXPECT_EQ(display(*other), "1");
  auto again = apply(*f, Value::boolean(true));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().failure, Failure::kRecursion);
}

TEST(FeeExpr, StringsInterpolateAndEscape) {
  EXPECT_EQ(eval_text("\"a\\(1 + 1)b\""), "a2b");
  EXPECT_EQ(eval_text("\"x\\(\"y\\(1 / 2)\")z\""), "xy1/2z");
  EXPECT_EQ(eval_text("\"q\\\"\\\\\\n\\t\\r\""), "q\"\\\n\t\r");
  EXPECT_EQ(eval_text("\"\\((3))\""), "3");  // parentheses inside the interpolation nest
  EXPECT_EQ(eval_text("\"\""), "");
  EXPECT_EQ(failure_of("\"abc"), Failure::kSyntax);
  EXPECT_EQ(failure_of("\"\\q\""), Failure::kSyntax);
  EXPECT_EQ(failure_of("\"\\(1 + \""), Failure::kSyntax);
}

TEST(FeeExpr, ToStringRendersEveryKind) {
  EXPECT_EQ(eval_text("toString [1, 1 < 2, \"s\", { b = 1; a = 2 / 4; }, []]"),
            "[1, true, s, { a = 1/2; b = 1; }, []]");
  EXPECT_EQ(eval_text("toString {}"), "{ }");
  EXPECT_EQ(eval_text("toString floor"), "<host-fn>");
  EXPECT_EQ(eval_text("toString (pow 2)"), "<host-fn>");
  EXPECT_EQ(eval_text("toString (\\width = width)"), "<fn width>");
  EXPECT_EQ(eval_text("toString (-3 / 6)"), "-1/2");
}

TEST(FeeExpr, ObjectsAndFields) {
  EXPECT_EQ(eval_text("{ a = 1; \"b c\" = 2; }.\"b c\""), "2");
  EXPECT_EQ(eval_text("{ a = { b = 7; }; }.a.b"), "7");
  EXPECT_EQ(eval_text("{ a = 1; a = 2; }.a"), "2");  // a later duplicate wins
  EXPECT_EQ(eval_text("{ \"\" = 3; }.\"\""), "3");
  // A field binds tighter than application.
  EXPECT_EQ(eval_text("let f = \\x = x + 1 in let o = { b = 2; } in f o.b"), "3");
  EXPECT_EQ(eval_text("hasKey { a = 1; } \"a\""), "true");
  EXPECT_EQ(eval_text("hasKey { a = 1; } \"b\""), "false");
  EXPECT_EQ(failure_of("{ a = 1; }.b"), Failure::kMissingKey);
  EXPECT_EQ(failure_of("[1].a"), Failure::kType);
  EXPECT_EQ(failure_of("hasKey [1]"), Failure::kType);  // checked when the first argument arrives
  EXPECT_EQ(failure_of("hasKey { a = 1; } 1"), Failure::kType);
  EXPECT_EQ(failure_of("{ a = 1 }"), Failure::kSyntax);
  EXPECT_EQ(failure_of("{ \"\\(1)\" = 1; }"), Failure::kSyntax);
}

TEST(FeeExpr, Arrays) {
  EXPECT_EQ(eval_text("arrayLen [1, 2, 3]"), "3");
  EXPECT_EQ(eval_text("arrayLen []"), "0");
  EXPECT_EQ(eval_text("arrayGetElem [10, 20, 30] 2"), "30");
  EXPECT_EQ(eval_text("arrayGetElem [10, 20, 30] (4 / 2)"), "30");
  EXPECT_EQ(failure_of("arrayGetElem [10] 1"), Failure::kIndexOutOfRange);
  EXPECT_EQ(failure_of("arrayGetElem [10] (-1)"), Failure::kIndexOutOfRange);
  EXPECT_EQ(failure_of("arrayGetElem [10, 20] (1 / 2)"), Failure::kIndexOutOfRange);
  EXPECT_EQ(failure_of("arrayLen 5"), Failure::kType);
  EXPECT_EQ(failure_of("arrayGetElem 5"), Failure::kType);
}

TEST(FeeExpr, PowTakesIntegerExponents) {
  EXPECT_EQ(eval_text("pow 2 256 - 1"),
            "115792089237316195423570985008687907853269984665640564039457584007913129639935");
  EXPECT_EQ(eval_text("pow 2 (-2)"), "1/4");
  EXPECT_EQ(eval_text("pow (2 / 3) 3"), "8/27");
  EXPECT_EQ(eval_text("pow 0 0"), "1");
  EXPECT_EQ(eval_text("pow (-2) 3"), "-8");
  EXPECT_EQ(eval_text("pow 1 1000000000000"), "1");
  EXPECT_EQ(failure_of("pow 0 (-1)"), Failure::kDivisionByZero);
  EXPECT_EQ(failure_of("pow 2 (1 / 2)"), Failure::kType);
  EXPECT_EQ(failure_of("pow 2 100000"), Failure::kLimit);
  EXPECT_EQ(failure_of("pow 3 (pow 2 70)"), Failure::kLimit);
}

TEST(FeeExpr, VmErrorCarriesItsCode) {
  auto v = run("if 1 > 0 then vmError \"fee too_many_rounds\" else 0");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().failure, Failure::kVmError);
  EXPECT_EQ(v.error().message, "fee too_many_rounds");
  EXPECT_EQ(failure_of("vmError 3"), Failure::kType);
}

TEST(FeeExpr, CommentsNeedASpaceNewlineOrEnd) {
  EXPECT_EQ(eval_text("1 # one\n + 2 # two"), "3");
  EXPECT_EQ(eval_text("1 #\n+ 1"), "2");
  EXPECT_EQ(eval_text("1 #"), "1");
  EXPECT_EQ(failure_of("1 #x"), Failure::kSyntax);
  EXPECT_EQ(failure_of("1 #\t"), Failure::kSyntax);
}

TEST(FeeExpr, SyntaxErrorsAreReported) {
  for (const char* text : {"", "1 +", "(1", "1)", "let x = 1 x", "if 1 then 2", "\\ = 1", "\\x 1", "[1, 2",
                           "!", "1 ! 2", "@", "let in = 1 in 2", "{ 1 = 2; }", "a.1b", "1 2 +"}) {
    auto v = run(text);
    ASSERT_FALSE(v) << text;
    EXPECT_EQ(v.error().failure, Failure::kSyntax) << text << ": " << v.error().message;
  }
  auto p = parse("1 +");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message, "unexpected token end of input");
  EXPECT_EQ(parse(std::string_view("\"\xff\"", 3)).error().failure, Failure::kSyntax);  // not UTF-8
}

TEST(FeeExpr, UndefinedVariablesFailWhenUsed) {
  EXPECT_EQ(failure_of("node.gasPrice"), Failure::kUndefinedVariable);
  EXPECT_EQ(failure_of("false"), Failure::kUndefinedVariable);  // there are no boolean literals
  auto v = run("\\x = missing");
  ASSERT_TRUE(v);  // only the body mentions it
  auto r = apply(*v, number(1));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().failure, Failure::kUndefinedVariable);
  EXPECT_EQ(r.error().message, "undefined variable `missing`");
}

TEST(FeeExpr, ApplyCallsClosuresAndBuiltins) {
  auto f = run("\\a = a.pages * 3");
  ASSERT_TRUE(f);
  auto cost = apply(*f, Value::object({{"pages", number(2)}}));
  ASSERT_TRUE(cost) << cost.error().message;
  EXPECT_EQ(display(*cost), "6");
  auto floor_fn = run("floor");
  ASSERT_TRUE(floor_fn);
  auto r = apply(*floor_fn, Value::number(Rational::fraction(BigInt(7), BigInt(2))));
  ASSERT_TRUE(r);
  EXPECT_EQ(display(*r), "3");
  auto not_fn = apply(number(1), number(2));
  ASSERT_FALSE(not_fn);
  EXPECT_EQ(not_fn.error().failure, Failure::kType);
}

// Each bound exists so that a host's gas_data (parsed as expressions) cannot hang or exhaust the
// executor; each test fails if its bound is removed.
TEST(FeeExpr, NestingIsBounded) {
  std::string deep(300, '(');
  deep += "1";
  deep += std::string(300, ')');
  EXPECT_EQ(failure_of(deep), Failure::kLimit);
  std::string ok(100, '(');
  ok += "1";
  ok += std::string(100, ')');
  EXPECT_EQ(eval_text(ok), "1");
  std::string negations(300, '-');
  EXPECT_EQ(failure_of(negations + "1"), Failure::kLimit);
  std::string strings;
  for (int i = 0; i < 300; ++i) strings += "\"\\(";
  EXPECT_EQ(failure_of(strings), Failure::kLimit);
}

TEST(FeeExpr, EndlessLoopsStopAtALimit) {
  const char* loop = "let Y = \\f = (\\x = f (\\v = x x v)) (\\x = f (\\v = x x v)) in Y (\\rec n = rec (n + 1)) 0";
  EXPECT_EQ(failure_of(loop), Failure::kLimit);
  Limits few;
  few.max_steps = 50;
  EXPECT_EQ(failure_of("let Y = \\f = (\\x = f (\\v = x x v)) (\\x = f (\\v = x x v)) in "
                       "Y (\\loop i = if i == 0 then 0 else loop (i - 1)) 100",
                       few),
            Failure::kLimit);
}

TEST(FeeExpr, NumbersAndStringsAreBounded) {
  EXPECT_EQ(failure_of("let Y = \\f = (\\x = f (\\v = x x v)) (\\x = f (\\v = x x v)) in "
                       "Y (\\sq n = sq (n * n)) 3"),
            Failure::kLimit);
  EXPECT_EQ(failure_of("1e100000"), Failure::kLimit);
  EXPECT_EQ(failure_of(std::string(5000, '9')), Failure::kLimit);
  Limits small;
  small.max_string_bytes = 1000;
  EXPECT_EQ(failure_of("let Y = \\f = (\\x = f (\\v = x x v)) (\\x = f (\\v = x x v)) in "
                       "Y (\\grow s = grow \"\\(s)\\(s)\") \"ab\"",
                       small),
            Failure::kLimit);
}

}  // namespace
}  // namespace genvm::executor::fees::expr
