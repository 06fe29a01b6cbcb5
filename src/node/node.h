// node::Node: write transactions with a leader and validators, and read-only views, each run
// a real `genvm run` started by the manager library (node::Runner: src/manager's Registry, so
// the deadline, debug-mode policy, capture and process-tree kill of production apply) and
// served by serve_host_connection over the committed State as host 0.
//
//   Node node(state, {.genvm = "build/tools/genvm/genvm", .validators = 4, .rounds = 3});
//   auto tx = node.deploy(sender, wasm_bytes, Value::map({{"args", ...}}));
//   auto tx2 = node.call(sender, tx->record.target, Value::map({{"", "increment"}}));
//   auto v = node.view(address, Value::map({{"", "get"}}));
//
// Consensus (impl-spec/02-vm/03-consensus.rst, spec/03-vm/05-result.rst): the leader runs with
// no leader_nondet_results; N validators run the same execution data handed the leader's
// nondet_results; a validator agrees iff its execution hash equals the leader's and none of its
// non-deterministic blocks rejected the leader's result (the executor's nondet_disagreement). More than half
// of the validators agreeing accepts the leader's result: its storage changes, its emissions,
// the transaction's value (on a Return) and the receipt are committed in one SQL transaction. Otherwise the next node leads, up to R
// rounds, then the transaction is recorded `undetermined` with no effects. Messages that an
// accepted result posts become follow-up transactions (sender: the posting contract), run
// after the commit. Views run once with no write permission and commit nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/calldata.h"
#include "common/debug_mode.h"
#include "common/result.h"
#include "node/result_text.h"
#include "node/runner.h"
#include "node/stale_host_dirs.h"
#include "node/state.h"

namespace genvm::node {

struct Vote {
  int node = 0;                // which node ran it (0..N)
  // "agree": a result whose execution hash is the leader's and no non-deterministic block
  // rejected; "disagree": another hash, or a block whose validator function said no
  // (nondet_disagreement); "timeout": killed at the deadline; "error": delivered nothing or an
  // InternalError.
  std::string vote;
  int kind = -1;
  Bytes execution_hash;
  std::optional<std::uint32_t> nondet_disagreement;  // the first block (call_no) it rejected
};

struct Round {
  int leader = 0;
  RunReport leader_run;
  // "result": the leader delivered one and the validators ran; "timeout": the leader was
  // killed at the deadline; "internal_error": it delivered an InternalError (its host failed,
  // never committed as an outcome); "error": it delivered nothing. The last three get no votes.
  std::string leader_outcome;
  std::vector<Vote> votes;
  bool accepted = false;
  std::vector<RunDebug> debug;  // leader then validators, when NodeOptions::debug_mode >= safe
};

// What a receipt keeps of one run's capture at --debug-mode safe and above (docs/PROTOCOLS.md,
// "genvm-node debug records"): the last kDebugKeepStream bytes of stdout and of stderr, the
// newest genvm_log entries that fit in kDebugKeepLog bytes, the sizes of all three, the result
// (code, payload and non-deterministic outputs within kDebugKeepResult) and run time; once a
// transaction's records reach kDebugKeepPerTx, later runs keep their sizes only (omitted).
inline constexpr std::size_t kDebugKeepStream = 16 * 1024;
inline constexpr std::size_t kDebugKeepLog = 32 * 1024;
inline constexpr std::size_t kDebugKeepPerTx = 1024 * 1024;
inline constexpr std::size_t kDebugKeepResult = 16 * 1024;  // a run's result payload; its eq outputs
// The bounded record of `run` (round 1-based, 0 for a view); `budget` is what the transaction
// may still keep, and is reduced by what this record keeps.
RunDebug debug_record(const RunReport& run, int round, int node, const std::string& role, DebugMode mode,
                      std::size_t* budget);

struct TxOutcome {
  TxRecord record;             // as committed (id set)
  std::vector<Round> rounds;
  std::vector<std::int64_t> follow_ups;  // transactions run for the messages it posted
};

// What a write transaction has done so far (a status line): after the leader's run
// (validators_done 0) and after each validator's.
struct Progress {
  int round = 0;               // 1-based
  int leader = 0;
  std::string leader_outcome;  // as Round::leader_outcome
  int validators_done = 0;
  int validators = 0;          // that run this round: 0 when the leader delivered nothing
};

struct NodeOptions {
  std::string genvm;           // path of the genvm executable
  int validators = 4;
  int rounds = 3;
  int max_follow_ups = 32;     // per top-level transaction; the rest stay pending in the state
  // Per origin transaction, over every command: a message whose chain already has this many
  // follow-ups is recorded as `dropped` (served, not run), so a contract whose follow-ups post
  // further messages forever cannot make every later command run its chain.
  int max_chain_follow_ups = 64;
  int run_timeout_ms = 5000;   // per executor run (the manager's deadline); 0: its default
  // The runs' debug mode (genvm-node --debug-mode). From `safe` up every run's capture is kept
  // in its receipt (bounded: kDebugKeep*); `disabled` keeps nothing.
  DebugMode debug_mode = DebugMode::kDisabled;
  std::function<void(const Progress&)> progress;
  // How much of a result a receipt keeps as text, and the largest integer rendered in decimal
  // (node/result_text.h): the node's work on a result is bounded, whatever the run returned.
  ResultTextLimits result_text;
  // Test hook: replaces the genvm path for node i (0 = first leader); empty: opts.genvm.
  std::function<std::string(int)> genvm_for_node;
  // The LLM and web modules every run gets (runner.h ModuleFiles); none by default.
  ModuleFiles modules;
  // Per node: the ExecutionData.host_data (a JSON object with string node_address and tx_id)
  // of node i's runs is host_data[i % size], which the executor hands the modules in its hello
  // (serve puts each validator's LLM provider and mocks there); empty: none. Views run as node 0.
  std::vector<std::string> host_data;
  // The runs' message.datetime (RFC 3339); empty: host::kDefaultDatetime.
  std::string datetime;
};

// Majority rule: accepted iff more than half of the validators agree.
bool majority_agrees(const std::vector<Vote>& votes);

class Node {
 public:
  // Sweeps the host-socket folders dead nodes left (a kill -9 cannot remove its own).
  Node(State& state, NodeOptions opts) : state_(state), opts_(std::move(opts)) { sweep_stale_host_dirs(); }

