// The shapes of the public types the manager decodes (crates/modules-interfaces and
// implementation/src/manager/run.rs), each as the genlayer_calldata derive reads it:
//   run_request_shape()      run::Request (GenvmRunRequest), with UnsafeOverrides,
//                            ExecutorSelector, MessageData and MessageAllocationNode inside
//   reported_result_shape()  domain.rs ReportedResult, with ExecutionEmission, StorageDelta,
//                            Backtrace, WasmStoreHashes and BucketsConsumed inside
// See shape.h for the rules. Where we accept more than the public decoder, the shape's
// comment in public_types.cc says so (and docs/PROTOCOLS.md, ## Manager).
#pragma once

#include "manager/shape.h"

namespace genvm::manager {

const Shape& run_request_shape();
const Shape& reported_result_shape();
// modules-interfaces ExecutorSelector, tagged by "kind": {"kind":"major","major":u32} or
// {"kind":"version","version":string} (a request's selector, a nested run's routing payload).
const Shape& executor_selector_shape();

// ResultCode's variant names in wire order (Return 0 .. FatalVmError 4): the derive encodes a
// unit variant as its name.
inline constexpr const char* kResultCodeNames[] = {"Return", "UserError", "VmError", "InternalError", "FatalVmError"};

}  // namespace genvm::manager
