#include "executor/u256.h"

#include <gtest/gtest.h>

namespace genvm::executor {
namespace {

TEST(U256, AddSubCompareAcrossBytes) {
  U256Le a{}, b{};
  a[0] = 0xff;
  a[1] = 0x01;  // 0x1ff
  b[0] = 0x01;  // 1
  U256Le sum = u256_add(a, b);
  EXPECT_EQ(sum[0], 0x00);
  EXPECT_EQ(sum[1], 0x02);
  U256Le diff = u256_sub(sum, a);
  EXPECT_EQ(diff, b);
  EXPECT_EQ(u256_sub(b, a), U256Le{});  // clamped, never wraps
  EXPECT_TRUE(u256_less(b, a));
  EXPECT_FALSE(u256_less(a, a));
  U256Le max;
  max.fill(0xff);
  EXPECT_EQ(u256_add(max, b), max);  // saturates
  EXPECT_EQ(u256_from(BigInt(0x1ff)), a);
}

}  // namespace
}  // namespace genvm::executor
