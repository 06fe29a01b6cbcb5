#include "eth/errors.h"

#include <utility>

namespace genvm::eth {

const char* errc_name(Errc e) {
  switch (e) {
    case Errc::ok: return "ok";
    case Errc::rlp_truncated: return "rlp_truncated";
    case Errc::rlp_not_canonical: return "rlp_not_canonical";
    case Errc::rlp_trailing: return "rlp_trailing";
    case Errc::rlp_too_deep: return "rlp_too_deep";
    case Errc::rlp_too_many: return "rlp_too_many";
    case Errc::rlp_integer_not_canonical: return "rlp_integer_not_canonical";
    case Errc::rlp_integer_too_large: return "rlp_integer_too_large";
    case Errc::rlp_shape: return "rlp_shape";
    case Errc::tx_empty: return "tx_empty";
    case Errc::tx_too_large: return "tx_too_large";
    case Errc::tx_unsupported_type: return "tx_unsupported_type";
    case Errc::tx_bad_address: return "tx_bad_address";
    case Errc::tx_bad_v: return "tx_bad_v";
    case Errc::tx_bad_signature: return "tx_bad_signature";
    case Errc::tx_high_s: return "tx_high_s";
    case Errc::tx_unprotected: return "tx_unprotected";
    case Errc::tx_wrong_chain: return "tx_wrong_chain";
    case Errc::tx_recovery_failed: return "tx_recovery_failed";
    case Errc::abi_unknown_selector: return "abi_unknown_selector";
    case Errc::abi_bad_length: return "abi_bad_length";
    case Errc::abi_not_canonical: return "abi_not_canonical";
    case Errc::abi_integer_too_large: return "abi_integer_too_large";
    case Errc::txdata_shape: return "txdata_shape";
    case Errc::txdata_bad_mode: return "txdata_bad_mode";
    case Errc::submission_wrong_target: return "submission_wrong_target";
    case Errc::submission_sender_mismatch: return "submission_sender_mismatch";
    case Errc::bad_hex: return "bad_hex";
  }
  return "unknown";
}

Error make_eth_error(Errc e, std::string message) { return make_error(e, errc_name(e), std::move(message)); }

}  // namespace genvm::eth
