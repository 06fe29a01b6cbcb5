// The Studio-facing transaction queue of genvm-node serve, behind an interface (TxStore) so the
// state can move to another database without touching the RPC methods or the worker.
//
// A queued transaction is what eth_sendRawTransaction accepted: its hash (Keccak-256 of the raw
// signed bytes), the Ethereum sender and nonce, and the GenLayer transaction it carries (deploy,
// call, or a plain value transfer). Its stored status is one of PENDING, PROPOSING (claimed by
// the worker), ACCEPTED, UNDETERMINED, FINALIZED, or CANCELED (a PENDING one never run); the worker keeps the steps between PROPOSING
// and the decision (COMMITTING, REVEALING) in memory only, since the node holds the state's
// write lock while its rounds run. `state_tx` links a processed transaction to the node's
// receipt (node::State::tx), written in the receipt's own SQL transaction: a transaction with
// a receipt is never run again (exactly once across crashes and restarts).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "node/state.h"

struct sqlite3;

namespace genvm::node::serve {

using Hash = std::array<std::uint8_t, 32>;

enum class TxType : int { kSend = 0, kDeploy = 1, kCall = 2 };  // Studio's numbering

struct QueuedTx {
  Hash hash{};
  std::int64_t seq = 0;         // queue order, 1-based; also the receipt's block number
  Address from;                 // the signer of the Ethereum transaction
  std::uint64_t nonce = 0;      // its Ethereum nonce
  TxType type = TxType::kCall;
  Address to;                   // call/send: the recipient; deploy: the new contract once known
  std::uint64_t value = 0;
  Bytes code;                   // deploy only
  Bytes calldata;               // the GenVM calldata (deploy: the constructor's)
  bool leader_only = false;
  int num_validators = 0;       // as the sender asked (recorded; the node's --validators run)
  int max_rotations = 0;
  std::string status = "PENDING";
  std::int64_t state_tx = 0;    // the node's receipt id once processed; 0 before
  Bytes result;                 // Studio's result bytes: the result code, then the payload
  std::string error;            // why a transaction could not run (no receipt)
  std::int64_t created_at = 0;  // unix seconds
  std::int64_t decided_at = 0;  // unix milliseconds of ACCEPTED/UNDETERMINED; 0 before
  // Studio's sim_config as the sender gave it (a JSON object: validators, genvm_datetime);
  // empty: none. Read by the worker (service_core.h round_plan).
  std::string sim_config;
  // The nodes it ran with, as Studio's node_config objects (a JSON array, node i at index i):
  // recorded with the decision; empty when they were anonymous.
  std::string nodes;
};

// A validator as Studio's Validators table holds it (docs/PROTOCOLS.md, "validators"): the
// rounds' nodes are the stored validators, and provider/model/plugin_config select what their
// LLM module runs answer with. config and plugin_config are JSON objects as text.
struct StoredValidator {
  std::int64_t id = 0;          // creation order, 1-based (AUTOINCREMENT: never reused)
  Address address;
  std::int64_t stake = 0;
  std::string provider, model, plugin;
  std::string config = "{}", plugin_config = "{}";
  std::int64_t created_at = 0;  // unix seconds
};

// An LLM provider entry of sim_getProvidersAndModels (Studio's llm_provider table): the
// defaults validators are created from. config and plugin_config are JSON objects as text.
struct StoredProvider {
  std::int64_t id = 0;
  std::string provider, model, plugin;
  std::string config = "{}", plugin_config = "{}";
  bool is_default = false;
};

class TxStore {
 public:
  virtual ~TxStore() = default;
  // The next nonce the sender must use: how many transactions it has queued.
  virtual Result<std::uint64_t> next_nonce(const Address& sender) = 0;
  // Appends `tx` (seq assigned) iff tx.nonce is the sender's next nonce and its hash is new:
  // otherwise `nonce_too_low`, `nonce_too_high` or `known_transaction`, and nothing is stored.
  virtual Result<std::int64_t> enqueue(const QueuedTx& tx) = 0;
  virtual Result<std::optional<QueuedTx>> get(const Hash& hash) = 0;
  // The oldest transaction not yet decided (PENDING, or PROPOSING left by a stopped worker).
  virtual Result<std::optional<QueuedTx>> next_undecided() = 0;
  virtual Status set_status(const Hash& hash, const std::string& status) = 0;
  // PENDING -> PROPOSING in one statement; false (nothing changed) when it is no longer PENDING.
  virtual Result<bool> claim(const Hash& hash) = 0;
  // PENDING -> CANCELED in one statement; false (nothing changed) when it is not PENDING, so a
  // transaction the worker claimed is never canceled and a canceled one never claimed.
  virtual Result<bool> cancel(const Hash& hash) = 0;
  // The decision: status ACCEPTED or UNDETERMINED, the receipt, result bytes or an error, nodes.
  virtual Status decide(const QueuedTx& tx) = 0;
  // ACCEPTED and UNDETERMINED transactions decided at or before `before_ms` become FINALIZED;
  // the hashes of those it changed.
  virtual Result<std::vector<Hash>> finalize_until(std::int64_t before_ms) = 0;
  virtual Result<std::vector<QueuedTx>> for_address(const Address& a, std::int64_t limit) = 0;
  virtual Result<std::int64_t> last_seq() = 0;
  // The transaction queued as number `seq` (its block).
  virtual Result<std::optional<QueuedTx>> by_seq(std::int64_t seq) = 0;
  // Transactions with from <= seq <= to, oldest first, at most `limit`.
  virtual Result<std::vector<QueuedTx>> range(std::int64_t from, std::int64_t to, std::int64_t limit) = 0;

