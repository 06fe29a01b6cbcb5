// serve_host_connection: the GenVM host loop (impl-spec/appendix/host-loop.rst) over a node's
// committed State, for ONE executor connection, until the executor closes it.
//
//   HostSession session;                          // what this run reported
//   Status s = serve_host_connection(fd, state, session);
//
// storage_read answers from the committed state only (the executor buffers its own writes, and
// every storage type sees the same committed state here: the node commits one transaction at a
// time); get_balance reads accounts; consume_result is recorded and acknowledged; consume_fuel
// and notify_nondet_disagreement are recorded (the vote reads the disagreement from the run's
// checked result, nondet_disagreement: node.h); eth_call answers evm_reverted (no EVM chain);
// remaining_fuel_as_gen answers zero; resolve_callcontract_executor answers null (same
// executor); run_nested is not offered and ends the connection with an error. Under
// node::Runner the execution data routes consume_result, resolve_callcontract_executor and
// run_nested to the manager's host 1, so this server sees only the state methods.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/calldata.h"
#include "common/result.h"
#include "node/state.h"

namespace genvm::node {

struct HostSession {
  std::vector<calldata::Bytes> results;       // consume_result payloads, in order
  std::uint64_t fuel_consumed = 0;
  std::vector<std::uint32_t> disagreements;   // notify_nondet_disagreement call numbers
  std::uint64_t storage_reads = 0;
};

Status serve_host_connection(int fd, State& state, HostSession& session);

}  // namespace genvm::node
