#include "node/serve/eth_bridge.h"

#include <cstring>

#include "common/sha3.h"
#include "eth/eth.h"

namespace genvm::node::serve {

namespace {

Address to_address(const eth::Address& a) {
  Address out;
  std::memcpy(out.bytes.data(), a.data(), 20);
  return out;
}

GenTxData from_eth(eth::GenTxData d) {
  GenTxData out;
  out.deploy = d.deploy;
  out.code = std::move(d.code);
  out.calldata = std::move(d.calldata);
  out.leader_only = d.mode != eth::ExecutionMode::normal;
  return out;
}

}  // namespace

Result<SignedTx> decode_signed_tx(std::span<const std::uint8_t> raw) {
  auto tx = eth::parse_signed_tx(raw);
  if (!tx) return tx.take_error();
  SignedTx out;
  out.hash = tx->hash;
  out.from = to_address(tx->sender);
  if (tx->to) out.to = to_address(*tx->to);
  out.nonce = tx->nonce;
  out.chain_id = tx->chain_id;
  out.value = tx->value;
  out.data = std::move(tx->data);
  return out;
}

Result<AddTransaction> decode_add_transaction(std::span<const std::uint8_t> input) {
  auto call = eth::decode_add_transaction(input);
  if (!call) return call.take_error();
  AddTransaction out;
  out.sender = to_address(call->sender);
  out.recipient = to_address(call->recipient);
  out.num_validators = call->num_of_initial_validators;
  out.max_rotations = call->max_rotations;
  out.tx_data = std::move(call->tx_data);
  return out;
}

Result<GenTxData> decode_tx_data(std::span<const std::uint8_t> tx_data, bool deploy) {
  auto d = eth::decode_gen_tx_data(tx_data, deploy);
  if (!d) return d.take_error();
  return from_eth(std::move(*d));
}

Result<GenTxData> decode_call_data(std::span<const std::uint8_t> data) { return decode_tx_data(data, false); }

Hash new_transaction_topic() { return eth::new_transaction_topic(); }

Result<Address> recover_personal_signer(const Hash& message, std::span<const std::uint8_t> signature) {
  if (signature.size() != 65) return make_error("bad_signature", "a signature is 65 octets (r, s, v)");
  int v = signature[64];
  if (v >= 27) v -= 27;
  if (v != 0 && v != 1) return make_error("bad_signature", "a signature's v is 27, 28, 0 or 1");
  static constexpr std::string_view kPrefix = "\x19" "Ethereum Signed Message:\n32";
  Bytes prefixed(kPrefix.begin(), kPrefix.end());
  prefixed.insert(prefixed.end(), message.begin(), message.end());
  eth::Hash32 digest = keccak256(prefixed);
  eth::U256 r{}, s{};
  std::memcpy(r.data(), signature.data(), 32);
  std::memcpy(s.data(), signature.data() + 32, 32);
  auto who = eth::recover_address(digest, r, s, v);
  if (!who) return who.take_error();
  return to_address(*who);
}

}  // namespace genvm::node::serve
