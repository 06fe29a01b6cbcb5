// Each run of a transaction as serve shows it: gen_dbg_traceTransaction (one round, its leader
// at the top in genlayer-js's DebugTraceResult shape and every node's run under "runs"), and the
// per-node pieces the receipts of eth_getTransactionByHash use (the run's streams and its
// readable error). Read from the node's receipt (its votes) and its debug records.
#include <cstdio>

#include "common/json.h"
#include "node/serve/service_core.h"

namespace genvm::node::serve {

namespace {

int kind_code(const std::string& name) {
  if (name == "Return") return 0;
  if (name == "UserError") return 1;
  if (name == "VMError") return 2;
  if (name == "InternalError") return 3;
  return -1;
}

const char* result_name(int code) {
  switch (code) {
    case 0: return "Return";
    case 1: return "UserError";
    case 2: return "VmError";
    case 3: return "InternalError";
    default: return "None";
  }
}

std::string hex0x(const Bytes& b) { return "0x" + hex(b); }

// Milliseconds with three decimals: "12.345ms".
std::string run_time(std::uint64_t us) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%llu.%03llums", static_cast<unsigned long long>(us / 1000),
                static_cast<unsigned long long>(us % 1000));
  return buf;
}

// A genvm_log entry is one JSON object as the manager captured it; anything else is kept as text.
void write_log_entry(JsonWriter& w, const std::string& line) {
  auto v = parse_json(line);
  if (v && v->is_object()) {
    w.raw(line);
  } else {
    w.begin_object().key("message").string(line).end_object();
  }
}

}  // namespace

