// run_execution: one whole `genvm run` — read the execution data, connect the hosts, run the
// contract, deliver the reported result with consume_result.
//
//   std::string err;
//   int code = run_execution(opts, &err);   // 0 delivered, 1 not delivered, 2 bad input
//
// No timeout, no signal handling, no cleanup on the way out: the manager may SIGKILL the process
// at any instant, and a killed run simply delivers nothing. Bad input (unreadable or invalid
// execution data, unusable --host) returns 2 with one line in *err; a host failure that keeps
// the result from being delivered returns 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/debug_mode.h"
#include "common/result.h"
#include "executor/entry.h"
#include "executor/log.h"
#include "executor/wasm_check.h"

namespace genvm::executor {

struct RunOptions {
  std::string execution_data = "-";  // "-" (stdin), a path, or fd://N
  std::vector<std::string> hosts;
  DebugMode debug = DebugMode::kDisabled;
  Permissions permissions{true, true, true, true};  // --permissions default: wscn, as the public executor
  std::string genvm_id;
  int log_fd = 2;  // JSON-lines log (the public default: stderr); -1: none
  LogLevel log_level = LogLevel::kInfo;
  bool sync = false;
  std::uint64_t nondet_fuel = std::uint64_t(1) << 38;  // fuel of each non-deterministic block (vm.h kDefaultNondetFuel)
  std::string module_llm;  // URI of the LLM module (empty: none)
  std::string module_web;  // URI of the web module (empty: none)
  std::string module_cache;  // compiled-module cache directory (empty: no cache)
  std::string fees_config;   // --config FILE: the fee rules of its `fees` block (empty: compiled in)
};

int run_execution(const RunOptions& opts, std::string* err);

// Reads all bytes from "-", a path, or fd://N.
Result<calldata::Bytes> read_source(const std::string& source);

}  // namespace genvm::executor
