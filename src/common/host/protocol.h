// Host protocol constants: the wire numbers of the GenVM host loop.
//
// Method ids and host error codes are those of the public spec's host-fns table
// (impl-spec/appendix/host-loop.rst); storage types and entry kinds are from
// spec/appendix/constants.rst. Framing: integers are little-endian; a "slice" is a u32 length
// followed by that many bytes. Every connection starts with the hello bytes of its index
// (written verbatim, no framing) before the first method byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace genvm::host {

enum class HostMethod : std::uint8_t {
  kStorageRead = 0,
  kConsumeFuel = 1,
  kEthCall = 2,
  kGetBalance = 3,
  kRemainingFuelAsGen = 4,
  kNotifyNondetDisagreement = 5,
  kConsumeResult = 6,
  kResolveCallcontractExecutor = 7,
  kRunNested = 8,
};
inline constexpr int kHostMethodCount = 9;
std::string_view to_string(HostMethod m);

// The status byte a host writes before an answer.
enum class HostErrorCode : std::uint8_t {
  kOk = 0,
  kEvmReverted = 1,
  kForbidden = 2,
};

enum class StorageType : std::uint8_t {
  kDefault = 0,
  kLatestFinal = 1,
  kLatestNonFinal = 2,
};

// A storage view by the name it has across an executor boundary (NestedStorageType, encoded by
// the public calldata derive as its variant name): "Default", "LatestFinal", "LatestNonFinal".
std::string_view storage_type_name(StorageType t);
// The inverse; nullopt for any other text.
std::optional<StorageType> parse_storage_type_name(std::string_view name);

enum class EntryKind : std::uint8_t {
  kMain = 0,
  kSandbox = 1,
  kConsensusStage = 2,
};

inline constexpr std::size_t kAddressSize = 20;
inline constexpr std::size_t kSlotIdSize = 32;
inline constexpr std::size_t kU256Size = 32;
// The ABI major this executor implements (host-fns `current_major`).
inline constexpr std::uint8_t kCurrentMajor = 0;

}  // namespace genvm::host