  // `value` moves from sender to the contract with an accepted Return (the runs see it as
  // message.value on top of the stored balances); a sender holding less is
  // `insufficient_balance` before anything runs.
  Result<TxOutcome> deploy(const Address& sender, const Bytes& code, const calldata::Value& entry,
                           std::uint64_t value = 0);
  Result<TxOutcome> call(const Address& sender, const Address& contract, const calldata::Value& entry,
                         std::uint64_t value = 0);
  // The node's faucet: a `fund` receipt that creates `value` for `to` (no run).
  Result<TxOutcome> fund(const Address& to, std::uint64_t value);
  Result<RunReport> view(const Address& contract, const calldata::Value& entry);
  // Runs `code` read-only as given, not deployed and not as a deployment (no init): what a
  // schema read of code needs (genvm-node serve's gen_getContractSchemaForCode).
  Result<RunReport> view_code(const Bytes& code, const calldata::Value& entry);
  // Moves `value` from `from` to `to` with no run: a `transfer` receipt, accepted with Return
  // (State::commit moves the value); `insufficient_balance` and nothing stored if `from` holds less.
  Result<TxOutcome> transfer(const Address& from, const Address& to, std::uint64_t value);
  // Runs the messages still pending in the state (left by a node killed between a commit and
  // its follow-ups), oldest first, and theirs in turn; returns the new transactions.
  Result<std::vector<std::int64_t>> serve_pending();

 private:
  // Commits a value movement's receipt (fund, transfer) and answers it with its id.
  Result<TxOutcome> commit_value_record(TxRecord rec);
  Result<TxOutcome> write_tx(TxRecord rec, const std::optional<Bytes>& code, const calldata::Value& entry,
                             Effects fx);
  Result<std::vector<std::int64_t>> run_follow_ups(std::int64_t tx);  // tx 0: every pending message
  // Leader and validators for one round; validators run only when the leader delivered a result.
  // `debug_budget`: what the transaction may still keep of debug records (debug_record).
  Result<Round> run_round(int round_index, const TxRecord& rec, const std::optional<Bytes>& code,
                          const calldata::Value& entry, std::size_t* debug_budget);
  std::string genvm_for(int node) const;
  calldata::Value execution_data(const TxRecord& rec, const std::optional<Bytes>& code, const calldata::Value& entry,
                                 const std::optional<calldata::Value>& leader_nondet, int node = 0) const;

  State& state_;
  NodeOptions opts_;
  Runner runner_{opts_.modules};  // every executor run goes through the manager library
};

// The `{"": method, "args": [...]}` entry (args omitted when empty; method omitted when empty).
calldata::Value make_entry(const std::string& method, const calldata::Value::Array& args);
std::string kind_name(int kind);
// The receipt's `votes` column: [{"round", "leader", "leader_outcome", "leader_kind",
// "leader_hash", "accepted", "votes": [{"node", "vote", "kind", "execution_hash",
// "nondet_disagreement" (call_no or null)}]}] (docs/PROTOCOLS.md, "genvm-node receipts").
std::string votes_json(const std::vector<Round>& rounds);

}  // namespace genvm::node
