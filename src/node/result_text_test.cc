// result_text: exact calldata text within its limits, bounded text and bounded work past them.
#include "node/result_text.h"

#include <gtest/gtest.h>

#include "common/bigint.h"

namespace genvm::node {
namespace {

using calldata::Value;

BigInt ones(std::size_t bytes) {  // 2^(8 * bytes) - 1
  return BigInt::from_magnitude(false, BigInt::Limbs((bytes + 3) / 4, 0xffffffffu));
}

TEST(NodeResultText, WithinTheLimitsItIsExactlyTheCalldataText) {
  Value v = Value::map({{"a", Value::array({1, -7, "x\n", Value(calldata::Bytes{0, 255})})}, {"b", ones(200)}});
  EXPECT_EQ(result_text(v), calldata::to_text(v));
  EXPECT_EQ(result_text(Value()), "null");
}

TEST(NodeResultText, AHugeIntegerIsANoteAndItsDecimalIsNeverComputed) {
  // 1 MiB of magnitude: its decimal form is 2.5 million digits and billions of limb steps.
  // The note costs a few limb steps, so the count proves no conversion ran (fails on
  // calldata::to_text, which converts it).
  Value v(ones(1 << 20));
  std::uint64_t before = bigint_limb_steps();
  std::string t = result_text(v);
  EXPECT_LT(bigint_limb_steps() - before, 1000u);
  EXPECT_EQ(t, "\"<integer of 8388608 bits, not rendered: 0xffffffffffffffff...>\" ... (cut: the full text would be "
               "about 2525224 characters; 65536 kept)");
  // Just below the limit it is exact.
  Value small(ones(32768 / 8));
  EXPECT_EQ(result_text(small), calldata::to_text(small));
  EXPECT_NE(result_text(Value(-ones(32768 / 8 + 1))).find("negative integer of 32800 bits"), std::string::npos);
}

TEST(NodeResultText, LargeBytesStringsAndArraysAreCutAtTheLimitWithANote) {
  ResultTextLimits lim;
  lim.max_chars = 1000;
  std::string note_of_bytes = " ... (cut: the full text would be about 20000002 characters; 1000 kept)";
  std::string t = result_text(Value(calldata::Bytes(10'000'000, 0x5a)), lim);
  EXPECT_EQ(t.size(), 1000 + note_of_bytes.size());
  EXPECT_EQ(t.substr(0, 6), "b#5a5a");
  EXPECT_EQ(t.substr(1000), note_of_bytes);
  Value::Array many(100'000, Value(ones(100)));  // 100,000 integers of 241 digits
  std::uint64_t before = bigint_limb_steps();
  t = result_text(Value(std::move(many)), lim);
  EXPECT_LT(t.size(), 1100u);
  // Only the few integers that fit in 1000 characters are converted (calldata::to_text would
  // convert all 100,000).
  EXPECT_LT(bigint_limb_steps() - before, 100'000u);
  std::string s(5000, 'x');
  s += "\xc3\xa9";
  EXPECT_EQ(result_text(Value(s), lim).substr(0, 5), "\"xxxx");
}

}  // namespace
}  // namespace genvm::node
