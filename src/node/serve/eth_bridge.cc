#include "node/serve/eth_bridge.h"

// Until the transaction layer (src/eth) is linked in, every decode is refused with one error.
namespace genvm::node::serve {

namespace {
Error unavailable() { return make_error("eth_unavailable", "this build has no Ethereum transaction layer"); }
}  // namespace

Result<SignedTx> decode_signed_tx(std::span<const std::uint8_t>) { return unavailable(); }
Result<AddTransaction> decode_add_transaction(std::span<const std::uint8_t>) { return unavailable(); }
Result<GenTxData> decode_tx_data(std::span<const std::uint8_t>) { return unavailable(); }
Result<GenTxData> decode_call_data(std::span<const std::uint8_t>) { return unavailable(); }
Hash keccak(std::span<const std::uint8_t>) { return Hash{}; }
Hash new_transaction_topic() { return Hash{}; }

}  // namespace genvm::node::serve
