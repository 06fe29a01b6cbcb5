// Matching an outgoing message to the message-fee allocation tree, and the tree's ABI form.
//
// The tree and the fee parameter types are the wire types of common/host/fee_params.h
// (ExecutionData.message_fee_allocation). An outgoing message takes the first node of the list
// (list order, no reordering: impl-spec 04-fees.rst, "Message-Fee Allocation Matching") that
// fits it; a null recipient or call key matches anything. The emission's `subtree` is
// abi_encode(matched.children): the chain's flat `abi.encode(MessageAllocationNode[])`, parents
// before children (pre-order), each with its parent's index (roots: 2^256 - 1).
#pragma once

#include <vector>

#include "common/calldata.h"
#include "common/host/fee_params.h"

namespace genvm::executor::fees {

using host::AllocationNode;
using host::CallKey;
using host::ExternalMessageParams;
using host::InternalMessageParams;
using host::MessageOn;

// First match in list order, or nullptr. An internal node matches an internal message with the
// same `on`; an external node matches an EthSend.
AllocationNode* match_internal(std::vector<AllocationNode>& nodes, MessageOn on,
                               const calldata::Address& recipient, const CallKey& call_key);
AllocationNode* match_external(std::vector<AllocationNode>& nodes, const calldata::Address& recipient,
                               const CallKey& call_key);

calldata::Bytes abi_encode(const std::vector<AllocationNode>& roots);

}  // namespace genvm::executor::fees
