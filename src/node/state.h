// node::State: the node's committed world in one SQLite file (WAL).
//
//   auto st = State::open("genvm-node.db");          // creates the schema; busy timeout 100 ms
//   auto ro = State::open(path, OpenMode::kExisting); // read commands: never creates a file
//   st->read_storage(addr, slot, index, len)          // committed bytes, zero where never written
//   st->commit(record, effects)                       // ONE SQL transaction: receipt + effects
//
// Contract: every accepted transaction's effects (storage pages, events, posted messages, the
// new contract, the sender's nonce) and its receipt are written in one SQL transaction, so a
// crash or kill -9 leaves either all of them or none. Storage is kept per (address, slot id) as
// the slot's bytes from offset 0 (sparse: a slot never written is absent and reads as zeros);
// contract code lives where the executor's deployment put it, in the root slot layout of the
// storage spec. A database another writer holds is the error `state_locked` for a writer;
// readers are never blocked by a writer (WAL, normal locking): they see the last commit.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/calldata.h"
#include "common/result.h"

struct sqlite3;

namespace genvm::node {

using calldata::Address;
using calldata::Bytes;
using SlotId = std::array<std::uint8_t, 32>;

// One executor run's debug record (genvm-node --debug-mode safe and above), as stored with its
// receipt: the tails node.cc kept of what the manager captured (bounds in node.h).
struct RunDebug {
  int round = 0;                 // 1-based; 0 for a view
  int node = 0;
  std::string role;              // "leader" | "validator" | "view"
  std::string debug_mode;        // the level the node was asked for
  int exit_code = -1;            // genvm's exit status (-1: killed, or never started)
  std::string stdout_text, stderr_text;  // the last bytes of each stream
  std::vector<std::string> log;  // the newest genvm_log entries, one JSON object each
  std::uint64_t stdout_bytes = 0, stderr_bytes = 0, log_entries = 0;  // what the run produced
  bool omitted = false;          // the transaction's debug bound was spent: sizes only
  // The run's result: its code (0 Return .. 3 InternalError; -1 none delivered), its payload as
  // serve's result bytes carry it (a Return's calldata encoding, an error's UTF-8 text), the
  // payload's full size, whether the manager killed the run at its deadline, the run's wall
  // time, and the leader's non-deterministic outputs (each block's result buffer). The payload
  // and the outputs are kept within kDebugKeepResult each and count against the transaction's
  // bound like the streams (none kept when larger, or when `omitted`).
  int kind = -1;
  Bytes result;
  std::uint64_t result_bytes = 0;
  bool timed_out = false;
  std::uint64_t run_us = 0;
  std::vector<Bytes> eq_outputs;
};

// One transaction's receipt as stored.
struct TxRecord {
  std::int64_t id = 0;           // assigned by commit
  std::string kind;              // "deploy" | "call"
  Address sender;
  Address target;                // the contract (for a deploy: the new address)
  Bytes calldata;                // the entry payload
  Bytes code_hash;               // deploy: SHA3-256 of the code
  std::string status;            // "accepted" | "undetermined"
  int result_kind = -1;          // 0 Return, 1 UserError, 2 VMError, 3 InternalError; -1 none
  std::string result_text;       // the result's data in calldata text form
  Bytes execution_hash;          // the leader's, as agreed
  int rounds = 0;
  std::string votes_json;        // [{"round":r,"leader":i,"votes":[...]}...]
  std::int64_t parent = 0;       // the transaction whose posted message this is; 0 for none
  // Moved from sender to target with an accepted Return, in the commit's SQL transaction;
  // kind "fund" creates it for the target (the node's faucet). At most 2^63-1.
  std::uint64_t value = 0;
  // Written with the receipt (leader and validators of every round), empty at --debug-mode
  // disabled; read back by State::debug_of_tx, not by tx().
  std::vector<RunDebug> debug;
};

struct PendingMessage {
  std::int64_t tx = 0;  // the transaction that posted it
  int index = 0;
  Address from;         // the posting contract
  calldata::Value emission;  // the executor's emission map
};

// What an accepted result changes.
struct Effects {
  calldata::Value storage_changes;            // array of [bytes36, bytes]; null: none
  std::vector<calldata::Value> emissions;     // EmitEvent maps -> events; others -> messages
  bool create_contract = false;               // a deploy that returned
  std::optional<std::pair<std::int64_t, int>> consumes_message;  // the message this tx served
};

struct ContractInfo {
  Address address;
  Bytes code_hash;
  Address deployer;
  std::int64_t deploy_tx = 0;
  std::int64_t slots = 0;       // storage slots with data
  std::int64_t bytes = 0;       // their total size
  std::int64_t events = 0;
};

struct EventRecord {
  std::int64_t tx = 0;
  int index = 0;
  Address contract;
  calldata::Value topics;
  calldata::Value blob;
};

// kCreate: write commands — creates the file and its schema when missing. kExisting: read
// commands — a missing file is `state_missing`, nothing is created.
enum class OpenMode { kCreate, kExisting };

class State {
 public:
  // Refuses (`state_foreign`, naming the file) a file that is not SQLite, or a SQLite database
  // genvm-node did not make (PRAGMA application_id, or for files from before that marker, its
  // exact set of tables); `state_open` for a directory or an unopenable path.
  static Result<std::unique_ptr<State>> open(const std::string& path, OpenMode mode = OpenMode::kCreate);
  ~State();
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  Result<Bytes> read_storage(const Address& a, const SlotId& slot, std::uint32_t index, std::uint32_t len);
  Result<std::array<std::uint8_t, 32>> balance(const Address& a);  // u256 LE; zero if unknown
  // Credits or debits `v`; a debit past zero is `insufficient_balance` and changes nothing.
  Status add_balance(const Address& a, std::uint64_t v, bool credit);
  Result<std::uint64_t> nonce(const Address& a);
  Result<std::optional<ContractInfo>> contract(const Address& a);
  Result<std::optional<TxRecord>> tx(std::int64_t id);
  Result<std::vector<EventRecord>> events_of_tx(std::int64_t id);
  Result<std::vector<PendingMessage>> pending_messages();
  // The chain transaction `tx` belongs to: its origin (the ancestor with no parent) and how many
  // transactions descend from that origin (follow-ups of follow-ups included).
  struct Chain {
    std::int64_t origin = 0;
    std::int64_t follow_ups = 0;
  };
  Result<Chain> chain_of(std::int64_t tx);
  Result<std::vector<std::pair<int, std::int64_t>>> messages_of_tx(std::int64_t id);  // idx, follow-up tx
  Result<std::vector<RunDebug>> debug_of_tx(std::int64_t id);  // in run order; none for older files

