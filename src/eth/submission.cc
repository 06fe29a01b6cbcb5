// A GenLayer transaction as Studio's clients submit it: the three layers and the checks between
// them.
#include "eth/eth.h"

namespace genvm::eth {

Result<Submission> decode_submission(ByteView raw, const TxPolicy& policy, const Address& consensus) {
  auto tx = parse_signed_tx(raw, policy);
  if (!tx) return tx.error();
  if (!tx->to) {
    return make_eth_error(Errc::submission_wrong_target,
                          "a contract creation; GenLayer transactions call the consensus contract " +
                              to_checksum_address(consensus));
  }
  if (*tx->to != consensus) {
    return make_eth_error(Errc::submission_wrong_target, "sent to " + to_checksum_address(*tx->to) +
                                                             ", not the consensus contract " +
                                                             to_checksum_address(consensus));
  }
  auto call = decode_add_transaction(tx->data);
  if (!call) return call.error();
  if (call->sender != tx->sender) {
    return make_eth_error(Errc::submission_sender_mismatch,
                          "addTransaction's _sender " + to_checksum_address(call->sender) +
                              " is not the transaction's signer " + to_checksum_address(tx->sender));
  }
  auto gen = decode_gen_tx_data(call->tx_data, call->recipient == Address{});
  if (!gen) return gen.error();
  return Submission{std::move(*tx), std::move(*call), std::move(*gen)};
}

}  // namespace genvm::eth
