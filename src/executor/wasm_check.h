// check_contract_module: would `genvm run` accept this module as a contract? It must load
// (decode + validate) in deterministic mode, import only from genlayer_sdk and
// wasi_snapshot_preview1, and export `_start: [] -> []`.
#pragma once

#include <span>

#include "common/result.h"

namespace genvm::executor {

Status check_contract_module(std::span<const std::uint8_t> bytes);

}  // namespace genvm::executor
