// node::Node: write transactions with a leader and validators, and read-only views, each run
// a real `genvm run` process served by serve_host_connection over the committed State.
//
//   Node node(state, {.genvm = "build/tools/genvm/genvm", .validators = 4, .rounds = 3});
//   auto tx = node.deploy(sender, wasm_bytes, Value::map({{"args", ...}}));
//   auto tx2 = node.call(sender, tx->record.target, Value::map({{"", "increment"}}));
//   auto v = node.view(address, Value::map({{"", "get"}}));
//
// Consensus (impl-spec/02-vm/03-consensus.rst, spec/03-vm/05-result.rst): the leader runs with
// no leader_nondet_results; N validators run the same execution data handed the leader's
// nondet_results; a validator agrees iff its execution hash equals the leader's. More than half
// of the validators agreeing accepts the leader's result: its storage changes and emissions and
// the receipt are committed in one SQL transaction. Otherwise the next node leads, up to R
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
#include "common/result.h"
#include "node/state.h"

namespace genvm::node {

// One executor run's outcome as the node sees it.
struct RunReport {
  int exit_code = -1;          // genvm's exit status (-1: killed by a signal)
  std::string stderr_text;     // the executor's stderr (for diagnostics)
  calldata::Value report;      // the decoded consume_result map; null when nothing delivered
  Bytes execution_hash;        // from the report; empty when nothing delivered
  int kind = -1;               // the report's kind; -1 when nothing delivered
  bool timed_out = false;      // killed by the node after NodeOptions::run_timeout_ms
};

struct Vote {
  int node = 0;                // which node ran it (0..N)
  std::string vote;            // "agree" | "disagree" | "timeout" | "error" (delivered nothing)
  int kind = -1;
  Bytes execution_hash;
};

struct Round {
  int leader = 0;
  RunReport leader_run;
  std::vector<Vote> votes;
  bool accepted = false;
};

struct TxOutcome {
  TxRecord record;             // as committed (id set)
  std::vector<Round> rounds;
  std::vector<std::int64_t> follow_ups;  // transactions run for the messages it posted
};

struct NodeOptions {
  std::string genvm;           // path of the genvm executable
  int validators = 4;
  int rounds = 3;
  int max_follow_ups = 32;     // per top-level transaction; the rest stay pending in the state
  int run_timeout_ms = 120000; // per executor run; 0: none
  // Progress, e.g. for a status line: (round, validators done, validators total).
  std::function<void(int, int, int)> progress;
  // Test hook: replaces the genvm path for node i (0 = first leader); empty: opts.genvm.
  std::function<std::string(int)> genvm_for_node;
};

// Runs `genvm run` once on `data` (an ExecutionData calldata map) with `permissions`, serving
// its host connection from `state`. Fails only when the process could not be started. A run
// still going after `timeout_ms` (0: none) is SIGKILLed and reports `timed_out` (the executor
// has no timeout of its own: by design its host ends it).
Result<RunReport> run_executor(const std::string& genvm, const calldata::Value& data, const std::string& permissions,
                               State& state, int timeout_ms = 0);

// Majority rule: accepted iff more than half of the validators agree.
bool majority_agrees(const std::vector<Vote>& votes);

class Node {
 public:
  Node(State& state, NodeOptions opts) : state_(state), opts_(std::move(opts)) {}

  Result<TxOutcome> deploy(const Address& sender, const Bytes& code, const calldata::Value& entry);
  Result<TxOutcome> call(const Address& sender, const Address& contract, const calldata::Value& entry);
  Result<RunReport> view(const Address& contract, const calldata::Value& entry);
  // Runs the messages still pending in the state (left by a node killed between a commit and
  // its follow-ups), oldest first, and theirs in turn; returns the new transactions.
  Result<std::vector<std::int64_t>> serve_pending();

 private:
  Result<TxOutcome> write_tx(TxRecord rec, const std::optional<Bytes>& code, const calldata::Value& entry,
                             Effects fx);
  Result<std::vector<std::int64_t>> run_follow_ups(std::int64_t tx);  // tx 0: every pending message
  calldata::Value execution_data(const TxRecord& rec, const std::optional<Bytes>& code, const calldata::Value& entry,
                                 const std::optional<calldata::Value>& leader_nondet) const;

  State& state_;
  NodeOptions opts_;
};

// The `{"": method, "args": [...]}` entry (args omitted when empty; method omitted when empty).
calldata::Value make_entry(const std::string& method, const calldata::Value::Array& args);
std::string kind_name(int kind);
std::string votes_json(const std::vector<Round>& rounds);

}  // namespace genvm::node
