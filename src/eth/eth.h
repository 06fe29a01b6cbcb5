// genvm_eth: the Ethereum transaction layer a GenLayer Studio-compatible JSON-RPC node needs.
// Clients (genlayer-js, the genlayer CLI) submit a GenLayer transaction as a signed Ethereum
// transaction to the consensus contract whose data is an ABI call of addTransaction, whose last
// bytes argument is an RLP txData. This header decodes each layer, strictly and bounded, and
// encodes the NewTransaction log the clients read the GenLayer transaction id from.
//
//   eth::TxPolicy policy;                                   // chain ids 61127 and 61999
//   auto sub = eth::decode_submission(raw, policy);         // eth_sendRawTransaction's bytes
//   if (!sub) return sub.error();                           // errc: eth::Errc (eth/errors.h)
//   sub->tx.sender, sub->tx.nonce, sub->tx.hash, sub->tx.value;   // the Ethereum layer
//   sub->call.recipient, sub->call.max_rotations, ...;            // addTransaction's arguments
//   sub->gen.deploy, sub->gen.code, sub->gen.calldata, sub->gen.mode;  // GenLayer's txData
//   ... run it; id = sub->tx.hash ...
//   eth::Log log = eth::new_transaction_log(eth::kStudioConsensusMain, id, recipient, sub->tx.sender);
// Each layer is also decodable alone (parse_signed_tx, decode_add_transaction,
// decode_gen_tx_data), and rlp.h is the RLP codec under them.
//
// Every function is pure (no I/O, no globals but a lazily created secp256k1 context) and safe on
// any input: a failure is an Error whose errc is an eth::Errc and whose code is its name.
// docs/PROTOCOLS.md, ## Node, "Studio JSON-RPC: transactions", records the choices.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "eth/errors.h"
#include "eth/rlp.h"

