// genvm-node serve's node: the Studio-compatible JSON-RPC methods over the node's state, and
// the worker that runs queued transactions through the node's consensus rounds.
//
//   auto store = open_sqlite_store(path, 60000);
//   Service svc(opts, **store);
//   Rpc rpc; svc.register_methods(rpc);
//   svc.start();   // the worker thread: PENDING -> PROPOSING -> COMMITTING -> REVEALING ->
//                  // ACCEPTED | UNDETERMINED -> FINALIZED after opts.finality_ms
//   ...            // HttpServer over rpc
//   svc.stop();
//
// The methods live in one file per group (service_core.h lists them): accounts, transactions
// and receipts, blocks and logs, contracts, the simulator's administration (cancel,
// snapshots, clearing), and the runs' trace (gen_dbg_traceTransaction); the worker in worker.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "node/node.h"
#include "node/serve/events.h"
#include "node/serve/rpc.h"
#include "node/serve/store.h"

namespace genvm::node::serve {

inline constexpr std::uint64_t kChainId = 61127;        // genlayer-js's localnet (Studio's default)
inline constexpr std::uint64_t kAltChainId = 61999;     // Studio's other default (studionet)
// The consensus contract genlayer-js's localnet sends addTransaction to.
inline constexpr const char* kConsensusAddress = "0xb7278a61aa25c888815afc32ad3cc52ff24fe575";

struct ServeOptions {
  std::string state_path = "genvm-node.db";
  std::string genvm;
  int validators = 5;
  int timeout_s = 5;
  std::int64_t finality_ms = 2000;   // ACCEPTED -> FINALIZED after this
  int busy_ms = 60000;               // how long a request's write waits for the worker's commit
  ModuleFiles modules;
  // Serve keeps each run's debug record (streams, log, result, run time) from `safe` up: the
  // trace and the receipts show them. `disabled` keeps none (the trace then has the results only).
  DebugMode debug_mode = DebugMode::kSafe;
  // Studio's local mode: the administrative sim_ methods (snapshots, clearing) and a cancel
  // without the sender's signature are open to any caller. serve sets it only when it listens
  // on a loopback address; otherwise they are refused (a cancel then needs the signature).
  bool local = true;
  int max_snapshots = 16;            // each is a full copy of the state file
};

struct ServiceCore;

class Service {
 public:
  Service(ServeOptions opts, TxStore& store);
  ~Service();
  void register_methods(Rpc& rpc);
  // Stores opts.validators default validators iff this state file never had validators seeded
  // (serve's first start); answers how many it stored.
  Result<int> seed_validators();
  void start();
  void stop();
  // Test hook: wakes the worker (a new transaction, or a finality check).
  void wake();
  // The transactions' status changes (HttpServer's GET /events).
  EventHub& events();

 private:
  std::unique_ptr<ServiceCore> core_;
};

}  // namespace genvm::node::serve
