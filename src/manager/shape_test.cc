// Typed shapes: every rule of the public derive's decoding that the manager relies on.
#include "manager/shape.h"

#include <gtest/gtest.h>

namespace genvm::manager {
namespace {

using calldata::Value;

std::string why(const Shape& s, const Value& v) {
  Status st = check(s, v);
  return st.ok() ? "ok" : st.error().message;
}

TEST(ManagerShape, ScalarsAndIntegerRanges) {
  EXPECT_EQ(why(shape::u8(), 255), "ok");
  EXPECT_EQ(why(shape::u8(), 256), "value: expected an integer in u8");
  EXPECT_EQ(why(shape::u32(), -1), "value: expected an integer in u32");
  BigInt two_256 = BigInt::parse_decimal("115792089237316195423570985008687907853269984665640564039457584007913129639936").value();
  EXPECT_EQ(why(shape::u256(), two_256 - BigInt(1)), "ok");
  EXPECT_EQ(why(shape::u256(), two_256), "value: expected an integer in u256");
  EXPECT_EQ(why(shape::i64(), BigInt(INT64_MIN)), "ok");
  EXPECT_EQ(why(shape::i64(), BigInt(INT64_MIN) - BigInt(1)), "value: expected an integer in i64");
  EXPECT_EQ(why(shape::bigint(), two_256), "ok");
  EXPECT_EQ(why(shape::bigint(), "1"), "value: expected an integer") << "no decimal strings";
  // Shapes live for the process (shape.h): the tests hold them in statics as the library does.
  static const Shape& hash = shape::bytes_of(32);
  static const Shape& maybe = shape::optional(shape::string());
  EXPECT_EQ(why(hash, calldata::Bytes(31)), "value: expected 32 bytes");
  EXPECT_EQ(why(maybe, Value()), "ok");
  EXPECT_EQ(why(maybe, 1), "value: expected a string");
}

TEST(ManagerShape, RecordsAreClosedAndRequireFieldsWithoutDefaults) {
  static const Shape& r = shape::record({{"a", shape::u64()}, {"b", shape::string(), false}});
  EXPECT_EQ(why(r, Value::map({{"a", 1}})), "ok");
  EXPECT_EQ(why(r, Value::map({{"a", 1}, {"b", "x"}})), "ok");
  EXPECT_EQ(why(r, Value::map({{"b", "x"}})), "value: missing field \"a\"");
  EXPECT_EQ(why(r, Value::map({{"a", 1}, {"c", 0}})), "value: unknown field \"c\"");
  EXPECT_EQ(why(r, Value::map({{"a", "1"}})), "a: expected an integer in u64");
  static const Shape& outer = shape::record({{"list", shape::array_of(r)}});
  EXPECT_EQ(why(outer, Value::map({{"list", Value::array({Value::map({{"a", 1}}), Value::map({})})}})),
            "list[1]: missing field \"a\"");
}

TEST(ManagerShape, TaggedAndExternalEnums) {
  static const Shape& sel = shape::tagged("kind", {{"major", {{"major", shape::u32()}}},
                                                   {"version", {{"version", shape::string()}}}});
  EXPECT_EQ(why(sel, Value::map({{"kind", "major"}, {"major", 0}})), "ok");
  EXPECT_EQ(why(sel, Value::map({{"kind", "version"}, {"version", "v0.3.0"}})), "ok");
  EXPECT_EQ(why(sel, Value::map({{"kind", "version"}, {"major", 0}})), "value: unknown field \"major\"")
      << "another variant's field is foreign";
  EXPECT_EQ(why(sel, Value::map({{"major", 0}})), "value: missing field \"kind\"");
  EXPECT_EQ(why(sel, Value::map({{"kind", "minor"}})), "kind: expected one of major, version");
  EXPECT_EQ(why(sel, Value::map({})), "value: missing field \"kind\"");

  static const Shape& kind = shape::external({{"Return", nullptr}, {"UserError", nullptr}});
  EXPECT_EQ(why(kind, "Return"), "ok");
  EXPECT_EQ(why(kind, "return"), "value: expected one of Return, UserError");
  EXPECT_EQ(why(kind, 0), "value: expected one of Return, UserError");
  static const Shape& params = shape::external({{"Internal", &shape::u8()}, {"External", &shape::string()}});
  EXPECT_EQ(why(params, Value::map({{"Internal", 3}})), "ok");
  EXPECT_EQ(why(params, Value::map({{"External", 3}})), "External: expected a string");
  EXPECT_EQ(why(params, Value::map({{"Internal", 3}, {"External", "x"}})), "value: expected one of Internal, External");
  EXPECT_EQ(why(params, "Internal"), "value: expected one of Internal, External") << "not a unit variant";
}

TEST(ManagerShape, TuplesCustomChecksAndRecursion) {
  static const Shape& pair = shape::tuple({&shape::bytes_of(36), &shape::bytes()});
  EXPECT_EQ(why(pair, Value::array({calldata::Bytes(36), calldata::Bytes{}})), "ok");
  EXPECT_EQ(why(pair, Value::array({calldata::Bytes(36)})), "value: expected an array of 2");
  static const Shape& even = shape::custom(shape::u64(), "an even number", [](const Value& v) -> std::optional<std::string> {
    if (*v.as_int().to_uint64() % 2) return "odd";
    return std::nullopt;
  });
  EXPECT_EQ(why(even, 4), "ok");
  EXPECT_EQ(why(even, 5), "value: odd");
  EXPECT_EQ(why(even, "4"), "value: expected an integer in u64");
  static Shape& tree = shape::later();
  static const Shape& node = shape::record({{"children", shape::array_of(tree)}});
  shape::set(tree, node);
  Value leaf = Value::map({{"children", Value::Array{}}});
  EXPECT_EQ(why(node, Value::map({{"children", Value::array({leaf, leaf})}})), "ok");
  EXPECT_EQ(why(node, Value::map({{"children", Value::array({leaf, Value::map({})})}})),
            "children[1]: missing field \"children\"");
}

}  // namespace
}  // namespace genvm::manager