std::vector<RunView> round_runs(const QueuedTx& tx, const TxRecord& rec, const std::vector<RunDebug>& debug,
                                const JsonValue& round) {
  std::vector<RunView> out;
  const JsonValue* rn = round.find("round");
  const int number = rn ? static_cast<int>(rn->as_u64().value_or(0)) : 0;
  const JsonValue* accepted = round.find("accepted");
  const bool is_accepted = accepted && accepted->kind() == JsonValue::Kind::kBool && accepted->as_bool();
  auto record_of = [&](int node, const char* role) -> const RunDebug* {
    for (const RunDebug& d : debug) {
      if (d.round == number && d.node == node && d.role == role) return &d;
    }
    return nullptr;
  };
  RunView lead;
  const JsonValue* ln = round.find("leader");
  lead.node = ln ? static_cast<int>(ln->as_u64().value_or(0)) : 0;
  lead.role = "leader";
  const JsonValue* lo = round.find("leader_outcome");
  lead.vote = lo ? lo->text() : "";
  const JsonValue* lk = round.find("leader_kind");
  lead.kind = lk ? kind_code(lk->text()) : -1;
  lead.timed_out = lead.vote == "timeout";
  lead.record = record_of(lead.node, "leader");
  if (lead.record) {
    lead.payload = lead.record->result;
    lead.have_payload = !lead.record->result.empty() || lead.record->result_bytes == 0;
  } else if (is_accepted && tx.result.size() >= 1 && rec.status == "accepted") {
    // No debug records (--debug-mode disabled): the accepted leader's result is the receipt's.
    lead.payload.assign(tx.result.begin() + 1, tx.result.end());
    lead.have_payload = true;
  }
  out.push_back(std::move(lead));
  if (const JsonValue* votes = round.find("votes"); votes && votes->kind() == JsonValue::Kind::kArray) {
    for (const JsonValue& v : votes->items()) {
      RunView r;
      const JsonValue* n = v.find("node");
      r.node = n ? static_cast<int>(n->as_u64().value_or(0)) : 0;
      r.role = "validator";
      const JsonValue* name = v.find("vote");
      r.vote = name ? name->text() : "";
      const JsonValue* k = v.find("kind");
      r.kind = k ? kind_code(k->text()) : -1;
      r.timed_out = r.vote == "timeout";
      r.record = record_of(r.node, "validator");
      if (r.record) {
        r.payload = r.record->result;
        r.have_payload = !r.record->result.empty() || r.record->result_bytes == 0;
      } else if (is_accepted && r.vote == "agree" && tx.result.size() >= 1 && rec.status == "accepted") {
        // Its execution hash is the leader's, so its result is the receipt's too.
        r.payload.assign(tx.result.begin() + 1, tx.result.end());
        r.have_payload = true;
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

int RunView::result_code() const {
  if (kind >= 0) return kind;
  return timed_out ? 2 : 3;  // killed at the deadline: the VM error `timeout`; else nothing delivered
}

std::optional<ReadableError> RunView::error() const {
  const std::string err = record ? record->stderr_text : std::string();
  if (kind < 0) {
    if (timed_out) return readable_error(ResultCode::kVmError, "timeout", err);
    std::string why = "the run delivered no result";
    if (record && record->exit_code >= 0) why += " (genvm exited with status " + std::to_string(record->exit_code) + ")";
    return readable_error(ResultCode::kInternalError, why, err);
  }
  if (kind == 0) return std::nullopt;
  std::string text(payload.begin(), payload.end());
  if (!have_payload) {
    text = record ? "(" + std::to_string(record->result_bytes) + " bytes, not kept)"
                  : std::string("(not kept: no debug record of this run)");
  }
  return readable_error(static_cast<ResultCode>(kind), text, err);
}

void write_error(JsonWriter& w, const std::optional<ReadableError>& e) {
  w.key("error");
  if (!e) {
    w.null().key("error_details").null();
    return;
  }
  w.string(e->summary).key("error_details").begin_object().key("kind").string(e->kind);
  w.key("summary").string(e->summary);
  if (!e->code.empty()) w.key("code").string(e->code).key("meaning").string(e->meaning);
  if (e->exception) {
    const PythonException& x = *e->exception;
    w.key("exception").begin_object().key("type").string(x.type).key("message").string(x.message);
    w.key("file").string(x.file).key("line").number(x.line).key("function").string(x.function).end_object();
  }
  w.key("raw").string(e->raw).end_object();
}

namespace {

// One run's fields: genlayer-js's DebugTraceResult members, then ours.
void write_run(JsonWriter& w, const RunView& r) {
  const RunDebug* d = r.record;
  const int code = r.result_code();
  w.key("result_code").number(code).key("result_name").string(result_name(code));
  w.key("return_data").string(r.have_payload ? hex0x(r.payload) : "0x");
  w.key("stdout").string(d ? d->stdout_text : "").key("stderr").string(d ? d->stderr_text : "");
  w.key("genvm_log").begin_array();
  if (d) {
    for (const auto& line : d->log) write_log_entry(w, line);
  }
  w.end_array().key("storage_proof").string("").key("run_time").string(d ? run_time(d->run_us) : "");
  w.key("eq_outputs").begin_array();
  if (d) {
    for (const Bytes& b : d->eq_outputs) w.string(hex0x(b));
  }
  w.end_array();
  write_error(w, r.error());
  w.key("node").string(node_address(r.node)).key("node_index").number(r.node).key("role").string(r.role);
  w.key(r.role == "leader" ? "leader_outcome" : "vote").string(r.vote);
  w.key("recorded").boolean(d != nullptr);
  if (d) {
    w.key("debug_mode").string(d->debug_mode).key("exit_code").number(d->exit_code).key("timed_out").boolean(d->timed_out);
    w.key("run_us").unsigned_number(d->run_us).key("stdout_bytes").unsigned_number(d->stdout_bytes);
    w.key("stderr_bytes").unsigned_number(d->stderr_bytes).key("log_entries").unsigned_number(d->log_entries);
    w.key("return_data_bytes").unsigned_number(d->result_bytes).key("omitted").boolean(d->omitted);
  }
}

// params: [{"txID": hash, "round": n}] (genlayer-js), or [hash] / [hash, n].
RpcResult trace(ServiceCore& c, const Params& p) {
  Hash h{};
  std::uint64_t round = 0;
  if (!p.empty() && p[0].is_object()) {
    const JsonValue* id = p[0].find("txID");
    if (!id) id = p[0].find("txId");
    if (!id || !id->is_string()) return bad_params("txID (a transaction hash) is missing");
    auto parsed = parse_hash(id->text());
    if (!parsed) return bad_params("a transaction hash is 0x and 64 hex digits");
    h = *parsed;
    if (const JsonValue* r = p[0].find("round"); r && r->kind() != JsonValue::Kind::kNull) {
      auto n = r->as_u64();
      if (!n) return bad_params("round is a number from 0");
      round = *n;
    }
  } else {
    auto parsed = hash_at(p, 0);
    if (!parsed) return parsed.take_error();
    h = *parsed;
    if (p.size() > 1) {
      auto n = p[1].as_u64();
      if (!n) return bad_params("round is a number from 0");
      round = *n;
    }
  }
  auto got = c.get(h);
  if (!got) return node_error(got.error());
  if (!*got) return tx_not_found(h);
  const QueuedTx& tx = **got;
  if (tx.type == TxType::kSend) return server_error("transaction " + hash_hex(h) + " is a value transfer: it ran no contract");
  if (tx.state_tx == 0) {
    return server_error("transaction " + hash_hex(h) + " has no trace yet (status " + c.live_status(tx) + ")",
                        "{\"status\":" + json_string(c.live_status(tx)) + "}");
  }
  auto st = State::open(c.opts.state_path, OpenMode::kExisting);
  if (!st) return node_error(st.error());
  auto rec = (*st)->tx(tx.state_tx);
  if (!rec) return node_error(rec.error());
  if (!*rec) return node_error(make_error("state_sql", "receipt " + std::to_string(tx.state_tx) + " is missing"));
  auto debug = (*st)->debug_of_tx(tx.state_tx);
  if (!debug) return node_error(debug.error());
  auto votes = parse_json((*rec)->votes_json);
  const std::size_t rounds = votes && votes->kind() == JsonValue::Kind::kArray ? votes->items().size() : 0;
  if (round >= rounds) {
    return bad_params("round " + std::to_string(round) + ": the transaction ran " + std::to_string(rounds) +
                      " round(s), numbered from 0");
  }
  const JsonValue& rd = votes->items()[round];
  std::vector<RunView> runs = round_runs(tx, **rec, *debug, rd);
  JsonWriter w;
  w.begin_object().key("transaction_id").string(hash_hex(h));
  write_run(w, runs.front());
  w.key("round").unsigned_number(round).key("rounds").unsigned_number(rounds);
  const JsonValue* accepted = rd.find("accepted");
  w.key("accepted").boolean(accepted && accepted->kind() == JsonValue::Kind::kBool && accepted->as_bool());
  w.key("runs").begin_array();
  for (const RunView& r : runs) {
    w.begin_object();
    write_run(w, r);
    w.end_object();
  }
  w.end_array().end_object();
  return w.take();
}

}  // namespace

void add_trace_methods(Rpc& rpc, ServiceCore& c) {
  rpc.add("gen_dbg_traceTransaction", [&c](const Params& p) { return trace(c, p); });
}

}  // namespace genvm::node::serve
