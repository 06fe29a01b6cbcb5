// Contracts: eth_sendRawTransaction (queues a deploy, call or transfer), the reads gen_call,
// gen_getContractSchema(ForCode), gen_getContractCode and eth_getCode.
#include <algorithm>

#include "common/json.h"
#include "node/serve/eth_bridge.h"
#include "node/serve/service_core.h"

namespace genvm::node::serve {

using calldata::Value;

namespace {

constexpr std::int64_t kMaxListed = 100;  // deployments looked at by gen_getContractCode

RpcResult send_raw_transaction(ServiceCore& c, const Params& p) {
  auto raw_hex = string_at(p, 0, "the signed transaction");
  if (!raw_hex) return raw_hex.take_error();
  auto raw = from_hex(*raw_hex);
  if (!raw || raw->empty()) return bad_params("the signed transaction is 0x and hex digits");
  auto tx = decode_signed_tx(*raw);
  if (!tx) return server_error("Invalid transaction: " + tx.error().to_string());
  if (!tx->chain_id || (*tx->chain_id != kChainId && *tx->chain_id != kAltChainId)) {
    return server_error("Invalid transaction: chain id " +
                        (tx->chain_id ? std::to_string(*tx->chain_id) : std::string("absent (pre-EIP-155)")) +
                        ", this node accepts " + std::to_string(kChainId) + " and " + std::to_string(kAltChainId));
  }
  QueuedTx q;
  // Studio's second parameter: the sim_config (validators with their mocks, genvm_datetime).
  if (p.size() > 1 && p[1].kind() != JsonValue::Kind::kNull) {
    if (!p[1].is_object()) return bad_params("sim_config (an object) at position 1");
    JsonWriter w;
    write_json(w, p[1]);
    q.sim_config = w.take();
    if (auto s = check_sim_config(q.sim_config); !s) return bad_params(s.error().message);
  }
  q.hash = tx->hash;
  q.from = tx->from;
  q.nonce = tx->nonce;
  q.created_at = now_ms() / 1000;
  for (int i = 0; i < 24; ++i) {
    if (tx->value[i] != 0) return server_error("Invalid transaction: a value is at most 2^63-1");
  }
  for (int i = 24; i < 32; ++i) q.value = q.value << 8 | tx->value[i];
  if (q.value > std::uint64_t(INT64_MAX)) return server_error("Invalid transaction: a value is at most 2^63-1");
  auto consensus = parse_address(kConsensusAddress);
  if (tx->to && *tx->to == *consensus && !tx->data.empty()) {
    auto add = decode_add_transaction(tx->data);
    if (!add) return server_error("Invalid transaction: " + add.error().to_string());
    // Otherwise anyone could submit in another's name.
    if (add->sender != tx->from) {
      return server_error("Invalid transaction: addTransaction's _sender " + address_text(add->sender) +
                          " is not the signer " + address_text(tx->from));
    }
    auto data = decode_tx_data(add->tx_data, add->recipient == Address{});
    if (!data) return server_error("Invalid transaction: txData: " + data.error().to_string());
    q.leader_only = data->leader_only;
    q.calldata = std::move(data->calldata);
    q.num_validators = static_cast<int>(std::min<std::uint64_t>(add->num_validators, 1000));
    q.max_rotations = static_cast<int>(std::min<std::uint64_t>(add->max_rotations, 1000));
    if (data->deploy) {
      if (add->recipient != Address{}) return server_error("Invalid transaction: a deployment's recipient is 0x0");
      q.type = TxType::kDeploy;
      q.code = std::move(data->code);
    } else {
      q.type = TxType::kCall;
      q.to = add->recipient;
      auto st = State::open(c.opts.state_path, OpenMode::kExisting);
      if (!st) return node_error(st.error());
      auto known = (*st)->contract(q.to);
      if (!known) return node_error(known.error());
      if (!*known) return not_found("Contract not found", "{\"address\":" + json_string(address_text(q.to)) + "}");
    }
  } else if (tx->data.empty() && tx->to) {
    q.type = TxType::kSend;  // a value transfer
    q.to = *tx->to;
  } else {
    return server_error("Invalid transaction: only addTransaction calls to the consensus contract " +
                        std::string(kConsensusAddress) + " and plain value transfers are served");
  }
  {
    std::lock_guard g(c.store_mu);
    auto r = c.store.enqueue(q);
    if (!r) {
      const auto& e = r.error();
      if (e.code == "nonce_too_low" || e.code == "nonce_too_high" || e.code == "known_transaction") {
        return server_error(e.message);
      }
      return node_error(e);
    }
  }
  c.changed(q.hash, "PENDING");
  c.wake();
  return json_string(hash_hex(q.hash));
}

RpcResult get_code(ServiceCore&, const Params& p) {
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  return json_string("0x");  // GenVM contracts are not EVM bytecode (as Studio answers)
}

RpcResult contract_code(ServiceCore& c, const Params& p) {
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  auto listed = c.for_address(*a, kMaxListed);
  if (!listed) return node_error(listed.error());
  std::vector<QueuedTx> txs = std::move(*listed);
  for (const auto& t : txs) {
    if (t.type == TxType::kDeploy && t.to == *a && !t.code.empty()) return json_string(b64(t.code));
  }
  return not_found("Contract " + address_text(*a) + " not found (or not deployed through this server)",
                   "{\"contract_address\":" + json_string(address_text(*a)) + "}");
}

RpcResult gen_call(ServiceCore& c, const Params& p) {
  if (p.empty() || !p[0].is_object()) return bad_params("gen_call takes one object {type, to, from, data}");
  const JsonValue& req = p[0];
  const JsonValue* type = req.find("type");
  const JsonValue* to = req.find("to");
  const JsonValue* data = req.find("data");
  if (!to || !to->is_string() || !data || !data->is_string()) return bad_params("'to' and 'data' are required strings");
  const std::string t = type && type->is_string() ? type->text() : "read";
  if (t != "read") return rpc_error(kInvalidParams, "Invalid type '" + t + "': this node serves gen_call type 'read'");
  auto addr = parse_address(to->text());
  if (!addr) return bad_params("'to' is not an address");
  auto bytes = from_hex(data->text());
  if (!bytes) return bad_params("'data' is hex (with or without 0x)");
  auto decoded = decode_call_data(*bytes);
  if (!decoded) return bad_params("'data' is not RLP [calldata, leader_only]: " + decoded.error().message);
  auto entry = calldata::decode(decoded->calldata);
  if (!entry) return bad_params("the calldata does not decode: " + entry.error().message);
  auto st = State::open(c.opts.state_path, OpenMode::kExisting);
  if (!st) return node_error(st.error());
  auto known = (*st)->contract(*addr);
  if (!known) return node_error(known.error());
  if (!*known) return not_found("Contract " + address_text(*addr) + " not found",
                            "{\"contract_address\":" + json_string(address_text(*addr)) + "}");
  // The read runs as one node: the first of the request's sim_config validators, else the
  // first stored validator (its host_data: provider and mocks), with sim_config's genvm_datetime.
  QueuedTx as_tx;
  if (const JsonValue* sc = req.find("sim_config"); sc && sc->kind() != JsonValue::Kind::kNull) {
    if (!sc->is_object()) return bad_params("sim_config is an object");
    JsonWriter w;
    write_json(w, *sc);
    as_tx.sim_config = w.take();
    if (auto s = check_sim_config(as_tx.sim_config); !s) return bad_params(s.error().message);
  }
  as_tx.num_validators = 1;
  auto plan = round_plan(c, as_tx);
  if (!plan) return node_error(plan.error());
  NodeOptions o = c.node_options();
  o.host_data = std::move(plan->host_data);
  o.datetime = std::move(plan->datetime);
  Node node(**st, o);
  auto r = node.view(*addr, *entry);
  if (!r) return node_error(r.error());
  if (r->kind != 0) {
    const Value* d = r->report.is_map() ? r->report.find("data") : nullptr;
    std::string msg = r->timed_out ? "the view was killed at the timeout" : d ? calldata::to_text(*d) : "no result";
    JsonWriter w;
    w.begin_object().key("receipt").begin_object().key("execution_result").string("ERROR");
    w.key("result").string(b64(result_bytes(r->kind < 0 ? 2 : r->kind, d))).key("error").string(msg).end_object();
    w.key("params");
    write_json(w, req);
    w.end_object();
    return server_error("execution failed", w.take());
  }
  const Value* d = r->report.find("data");
  Bytes enc = calldata::encode(d ? *d : Value());
  return json_string(hex(enc));
}

RpcResult schema(ServiceCore& c, const Params& p, bool for_code) {
  auto st = State::open(c.opts.state_path, OpenMode::kExisting);
  if (!st) return node_error(st.error());
  Node node(**st, c.node_options());
  Value entry = make_entry("#get-schema", {});
  Result<RunReport> r = make_error("unreachable");
  if (for_code) {
    auto s = string_at(p, 0, "the contract code in hex");
    if (!s) return s.take_error();
    auto code = from_hex(*s);
    if (!code) code = Bytes(s->begin(), s->end());  // Studio takes text that is not hex as the code itself
    r = node.view_code(*code, entry);
  } else {
    auto a = address_at(p, 0);
    if (!a) return a.take_error();
    auto known = (*st)->contract(*a);
    if (!known) return node_error(known.error());
    if (!*known) return not_found("Contract " + address_text(*a) + " not found",
                              "{\"contract_address\":" + json_string(address_text(*a)) + "}");
    r = node.view(*a, entry);
  }
  if (!r) return node_error(r.error());
  const Value* d = r->report.is_map() ? r->report.find("data") : nullptr;
  if (r->kind != 0 || !d || !d->is_string()) {
    return server_error("the contract has no schema (its #get-schema method returned " +
                        (d ? calldata::to_text(*d).substr(0, 200) : std::string("nothing")) + ")");
  }
  auto parsed = parse_json(d->as_string());
  if (!parsed || !parsed->is_object()) return server_error("the contract's #get-schema did not return a JSON object");
  JsonWriter w;
  write_json(w, *parsed);
  return w.take();
}

}  // namespace

void add_contract_methods(Rpc& rpc, ServiceCore& c) {
  rpc.add("eth_sendRawTransaction", [&c](const Params& p) { return send_raw_transaction(c, p); });
  rpc.add("gen_call", [&c](const Params& p) { return gen_call(c, p); });
  rpc.add("gen_getContractSchema", [&c](const Params& p) { return schema(c, p, false); });
  rpc.add("gen_getContractSchemaForCode", [&c](const Params& p) { return schema(c, p, true); });
  rpc.add("gen_getContractCode", [&c](const Params& p) { return contract_code(c, p); });
  rpc.add("eth_getCode", [&c](const Params& p) { return get_code(c, p); });
}

}  // namespace genvm::node::serve