  // Listings, oldest first, for `contracts`, `txs` and `storage`. `limit` rows after skipping
  // `offset`; *total (when given) is the count without the limit.
  Result<std::vector<ContractInfo>> contracts(std::int64_t limit, std::int64_t offset, std::int64_t* total);
  // Newest first; `about` set: only transactions whose sender or target it is.
  Result<std::vector<TxRecord>> txs(std::int64_t limit, std::int64_t offset, const std::optional<Address>& about,
                                    std::int64_t* total);
  struct SlotData {
    SlotId slot;
    std::int64_t size = 0;  // the slot's stored bytes
    Bytes head;             // its first `max_bytes` bytes
  };
  Result<std::vector<SlotData>> storage_slots(const Address& a, std::int64_t limit, std::int64_t offset,
                                              std::uint32_t max_bytes, std::int64_t* total);

  // Takes and releases the write lock: a write command calls it before running anything, so a
  // database another process holds is refused at once (`state_locked`), not after consensus.
  Status probe_writable();

  // Opens the write transaction that commit() will close (BEGIN IMMEDIATE): a node holds the
  // write lock from before its leader reads the state until its result is committed, so two
  // node processes on one file can never both build on the same old state (a lost update).
  // Every storage_read of the runs in between happens inside it. abort() rolls it back.
  Status begin();
  void abort();
  // A read transaction (BEGIN, then a first read): every read until abort() sees one snapshot,
  // the last commit before it, however many commits other processes make meanwhile. Views.
  Status begin_read();
  bool in_transaction() const { return in_tx_; }
  // Opened read-only (the file or its folder is not writable by us): begin() and commit() say
  // `state_readonly` in one line.
  bool read_only() const { return read_only_; }

