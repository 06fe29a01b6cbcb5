// The error codes of genvm_eth. Every failure is a genvm::Error whose `errc` is one of these and
// whose `code` is the enumerator's name (e.g. "rlp_not_canonical"); callers branch on errc, show
// code and message.
#pragma once

#include <string>

#include "common/result.h"

namespace genvm::eth {

enum class Errc : int {
  ok = 0,
  // RLP
  rlp_truncated = 1,           // a header or payload runs past the end of its input
  rlp_not_canonical,           // a shorter encoding exists (single octet wrapped, short length in long form, leading zero in a length)
  rlp_trailing,                // octets after the item (or after a list's last child)
  rlp_too_deep,                // more nested lists than RlpLimits::max_depth
  rlp_too_many,                // more items than RlpLimits::max_nodes
  rlp_integer_not_canonical,   // an integer with a leading zero octet
  rlp_integer_too_large,       // an integer wider than its field
  rlp_shape,                   // a list where a string was expected, or the wrong item count
  // Signed transactions
  tx_empty,                    // no octets
  tx_too_large,                // over TxPolicy::max_size
  tx_unsupported_type,         // a typed envelope other than 0x01 / 0x02
  tx_bad_address,              // `to` neither empty nor 20 octets; an access-list address not 20
  tx_bad_v,                    // legacy v not 27/28/35+; typed yParity not 0/1
  tx_bad_signature,            // r or s zero or not below the curve order
  tx_high_s,                   // s above half the curve order (EIP-2)
  tx_unprotected,              // legacy without a chain id, not allowed by the policy
  tx_wrong_chain,              // chain id not in the policy's accepted set
  tx_recovery_failed,          // no public key recovers from (r, s, v) and the signing hash
  // ABI (addTransaction)
  abi_unknown_selector,        // not one of the addTransaction selectors
  abi_bad_length,              // call data shorter or longer than its canonical encoding
  abi_not_canonical,           // dirty high bits of an address, a non-zero pad, an offset other than the canonical
  abi_integer_too_large,       // a uint256 argument above 2^64-1
  // GenLayer txData
  txdata_shape,                // not an RLP list of the expected strings
  txdata_bad_mode,             // the third (deploy) / second (call) item is not 0, 1 or 2
  // A whole submission (decode_submission)
  submission_wrong_target,     // not a call of the consensus contract (creation, or another address)
  submission_sender_mismatch,  // addTransaction's _sender is not the transaction's signer
  // Text forms
  bad_hex,                     // not "0x" + an even number of hex digits, or too long
};

const char* errc_name(Errc e);
Error make_eth_error(Errc e, std::string message);

}  // namespace genvm::eth
