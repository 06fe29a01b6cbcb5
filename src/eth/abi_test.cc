// addTransaction call data in both forms, txData, the NewTransaction log, and decode_submission
// over all layers. Expected encodings were printed by viem 2.57.20 / genlayer-js 1.2.0 (the
// selectors, the event topic) or follow from the ABI specification.
#include <gtest/gtest.h>

#include <string>

#include "eth/eth.h"
#include "eth/test_util.h"

namespace genvm::eth {
namespace {

using testing::errc_of;
using testing::hex;
using testing::hex_of;

Address addr(std::uint8_t fill) {
  Address a;
  a.fill(fill);
  return a;
}

TEST(Abi, SelectorsAndTopicMatchViem) {
  EXPECT_EQ(hex_of(add_transaction_selector_v5()), "27241a99");
  EXPECT_EQ(hex_of(add_transaction_selector_v6()), "e71d5196");
  EXPECT_EQ(hex_of(new_transaction_topic()), "dab9102861c7483a187584d6371d88316f005af507982ccf95c110879f3ed5a5");
}

TEST(Abi, RoundTripsBothForms) {
  AddTransactionCall c;
  c.sender = addr(0x11);
  c.recipient = addr(0x22);
  c.num_of_initial_validators = 5;
  c.max_rotations = 3;
  c.tx_data = hex("c482abcd01");
  Bytes v5 = encode_add_transaction(c);
  EXPECT_EQ(v5.size(), 4u + 5 * 32 + 32 + 32);
  EXPECT_EQ(hex_of(ByteView(v5).subspan(4 + 4 * 32, 32)), std::string(62, '0') + "a0");
  auto d5 = decode_add_transaction(v5);
  ASSERT_TRUE(d5.ok()) << d5.error().to_string();
  EXPECT_EQ(d5->sender, c.sender);
  EXPECT_EQ(d5->recipient, c.recipient);
  EXPECT_EQ(d5->num_of_initial_validators, 5u);
  EXPECT_EQ(d5->max_rotations, 3u);
  EXPECT_EQ(d5->tx_data, c.tx_data);
  EXPECT_FALSE(d5->valid_until.has_value());

  c.valid_until = 1700000000;
  c.tx_data.assign(64, 0xab);  // an exact multiple of 32: no padding
  Bytes v6 = encode_add_transaction(c);
  EXPECT_EQ(v6.size(), 4u + 6 * 32 + 32 + 64);
  auto d6 = decode_add_transaction(v6);
  ASSERT_TRUE(d6.ok()) << d6.error().to_string();
  EXPECT_EQ(d6->valid_until, 1700000000u);
  EXPECT_EQ(d6->tx_data, c.tx_data);

  c.tx_data.clear();
  c.valid_until.reset();
  auto empty = decode_add_transaction(encode_add_transaction(c));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->tx_data.empty());
}

TEST(Abi, RefusesAnythingButTheCanonicalEncoding) {
  AddTransactionCall c;
  c.sender = addr(0x11);
  c.tx_data = hex("c482abcd01");
  const Bytes good = encode_add_transaction(c);
  auto with = [&](std::size_t at, std::uint8_t v) {
    Bytes b = good;
    b[at] = v;
    return b;
  };
  EXPECT_EQ(errc_of(decode_add_transaction(hex("27241a"))), Errc::abi_bad_length);
  EXPECT_EQ(errc_of(decode_add_transaction(with(0, 0x28))), Errc::abi_unknown_selector);
  EXPECT_EQ(errc_of(decode_add_transaction(with(4, 1))), Errc::abi_not_canonical);             // sender's high octets
  EXPECT_EQ(errc_of(decode_add_transaction(with(4 + 32 + 11, 1))), Errc::abi_not_canonical);   // recipient's
  EXPECT_EQ(errc_of(decode_add_transaction(with(4 + 64 + 23, 1))), Errc::abi_integer_too_large);
  EXPECT_EQ(errc_of(decode_add_transaction(with(4 + 96, 1))), Errc::abi_integer_too_large);
  EXPECT_EQ(errc_of(decode_add_transaction(with(4 + 128 + 31, 0xc0))), Errc::abi_not_canonical);  // offset
  EXPECT_EQ(errc_of(decode_add_transaction(with(good.size() - 1, 1))), Errc::abi_not_canonical);   // padding
  EXPECT_EQ(errc_of(decode_add_transaction(with(4 + 160 + 31, 33))), Errc::abi_bad_length);        // 33: two words
  EXPECT_EQ(errc_of(decode_add_transaction(with(4 + 160 + 31, 64))), Errc::abi_bad_length);        // past the end
  EXPECT_EQ(errc_of(decode_add_transaction(with(4 + 160, 1))), Errc::abi_bad_length);              // 2^248 octets
  Bytes trailing = good;
  trailing.insert(trailing.end(), 32, 0);
  EXPECT_EQ(errc_of(decode_add_transaction(trailing)), Errc::abi_bad_length);
  for (std::size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(decode_add_transaction(ByteView(good).first(n)).ok()) << n;
  }
  EXPECT_EQ(errc_of(decode_add_transaction(good, 4)), Errc::abi_bad_length);  // over max_tx_data
}

TEST(Abi, NewTransactionLogAsGenlayerJsReadsIt) {
  Hash32 id;
  id.fill(0x7e);
  Log log = new_transaction_log(kStudioConsensusMain, id, addr(0x22), addr(0x33));
  EXPECT_EQ(log.address, kStudioConsensusMain);
  ASSERT_EQ(log.topics.size(), 4u);
  EXPECT_EQ(log.topics[0], new_transaction_topic());
  EXPECT_EQ(log.topics[1], id);
  EXPECT_EQ(hex_of(log.topics[2]), std::string(24, '0') + std::string(40, '2'));
  EXPECT_EQ(hex_of(log.topics[3]), std::string(24, '0') + std::string(40, '3'));
  EXPECT_TRUE(log.data.empty());
}

TEST(TxData, DeployAndCallForms) {
  // genlayer-js: serialize([code, calldata, leaderOnly]) with viem's toHex(false) = 0x0.
  auto d = decode_gen_tx_data(hex("c782c0de82ca1100"), true);
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  EXPECT_TRUE(d->deploy);
  EXPECT_EQ(hex_of(d->code), "c0de");
  EXPECT_EQ(hex_of(d->calldata), "ca11");
  EXPECT_EQ(d->mode, ExecutionMode::normal);
  EXPECT_TRUE(d->mode_given);
  EXPECT_EQ(hex_of(encode_gen_tx_data(*d)), "c782c0de82ca1100");

  auto c = decode_gen_tx_data(hex("c482ca1101"), false);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->deploy);
  EXPECT_EQ(hex_of(c->calldata), "ca11");
  EXPECT_EQ(c->mode, ExecutionMode::leader_only);