  // Writes the receipt and, when it is accepted, its effects; bumps the sender's nonce. One SQL
  // transaction (the one begin() opened, or its own). Returns the new transaction id.
  Result<std::int64_t> commit(const TxRecord& rec, const Effects& fx);

  // Runs once, inside the next commit()'s SQL transaction, after the receipt is written (its
  // id), before COMMIT; its error rolls that commit back. A caller's own rows then commit or
  // roll back with the receipt (genvm-node serve links its queued transaction to it).
  using CommitHook = std::function<Status(sqlite3* db, std::int64_t id)>;
  void set_commit_hook(CommitHook hook) { commit_hook_ = std::move(hook); }
  // How long a write waits for another connection's write lock (State::open sets 100 ms for
  // writers, so a second CLI writer fails fast); a long-running server may wait longer.
  void set_busy_timeout(int ms);

  // Whole-database checks for tests and `genvm-node check`: every storage blob's owner is a
  // contract, every contract's stored code hashes to its code_hash, every event and message
  // belongs to a stored transaction, nonces equal the count of the sender's transactions, all
  // balances sum to what `fund` transactions created, and SQLite's integrity_check. Every
  // problem found, one line each (none: consistent).
  Result<std::vector<std::string>> inconsistencies();
  // The same as one Status: `state_inconsistent` naming the problems (the first kMaxListed).
  Status check_consistency();
  static constexpr std::size_t kMaxListed = 20;

  // A contract's code_hash is the SHA3-256 of the code its storage holds, read as the executor
  // reads it (the root slot's code_slot, else the default-derived code slot: u32 LE length ‖
  // bytes): the deployed file, and the new code after a transaction that rewrites it (commit
  // keeps code_hash in step). `state_inconsistent` naming the contract when they differ; ok for
  // an address without a contract.
  Status verify_contract_code(const Address& a);

  // The verdict writes wait on, kept in the file (PRAGMA user_version bit 0): set by a check that
  // found problems (`genvm-node check`, or a write that found its contract's code changed),
  // cleared by one that found none. While it is set, begin(), commit() and probe_writable() run
  // the whole check again: problems refuse the write with `state_inconsistent` naming them;
  // none (the file was repaired) clear the mark and the write goes on. Reads never look at it.
  Status record_verdict(bool inconsistent);
  Result<bool> marked_inconsistent();

 private:
  enum class Identity { kOurs, kUnmarked, kEmpty };
  explicit State(sqlite3* db) : db_(db) {}
  Result<Identity> identify(const std::string& path);
  Status exec(const char* sql);
  Result<bool> has_table(const char* name);
  Result<std::array<std::uint8_t, 32>> stored_code_hash(const Address& a);
  Result<SlotId> code_slot(const Address& a);
  // Inside the write transaction just opened: refuses while the verdict marks the state
  // inconsistent and the whole check still finds problems (rolls back then).
  Status refuse_if_inconsistent();
  sqlite3* db_;
  bool in_tx_ = false;
  bool read_only_ = false;
  CommitHook commit_hook_;
};

bool u256_less(const std::array<std::uint8_t, 32>& a, std::uint64_t v);  // a (u256 LE) < v
Address derive_contract_address(const Address& deployer, std::uint64_t nonce);
std::string hex(const std::uint8_t* p, std::size_t n);
inline std::string hex(const Bytes& b) { return hex(b.data(), b.size()); }
std::string address_text(const Address& a);  // "0x" + 40 hex
Result<Address> parse_address(std::string_view s);  // "0x…" or "addr#…", 40 hex

}  // namespace genvm::node
