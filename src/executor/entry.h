// The contract entry: the call convention of an entry payload, the startup message a contract
// reads on stdin, and the permissions `genvm run --permissions` grants.
//
//   Status s = validate_entry(d.calldata, d.message.is_init);   // "malformed_entry" on failure
//   calldata::Value start = startup_message(d, EntryKind::kMain);
//   Result<Permissions> p = parse_permissions("wscn");          // "bad_permissions"
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/calldata.h"
#include "common/host/execution_data.h"
#include "common/result.h"

namespace genvm::executor {

using host::EntryKind;
using host::ExecutionData;
using host::kDefaultDatetime;
using host::MessageData;
using host::NestedExecutionData;
using host::parse_execution_data;
using host::route;

// Method call convention (spec/04-contract-interface/02-abi.rst): a map with keys only from
// {"", "args", "kwargs"}, typed String/Array/Map, and no "" on deployment.
Status validate_entry(std::span<const std::uint8_t> entry, bool is_init);

// The calldata message a contract reads on stdin (spec/03-vm/01-startup.rst).
calldata::Value startup_message(const ExecutionData& d, EntryKind kind);

struct Permissions {
  bool write_storage = false;   // w
  bool send_messages = false;   // s
  bool call_others = false;     // c
  bool spawn_nondet = false;    // n
  bool register_runners = false;  // u (RegisterRunner; not in the public manager's default)
  friend bool operator==(const Permissions&, const Permissions&) = default;
};
// Letters from "wscnu", each at most once, any order; "" grants nothing.
Result<Permissions> parse_permissions(std::string_view letters);


// The call key of a message (spec 04-contract-interface/02-abi.rst): 32 zero bytes for a
// deployment or a call without a method name; the zero-padded name below 32 bytes;
// keccak256(name) with the lowest bit set from 32 bytes on.
Result<calldata::Bytes> call_key(const calldata::Value& call, bool is_deploy);

}  // namespace genvm::executor
