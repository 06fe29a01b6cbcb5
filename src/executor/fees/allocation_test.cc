#include "executor/fees/allocation.h"
#include "common/host/fee_params_test_data.h"

#include <gtest/gtest.h>

#include <string>

namespace genvm::executor::fees {
namespace {

using namespace host::test_data;  // NOLINT: the shared test data reads as local

TEST(Allocation, TheFirstFittingNodeInListOrderMatches) {
  std::vector<AllocationNode> nodes{
      external_node(1),                                              // 0: external, any
      internal_node(2, MessageOn::kAccepted),                        // 1: accepted only
      internal_node(3, MessageOn::kFinalized, address(0xaa), key(1)),  // 2: exact
      internal_node(4, MessageOn::kFinalized, address(0xaa)),        // 3: any method of 0xaa
      internal_node(5, MessageOn::kFinalized),                       // 4: anything finalized
      internal_node(6, MessageOn::kFinalized, address(0xbb)),        // 5: shadowed by 4
  };
  auto index = [&](AllocationNode* n) { return n ? n - nodes.data() : -1; };
  EXPECT_EQ(index(match_internal(nodes, MessageOn::kFinalized, address(0xaa), key(1))), 2);
  EXPECT_EQ(index(match_internal(nodes, MessageOn::kFinalized, address(0xaa), key(2))), 3);
  EXPECT_EQ(index(match_internal(nodes, MessageOn::kFinalized, address(0xbb), key(1))), 4);  // no reordering
  EXPECT_EQ(index(match_internal(nodes, MessageOn::kAccepted, address(0xcc), key(9))), 1);
  EXPECT_EQ(index(match_external(nodes, address(0xcc), key(9))), 0);
  std::vector<AllocationNode> internal_only{internal_node(1)};
  EXPECT_EQ(match_external(internal_only, address(1), key(1)), nullptr);
  EXPECT_EQ(match_internal(internal_only, MessageOn::kAccepted, address(1), key(1)), nullptr);
  std::vector<AllocationNode> exact{external_node(1, address(3), key(4))};
  EXPECT_EQ(match_external(exact, address(3), key(5)), nullptr);
  EXPECT_EQ(match_external(exact, address(2), key(4)), nullptr);
  EXPECT_NE(match_external(exact, address(3), key(4)), nullptr);
}

// --- ABI: the chain's abi.encode(MessageAllocationNode[]) ---

calldata::Bytes words(std::initializer_list<BigInt> ws) {
  calldata::Bytes out;
  for (const BigInt& w : ws) {
    calldata::Bytes word(32, 0);
    const auto& limbs = w.magnitude();
    for (std::size_t i = 0; i < limbs.size(); ++i) {
      for (std::size_t b = 0; b < 4; ++b) word[31 - (i * 4 + b)] = static_cast<std::uint8_t>(limbs[i] >> (8 * b));
    }
    out.insert(out.end(), word.begin(), word.end());
  }
  return out;
}

BigInt word_of(const calldata::Bytes& raw32) {
  BigInt::Limbs limbs(8, 0);
  for (std::size_t i = 0; i < 32; ++i) limbs[(31 - i) / 4] |= static_cast<std::uint32_t>(raw32[i]) << (8 * ((31 - i) % 4));
  return BigInt::from_magnitude(false, limbs);
}

const BigInt kMax = BigInt::from_magnitude(false, BigInt::Limbs(8, 0xffffffffu));

TEST(AllocationAbi, NoNodesIsAnEmptyArray) {
  EXPECT_EQ(abi_encode({}), words({BigInt(0x20), BigInt(0)}));
}

TEST(AllocationAbi, AnExternalRootNode) {
  const calldata::Address to = address(0x11);
  calldata::Bytes recipient(to.bytes.begin(), to.bytes.end());
  recipient.insert(recipient.begin(), 12, 0);
  calldata::Bytes expected = words({BigInt(0x20), BigInt(1), BigInt(0x20),
                                    BigInt(0),       // External
                                    BigInt(0),       // onAcceptance: never for external
                                    kMax});          // parentIndex of a root
  expected.insert(expected.end(), recipient.begin(), recipient.end());
  calldata::Bytes tail = words({BigInt(0),          // callKey wildcard
                                BigInt(5),          // budget
                                BigInt(7 * 32),     // feeParams offset
                                BigInt(64),         // feeParams length
                                BigInt(7), BigInt(9)});
  expected.insert(expected.end(), tail.begin(), tail.end());
  EXPECT_EQ(abi_encode({external_node(5, address(0x11))}), expected);
}

TEST(AllocationAbi, InternalNodesFlattenParentsFirst) {
  AllocationNode root = internal_node(100, MessageOn::kAccepted, std::nullopt, key(0x42));
  root.children.push_back(internal_node(10));
  root.children[0].children.push_back(external_node(1));
  std::vector<AllocationNode> roots{root, internal_node(200)};
  calldata::Bytes enc = abi_encode(roots);
  // Internal params: offset, leader, validator, appeals (len - 1), budget, rotations offset,
  // 3 caps, then the rotations array (length, entries): 12 words for rotations [0, 2].
  const std::size_t params_len = 12 * 32;
  const std::size_t internal_elem = (7 + 1) * 32 + params_len;  // head, length word, data
  const std::size_t external_elem = (7 + 1 + 2) * 32;
  ASSERT_EQ(enc.size(), 2 * 32 + 4 * 32 + 3 * internal_elem + external_elem);
  auto word = [&](std::size_t at) { return word_of(calldata::Bytes(enc.begin() + at, enc.begin() + at + 32)); };
  EXPECT_EQ(word(32), BigInt(4));  // four nodes, pre-order: root, child, grandchild, second root
  std::vector<std::size_t> offsets;
  for (std::size_t i = 0; i < 4; ++i) offsets.push_back(word_of(calldata::Bytes(enc.begin() + 64 + 32 * i, enc.begin() + 96 + 32 * i)).to_uint64().value());
  EXPECT_EQ(offsets, (std::vector<std::size_t>{128, 128 + internal_elem, 128 + 2 * internal_elem,
                                               128 + 2 * internal_elem + external_elem}));
  auto elem_word = [&](std::size_t elem, std::size_t w) { return word(64 + offsets[elem] + 32 * w); };
  // type, onAcceptance, parent
  EXPECT_EQ(elem_word(0, 0), BigInt(1));
  EXPECT_EQ(elem_word(0, 1), BigInt(1));
  EXPECT_EQ(elem_word(0, 2), kMax);
  EXPECT_EQ(elem_word(0, 4), word_of(calldata::Bytes(32, 0x42)));  // callKey
  EXPECT_EQ(elem_word(0, 5), BigInt(100));
  EXPECT_EQ(elem_word(1, 2), BigInt(0));   // the child's parent is node 0
  EXPECT_EQ(elem_word(1, 1), BigInt(0));   // finalized
  EXPECT_EQ(elem_word(2, 0), BigInt(0));   // external
  EXPECT_EQ(elem_word(2, 2), BigInt(1));   // the grandchild's parent is node 1
  EXPECT_EQ(elem_word(3, 2), kMax);        // the second root
  // The first node's params: starts at head (7 words) + length word.
  std::size_t p = 64 + offsets[0] + 8 * 32;
  EXPECT_EQ(word(p - 32), BigInt(params_len));
  EXPECT_EQ(calldata::Bytes(enc.begin() + p, enc.begin() + p + params_len),
            words({BigInt(0x20), BigInt(1), BigInt(2), BigInt(1), BigInt(3), BigInt(8 * 32), BigInt(11), BigInt(12),
                   BigInt(13), BigInt(2), BigInt(0), BigInt(2)}));
}

}  // namespace
}  // namespace genvm::executor::fees
