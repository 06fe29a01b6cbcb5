// What genvm-node serve needs of the Ethereum transaction layer (src/eth, eth/eth.h), in the
// node's own types: a signed transaction's sender and fields, the consensus contract's addTransaction
// arguments, GenLayer's txData, and gen_call's data. Kept to this one seam so the RPC methods
// do not depend on the eth library's types.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "common/result.h"
#include "node/serve/store.h"

namespace genvm::node::serve {

struct SignedTx {
  Hash hash{};                     // Keccak-256 of the raw bytes
  Address from;                    // recovered from the signature
  std::optional<Address> to;       // none: contract creation
  std::uint64_t nonce = 0;
  std::optional<std::uint64_t> chain_id;  // none: a legacy transaction without EIP-155
  std::array<std::uint8_t, 32> value{};   // big-endian
  Bytes data;
};

struct AddTransaction {
  Address sender, recipient;
  std::uint64_t num_validators = 0, max_rotations = 0;  // saturated at 2^64-1
  Bytes tx_data;
};

struct GenTxData {
  bool deploy = false;
  Bytes code;       // deploy only
  Bytes calldata;
  bool leader_only = false;
};

Result<SignedTx> decode_signed_tx(std::span<const std::uint8_t> raw);
Result<AddTransaction> decode_add_transaction(std::span<const std::uint8_t> input);
// deploy: the addTransaction's recipient is zero ([code, calldata, flag?]); else [calldata, flag?].
Result<GenTxData> decode_tx_data(std::span<const std::uint8_t> tx_data, bool deploy);
// gen_call's data: RLP [calldata, leader_only].
Result<GenTxData> decode_call_data(std::span<const std::uint8_t> data);
// The NewTransaction(bytes32,address,address) event's topic 0.
Hash new_transaction_topic();
// Who signed the 32 octets `message` with Ethereum's personal_sign (EIP-191 version 0x45:
// keccak256("\x19Ethereum Signed Message:\n32" ‖ message)): `signature` is r ‖ s ‖ v, 65 octets,
// v 27/28 or 0/1, s in the lower half.
Result<Address> recover_personal_signer(const Hash& message, std::span<const std::uint8_t> signature);

}  // namespace genvm::node::serve
