// Signed transactions: the EIP-155 example from the EIP itself, and legacy / EIP-2930 / EIP-1559
// transactions signed by viem 2.57.20 (privateKeyToAccount(hardhat key #0).signTransaction),
// decoded field by field with the sender recovered. Then the refusals: forged signatures,
// high s, wrong or missing chain ids, truncation, each with its own error code.
#include <gtest/gtest.h>

#include <string>

#include "eth/eth.h"
#include "eth/test_util.h"

namespace genvm::eth {
namespace {

using testing::errc_of;
using testing::hex;
using testing::hex_of;

// viem, chain 61127, nonce 7, gas 100000, value 5, data 0x1234, to the Studio consensus contract.
constexpr const char* kLegacy =
    "f86907843b9aca00830186a094b7278a61aa25c888815afc32ad3cc52ff24fe575058212348301ddb1a0c1931c76ed27f6bbc5e00c8dfb"
    "4f8a87b34aeb018ce6b2f5bf5806e3a4fc6f18a007010b0bb0cfeb5bec72f145c09ee1072ce4d938dd76741a616073497d0403fa";
constexpr const char* kLegacyHash = "9c53338fedf230444c2e7ff90503ab4198e0c9f92fc2a85141aaf83164b1aedb";
constexpr const char* k2930 =
    "01f89f82eec70702830186a094b7278a61aa25c888815afc32ad3cc52ff24fe57505821234f838f79400000000000000000000000000000"
    "00000000001e1a0000000000000000000000000000000000000000000000000000000000000000280a0f0c482c2277d9bec507cb956e6f4e"
    "5f72db678a640c088ba0538ac6ddd7c981ea01336e2aa1f1f756648dc21692625083c73cedac43a4dcbd48a3da559f38ffd56";
constexpr const char* k2930Hash = "c1e1e50dd6397612e4f27855626145bf422e18d23cbd7ec2502cadcf9f57e664";
constexpr const char* k1559 =
    "02f86782eec7070103830186a094b7278a61aa25c888815afc32ad3cc52ff24fe57505821234c001a0018aa32b59cdffe34ef0aa25135c1d"
    "a09831782eb1c27b69d1305c532da345d9a06e05311714247d9cba7b6151831f00e102e3e30980cd4022af0d53c8846c9e3c";
constexpr const char* k1559Hash = "5afefa0dfe6ca4afb83b3944a73e27abae9666745b8b848602b37807e144557d";
// The same on chain 1 (mainnet), and a creation (no `to`) on 61127.
constexpr const char* k1559Chain1 =
    "02f86501070103830186a094b7278a61aa25c888815afc32ad3cc52ff24fe57505821234c080a09fef16eff30f8ae0fef9c59c15e1c94c00"
    "87c2743e63d48e18d39b51f0682e9ea02be14af0ee57e23e06bcb7c3a855af55581426ad28c68baf8e4316619624f477";
constexpr const char* k1559Create =
    "02f85382eec7070103830186a08005821234c001a0791fa5b9f79f0aa3f296c36c700856bbf583d133fed24d6208bf689bcd543455a056f6"
    "66b1168da2b16228ec6ea3bc9594cae710dc8e23736703fbfae8d64becda";
constexpr const char* kHardhat0 = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

// EIP-155's own example: key 0x4646..46, nonce 9, 20 gwei, 21000 gas, to 0x3535..35, 1 ether.
constexpr const char* kEip155 =
    "f86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe"
    "537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83";

TxPolicy studio() { return TxPolicy{}; }

TEST(SignedTx, Eip155ExampleFromTheEip) {
  TxPolicy p;
  p.chain_ids = {1};
  auto tx = parse_signed_tx(hex(kEip155), p);
  ASSERT_TRUE(tx.ok()) << tx.error().to_string();
  EXPECT_EQ(tx->type, TxType::legacy);
  EXPECT_EQ(tx->chain_id, 1u);
  EXPECT_EQ(tx->nonce, 9u);
  EXPECT_EQ(tx->gas_limit, 21000u);
  EXPECT_EQ(tx->v, 37u);
  EXPECT_EQ(hex_of(tx->signing_hash), "daf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53");
  EXPECT_EQ(to_checksum_address(tx->sender), "0x9d8A62f656a8d1615C1294fd71e9CFb3E4855A4F");
  EXPECT_EQ(hex_of(tx->value), "0000000000000000000000000000000000000000000000000de0b6b3a7640000");
}

TEST(SignedTx, LegacyFromViem) {
  auto tx = parse_signed_tx(hex(kLegacy), studio());
  ASSERT_TRUE(tx.ok()) << tx.error().to_string();
  EXPECT_EQ(tx->type, TxType::legacy);
  EXPECT_EQ(tx->chain_id, 61127u);
  EXPECT_EQ(tx->nonce, 7u);
  EXPECT_EQ(tx->gas_limit, 100000u);
  EXPECT_EQ(hex_of(tx->gas_price).substr(56), "3b9aca00");
  ASSERT_TRUE(tx->to.has_value());
  EXPECT_EQ(*tx->to, kStudioConsensusMain);
  EXPECT_EQ(tx->value[31], 5);
  EXPECT_EQ(hex_of(tx->data), "1234");
  EXPECT_EQ(tx->v, 61127u * 2 + 35);  // viem's signature has y parity 0
  EXPECT_EQ(to_checksum_address(tx->sender), kHardhat0);
  EXPECT_EQ(hex_of(tx->hash), kLegacyHash);
}

TEST(SignedTx, AccessListFromViem) {
  auto tx = parse_signed_tx(hex(k2930), studio());
  ASSERT_TRUE(tx.ok()) << tx.error().to_string();
  EXPECT_EQ(tx->type, TxType::access_list);
  EXPECT_EQ(tx->chain_id, 61127u);
  EXPECT_EQ(tx->gas_price[31], 2);
  EXPECT_EQ(tx->access_list_entries, 1u);
  EXPECT_EQ(tx->v, 0u);
  EXPECT_EQ(to_checksum_address(tx->sender), kHardhat0);
  EXPECT_EQ(hex_of(tx->hash), k2930Hash);
}

TEST(SignedTx, DynamicFeeFromViem) {
  auto tx = parse_signed_tx(hex(k1559), studio());
  ASSERT_TRUE(tx.ok()) << tx.error().to_string();
  EXPECT_EQ(tx->type, TxType::dynamic_fee);
  EXPECT_EQ(tx->max_priority_fee_per_gas[31], 1);
  EXPECT_EQ(tx->max_fee_per_gas[31], 3);
  EXPECT_EQ(tx->v, 1u);
  EXPECT_EQ(to_checksum_address(tx->sender), kHardhat0);
  EXPECT_EQ(hex_of(tx->hash), k1559Hash);

  auto create = parse_signed_tx(hex(k1559Create), studio());
  ASSERT_TRUE(create.ok()) << create.error().to_string();
  EXPECT_FALSE(create->to.has_value());
  EXPECT_EQ(to_checksum_address(create->sender), kHardhat0);
}

TEST(SignedTx, ChainIdsComeFromThePolicy) {
  EXPECT_EQ(errc_of(parse_signed_tx(hex(k1559Chain1), studio())), Errc::tx_wrong_chain);
  EXPECT_EQ(errc_of(parse_signed_tx(hex(kEip155), studio())), Errc::tx_wrong_chain);
  TxPolicy only_studionet;
  only_studionet.chain_ids = {kStudionetChainId};
  EXPECT_EQ(errc_of(parse_signed_tx(hex(kLegacy), only_studionet)), Errc::tx_wrong_chain);
  TxPolicy mainnet;
  mainnet.chain_ids = {1};
  auto tx = parse_signed_tx(hex(k1559Chain1), mainnet);
  ASSERT_TRUE(tx.ok());
  EXPECT_EQ(to_checksum_address(tx->sender), kHardhat0);
}

// Re-signs nothing: rebuilds a legacy transaction from its decoded items with one item replaced.
Bytes with_item(const Bytes& raw, std::size_t index, const Bytes& encoded_item) {
  auto top = rlp_decode(raw);
  EXPECT_TRUE(top.ok());
  Bytes body;
  for (std::size_t i = 0; i < top->children.size(); ++i) {
    ByteView item = i == index ? ByteView(encoded_item) : top->children[i].raw;
    body.insert(body.end(), item.begin(), item.end());
  }
  return rlp_list(body);
}

Bytes typed_with_item(const Bytes& raw, std::size_t index, const Bytes& encoded_item) {
  Bytes inner(raw.begin() + 1, raw.end());
  Bytes out{raw[0]};
  Bytes rebuilt = with_item(inner, index, encoded_item);
  out.insert(out.end(), rebuilt.begin(), rebuilt.end());
  return out;
}

TEST(SignedTx, UnprotectedLegacyOnlyWhenAllowed) {
  // v = 27: the pre-EIP-155 form. The signature no longer matches, but the refusal comes first.
  Bytes v27;
  rlp_append_uint(v27, 27);
  Bytes raw = with_item(hex(kLegacy), 6, v27);
  EXPECT_EQ(errc_of(parse_signed_tx(raw, studio())), Errc::tx_unprotected);
  TxPolicy allow;
  allow.allow_unprotected = true;
  auto tx = parse_signed_tx(raw, allow);
  // Another message hash, so some other key (or none) recovers: never the real signer.
  if (tx.ok()) {
    EXPECT_FALSE(tx->chain_id.has_value());
    EXPECT_NE(to_checksum_address(tx->sender), kHardhat0);
  } else {
    EXPECT_EQ(errc_of(tx), Errc::tx_recovery_failed);
  }
}

TEST(SignedTx, BadVValues) {
  for (std::uint64_t v : {0u, 1u, 26u, 29u, 34u}) {
    Bytes item;
    rlp_append_uint(item, v);
    EXPECT_EQ(errc_of(parse_signed_tx(with_item(hex(kLegacy), 6, item), studio())), Errc::tx_bad_v) << v;
  }
  Bytes two;
  rlp_append_uint(two, 2);
  EXPECT_EQ(errc_of(parse_signed_tx(typed_with_item(hex(k1559), 9, two), studio())), Errc::tx_bad_v);
  // yParity 0 written as the octet 00 instead of the empty string.
  EXPECT_EQ(errc_of(parse_signed_tx(typed_with_item(hex(k2930), 8, hex("00")), studio())),
            Errc::rlp_integer_not_canonical);
}

// A flipped bit anywhere in a signature either fails or recovers another address: ECDSA
// recovery always yields *some* key for a valid (r, s), so the sender, not an error, is what
// tells a forgery (decode_submission then refuses _sender != signer).
TEST(SignedTx, FlippedSignatureBitsNeverYieldTheSigner) {
  const Bytes raw = hex(k1559);
  auto top = rlp_decode(ByteView(raw).subspan(1));
  ASSERT_TRUE(top.ok());
  int failures = 0, others = 0;
  for (std::size_t field : {10u, 11u}) {  // r, s
    const ByteView orig = top->children[field].payload;
    for (std::size_t bit = 0; bit < orig.size() * 8; bit += 5) {
      Bytes v(orig.begin(), orig.end());
      v[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
      Bytes forged = typed_with_item(raw, field, rlp_string(v));
      auto tx = parse_signed_tx(forged, studio());
      if (tx.ok()) {
        EXPECT_NE(to_checksum_address(tx->sender), kHardhat0) << "field " << field << " bit " << bit;
        ++others;
      } else {
        const Errc e = errc_of(tx);
        EXPECT_TRUE(e == Errc::tx_recovery_failed || e == Errc::tx_high_s || e == Errc::tx_bad_signature ||
                    e == Errc::rlp_integer_not_canonical)
            << errc_name(e);
        ++failures;
      }
    }
  }
  EXPECT_GT(failures + others, 90);
  // y parity flipped: the other of the two candidate keys.
  Bytes zero;
  rlp_append_uint(zero, 0);
  auto flipped = parse_signed_tx(typed_with_item(raw, 9, zero), studio());
  if (flipped.ok()) {
    EXPECT_NE(to_checksum_address(flipped->sender), kHardhat0);
  }
  // The legacy v flipped to the chain id's other parity (viem signed with 61127*2+35).
  Bytes other_parity;
  rlp_append_uint(other_parity, 61127u * 2 + 36);
  auto legacy = parse_signed_tx(with_item(hex(kLegacy), 6, other_parity), studio());
  if (legacy.ok()) {
    EXPECT_NE(to_checksum_address(legacy->sender), kHardhat0);
  }
  // v with the low bit of its chain id flipped: another chain.
  Bytes v_other_chain;
  rlp_append_uint(v_other_chain, 61126u * 2 + 36);
  EXPECT_EQ(errc_of(parse_signed_tx(with_item(hex(kLegacy), 6, v_other_chain), studio())), Errc::tx_wrong_chain);
}

// n - s with the other parity is the same signature's high-s twin: it recovers the same key, so
// only the EIP-2 check refuses it (this test fails if check_signature_values stops looking at s).
TEST(SignedTx, HighSTwinIsRefused) {
  const U256 n = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
                  0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41};
  auto tx = parse_signed_tx(hex(k1559), studio());
  ASSERT_TRUE(tx.ok());
  U256 twin{};
  int borrow = 0;
  for (int i = 31; i >= 0; --i) {
    int d = n[static_cast<std::size_t>(i)] - tx->s[static_cast<std::size_t>(i)] - borrow;
    borrow = d < 0;
    twin[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(d + (borrow ? 256 : 0));
  }
  Bytes parity;
  rlp_append_uint(parity, tx->v ^ 1);
  Bytes raw = typed_with_item(hex(k1559), 9, parity);
  raw = typed_with_item(raw, 11, rlp_string(twin));
  EXPECT_EQ(errc_of(parse_signed_tx(raw, studio())), Errc::tx_high_s);
  EXPECT_EQ(errc_of(recover_address(tx->signing_hash, tx->r, twin, static_cast<int>(tx->v ^ 1))), Errc::tx_high_s);
}

TEST(SignedTx, ZeroOrOversizedSignatureValues) {
  EXPECT_EQ(errc_of(parse_signed_tx(typed_with_item(hex(k1559), 10, rlp_string({})), studio())), Errc::tx_bad_signature);
  EXPECT_EQ(errc_of(parse_signed_tx(typed_with_item(hex(k1559), 11, rlp_string({})), studio())), Errc::tx_bad_signature);
  Bytes ff(32, 0xff);
  EXPECT_EQ(errc_of(parse_signed_tx(typed_with_item(hex(k1559), 10, rlp_string(ff)), studio())), Errc::tx_bad_signature);
}

TEST(SignedTx, EveryTruncationIsAnError) {
  for (const char* v : {kLegacy, k2930, k1559}) {
    const Bytes raw = hex(v);
    for (std::size_t n = 0; n < raw.size(); ++n) {
      auto tx = parse_signed_tx(ByteView(raw).first(n), studio());
      ASSERT_FALSE(tx.ok()) << "prefix of " << n << " octets decoded";
      const Errc e = errc_of(tx);
      EXPECT_TRUE(e == Errc::tx_empty || e == Errc::rlp_truncated) << n << ": " << errc_name(e);
    }
    Bytes longer = raw;
    longer.push_back(0);
    EXPECT_EQ(errc_of(parse_signed_tx(longer, studio())), Errc::rlp_trailing);
  }
}

TEST(SignedTx, EnvelopeAndShapeErrors) {
  EXPECT_EQ(errc_of(parse_signed_tx({}, studio())), Errc::tx_empty);
  Bytes type3 = hex(k1559);
  type3[0] = 0x03;
  EXPECT_EQ(errc_of(parse_signed_tx(type3, studio())), Errc::tx_unsupported_type);
  EXPECT_EQ(errc_of(parse_signed_tx(hex("83646f67"), studio())), Errc::rlp_shape);
  EXPECT_EQ(errc_of(parse_signed_tx(hex("c0"), studio())), Errc::rlp_shape);
  EXPECT_EQ(errc_of(parse_signed_tx(hex("02c0"), studio())), Errc::rlp_shape);
  // `to` of 19 octets.
  EXPECT_EQ(errc_of(parse_signed_tx(with_item(hex(kLegacy), 3, rlp_string(Bytes(19, 1))), studio())), Errc::tx_bad_address);
  // A nonce with a leading zero.
  EXPECT_EQ(errc_of(parse_signed_tx(with_item(hex(kLegacy), 0, hex("820007")), studio())), Errc::rlp_integer_not_canonical);
  TxPolicy small;
  small.max_size = 16;
  EXPECT_EQ(errc_of(parse_signed_tx(hex(kLegacy), small)), Errc::tx_too_large);
}

TEST(SignedTx, ErrorsCarryTheirName) {
  auto r = parse_signed_tx(hex(k1559Chain1), studio());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "tx_wrong_chain");
  EXPECT_NE(r.error().message.find("chain id 1 "), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("61127"), std::string::npos);
}

TEST(Hex, ChecksumAndParsing) {
  auto a = parse_address("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(to_checksum_address(*a), "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");  // EIP-55's example
  EXPECT_EQ(to_checksum_address(kStudioConsensusMain), "0xb7278A61aa25c888815aFC32Ad3cC52fF24fE575");
  EXPECT_EQ(errc_of(parse_address("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae")), Errc::bad_hex);
  EXPECT_EQ(errc_of(parse_hex("1234")), Errc::bad_hex);
  EXPECT_EQ(errc_of(parse_hex("0x123")), Errc::bad_hex);
  EXPECT_EQ(errc_of(parse_hex("0x12zz")), Errc::bad_hex);
  EXPECT_EQ(errc_of(parse_hex("0x1234", 1)), Errc::bad_hex);
  EXPECT_EQ(hex_of(*parse_hex("0xABcd")), "abcd");
  EXPECT_TRUE(parse_hex("0x")->empty());
}

}  // namespace
}  // namespace genvm::eth
