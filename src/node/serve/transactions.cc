// Transactions and receipts in Studio's shapes: eth_getTransactionReceipt,
// eth_getTransactionByHash, gen_getTransactionStatus, sim_getTransactionsForAddress.
#include "common/json.h"
#include "node/serve/eth_bridge.h"
#include "node/serve/service_core.h"

namespace genvm::node::serve {

namespace {

constexpr std::int64_t kMaxListed = 100;  // sim_getTransactionsForAddress

// Node `node`'s node_config: the recorded one (QueuedTx::nodes) when the transaction ran with
// named validators, else the anonymous node's.
void node_config(JsonWriter& w, int node, const JsonValue* nodes) {
  if (nodes && nodes->kind() == JsonValue::Kind::kArray && !nodes->items().empty()) {
    w.key("node_config");
    write_json(w, nodes->items()[static_cast<std::size_t>(node) % nodes->items().size()]);
    return;
  }
  w.key("node_config").begin_object().key("address").string(node_address(node)).key("provider").string("genvm-node");
  w.key("model").string("").key("config").begin_object().end_object().key("plugin").string("");
  w.key("plugin_config").begin_object().end_object().key("stake").number(1).end_object();
}

// Studio's vote names for ours.
const char* studio_vote(const std::string& v) {
  if (v == "agree") return "agree";
  if (v == "timeout") return "timeout";
  return "disagree";
}

std::string padded(const Address& a) { return "0x000000000000000000000000" + address_text(a).substr(2); }

}  // namespace

bool has_log(const QueuedTx& tx) { return tx.type != TxType::kSend; }

void write_log(JsonWriter& w, const QueuedTx& tx) {
  const std::string hh = hash_hex(tx.hash);
  w.begin_object().key("address").string(kConsensusAddress).key("topics").begin_array();
  w.string(hash_hex(new_transaction_topic())).string(hh).string(padded(tx.to)).string(padded(tx.from));
  w.end_array().key("data").string("0x").key("blockNumber").raw(hex_u64(static_cast<std::uint64_t>(tx.seq)));
  w.key("transactionHash").string(hh).key("transactionIndex").string("0x0").key("blockHash").string(hh);
  w.key("logIndex").string("0x0").key("removed").boolean(false).end_object();
}

namespace {

RpcResult get_receipt(ServiceCore& c, const Params& p) {
  auto h = hash_at(p, 0);
  if (!h) return h.take_error();
  auto r = c.get(*h);
  if (!r) return node_error(r.error());
  std::optional<QueuedTx> tx = std::move(*r);
  if (!tx) return std::string("null");
  // The Ethereum side of the transaction: included at once (its block is its queue position,
  // the block's hash is the transaction's), with the NewTransaction event genlayer-js reads the
  // GenLayer transaction id from (the same hash).
  const std::string hh = hash_hex(tx->hash), block = hex_u64(static_cast<std::uint64_t>(tx->seq));
  JsonWriter w;
  w.begin_object().key("transactionHash").string(hh).key("transactionIndex").string("0x0");
  w.key("blockHash").string(hh).key("blockNumber").raw(block).key("from").string(address_text(tx->from));
  w.key("to").string(tx->type == TxType::kSend ? address_text(tx->to) : std::string(kConsensusAddress));
  w.key("cumulativeGasUsed").string("0x0").key("gasUsed").string("0x0").key("effectiveGasPrice").string("0x0");
  w.key("type").string("0x0").key("contractAddress").null().key("logs").begin_array();
  if (has_log(*tx)) write_log(w, *tx);
  w.end_array().key("logsBloom").string("0x" + std::string(512, '0')).key("status").string("0x1").end_object();
  return w.take();
}

RpcResult transaction_json(ServiceCore& c, const QueuedTx& tx, bool with_consensus) {
  const std::string status = c.live_status(tx);
  std::optional<TxRecord> rec;
  std::vector<RunDebug> debug;
  if (tx.state_tx && with_consensus) {
    auto st = State::open(c.opts.state_path, OpenMode::kExisting);
    if (!st) return node_error(st.error());
    auto r = (*st)->tx(tx.state_tx);
    if (!r) return node_error(r.error());
    rec = std::move(*r);
    auto d = (*st)->debug_of_tx(tx.state_tx);
    if (!d) return node_error(d.error());
    debug = std::move(*d);
  }
  const std::string hh = hash_hex(tx.hash);
  const bool deploy = tx.type == TxType::kDeploy;
  const bool has_target = !deploy || (rec && rec->kind == "deploy");
  const std::string to = deploy ? (rec ? address_text(rec->target) : std::string()) : address_text(tx.to);
  JsonWriter w;
  w.begin_object().key("hash").string(hh).key("tx_id").string(hh).key("status").string(status);
  w.key("statusCode").number(status_code(status));
  w.key("from_address").string(address_text(tx.from)).key("sender").string(address_text(tx.from));
  w.key("to_address");
  if (has_target && !to.empty()) w.string(to); else w.null();
  w.key("recipient");
  if (has_target && !to.empty()) w.string(to); else w.null();
  w.key("type").number(static_cast<int>(tx.type)).key("value").unsigned_number(tx.value);
  w.key("nonce").unsigned_number(tx.nonce).key("gaslimit").number(0).key("r").number(0).key("s").number(0).key("v").number(0);
  w.key("created_timestamp").string(std::to_string(tx.created_at)).key("leader_only").boolean(tx.leader_only);
  w.key("execution_mode").string(tx.leader_only ? "LEADER_ONLY" : "NORMAL");
  w.key("num_of_initial_validators").number(tx.num_validators).key("config_rotation_rounds").number(tx.max_rotations);
  w.key("data");
  if (tx.type == TxType::kSend) {
    w.null();
  } else {
    w.begin_object().key("calldata").string(b64(tx.calldata));
    if (deploy) {
      w.key("contract_code").string(b64(tx.code));
      if (!to.empty()) w.key("contract_address").string(to);
    }
    w.end_object();
  }
  w.key("triggered_transactions").begin_array().end_array();
  const bool ran = rec && (rec->status == "accepted" || rec->status == "undetermined");
  int exec_result = 0;
  if (rec && rec->status == "accepted") exec_result = rec->result_kind == 0 ? 1 : 2;
  w.key("txExecutionResult").number(exec_result);
  w.key("txExecutionResultName").string(exec_result == 1 ? "FINISHED_WITH_RETURN" : exec_result == 2 ? "FINISHED_WITH_ERROR" : "NOT_VOTED");
  w.key("result");
  if (!tx.result.empty()) w.string(b64(tx.result)); else w.null();
  if (!tx.error.empty()) w.key("error").string(tx.error);
  w.key("consensus_data");
  if (!ran || tx.type == TxType::kSend) {
    w.null();
  } else {
    auto votes = parse_json(rec->votes_json);
    const JsonValue* last = votes && votes->kind() == JsonValue::Kind::kArray && !votes->items().empty()
                                ? &votes->items().back() : nullptr;
    std::vector<RunView> runs;
    if (last) runs = round_runs(tx, *rec, debug, *last);
    // The validators the transaction ran with (QueuedTx::nodes), when it named them.
    auto recorded = tx.nodes.empty() ? Result<JsonValue>(make_error("none")) : parse_json(tx.nodes);
    auto address_of_node = [&](int n) {
      if (recorded && recorded->kind() == JsonValue::Kind::kArray && !recorded->items().empty()) {
        const JsonValue* a = recorded->items()[static_cast<std::size_t>(n) % recorded->items().size()].find("address");
        if (a && a->is_string()) return a->text();
      }
      return node_address(n);
    };
    // Each node's receipt of the deciding (last) round: its own result code, streams and
    // readable error where its debug record has them.
    auto receipt = [&](const std::string& mode, const RunView& run, const std::string& vote) {
      const int code = run.result_code();
      w.begin_object().key("vote").string(vote).key("execution_result").string(code == 0 ? "SUCCESS" : "ERROR");
      w.key("result").string(b64(tx.result)).key("calldata").string(b64(tx.calldata)).key("gas_used").number(0);
      w.key("mode").string(mode).key("contract_state").begin_object().end_object();
      node_config(w, run.node, recorded ? &*recorded : nullptr);
      w.key("eq_outputs").begin_object();
      if (run.record) {
        for (std::size_t i = 0; i < run.record->eq_outputs.size(); ++i) {
          w.key(std::to_string(i)).string(b64(run.record->eq_outputs[i]));
        }
      }
      w.end_object().key("pending_transactions").begin_array().end_array();
      // The readable error twice: as the receipt's `error` (genlayer-js's LeaderReceipt type),
      // and in genvm_result, which genlayer-js's default (simplified) receipt keeps.
      const std::optional<ReadableError> err = run.error();
      write_error(w, err);
      w.key("genvm_result").begin_object().key("stdout").string(run.record ? run.record->stdout_text : "");
      w.key("stderr").string(run.record ? run.record->stderr_text : "");
      write_error(w, err);
      w.end_object().end_object();
    };
    w.begin_object().key("votes").begin_object();
    for (std::size_t i = 1; i < runs.size(); ++i) w.key(address_of_node(runs[i].node)).string(studio_vote(runs[i].vote));
    w.end_object().key("leader_receipt").begin_array();
    if (!runs.empty()) receipt("leader", runs.front(), "agree");
    w.end_array().key("validators").begin_array();
    for (std::size_t i = 1; i < runs.size(); ++i) receipt("validator", runs[i], studio_vote(runs[i].vote));
    w.end_array().key("rounds").raw(votes ? rec->votes_json : "[]").end_object();
  }
  w.key("num_of_rounds").string(std::to_string(rec ? rec->rounds : 0));
  w.end_object();
  return w.take();
}

RpcResult get_transaction(ServiceCore& c, const Params& p) {
  auto h = hash_at(p, 0);
  if (!h) return h.take_error();
  auto r = c.get(*h);
  if (!r) return node_error(r.error());
  if (!*r) return tx_not_found(*h);
  return transaction_json(c, **r, true);
}

RpcResult status(ServiceCore& c, const Params& p) {
  auto h = hash_at(p, 0);
  if (!h) return h.take_error();
  auto r = c.get(*h);
  if (!r) return node_error(r.error());
  if (!*r) return tx_not_found(*h);
  const std::string s = c.live_status(**r);
  JsonWriter w;
  w.begin_object().key("status").string(s).key("statusCode").number(status_code(s)).end_object();
  return w.take();
}

RpcResult for_address(ServiceCore& c, const Params& p) {
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  auto listed = c.for_address(*a, kMaxListed);
  if (!listed) return node_error(listed.error());
  std::vector<QueuedTx> txs = std::move(*listed);
  std::string out = "[";
  for (std::size_t i = 0; i < txs.size(); ++i) {
    auto j = transaction_json(c, txs[i], false);
    if (!j) return j;
    out += (i ? "," : "") + *j;
  }
  return out + "]";
}

}  // namespace

void add_tx_methods(Rpc& rpc, ServiceCore& c) {
  rpc.add("eth_getTransactionReceipt", [&c](const Params& p) { return get_receipt(c, p); });
  rpc.add("eth_getTransactionByHash", [&c](const Params& p) { return get_transaction(c, p); });
  rpc.add("gen_getTransactionStatus", [&c](const Params& p) { return status(c, p); });
  rpc.add("sim_getTransactionsForAddress", [&c](const Params& p) { return for_address(c, p); });
}

}  // namespace genvm::node::serve
