// Test data for the message-fee allocation types (fee_params.h): addresses and call keys filled
// with one byte, and allocation nodes with fixed, recognisable fee params. Test-only.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/host/fee_params.h"

namespace genvm::host::test_data {

inline calldata::Address address(std::uint8_t fill) {
  calldata::Address a;
  a.bytes.fill(fill);
  return a;
}

inline CallKey key(std::uint8_t fill) {
  CallKey k;
  k.fill(fill);
  return k;
}

inline InternalMessageParams internal_params(std::vector<std::int64_t> rotations = {0, 2}) {
  InternalMessageParams p{BigInt(1), BigInt(2), BigInt(3), {}, BigInt(11), BigInt(12), BigInt(13)};
  for (auto r : rotations) p.rotations.push_back(BigInt(r));
  return p;
}

inline AllocationNode internal_node(std::int64_t budget, MessageOn on = MessageOn::kFinalized,
                             std::optional<calldata::Address> recipient = std::nullopt,
                             std::optional<CallKey> call_key = std::nullopt) {
  AllocationNode n;
  n.recipient = recipient;
  n.call_key = call_key;
  n.budget = BigInt(budget);
  n.on = on;
  n.fee_params = internal_params();
  return n;
}

inline AllocationNode external_node(std::int64_t budget, std::optional<calldata::Address> recipient = std::nullopt,
                             std::optional<CallKey> call_key = std::nullopt) {
  AllocationNode n;
  n.recipient = recipient;
  n.call_key = call_key;
  n.budget = BigInt(budget);
  n.fee_params = ExternalMessageParams{BigInt(7), BigInt(9)};
  return n;
}

}  // namespace genvm::host::test_data
