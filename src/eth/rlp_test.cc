// RLP against the Yellow Paper's and Ethereum wiki's worked examples, both directions, and the
// refusals of every non-canonical form the decoder must not accept (each pins one check in
// rlp.cc: remove it and that test decodes instead of failing).
#include "eth/rlp.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>

#include "eth/test_util.h"

namespace genvm::eth {
namespace {

using testing::errc_of;
using testing::hex;
using testing::hex_of;

ByteView text(std::string_view s) { return ByteView(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); }

TEST(Rlp, StringsEncodeAsTheWikiExamples) {
  EXPECT_EQ(hex_of(rlp_string(text("dog"))), "83646f67");
  EXPECT_EQ(hex_of(rlp_string(text(""))), "80");
  EXPECT_EQ(hex_of(rlp_string(hex("0f"))), "0f");
  EXPECT_EQ(hex_of(rlp_string(hex("80"))), "8180");
  EXPECT_EQ(hex_of(rlp_string(hex("0400"))), "820400");
  const std::string lorem = "Lorem ipsum dolor sit amet, consectetur adipisicing elit";  // 56 octets
  EXPECT_EQ(hex_of(rlp_string(text(lorem))), "b838" + hex_of(text(lorem)));
  Bytes n;
  rlp_append_uint(n, 0);
  rlp_append_uint(n, 15);
  rlp_append_uint(n, 1024);
  EXPECT_EQ(hex_of(n), "800f820400");
}

TEST(Rlp, ListsEncodeAsTheWikiExamples) {
  Bytes items;
  rlp_append_string(items, text("cat"));
  rlp_append_string(items, text("dog"));
  EXPECT_EQ(hex_of(rlp_list(items)), "c88363617483646f67");
  EXPECT_EQ(hex_of(rlp_list({})), "c0");
  // The set-theoretic three: [ [], [[]], [ [], [[]] ] ].
  Bytes e = rlp_list({});
  Bytes one = rlp_list(e);
  Bytes pair = e;
  pair.insert(pair.end(), one.begin(), one.end());
  Bytes third = rlp_list(pair);
  Bytes all = e;
  all.insert(all.end(), one.begin(), one.end());
  all.insert(all.end(), third.begin(), third.end());
  EXPECT_EQ(hex_of(rlp_list(all)), "c7c0c1c0c3c0c1c0");
  // A list payload of 56 octets takes the long form.
  Bytes long_items;
  for (int i = 0; i < 14; ++i) rlp_append_string(long_items, text("abc"));
  EXPECT_EQ(hex_of(rlp_list(long_items)).substr(0, 4), "f838");
}

TEST(Rlp, DecodesAndReencodesIdentically) {
  for (const char* v : {"83646f67", "80", "0f", "8180", "820400", "c88363617483646f67", "c0", "c7c0c1c0c3c0c1c0",
                        "b8384c6f72656d20697073756d20646f6c6f722073697420616d65742c20636f6e7365637465747572206164697069736963696e6720656c6974"}) {
    Bytes in = hex(v);
    auto r = rlp_decode(in);
    ASSERT_TRUE(r.ok()) << v << ": " << r.error().to_string();
    EXPECT_EQ(hex_of(r->raw), v);
    Bytes again = r->is_list ? rlp_list(r->payload) : rlp_string(r->payload);
    EXPECT_EQ(hex_of(again), v);
  }
  const Bytes cat_dog = hex("c88363617483646f67");  // nodes view into it: keep it alive
  auto r = rlp_decode(cat_dog);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->is_list);
  ASSERT_EQ(r->children.size(), 2u);
  EXPECT_EQ(hex_of(r->children[1].payload), hex_of(text("dog")));
}

TEST(Rlp, LongStringOverTwoLengthOctets) {
  Bytes big(1024, 0x61);
  Bytes enc = rlp_string(big);
  EXPECT_EQ(hex_of(ByteView(enc).first(3)), "b90400");
  auto r = rlp_decode(enc);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->payload.size(), 1024u);
}

