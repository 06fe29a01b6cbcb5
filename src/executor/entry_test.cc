#include "executor/entry.h"

#include <gtest/gtest.h>

namespace genvm::executor {
namespace {

using calldata::Value;

calldata::Address addr(std::uint8_t fill) {
  calldata::Address a;
  a.bytes.fill(fill);
  return a;
}

TEST(EntryValidation, AcceptsTheCallConvention) {
  EXPECT_TRUE(validate_entry(calldata::encode(Value::Map{}), false).ok());
  EXPECT_TRUE(validate_entry(calldata::encode(Value::map({{"", "m"}, {"args", Value::array({1})},
                                                          {"kwargs", Value::map({{"a", 1}})}})),
                             false)
                  .ok());
  EXPECT_TRUE(validate_entry(calldata::encode(Value::map({{"args", Value::Array{}}})), true).ok());
}

TEST(EntryValidation, RejectsEveryViolationAsMalformedEntry) {
  std::vector<std::pair<Value, bool>> bad = {
      {Value::array({}), false},                                  // not a map
      {Value::map({{"", "m"}}), true},                            // method on deployment
      {Value::map({{"", 1}}), false},                             // method not a string
      {Value::map({{"args", Value::map({})}}), false},            // args not an array
      {Value::map({{"kwargs", Value::array({})}}), false},        // kwargs not a map
      {Value::map({{"other", 1}}), false},                        // closed key set
  };
  for (const auto& [v, init] : bad) {
    auto s = validate_entry(calldata::encode(v), init);
    ASSERT_FALSE(s.ok()) << calldata::to_text(v);
    EXPECT_EQ(s.error().code, "malformed_entry");
  }
  auto s = validate_entry(std::vector<std::uint8_t>{0xff}, false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "malformed_entry");
}

TEST(StartupMessage, CarriesTheMessageFieldsEntryKindAndData) {
  ExecutionData d;
  d.calldata = calldata::encode(Value::map({{"", "get"}}));
  d.message.contract_address = addr(1);
  d.message.sender_address = addr(2);
  d.message.origin_address = addr(3);
  d.message.signer_address = addr(4);
  d.message.chain_id = BigInt(61999);
  d.message.datetime = "2025-01-02T03:04:05Z";
  d.nested = host::NestedExecutionData{};
  d.nested->stack = {addr(7)};
  Value s = startup_message(d, EntryKind::kMain);
  EXPECT_EQ(*s.find("contract_address"), Value(addr(1)));
  EXPECT_EQ(*s.find("signer_address"), Value(addr(4)));
  EXPECT_EQ(*s.find("entry_kind"), Value(0));
  EXPECT_EQ(*s.find("entry_data"), Value(d.calldata));
  EXPECT_TRUE(s.find("entry_stage_data")->is_null());
  EXPECT_EQ(*s.find("stack"), Value::array({addr(7)}));
  EXPECT_EQ(*s.find("datetime"), Value("2025-01-02T03:04:05Z"));
  EXPECT_EQ(s.as_map().size(), 12u);
}

TEST(Permissions, ParsesLettersOnce) {
  auto p = parse_permissions("wscn");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->write_storage && p->send_messages && p->call_others && p->spawn_nondet);
  auto none = parse_permissions("");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, Permissions{});
  auto some = parse_permissions("nc");
  ASSERT_TRUE(some.ok());
  EXPECT_TRUE(some->spawn_nondet && some->call_others && !some->write_storage);
  EXPECT_EQ(parse_permissions("wx").error().code, "bad_permissions");
  EXPECT_EQ(parse_permissions("ww").error().code, "bad_permissions");
}

TEST(CallKey, ShortNamesAreLeftAlignedAndDeployIsZero) {
  auto k = call_key(Value::map({{"", "get"}}), false);
  ASSERT_TRUE(k.ok());
  calldata::Bytes want(32, 0);
  want[0] = 'g';
  want[1] = 'e';
  want[2] = 't';
  EXPECT_EQ(*k, want);
  EXPECT_EQ(*call_key(Value::map({{"", "get"}}), true), calldata::Bytes(32, 0));
  EXPECT_EQ(*call_key(Value(Value::Map{}), false), calldata::Bytes(32, 0));
}

// 02-abi.rst: names of 32 bytes or more hash with keccak256 and force the lowest bit to 1.
// Expected digests from @noble/hashes keccak_256 (tests/interop/node_modules), an independent
// implementation; the first ends in 0x68, so it also fails if the forced bit were missing.
TEST(CallKey, LongNamesAreKeccakWithTheLowestBitSet) {
  auto hex_of = [](const calldata::Bytes& b) {
    std::string s;
    for (auto c : b) {
      s += "0123456789abcdef"[c >> 4];
      s += "0123456789abcdef"[c & 15];
    }
    return s;
  };
  auto k32 = call_key(Value::map({{"", std::string(32, 'x')}}), false);
  ASSERT_TRUE(k32.ok());
  EXPECT_EQ(hex_of(*k32), "5601c4475f2f6aa73d6a70a56f9c756f24d211a914cc7aff3fb80d2d8741c869");
  auto k41 = call_key(Value::map({{"", "a_method_name_that_is_long_enough_to_hash"}}), false);
  ASSERT_TRUE(k41.ok());
  EXPECT_EQ(hex_of(*k41), "1cae55e9c882f749db28158b37f0bc7eaa2880e8746a897e56cc3104a224adfb");
  // 31 bytes is still the short form.
  auto k31 = call_key(Value::map({{"", std::string(31, 'x')}}), false);
  ASSERT_TRUE(k31.ok());
  EXPECT_EQ((*k31)[30], 'x');
  EXPECT_EQ((*k31)[31], 0);
}

}  // namespace
}  // namespace genvm::executor