  // ---- validators (table serve_validators), oldest first
  virtual Result<std::vector<StoredValidator>> validators() = 0;
  virtual Result<std::optional<StoredValidator>> validator(const Address& a) = 0;
  // Stores `v` (id and created_at assigned) and answers it as stored; `validator_exists` when
  // the address is taken.
  virtual Result<StoredValidator> add_validator(const StoredValidator& v) = 0;
  // Replaces stake, provider, model, plugin, config and plugin_config of v.address; false when
  // there is no such validator.
  virtual Result<bool> update_validator(const StoredValidator& v) = 0;
  virtual Result<bool> delete_validator(const Address& a) = 0;
  virtual Result<int> delete_all_validators() = 0;
  // Runs `make(n)` and stores what it answers iff validators were never seeded in this state
  // file (a marker row, so deleting them all is not undone at the next start); answers how
  // many it stored.
  virtual Result<int> seed_validators_once(const std::function<std::vector<StoredValidator>()>& make) = 0;

  // ---- LLM providers (table serve_providers), by id. `defaults` fills the table the first
  // time it is read in this state file (a marker row) and again on reset_providers.
  virtual Result<std::vector<StoredProvider>> providers(const std::vector<StoredProvider>& defaults) = 0;
  virtual Result<std::int64_t> add_provider(const StoredProvider& p) = 0;
  virtual Result<bool> update_provider(const StoredProvider& p) = 0;  // p.id's; false: none
  virtual Result<bool> delete_provider(std::int64_t id) = 0;
  // Every provider replaced by `defaults` (ids continue: never reused).
  virtual Status reset_providers(const std::vector<StoredProvider>& defaults) = 0;
};

// The queue as a table of the node's SQLite state file (so one file holds the whole node).
// Its own connection; `busy_ms` bounds how long a write waits for the node's write lock
// (held while a transaction's rounds run).
Result<std::unique_ptr<TxStore>> open_sqlite_store(const std::string& state_path, int busy_ms);

// For State's commit hook: links the transaction `hash` to receipt `id` in the same SQL
// transaction as the receipt (on the State's own connection).
Status link_receipt(sqlite3* db, const Hash& hash, std::int64_t id);

std::string hash_hex(const Hash& h);                      // "0x" + 64 hex
std::optional<Hash> parse_hash(std::string_view s);       // "0x" + 64 hex (either case)

}  // namespace genvm::node::serve