  EXPECT_EQ(decode_gen_tx_data(hex("c482ca1102"), false)->mode, ExecutionMode::leader_self_validator);
  EXPECT_EQ(decode_gen_tx_data(hex("c482ca1180"), false)->mode, ExecutionMode::normal);  // canonical RLP 0
  auto bare = decode_gen_tx_data(hex("c382ca11"), false);  // no flag: Studio's default form
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare->mode_given);
  EXPECT_EQ(bare->mode, ExecutionMode::normal);
  EXPECT_EQ(errc_of(decode_gen_tx_data(hex("c4c082ca11"), true)), Errc::txdata_shape);  // code is a list
  EXPECT_TRUE(decode_gen_tx_data(hex("c28080"), true).ok());                   // empty code and calldata
}

TEST(TxData, Refusals) {
  EXPECT_EQ(errc_of(decode_gen_tx_data(hex("c482ca1103"), false)), Errc::txdata_bad_mode);
  EXPECT_EQ(errc_of(decode_gen_tx_data(hex("c682ca11820000"), false)), Errc::txdata_bad_mode);  // two octets
  EXPECT_EQ(errc_of(decode_gen_tx_data(hex("c0"), false)), Errc::txdata_shape);
  EXPECT_EQ(errc_of(decode_gen_tx_data(hex("c382ca11"), true)), Errc::txdata_shape);         // deploy needs code
  EXPECT_EQ(errc_of(decode_gen_tx_data(hex("c58080808080"), false)), Errc::txdata_shape);  // 5 items
  EXPECT_EQ(errc_of(decode_gen_tx_data(hex("82ca11"), false)), Errc::txdata_shape);          // not a list
  EXPECT_EQ(errc_of(decode_gen_tx_data(hex("c3c180c0"), false)), Errc::txdata_shape);        // nested lists
  EXPECT_EQ(errc_of(decode_gen_tx_data(hex("c582ca11"), false)), Errc::rlp_truncated);
  EXPECT_EQ(errc_of(decode_gen_tx_data(hex("c482ca110100"), false)), Errc::rlp_trailing);
  EXPECT_EQ(errc_of(decode_gen_tx_data({}, false)), Errc::rlp_truncated);
}

