#include "common/host/wire.h"

#include <gtest/gtest.h>

namespace genvm::host {
namespace {

std::vector<std::uint8_t> key(std::uint8_t slot_fill, std::uint32_t page) {
  std::vector<std::uint8_t> k(32, slot_fill);
  for (int i = 3; i >= 0; --i) k.push_back(static_cast<std::uint8_t>(page >> (8 * i)));
  return k;
}

// The page index is big-endian and counts 32-byte pages; a change may span several pages.
TEST(StorageChange, AppliesWholePagesAtPageTimes32) {
  std::vector<std::uint8_t> slot;
  ASSERT_TRUE(apply_storage_change(key(1, 0x0102), std::vector<std::uint8_t>(64, 5), slot).ok());
  ASSERT_EQ(slot.size(), 0x0102u * 32 + 64);
  EXPECT_EQ(slot[0x0102 * 32 - 1], 0);
  EXPECT_EQ(slot[0x0102 * 32], 5);
  EXPECT_EQ(slot.back(), 5);
  ASSERT_TRUE(apply_storage_change(key(1, 0), std::vector<std::uint8_t>(32, 9), slot).ok());
  EXPECT_EQ(slot[31], 9);
  EXPECT_EQ(slot[32], 0);
}

TEST(StorageChange, RefusesBadKeysAndChangesPastTheSlot) {
  std::vector<std::uint8_t> slot;
  EXPECT_FALSE(apply_storage_change(std::vector<std::uint8_t>(35, 0), std::vector<std::uint8_t>(32, 0), slot).ok());
  // The last page of a 2^32-byte slot is index 2^27 - 1; page 2^27 is past the end.
  EXPECT_FALSE(apply_storage_change(key(0, 1u << 27), std::vector<std::uint8_t>(32, 0), slot).ok());
}

}  // namespace
}  // namespace genvm::host
