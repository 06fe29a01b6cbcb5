#include "executor/fees/config.h"

#include <gtest/gtest.h>

#include <string>

namespace genvm::executor::fees {
namespace {

const char* kMinimal = R"(
modules: { llm: { address: "ws://x" } }
fees:
  expr_prelude: ""
  storage: { bucket_no: 0, delta_expr: "\\a = a.pages" }
  message_receipt: { bucket_no: [0, 3], subtract_on_start_expr: "[1, 2]", delta_expr: "\\a = 1" }
  nondet_output: { bucket_no: 2, delta_expr: "\\a = 0" }
  message_fee: { bucket_no: [1], delta_expr: "\\a = 0" }
  event: { bucket_no: 255, delta_expr: "\\a = 0" }
)";

TEST(FeesConfig, ReadsTheFeesBlockOfAWholeConfig) {
  auto c = parse_fees_config(kMinimal);
  ASSERT_TRUE(c) << c.error().to_string();
  EXPECT_EQ(c->expr_prelude, "");
  EXPECT_EQ(c->storage.bucket_no, std::vector<std::uint8_t>{0});
  EXPECT_EQ(c->storage.subtract_on_start_expr, "0");  // the default
  EXPECT_EQ(c->storage.delta_expr, "\\a = a.pages");
  EXPECT_EQ(c->message_receipt.bucket_no, (std::vector<std::uint8_t>{0, 3}));
  EXPECT_EQ(c->message_receipt.subtract_on_start_expr, "[1, 2]");
  EXPECT_EQ(c->message_fee.bucket_no, std::vector<std::uint8_t>{1});
  EXPECT_EQ(c->event.bucket_no, std::vector<std::uint8_t>{255});
}

std::string with(std::string_view from, std::string_view to) {
  std::string s = kMinimal;
  auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
  return s;
}

TEST(FeesConfig, RejectsWhatThePublicShapeDoesNotAllow) {
  struct Case {
    std::string text;
    std::string message;
  };
  for (const Case& c : {
           Case{"fees: 3", "fees: not a map"},
           Case{"other: 1", "fees: missing"},
           Case{"[1, 2]", "the config is not a map"},
           Case{"fees: {", "not YAML"},
           Case{with("  event: { bucket_no: 255, delta_expr: \"\\\\a = 0\" }\n", ""), "fees.event: missing"},
           Case{with("bucket_no: 255", "bucket_no: 256"), "exceeds 255"},
           Case{with("bucket_no: 255", "bucket_no: -1"), "integer 0..255"},
           Case{with("bucket_no: 255", "bucket_no: []"), "at least one bucket"},
           Case{with("bucket_no: 255", "bucket_no: [1, x]"), "fees.event.bucket_no[1]"},
           Case{with("bucket_no: 255, ", ""), "fees.event.bucket_no: missing"},
           Case{with(", delta_expr: \"\\\\a = a.pages\"", ""), "fees.storage.delta_expr: missing"},
           Case{with("delta_expr: \"\\\\a = a.pages\"", "delta_expr: [1]"), "not a string"},
           Case{with("bucket_no: 255,", "bucket_no: 255, budget: 1,"), "fees.event.budget: unknown key"},
           Case{with("expr_prelude: \"\"", "expr_prelude: \"\"\n  extra: 1"), "fees.extra: unknown key"},
           Case{with("  expr_prelude: \"\"\n", ""), "fees.expr_prelude: missing"},
       }) {
    auto r = parse_fees_config(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().code, "fees_config");
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message << "\n-- for --\n" << c.text;
  }
}

TEST(FeesConfig, TheCompiledInRulesParse) {
  auto c = parse_fees_config(default_fees_yaml());
  ASSERT_TRUE(c) << c.error().to_string();
  const FeesConfig& d = default_fees_config();
  EXPECT_EQ(d.storage.bucket_no, std::vector<std::uint8_t>{0});
  EXPECT_EQ(d.message_receipt.bucket_no, (std::vector<std::uint8_t>{0, 3}));
  EXPECT_EQ(d.nondet_output.bucket_no, (std::vector<std::uint8_t>{0, 2}));
  EXPECT_EQ(d.message_fee.bucket_no, std::vector<std::uint8_t>{1});
  EXPECT_EQ(d.event.bucket_no, std::vector<std::uint8_t>{0});
  EXPECT_NE(d.expr_prelude.find("let messageFeeFloor"), std::string::npos);
}

}  // namespace
}  // namespace genvm::executor::fees