// decode_submission: legacy transactions signed by viem 2.57.20 (hardhat key #0, chain 61127,
// nonce 0, gas 1000000, 1 gwei) whose data is addTransaction (5 arguments, 5 validators, 3
// rotations) of a call to 0x2222..22 with txData [0xca11, false].
constexpr const char* kGood =
    "f9014c80843b9aca00830f424094b7278a61aa25c888815afc32ad3cc52ff24fe57580b8e427241a99000000000000000000000000f39f"
    "d6e51aad88f6f4ce6ab8827279cfffb9226600000000000000000000000022222222222222222222222222222222222222220000000000"
    "00000000000000000000000000000000000000000000000000000500000000000000000000000000000000000000000000000000000000"
    "0000000300000000000000000000000000000000000000000000000000000000000000a000000000000000000000000000000000000000"
    "00000000000000000000000005c482ca11000000000000000000000000000000000000000000000000000000008301ddb2a03813f85e3a"
    "4b8c07972a5e41d1b2cf3c537c9c8db5e3a8c4c9c7339f51286adda027ab36be46dd2072ee170e0bcc4ed23bff4659646951fe0a32de3b"
    "c662b66cbd";
// The same with _sender 0x1111..11: signed by key #0, claiming another sender.
constexpr const char* kClaimsAnother =
    "f9014c80843b9aca00830f424094b7278a61aa25c888815afc32ad3cc52ff24fe57580b8e427241a990000000000000000000000001111"
    "11111111111111111111111111111111111100000000000000000000000022222222222222222222222222222222222222220000000000"
    "00000000000000000000000000000000000000000000000000000500000000000000000000000000000000000000000000000000000000"
    "0000000300000000000000000000000000000000000000000000000000000000000000a000000000000000000000000000000000000000"
    "00000000000000000000000005c482ca11000000000000000000000000000000000000000000000000000000008301ddb1a0fd63aff8b8"
    "1f98da4c9eee6d72270ecaee8545f8ae2d1ee61025e08dfe786854a03aae76a67c7c2546e0a9b4d44687b3007c0e06519587668a5f21a6"
    "dc7e32f9fd";
// A plain transfer to 0x2222..22 (no consensus contract).
constexpr const char* kTransfer =
    "f86780843b9aca00830f424094222222222222222222222222222222222222222280808301ddb1a0404ce9ace3518253691880ec4caf031a"
    "f2cae70b2933114775d70e1fdae67939a00db148aa502baa2ab88d3c7fa55593eb5230c27593f1a5231fe905be75d9791a";

TEST(Submission, AllLayers) {
  auto s = decode_submission(hex(kGood));
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ(to_checksum_address(s->tx.sender), "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
  EXPECT_EQ(s->call.sender, s->tx.sender);
  EXPECT_EQ(s->call.recipient, addr(0x22));
  EXPECT_EQ(s->call.num_of_initial_validators, 5u);
  EXPECT_EQ(s->call.max_rotations, 3u);
  EXPECT_FALSE(s->gen.deploy);
  EXPECT_EQ(hex_of(s->gen.calldata), "ca11");
  EXPECT_EQ(s->gen.mode, ExecutionMode::normal);
}

TEST(Submission, LayerChecks) {
  EXPECT_EQ(errc_of(decode_submission(hex(kClaimsAnother))), Errc::submission_sender_mismatch);
  EXPECT_EQ(errc_of(decode_submission(hex(kTransfer))), Errc::submission_wrong_target);
  EXPECT_EQ(errc_of(decode_submission(hex(kGood), TxPolicy{}, addr(0x22))), Errc::submission_wrong_target);
  TxPolicy other;
  other.chain_ids = {1};
  EXPECT_EQ(errc_of(decode_submission(hex(kGood), other)), Errc::tx_wrong_chain);
}

}  // namespace
}  // namespace genvm::eth
