#include "common/host/protocol.h"

namespace genvm::host {

std::string_view to_string(HostMethod m) {
  switch (m) {
    case HostMethod::kStorageRead: return "storage_read";
    case HostMethod::kConsumeFuel: return "consume_fuel";
    case HostMethod::kEthCall: return "eth_call";
    case HostMethod::kGetBalance: return "get_balance";
    case HostMethod::kRemainingFuelAsGen: return "remaining_fuel_as_gen";
    case HostMethod::kNotifyNondetDisagreement: return "notify_nondet_disagreement";
    case HostMethod::kConsumeResult: return "consume_result";
    case HostMethod::kResolveCallcontractExecutor: return "resolve_callcontract_executor";
    case HostMethod::kRunNested: return "run_nested";
  }
  return "unknown";
}

std::string_view storage_type_name(StorageType t) {
  switch (t) {
    case StorageType::kDefault: return "Default";
    case StorageType::kLatestFinal: return "LatestFinal";
    case StorageType::kLatestNonFinal: return "LatestNonFinal";
  }
  return "Default";
}

std::optional<StorageType> parse_storage_type_name(std::string_view name) {
  for (StorageType t : {StorageType::kDefault, StorageType::kLatestFinal, StorageType::kLatestNonFinal}) {
    if (storage_type_name(t) == name) return t;
  }
  return std::nullopt;
}

}  // namespace genvm::host
