// The two frames of a delegated CallContract on host method run_nested (impl-spec host-loop.rst,
// docs/adr 015; NestedRunEnvelope and NestedRunReply of modules-interfaces nested.rs): the
// envelope the caller's executor sends and the manager decodes, the reply the manager sends and
// the caller decodes. Both ends compile this one definition.
//
//   Value env = nested_envelope_to_value(e);                 // the caller's executor
//   Result<NestedRunEnvelope> e = nested_envelope_from_value(v);   // the manager
//   Value reply = nested_reply_to_value(r);                  // the manager
//   Result<NestedRunReply> r = nested_reply_from_value(v);   // the caller's executor
//
// Decoding is the public derive's: closed maps, every field required and of its Rust type;
// unknown permission bits are cleared (they deny, never grant). Error codes "nested_envelope"
// and "nested_reply", the message naming the field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/bigint.h"
#include "common/calldata.h"
#include "common/result.h"
#include "common/vm_error.h"
#include "common/host/execution_data.h"

namespace genvm::host {

// NestedPermissions: one bit per permission, mapped by meaning at each end.
enum NestedPermission : std::uint32_t {
  kNestedDeterministic = 1u << 0,
  kNestedReadStorage = 1u << 1,
  kNestedWriteStorage = 1u << 2,
  kNestedSendMessages = 1u << 3,
  kNestedCallOthers = 1u << 4,
  kNestedSpawnNondet = 1u << 5,
  kNestedRegisterRunners = 1u << 6,
  kNestedUseBalanceForMessageFees = 1u << 7,
};
inline constexpr std::uint32_t kKnownNestedPermissions = 0xffu;

struct NestedRunEnvelope {
  Bytes routing_payload;          // an encoded ExecutorSelector, read by the manager only
  Bytes calldata;                 // the callee's entry, encoded
  MessageData message;            // the callee's message (value 0, is_init false)
  std::vector<Address> stack;     // the caller's stack with the caller appended
  std::uint32_t permissions = 0;  // NestedPermission bits
  StorageType state_mode = StorageType::kDefault;
  std::string topmost_runner_id = "contract";
  std::uint32_t remaining_recursion = 0;
  BigInt remaining_det_fuel;      // a U256
  std::uint32_t memory_limit = 0;
};
calldata::Value nested_envelope_to_value(const NestedRunEnvelope& e);
Result<NestedRunEnvelope> nested_envelope_from_value(const calldata::Value& v);

struct NestedRunReply {
  ResultCode kind = ResultCode::kInternalError;
  calldata::Value data;
  Bytes small_hash;
  bool effect_free = false;
};
calldata::Value nested_reply_to_value(const NestedRunReply& r);
// Takes the value so that `data`, which may be large, is moved into the reply, not copied.
Result<NestedRunReply> nested_reply_from_value(calldata::Value v);

}  // namespace genvm::host
