// The fee fields of a run request our own hosts send (host::local_host_fees: the constants the
// executor's default fee rules read, four buckets, one wildcard allocation node per kind of
// message), as run-request values for the manager tests that run the real executor.
#pragma once

#include <cstdint>
#include <limits>

#include "common/calldata.h"
#include "common/host/fee_params.h"

namespace genvm::manager::testing {

inline calldata::Value::Map local_fee_fields() {
  host::HostFees f = host::local_host_fees(BigInt(std::numeric_limits<std::uint64_t>::max()));
  calldata::Value::Array buckets(f.bucket_totals.begin(), f.bucket_totals.end());
  calldata::Value::Map gas;
  for (const auto& [k, v] : f.gas_data) gas[k] = v;
  return {{"bucket_totals", calldata::Value(std::move(buckets))},
          {"gas_data", calldata::Value(std::move(gas))},
          {"message_fee_allocation", host::allocation_to_value(f.message_fee_allocation)}};
}

}  // namespace genvm::manager::testing
