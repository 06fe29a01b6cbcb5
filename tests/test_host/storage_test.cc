// The storage model against the real test host: pages come over the host protocol.
#include <gtest/gtest.h>

#include <cstdlib>

#include "executor/host_client.h"
#include "executor/storage.h"
#include "executor/sha3.h"
#include "test_host.h"

namespace genvm {
namespace {

using executor::SlotId;
using executor::Storage;
using host::StorageType;
using test_host::TestHost;

calldata::Address addr(std::uint8_t fill) {
  calldata::Address a;
  a.bytes.fill(fill);
  return a;
}

SlotId slot(std::uint8_t fill) {
  SlotId s;
  s.fill(fill);
  return s;
}

class StorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/genvm-storage-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    calldata::Bytes s1(100);
    for (std::size_t i = 0; i < s1.size(); ++i) s1[i] = static_cast<std::uint8_t>(i + 1);
    host_.state().storage[{self_.bytes, slot(1)}] = s1;
    host_.state().storage[{other_.bytes, slot(1)}] = calldata::Bytes(40, 0xee);
    auto uri = host_.listen_unix(dir_ + "/h.sock");
    ASSERT_TRUE(uri.ok());
    auto c = executor::HostClient::connect({*uri}, {}, {});
    ASSERT_TRUE(c.ok());
    client_ = std::move(*c);
    reader_ = std::make_unique<executor::HostStorageReader>(*client_);
    st_ = std::make_unique<Storage>(*reader_, self_);
  }
  void TearDown() override {
    host_.stop();
    ::rmdir(dir_.c_str());
  }
  std::size_t host_reads() {
    return host_.with_state([](test_host::State& s) { return s.storage_reads.size(); });
  }

  calldata::Address self_ = addr(1);
  calldata::Address other_ = addr(2);
  std::string dir_;
  TestHost host_;
  std::unique_ptr<executor::HostClient> client_;
  std::unique_ptr<executor::HostStorageReader> reader_;
  std::unique_ptr<Storage> st_;
};

TEST_F(StorageTest, ReadFetchesWholePagesOnceAndServesRepeatsFromTheCache) {
  auto r = st_->read(StorageType::kDefault, self_, slot(1), 30, 5);  // spans pages 0 and 1
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(*r, (calldata::Bytes{31, 32, 33, 34, 35}));
  EXPECT_EQ(host_reads(), 1u);  // one call for the run of two pages
  auto rec = host_.with_state([](test_host::State& s) { return s.storage_reads[0]; });
  EXPECT_EQ(rec.index, 0u);
  EXPECT_EQ(rec.len, 2 * executor::kPageSize);
  auto again = st_->read(StorageType::kDefault, self_, slot(1), 0, 64);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[63], 64);
  EXPECT_EQ(host_reads(), 1u);  // the cache answered: without it this would be 2
}

TEST_F(StorageTest, BeyondStoredDataReadsZeros) {
  auto r = st_->read(StorageType::kDefault, self_, slot(1), 96, 8);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (calldata::Bytes{97, 98, 99, 100, 0, 0, 0, 0}));
  auto far = st_->read(StorageType::kDefault, self_, slot(1), 0xfffffff0u, 16);
  ASSERT_TRUE(far.ok());
  EXPECT_EQ(*far, calldata::Bytes(16, 0));
}

TEST_F(StorageTest, WritesAreBufferedAndVisibleToOwnDefaultReads) {
  ASSERT_TRUE(st_->write(slot(1), 2, calldata::Bytes{0xa0, 0xa1}).ok());
  EXPECT_EQ(host_reads(), 1u);  // the partially covered page was read first
  auto r = st_->read(StorageType::kDefault, self_, slot(1), 0, 5);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (calldata::Bytes{1, 2, 0xa0, 0xa1, 5}));
  // Another view of the same contract does not see the run's uncommitted writes.
  auto final_view = st_->read(StorageType::kLatestFinal, self_, slot(1), 0, 5);
  ASSERT_TRUE(final_view.ok());
  EXPECT_EQ(*final_view, (calldata::Bytes{1, 2, 3, 4, 5}));
  // Nothing was written to the host.
  host_.with_state([](test_host::State& s) {
    EXPECT_EQ(s.storage.begin()->second[2], 3);
    return 0;
  });
}

TEST_F(StorageTest, AReadOnlyChildViewSkipsTheRunsOwnWrites) {
  ASSERT_TRUE(st_->write(slot(1), 0, calldata::Bytes{0xf0}).ok());
  auto own = st_->read(StorageType::kDefault, self_, slot(1), 0, 2);
  auto child = st_->read(StorageType::kDefault, self_, slot(1), 0, 2, /*with_own_writes=*/false);
  ASSERT_TRUE(own.ok() && child.ok());
  EXPECT_EQ(*own, (calldata::Bytes{0xf0, 2}));
  EXPECT_EQ(*child, (calldata::Bytes{1, 2}));
}

