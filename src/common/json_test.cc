// The JSON reader: what it accepts, what it refuses, and that writing back keeps member order.
#include "common/json.h"

#include <gtest/gtest.h>

namespace genvm {
namespace {

std::string round_trip(std::string_view text) {
  auto v = parse_json(text);
  EXPECT_TRUE(v.ok()) << text << ": " << v.error().to_string();
  if (!v.ok()) return "<error>";
  JsonWriter w;
  write_json(w, *v);
  return w.take();
}

TEST(ManagerJsonReader, KeepsMemberOrderNumbersAsWrittenAndDecodesEscapes) {
  EXPECT_EQ(round_trip(R"( {"z": 1, "a": [true, false, null, -0.5e+3], "s": "\u00e9\ud83d\ude00\n\/"} )"),
            "{\"z\":1,\"a\":[true,false,null,-0.5e+3],\"s\":\"\xC3\xA9\xF0\x9F\x98\x80\\n/\"}");
  auto v = parse_json(R"({"n": 18446744073709551615, "m": 18446744073709551616, "f": 1.0})");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->find("n")->as_u64(), 18446744073709551615ull);
  EXPECT_FALSE(v->find("m")->as_u64());
  EXPECT_FALSE(v->find("f")->as_u64());
  EXPECT_EQ(v->find("absent"), nullptr);
}

TEST(ManagerJsonReader, ARepeatedNameKeepsItsPlaceAndTakesTheLastValue) {
  EXPECT_EQ(round_trip(R"({"a":1,"b":2,"a":3})"), R"({"a":3,"b":2})");
}

TEST(ManagerJsonReader, RefusesWhatRfc8259Refuses) {
  for (std::string_view bad : {"", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "1e", "+1", "nul", "'a'",
                               "\"a\nb\"", "\"\\x\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
                               "\"\xff\"", "{\"a\" 1}", "[1 2]", "1 2", "NaN"}) {
    auto v = parse_json(bad);
    EXPECT_FALSE(v.ok()) << "accepted: " << bad;
    if (!v.ok()) {
      EXPECT_EQ(v.error().code, "bad_json");
    }
  }
}

// Fails if the depth bound is removed: the parser recurses once per level.
TEST(ManagerJsonReader, NestingIsBounded) {
  std::string ok(kMaxJsonDepth, '[');
  ok += std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(parse_json(ok).ok());
  std::string deep(kMaxJsonDepth + 1, '[');
  deep += std::string(kMaxJsonDepth + 1, ']');
  auto v = parse_json(deep);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("nesting"), std::string::npos);
  EXPECT_FALSE(parse_json(std::string(100000, '[')).ok());
}

}  // namespace
}  // namespace genvm