TEST(Rlp, RefusesNonCanonicalForms) {
  // A single octet below 0x80 wrapped as a 1-octet string.
  EXPECT_EQ(errc_of(rlp_decode(hex("8100"))), Errc::rlp_not_canonical);
  EXPECT_EQ(errc_of(rlp_decode(hex("817f"))), Errc::rlp_not_canonical);
  // A short length in the long form (string and list).
  EXPECT_EQ(errc_of(rlp_decode(hex("b803646f67"))), Errc::rlp_not_canonical);
  EXPECT_EQ(errc_of(rlp_decode(hex("f803c0c0c0"))), Errc::rlp_not_canonical);
  // A leading zero octet in a long length.
  Bytes lz = hex("b90038");
  lz.insert(lz.end(), 56, 0x61);
  EXPECT_EQ(errc_of(rlp_decode(lz)), Errc::rlp_not_canonical);
}

TEST(Rlp, RefusesTruncationAndTrailingOctets) {
  EXPECT_EQ(errc_of(rlp_decode({})), Errc::rlp_truncated);
  EXPECT_EQ(errc_of(rlp_decode(hex("83646f"))), Errc::rlp_truncated);
  EXPECT_EQ(errc_of(rlp_decode(hex("81"))), Errc::rlp_truncated);
  EXPECT_EQ(errc_of(rlp_decode(hex("b9"))), Errc::rlp_truncated);
  EXPECT_EQ(errc_of(rlp_decode(hex("b90400"))), Errc::rlp_truncated);
  EXPECT_EQ(errc_of(rlp_decode(hex("bfffffffffffffffff"))), Errc::rlp_truncated);  // 2^64-1 octets claimed
  EXPECT_EQ(errc_of(rlp_decode(hex("c88363617483646f"))), Errc::rlp_truncated);    // child past its list
  EXPECT_EQ(errc_of(rlp_decode(hex("c3836361748364"))), Errc::rlp_truncated);      // list shorter than its child
  EXPECT_EQ(errc_of(rlp_decode(hex("83646f6700"))), Errc::rlp_trailing);
  EXPECT_EQ(errc_of(rlp_decode(hex("c0c0"))), Errc::rlp_trailing);
}

TEST(Rlp, BoundsDepthAndCount) {
  Bytes nested = rlp_list({});
  for (int i = 0; i < 20; ++i) nested = rlp_list(nested);
  EXPECT_EQ(errc_of(rlp_decode(nested)), Errc::rlp_too_deep);
  RlpLimits deep;
  deep.max_depth = 32;
  EXPECT_TRUE(rlp_decode(nested, deep).ok());
  Bytes many(1000, 0x01);
  Bytes list = rlp_list(many);
  RlpLimits few;
  few.max_nodes = 100;
  EXPECT_EQ(errc_of(rlp_decode(list, few)), Errc::rlp_too_many);
  EXPECT_TRUE(rlp_decode(list).ok());
}

TEST(Rlp, IntegersAreCanonical) {
  std::deque<Bytes> inputs;  // nodes view into their input: keep every one alive
  auto node = [&inputs](const std::string& h) {
    inputs.push_back(hex(h));
    auto r = rlp_decode(inputs.back());
    EXPECT_TRUE(r.ok()) << h;
    return r.ok() ? *r : RlpNode{};
  };
  EXPECT_EQ(*rlp_uint64(node("80")), 0u);
  EXPECT_EQ(*rlp_uint64(node("0f")), 15u);
  EXPECT_EQ(*rlp_uint64(node("820400")), 1024u);
  EXPECT_EQ(*rlp_uint64(node("88ffffffffffffffff")), ~std::uint64_t{0});
  EXPECT_EQ(errc_of(rlp_uint64(node("00"))), Errc::rlp_integer_not_canonical);  // zero is 0x80
  EXPECT_EQ(errc_of(rlp_uint64(node("820004"))), Errc::rlp_integer_not_canonical);
  EXPECT_EQ(errc_of(rlp_uint64(node("89010000000000000000"))), Errc::rlp_integer_too_large);
  EXPECT_EQ(errc_of(rlp_uint64(node("c0"))), Errc::rlp_shape);
  Bytes n33 = hex("a1");
  n33.insert(n33.end(), 33, 0xff);
  EXPECT_EQ(errc_of(rlp_u256(node(hex_of(n33)))), Errc::rlp_integer_too_large);
  auto v = rlp_u256(node("820400"));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(hex_of(*v), std::string(60, '0') + "0400");
}

}  // namespace
}  // namespace genvm::eth