namespace genvm::eth {

using Address = std::array<std::uint8_t, 20>;
using Hash32 = std::array<std::uint8_t, 32>;
using U256 = std::array<std::uint8_t, 32>;  // unsigned, big-endian

// ----------------------------------------------------------------------------- chains
inline constexpr std::uint64_t kLocalnetChainId = 61127;   // genlayer-js `localnet`
inline constexpr std::uint64_t kStudionetChainId = 61999;  // genlayer-js `studionet`
// The consensus main contract genlayer-js's localnet and studionet send addTransaction to:
// 0xb7278A61aa25c888815aFC32Ad3cC52fF24fE575.
extern const Address kStudioConsensusMain;

// ----------------------------------------------------------------------------- signed txs
enum class TxType : std::uint8_t { legacy = 0, access_list = 1, dynamic_fee = 2 };

struct TxPolicy {
  std::vector<std::uint64_t> chain_ids = {kLocalnetChainId, kStudionetChainId};
  // Legacy transactions signed without a chain id (v = 27/28, before EIP-155) replay on any
  // chain; viem and eth_account always sign with one. Refused unless allowed.
  bool allow_unprotected = false;
  std::size_t max_size = 4 << 20;  // octets of the raw transaction
};

struct SignedTx {
  TxType type = TxType::legacy;
  std::optional<std::uint64_t> chain_id;  // absent only for an unprotected legacy tx
  std::uint64_t nonce = 0;
  std::uint64_t gas_limit = 0;
  U256 gas_price{};                 // legacy and access_list
  U256 max_priority_fee_per_gas{};  // dynamic_fee
  U256 max_fee_per_gas{};           // dynamic_fee
  std::optional<Address> to;        // absent: contract creation
  U256 value{};
  Bytes data;
  std::size_t access_list_entries = 0;  // checked for shape, otherwise ignored
  std::uint64_t v = 0;                  // as signed: legacy 27/28 or chain_id*2+35/36; typed 0/1
  U256 r{}, s{};
  Address sender{};    // recovered from the signature
  Hash32 hash{};       // keccak256 of the raw octets: the transaction hash clients compute
  Hash32 signing_hash{};
};

// Parses and authenticates an eth_sendRawTransaction payload: legacy (EIP-155 or, if allowed,
// unprotected), EIP-2930 (0x01) or EIP-1559 (0x02). Checks the chain id against the policy,
// r and s in range, s in the lower half (EIP-2), and recovers the sender.
Result<SignedTx> parse_signed_tx(ByteView raw, const TxPolicy& policy = {});

// The sender of `signing_hash` signed with (r, s, y_parity), or tx_bad_signature / tx_high_s /
// tx_recovery_failed.
Result<Address> recover_address(const Hash32& signing_hash, const U256& r, const U256& s, int y_parity);
// The address of a 64-octet uncompressed public key (x ‖ y, without the 0x04 prefix).
Address address_of_public_key(std::span<const std::uint8_t, 64> xy);

// ----------------------------------------------------------------------------- ABI
// addTransaction(address,address,uint256,uint256,bytes) and, with `validUntil`,
// addTransaction(address,address,uint256,uint256,bytes,uint256): the two forms genlayer-js
// encodes (it sends one and, when the node's error says the ABI did not match, the other).
struct AddTransactionCall {
  Address sender{};
  Address recipient{};  // zero: deploy
  std::uint64_t num_of_initial_validators = 0;
  std::uint64_t max_rotations = 0;
  Bytes tx_data;                           // RLP, see decode_gen_tx_data
  std::optional<std::uint64_t> valid_until;  // present in the 6-argument form (unix seconds)
};

using Selector = std::array<std::uint8_t, 4>;
Selector add_transaction_selector_v5();  // 0x27241a99
Selector add_transaction_selector_v6();  // 0xe71d5196

// Decodes the call data of either form. Strict: the canonical encoding only (zero high octets
// of addresses and of the bytes' padding, the bytes' offset right after the head, no trailing
// octets); integers above 2^64-1 are abi_integer_too_large; tx_data at most max_tx_data octets.
Result<AddTransactionCall> decode_add_transaction(ByteView call_data, std::size_t max_tx_data = 4 << 20);
// The canonical encoding (the 6-argument form iff valid_until is set).
Bytes encode_add_transaction(const AddTransactionCall& call);

// ----------------------------------------------------------------------------- receipts
struct Log {
  Address address{};
  std::vector<Hash32> topics;
  Bytes data;
};

// keccak256("NewTransaction(bytes32,address,address)").
Hash32 new_transaction_topic();
// The log genlayer-js parses (viem parseEventLogs with the consensus ABI) for the GenLayer
// transaction id: topics [NewTransaction, tx_id, recipient, activator], all indexed, empty data.
Log new_transaction_log(const Address& consensus, const Hash32& tx_id, const Address& recipient,
                        const Address& activator);

// ----------------------------------------------------------------------------- txData
enum class ExecutionMode : std::uint8_t { normal = 0, leader_only = 1, leader_self_validator = 2 };

struct GenTxData {
  bool deploy = false;
  Bytes code;      // deploy only
  Bytes calldata;  // GenVM calldata (src/common/calldata.h)
  ExecutionMode mode = ExecutionMode::normal;
  bool mode_given = false;  // the flag item was present
};

// RLP [code, calldata, flag?] for a deploy (recipient zero), [calldata, flag?] for a call. The
// flag is genlayer-js's leaderOnly bool or Studio's execution-mode integer, one octet string:
// empty or 00 normal, 01 leader_only, 02 leader_self_validator; anything else txdata_bad_mode.
Result<GenTxData> decode_gen_tx_data(ByteView tx_data, bool deploy);
// Encodes as genlayer-js does (the flag as one octet, 00 for normal).
Bytes encode_gen_tx_data(const GenTxData& d);

// ----------------------------------------------------------------------------- all layers
struct Submission {
  SignedTx tx;
  AddTransactionCall call;
  GenTxData gen;  // deploy iff call.recipient is zero
};

// eth_sendRawTransaction's bytes to a GenLayer transaction: parse_signed_tx, then require a call
// of `consensus` (submission_wrong_target) whose data decodes as addTransaction, whose _sender
// is the signer (submission_sender_mismatch: otherwise anyone could submit in another's name),
// and whose _txData decodes as txData.
Result<Submission> decode_submission(ByteView raw, const TxPolicy& policy = {},
                                     const Address& consensus = kStudioConsensusMain);

// ----------------------------------------------------------------------------- hex
// "0x" + lower-case hex.
std::string to_hex(ByteView b);
// EIP-55 mixed-case checksum form.
std::string to_checksum_address(const Address& a);
// "0x"-prefixed hex of even length (either case); at most max_octets octets.
Result<Bytes> parse_hex(std::string_view s, std::size_t max_octets = 64 << 20);
// "0x" + 40 hex digits; the case is not checked against EIP-55.
Result<Address> parse_address(std::string_view s);

}  // namespace genvm::eth
