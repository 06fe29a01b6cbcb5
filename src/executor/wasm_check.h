// check_contract_module: would `genvm run` accept this module as a contract? It must load
// (decode + validate) in deterministic mode, every import must link against the executor's own
// import set (VmState::define_wasi / define_sdk: name, kind and type), and `_start` must be
// exported with type [] -> []. Errors: invalid_module, bad_import, no_entrypoint, bad_entrypoint.
#pragma once

#include <span>

#include "common/result.h"

namespace genvm::executor {

Status check_contract_module(std::span<const std::uint8_t> bytes);

}  // namespace genvm::executor
