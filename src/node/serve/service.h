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
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "node/node.h"
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
  DebugMode debug_mode = DebugMode::kDisabled;
};

class Service {
 public:
  Service(ServeOptions opts, TxStore& store) : opts_(std::move(opts)), store_(store) {}
  ~Service() { stop(); }
  void register_methods(Rpc& rpc);
  void start();
  void stop();
  // Test hook: wakes the worker (a new transaction, or a finality check).
  void wake();

 private:
  RpcResult send_raw_transaction(const Params& p);
  RpcResult get_receipt(const Params& p);
  RpcResult get_transaction(const Params& p);
  RpcResult transaction_json(const QueuedTx& tx, bool with_consensus);
  RpcResult gen_call(const Params& p);
  RpcResult schema(const Params& p, bool for_code);
  RpcResult contract_code(const Params& p);
  RpcResult fund(const Params& p);
  RpcResult balance(const Params& p);
  RpcResult nonce(const Params& p);
  RpcResult for_address(const Params& p);
  RpcResult get_code(const Params& p);
  RpcResult status(const Params& p);

  void worker_loop();
  // Runs one queued transaction to its decision (or resumes one a stopped worker claimed).
  Status process(QueuedTx tx);
  std::string live_status(const QueuedTx& tx);
  NodeOptions node_options() const;

  ServeOptions opts_;
  TxStore& store_;
  std::mutex store_mu_;  // TxStore implementations need not be thread-safe
  std::mutex live_mu_;
  std::map<Hash, std::string> live_;  // the in-memory steps between PROPOSING and the decision
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool woken_ = false;
  std::atomic<bool> stop_{false};
  std::thread worker_;
};

}  // namespace genvm::node::serve
