// The executor's side of a module socket (LLM, web): one request frame out, one answer frame
// back, each `u32 big-endian length ‖ calldata`.
//
//   auto answer = module_call(uri, conn, request_bytes);   // connects on first use
//
// The connection is made on first use and kept; any failure (connect, I/O, an answer above
// 64 MiB or not calldata: "module_oversized", "module_protocol") poisons it for the run.
#pragma once

#include <memory>
#include <string>

#include "common/calldata.h"
#include "common/result.h"
#include "executor/host_client.h"

namespace genvm::executor {

Result<calldata::Bytes> module_call(const std::string& uri, std::unique_ptr<HostConnection>& conn,
                                    const calldata::Bytes& request);

}  // namespace genvm::executor