// Consecutive written pages of a slot are one change (the public executor's make_delta).
TEST_F(StorageTest, FullPageWritesNeedNoReadAndConsecutivePagesAreOneChange) {
  ASSERT_TRUE(st_->write(slot(3), 32, calldata::Bytes(64, 7)).ok());
  EXPECT_EQ(host_reads(), 0u);
  auto ch = st_->changes();
  ASSERT_EQ(ch.size(), 1u);
  EXPECT_EQ(ch[0].key[35], 1);  // first page index 1, big-endian
  EXPECT_EQ(ch[0].value, calldata::Bytes(64, 7));
}

// Keyed by slot id and the first page's index as u32 big-endian, in (slot, page) order.
TEST_F(StorageTest, ChangesAreKeyedBySlotAndBigEndianPageIndexInOrder) {
  ASSERT_TRUE(st_->write(slot(2), 70, calldata::Bytes{9}).ok());
  ASSERT_TRUE(st_->write(slot(1), 0, calldata::Bytes{8}).ok());
  ASSERT_TRUE(st_->write(slot(2), 0x2000, calldata::Bytes{7}).ok());
  auto ch = st_->changes();
  ASSERT_EQ(ch.size(), 3u);
  // slot 1 page 0, then slot 2 page 2 (offset 64), then slot 2 page 256 (offset 0x2000).
  EXPECT_EQ(ch[0].key[0], 1);
  EXPECT_EQ(ch[0].key[35], 0);
  EXPECT_EQ(ch[0].value[0], 8);
  EXPECT_EQ(ch[0].value[1], 2);  // rest of the page from the host
  EXPECT_EQ(ch[1].key[0], 2);
  EXPECT_EQ((std::array<std::uint8_t, 4>{ch[1].key[32], ch[1].key[33], ch[1].key[34], ch[1].key[35]}),
            (std::array<std::uint8_t, 4>{0, 0, 0, 2}));
  EXPECT_EQ(ch[1].value[70 - 64], 9);
  EXPECT_EQ((std::array<std::uint8_t, 4>{ch[2].key[32], ch[2].key[33], ch[2].key[34], ch[2].key[35]}),
            (std::array<std::uint8_t, 4>{0, 0, 1, 0}));
  EXPECT_EQ(ch[2].value.size(), executor::kPageSize);
}

TEST_F(StorageTest, OtherContractsReadThroughTheCache) {
  auto r = st_->read(StorageType::kDefault, other_, slot(1), 38, 4);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (calldata::Bytes{0xee, 0xee, 0, 0}));
  auto rec = host_.with_state([](test_host::State& s) { return s.storage_reads[0]; });
  EXPECT_EQ(rec.address, other_);
}

TEST_F(StorageTest, RangesPastTheSlotEndAreOverflow) {
  auto r = st_->read(StorageType::kDefault, self_, slot(1), 0xffffffffu, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "storage_overflow");
  auto w = st_->write(slot(1), 0xfffffffeu, calldata::Bytes{1, 2, 3});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, "storage_overflow");
  EXPECT_TRUE(st_->write(slot(1), 0xfffffffeu, calldata::Bytes{1, 2}).ok());
}

TEST_F(StorageTest, HostErrorsPassThrough) {
  host_.with_state([&](test_host::State& s) { s.forbidden_reads.insert(other_.bytes); return 0; });
  auto r = st_->read(StorageType::kDefault, other_, slot(1), 0, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "host_forbidden");
}

TEST_F(StorageTest, RootSlotPermissionBitAndMajor) {
  calldata::Bytes root(69, 0);
  root[executor::kRootOffsetMajor] = 0;
  // can_use_balance_for_message_fees has the value 1: bit 1 (storage.rst "bit n ... value n").
  root[executor::kRootOffsetPermissions] = 0x02;
  host_.with_state([&](test_host::State& s) { s.storage[{self_.bytes, executor::kRootSlot}] = root; return 0; });
  auto p = st_->can_use_balance_for_message_fees();
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(*p);
  auto m = st_->abi_major();
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, 0);
}

TEST(IndirectionSlot, IsSha3OfSlotAndLittleEndianOffset) {
  SlotId root{};
  // sha3_256(32 zero bytes || 04 00 00 00), computed with python3 hashlib.
  auto s = executor::indirection_slot(root, 4);
  const char* want = "27a15e7450d9f04e9c3d8d2d856a8e9c78dfa0081ea2c128fdc93ce2df35ebd6";
  std::string got;
  for (auto b : s) {
    got += "0123456789abcdef"[b >> 4];
    got += "0123456789abcdef"[b & 15];
  }
  EXPECT_EQ(got, want);
  EXPECT_NE(s, executor::indirection_slot(root, 0));
}

}  // namespace
}  // namespace genvm
