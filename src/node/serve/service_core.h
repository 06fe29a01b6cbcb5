// Internal to src/node/serve: what the method groups and the worker share (the options, the
// queue and its lock, the worker's in-memory steps), the per-file registration functions, and
// the small parsing and formatting helpers the methods use. Not part of the public API.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/calldata.h"
#include "common/json.h"
#include "node/readable_error.h"
#include "node/serve/events.h"
#include "node/serve/service.h"

namespace genvm::node::serve {

struct ServiceCore {
  ServiceCore(ServeOptions o, TxStore& s) : opts(std::move(o)), store(s) {}
  ServeOptions opts;
  TxStore& store;
  std::mutex store_mu;  // TxStore implementations need not be thread-safe
  // Held by the worker while it runs one transaction and by the methods that replace the
  // state under it (snapshot restore, clearing), so neither sees the other half-done.
  std::mutex run_mu;
  std::mutex live_mu;
  std::map<Hash, std::string> live;  // the in-memory steps between PROPOSING and the decision
  std::mutex wake_mu;
  std::condition_variable wake_cv;
  bool woken = false;
  std::atomic<bool> stop{false};
  std::thread worker;
  EventHub events;  // the dashboard's GET /events

  // Publishes a transaction's new status to the event stream.
  void changed(const Hash& h, const std::string& status);

  NodeOptions node_options() const;
  // The status a reader sees: the stored one, or the worker's current step of a PROPOSING one.
  std::string live_status(const QueuedTx& tx);
  void wake();
  // store.get under store_mu.
  Result<std::optional<QueuedTx>> get(const Hash& h);
  // store.for_address under store_mu.
  Result<std::vector<QueuedTx>> for_address(const Address& a, std::int64_t limit);
};

// One registration function per method group (its file).
void add_account_methods(Rpc& rpc, ServiceCore& c);   // accounts.cc
void add_tx_methods(Rpc& rpc, ServiceCore& c);        // transactions.cc
void add_chain_methods(Rpc& rpc, ServiceCore& c);     // chain.cc: blocks and logs
void add_contract_methods(Rpc& rpc, ServiceCore& c);  // contracts.cc: submission, reads, schemas
void add_admin_methods(Rpc& rpc, ServiceCore& c);     // admin.cc: cancel, snapshots, clearing
void add_trace_methods(Rpc& rpc, ServiceCore& c);     // trace.cc: gen_dbg_traceTransaction
void add_validator_methods(Rpc& rpc, ServiceCore& c); // validators.cc: validators and providers
void worker_loop(ServiceCore& c);                     // worker.cc

// ---- validators (validators.cc) ----
// `n` validators on the catalog's first provider/model (serve's --validators at first start).
std::vector<StoredValidator> default_validators(int n);

// The nodes one transaction's rounds run with: the validators of its sim_config when it names
// some, else the stored ones, else (none stored) `--validators` nodes with no host_data.
// host_data[i] is node i's ExecutionData.host_data (docs/PROTOCOLS.md, "validators").
struct RoundPlan {
  int count = 0;  // how many nodes
  std::vector<std::string> host_data;
  std::string datetime;  // sim_config.genvm_datetime; empty: the node's default
  std::string nodes;     // QueuedTx::nodes: their node_config objects; empty when anonymous
};
Result<RoundPlan> round_plan(ServiceCore& c, const QueuedTx& tx);
// A sim_config (JSON text, possibly empty) checked at submission: an object whose validators
// (if any) are a list of objects with provider and model strings and whose genvm_datetime (if
// any) is RFC 3339. Error code "bad_sim_config".
Status check_sim_config(const std::string& json);

// ---- shared helpers (service_util.cc) ----
std::int64_t now_ms();
std::string hex_u64(std::uint64_t v);  // a JSON "0x..." quantity
RpcError bad_params(const std::string& m);
RpcError not_found(const std::string& m, const std::string& data_json = {});
RpcError server_error(const std::string& m, const std::string& data_json = {});
RpcError node_error(const Error& e);
Result<std::string, RpcError> string_at(const Params& p, std::size_t i, const char* what);
Result<Address, RpcError> address_at(const Params& p, std::size_t i);
Result<Hash, RpcError> hash_at(const Params& p, std::size_t i);
std::optional<Bytes> from_hex(std::string_view s);  // with or without 0x
std::string b64(const Bytes& b);
// Studio's result bytes: the result code (0 return, 1 user error, 2 VM error) and the payload.
Bytes result_bytes(int kind, const calldata::Value* data);
int status_code(const std::string& status);  // Studio's numbering of its status names
RpcError tx_not_found(const Hash& h);

// The node number's address in Studio's node_config (the node has no validator keys).
std::string node_address(int node);

// ---- one round's runs (trace.cc), for the trace and the receipts of transactions.cc ----
struct RunView {
  int node = 0;
  std::string role;             // "leader" | "validator"
  std::string vote;             // a validator's vote; the leader's outcome ("result", "timeout", ...)
  int kind = -1;                // the result code it delivered; -1 none
  bool timed_out = false;
  const RunDebug* record = nullptr;  // its debug record; none at --debug-mode disabled
  Bytes payload;                // the result's payload (serve's result bytes without the code)
  bool have_payload = false;
  // The trace's result_code: the delivered code; a run killed at its deadline is a VM error
  // (`timeout`), one that delivered nothing else an InternalError.
  int result_code() const;
  std::optional<ReadableError> error() const;  // none for a Return
};
// The leader then the validators of `round` (an element of the receipt's votes array).
std::vector<RunView> round_runs(const QueuedTx& tx, const TxRecord& rec, const std::vector<RunDebug>& debug,
                                const JsonValue& round);
// "error": the summary or null, and "error_details": {kind, summary, code, meaning, exception,
// raw} or null.
void write_error(JsonWriter& w, const std::optional<ReadableError>& e);

// ---- shapes shared by transactions.cc and chain.cc ----
// The receipt's one log (NewTransaction), as eth_getTransactionReceipt and eth_getLogs write it;
// none for a value transfer.
bool has_log(const QueuedTx& tx);
void write_log(JsonWriter& w, const QueuedTx& tx);

}  // namespace genvm::node::serve
