#include "node/serve/service.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "common/calldata.h"
#include "common/json.h"
#include "node/serve/eth_bridge.h"

namespace genvm::node::serve {

using calldata::Value;

namespace {

constexpr std::int64_t kMaxListed = 100;  // sim_getTransactionsForAddress

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string hex_u64(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return json_string(buf);
}

// A u256 (little-endian, as State keeps balances) as a JSON "0x..." quantity.
std::string hex_u256_le(const std::array<std::uint8_t, 32>& v) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (int i = 31; i >= 0; --i) {
    s.push_back(d[v[i] >> 4]);
    s.push_back(d[v[i] & 15]);
  }
  std::size_t nz = s.find_first_not_of('0');
  return json_string("0x" + (nz == std::string::npos ? std::string("0") : s.substr(nz)));
}

RpcError bad_params(const std::string& m) { return rpc_error(kInvalidParams, "Invalid params: " + m); }
RpcError not_found(const std::string& m, const std::string& data_json = {}) { return rpc_error(-32001, m, data_json); }
RpcError server_error(const std::string& m, const std::string& data_json = {}) {
  return rpc_error(kServerError, m, data_json);
}
RpcError node_error(const Error& e) { return rpc_error(kInternalError, e.to_string()); }

Result<std::string, RpcError> string_at(const Params& p, std::size_t i, const char* what) {
  if (i >= p.size() || !p[i].is_string()) return bad_params(std::string(what) + " (a string) at position " + std::to_string(i));
  return p[i].text();
}

Result<Address, RpcError> address_at(const Params& p, std::size_t i) {
  auto s = string_at(p, i, "an address");
  if (!s) return s.take_error();
  auto a = parse_address(*s);
  if (!a) return bad_params("not an address: " + s->substr(0, 64));
  return *a;
}

Result<Hash, RpcError> hash_at(const Params& p, std::size_t i) {
  auto s = string_at(p, i, "a transaction hash");
  if (!s) return s.take_error();
  auto h = parse_hash(*s);
  if (!h) return bad_params("a transaction hash is 0x and 64 hex digits");
  return *h;
}

std::optional<Bytes> from_hex(std::string_view s) {
  if (s.substr(0, 2) == "0x" || s.substr(0, 2) == "0X") s.remove_prefix(2);
  if (s.size() % 2) return std::nullopt;
  Bytes out(s.size() / 2);
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < out.size(); ++i) {
    int hi = nib(s[2 * i]), lo = nib(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return out;
}

std::string b64(const Bytes& b) { return base64_encode(std::string_view(reinterpret_cast<const char*>(b.data()), b.size())); }

// Studio's result bytes: the result code (0 return, 1 user error, 2 VM error) and the payload
// (the calldata of a return, the message's text otherwise).
Bytes result_bytes(int kind, const Value* data) {
  Bytes payload;
  if (kind == 0) {
    payload = calldata::encode(data ? *data : Value());
  } else if (data) {
    std::string t = data->is_string() ? data->as_string() : calldata::to_text(*data);
    payload.assign(t.begin(), t.end());
  }
  Bytes out;
  out.reserve(payload.size() + 1);
  out.push_back(static_cast<std::uint8_t>(kind == 0 ? 0 : kind == 1 ? 1 : 2));
  for (std::uint8_t b : payload) out.push_back(b);
  return out;
}

// The node number's address in Studio's node_config (the node has no validator keys).
std::string node_address(int node) {
  Address a;
  a.bytes[18] = static_cast<std::uint8_t>((node + 1) >> 8);
  a.bytes[19] = static_cast<std::uint8_t>(node + 1);
  return address_text(a);
}

void node_config(JsonWriter& w, int node) {
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

int status_code(const std::string& s) {
  static const char* kNames[] = {"UNINITIALIZED", "PENDING",      "PROPOSING", "COMMITTING", "REVEALING",
                                 "ACCEPTED",      "UNDETERMINED", "FINALIZED", "CANCELED"};
  for (int i = 0; i < 9; ++i) {
    if (s == kNames[i]) return i;
  }
  return 0;
}

}  // namespace

NodeOptions Service::node_options() const {
  NodeOptions o;
  o.genvm = opts_.genvm;
  o.validators = opts_.validators;
  o.run_timeout_ms = opts_.timeout_s * 1000;
  o.modules = opts_.modules;
  o.debug_mode = opts_.debug_mode;
  return o;
}

void Service::register_methods(Rpc& rpc) {
  auto fixed = [](std::string json) { return [json](const Params&) -> RpcResult { return json; }; };
  rpc.add("ping", fixed(json_string("OK")));
  rpc.add("eth_chainId", fixed(hex_u64(kChainId)));
  rpc.add("net_version", fixed(json_string(std::to_string(kChainId))));
  rpc.add("eth_gasPrice", fixed(json_string("0x0")));
  rpc.add("eth_maxPriorityFeePerGas", fixed(json_string("0x0")));
  rpc.add("eth_estimateGas", fixed(hex_u64(500000)));
  rpc.add("eth_syncing", fixed("false"));
  rpc.add("eth_blockNumber", [this](const Params&) -> RpcResult {
    std::lock_guard g(store_mu_);
    auto n = store_.last_seq();
    if (!n) return node_error(n.error());
    return hex_u64(static_cast<std::uint64_t>(*n));
  });
  rpc.add("eth_getBalance", [this](const Params& p) { return balance(p); });
  rpc.add("eth_getTransactionCount", [this](const Params& p) { return nonce(p); });
  rpc.add("sim_fundAccount", [this](const Params& p) { return fund(p); });
  rpc.add("eth_sendRawTransaction", [this](const Params& p) { return send_raw_transaction(p); });
  rpc.add("eth_getTransactionReceipt", [this](const Params& p) { return get_receipt(p); });
  rpc.add("eth_getTransactionByHash", [this](const Params& p) { return get_transaction(p); });
  rpc.add("gen_getTransactionStatus", [this](const Params& p) { return status(p); });
  rpc.add("gen_call", [this](const Params& p) { return gen_call(p); });
  rpc.add("gen_getContractSchema", [this](const Params& p) { return schema(p, false); });
  rpc.add("gen_getContractSchemaForCode", [this](const Params& p) { return schema(p, true); });
  rpc.add("gen_getContractCode", [this](const Params& p) { return contract_code(p); });
  rpc.add("eth_getCode", [this](const Params& p) { return get_code(p); });
  rpc.add("sim_getTransactionsForAddress", [this](const Params& p) { return for_address(p); });
}

RpcResult Service::balance(const Params& p) {
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  auto st = State::open(opts_.state_path, OpenMode::kExisting);
  if (!st) return node_error(st.error());
  auto b = (*st)->balance(*a);
  if (!b) return node_error(b.error());
  return hex_u256_le(*b);
}

RpcResult Service::nonce(const Params& p) {
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  std::lock_guard g(store_mu_);
  auto n = store_.next_nonce(*a);
  if (!n) return node_error(n.error());
  return hex_u64(*n);
}

RpcResult Service::fund(const Params& p) {
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  std::optional<std::uint64_t> amount;
  if (p.size() > 1 && p[1].kind() == JsonValue::Kind::kNumber) amount = p[1].as_u64();
  if (p.size() > 1 && p[1].is_string()) {
    const std::string& t = p[1].text();
    if (t.substr(0, 2) == "0x" && t.size() > 2 && t.size() <= 18) {
      auto b = from_hex(t.size() % 2 ? "0" + t.substr(2) : t.substr(2));
      if (b) {
        std::uint64_t v = 0;
        for (auto x : *b) v = v << 8 | x;
        amount = v;
      }
    } else {
      amount = parse_decimal_u64(t);
    }
  }
  if (!amount || *amount == 0 || *amount > std::uint64_t(INT64_MAX)) {
    return bad_params("an amount from 1 to 2^63-1 at position 1");
  }
  auto st = State::open(opts_.state_path);
  if (!st) return node_error(st.error());
  (*st)->set_busy_timeout(opts_.busy_ms);
  Node node(**st, node_options());
  auto out = node.fund(*a, *amount);
  if (!out) return node_error(out.error());
  // Studio answers a transaction hash; the faucet's receipt has none, so its id stands in.
  Hash h{};
  for (int i = 0; i < 8; ++i) h[31 - i] = static_cast<std::uint8_t>(out->record.id >> (8 * i));
  return json_string(hash_hex(h));
}

RpcResult Service::send_raw_transaction(const Params& p) {
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
      auto st = State::open(opts_.state_path, OpenMode::kExisting);
      if (!st) return node_error(st.error());
      auto c = (*st)->contract(q.to);
      if (!c) return node_error(c.error());
      if (!*c) return not_found("Contract not found", "{\"address\":" + json_string(address_text(q.to)) + "}");
    }
  } else if (tx->data.empty() && tx->to) {
    q.type = TxType::kSend;  // a value transfer
    q.to = *tx->to;
  } else {
    return server_error("Invalid transaction: only addTransaction calls to the consensus contract " +
                        std::string(kConsensusAddress) + " and plain value transfers are served");
  }
  std::int64_t seq = 0;
  {
    std::lock_guard g(store_mu_);
    auto r = store_.enqueue(q);
    if (!r) {
      const auto& e = r.error();
      if (e.code == "nonce_too_low" || e.code == "nonce_too_high" || e.code == "known_transaction") {
        return server_error(e.message);
      }
      return node_error(e);
    }
    seq = *r;
  }
  (void)seq;
  wake();
  return json_string(hash_hex(q.hash));
}

RpcResult Service::get_receipt(const Params& p) {
  auto h = hash_at(p, 0);
  if (!h) return h.take_error();
  std::optional<QueuedTx> tx;
  {
    std::lock_guard g(store_mu_);
    auto r = store_.get(*h);
    if (!r) return node_error(r.error());
    tx = std::move(*r);
  }
  if (!tx) return std::string("null");
  // The Ethereum side of the transaction: included at once (its block is its queue position),
  // with the NewTransaction event genlayer-js reads the GenLayer transaction id from (the
  // same hash).
  const std::string hh = hash_hex(tx->hash), block = hex_u64(static_cast<std::uint64_t>(tx->seq));
  auto pad = [](const Address& a) { return "0x000000000000000000000000" + address_text(a).substr(2); };
  JsonWriter w;
  w.begin_object().key("transactionHash").string(hh).key("transactionIndex").string("0x0");
  w.key("blockHash").string(hh).key("blockNumber").raw(block).key("from").string(address_text(tx->from));
  w.key("to").string(tx->type == TxType::kSend ? address_text(tx->to) : std::string(kConsensusAddress));
  w.key("cumulativeGasUsed").string("0x0").key("gasUsed").string("0x0").key("effectiveGasPrice").string("0x0");
  w.key("type").string("0x0").key("contractAddress").null().key("logs").begin_array();
  if (tx->type != TxType::kSend) {
    w.begin_object().key("address").string(kConsensusAddress).key("topics").begin_array();
    w.string(hash_hex(new_transaction_topic())).string(hh).string(pad(tx->to)).string(pad(tx->from));
    w.end_array().key("data").string("0x").key("blockNumber").raw(block).key("transactionHash").string(hh);
    w.key("transactionIndex").string("0x0").key("blockHash").string(hh).key("logIndex").string("0x0");
    w.key("removed").boolean(false).end_object();
  }
  w.end_array().key("logsBloom").string("0x" + std::string(512, '0')).key("status").string("0x1").end_object();
  return w.take();
}

std::string Service::live_status(const QueuedTx& tx) {
  if (tx.status != "PROPOSING") return tx.status;
  std::lock_guard g(live_mu_);
  auto it = live_.find(tx.hash);
  return it == live_.end() ? tx.status : it->second;
}

RpcResult Service::transaction_json(const QueuedTx& tx, bool with_consensus) {
  const std::string status = live_status(tx);
  std::optional<TxRecord> rec;
  if (tx.state_tx && with_consensus) {
    auto st = State::open(opts_.state_path, OpenMode::kExisting);
    if (!st) return node_error(st.error());
    auto r = (*st)->tx(tx.state_tx);
    if (!r) return node_error(r.error());
    rec = std::move(*r);
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
    int leader = 0;
    if (last) {
      if (const JsonValue* l = last->find("leader")) leader = static_cast<int>(l->as_u64().value_or(0));
    }
    auto receipt = [&](const std::string& mode, int node, const std::string& vote) {
      w.begin_object().key("vote").string(vote).key("execution_result").string(rec->result_kind == 0 ? "SUCCESS" : "ERROR");
      w.key("result").string(b64(tx.result)).key("calldata").string(b64(tx.calldata)).key("gas_used").number(0);
      w.key("mode").string(mode).key("contract_state").begin_object().end_object();
      node_config(w, node);
      w.key("eq_outputs").begin_object().end_object().key("pending_transactions").begin_array().end_array();
      w.key("genvm_result").begin_object().key("stdout").string("").key("stderr").string("").end_object().end_object();
    };
    w.begin_object().key("votes").begin_object();
    std::vector<std::pair<int, std::string>> vs;
    if (last) {
      if (const JsonValue* arr = last->find("votes"); arr && arr->kind() == JsonValue::Kind::kArray) {
        for (const auto& v : arr->items()) {
          const JsonValue* n = v.find("node");
          const JsonValue* name = v.find("vote");
          vs.emplace_back(n ? static_cast<int>(n->as_u64().value_or(0)) : 0, name ? name->text() : "");
        }
      }
    }
    for (const auto& [n, v] : vs) w.key(node_address(n)).string(studio_vote(v));
    w.end_object().key("leader_receipt").begin_array();
    receipt("leader", leader, "agree");
    w.end_array().key("validators").begin_array();
    for (const auto& [n, v] : vs) receipt("validator", n, studio_vote(v));
    w.end_array().key("rounds").raw(votes ? rec->votes_json : "[]").end_object();
  }
  w.key("num_of_rounds").string(std::to_string(rec ? rec->rounds : 0));
  w.end_object();
  return w.take();
}

RpcResult Service::get_transaction(const Params& p) {
  auto h = hash_at(p, 0);
  if (!h) return h.take_error();
  std::optional<QueuedTx> tx;
  {
    std::lock_guard g(store_mu_);
    auto r = store_.get(*h);
    if (!r) return node_error(r.error());
    tx = std::move(*r);
  }
  if (!tx) return not_found("Transaction " + hash_hex(*h) + " not found", "{\"hash\":" + json_string(hash_hex(*h)) + "}");
  return transaction_json(*tx, true);
}

RpcResult Service::status(const Params& p) {
  auto h = hash_at(p, 0);
  if (!h) return h.take_error();
  std::optional<QueuedTx> tx;
  {
    std::lock_guard g(store_mu_);
    auto r = store_.get(*h);
    if (!r) return node_error(r.error());
    tx = std::move(*r);
  }
  if (!tx) return not_found("Transaction " + hash_hex(*h) + " not found", "{\"hash\":" + json_string(hash_hex(*h)) + "}");
  const std::string s = live_status(*tx);
  JsonWriter w;
  w.begin_object().key("status").string(s).key("statusCode").number(status_code(s)).end_object();
  return w.take();
}

RpcResult Service::for_address(const Params& p) {
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  std::vector<QueuedTx> txs;
  {
    std::lock_guard g(store_mu_);
    auto r = store_.for_address(*a, kMaxListed);
    if (!r) return node_error(r.error());
    txs = std::move(*r);
  }
  std::string out = "[";
  for (std::size_t i = 0; i < txs.size(); ++i) {
    auto j = transaction_json(txs[i], false);
    if (!j) return j;
    out += (i ? "," : "") + *j;
  }
  return out + "]";
}

RpcResult Service::get_code(const Params& p) {
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  return json_string("0x");  // GenVM contracts are not EVM bytecode (as Studio answers)
}

RpcResult Service::contract_code(const Params& p) {
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  std::vector<QueuedTx> txs;
  {
    std::lock_guard g(store_mu_);
    auto r = store_.for_address(*a, kMaxListed);
    if (!r) return node_error(r.error());
    txs = std::move(*r);
  }
  for (const auto& t : txs) {
    if (t.type == TxType::kDeploy && t.to == *a && !t.code.empty()) return json_string(b64(t.code));
  }
  return not_found("Contract " + address_text(*a) + " not found (or not deployed through this server)",
                   "{\"contract_address\":" + json_string(address_text(*a)) + "}");
}

RpcResult Service::gen_call(const Params& p) {
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
  auto st = State::open(opts_.state_path, OpenMode::kExisting);
  if (!st) return node_error(st.error());
  auto c = (*st)->contract(*addr);
  if (!c) return node_error(c.error());
  if (!*c) return not_found("Contract " + address_text(*addr) + " not found",
                            "{\"contract_address\":" + json_string(address_text(*addr)) + "}");
  Node node(**st, node_options());
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

RpcResult Service::schema(const Params& p, bool for_code) {
  auto st = State::open(opts_.state_path, OpenMode::kExisting);
  if (!st) return node_error(st.error());
  Node node(**st, node_options());
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
    auto c = (*st)->contract(*a);
    if (!c) return node_error(c.error());
    if (!*c) return not_found("Contract " + address_text(*a) + " not found",
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

// ---- the worker ----

void Service::wake() {
  std::lock_guard g(wake_mu_);
  woken_ = true;
  wake_cv_.notify_all();
}

void Service::start() {
  stop_ = false;
  worker_ = std::thread([this] { worker_loop(); });
}

void Service::stop() {
  if (!worker_.joinable()) return;
  stop_ = true;
  request_interrupt(SIGTERM);  // cancels a run in progress; its transaction rolls back and resumes on restart
  wake();
  worker_.join();
}

void Service::worker_loop() {
  while (!stop_) {
    {
      std::lock_guard g(store_mu_);
      (void)store_.finalize_until(now_ms() - opts_.finality_ms);
    }
    std::optional<QueuedTx> next;
    {
      std::lock_guard g(store_mu_);
      auto r = store_.next_undecided();
      if (r) next = std::move(*r);
    }
    if (next) {
      auto s = process(std::move(*next));
      if (s) continue;
      if (stop_) break;
      std::fprintf(stderr, "genvm-node serve: %s (retrying)\n", s.error().to_string().c_str());
    }
    std::unique_lock lk(wake_mu_);
    wake_cv_.wait_for(lk, std::chrono::milliseconds(next ? 500 : 200), [this] { return woken_ || stop_; });
    woken_ = false;
  }
}

Status Service::process(QueuedTx tx) {
  auto set_live = [&](const std::string& s) {
    std::lock_guard g(live_mu_);
    live_[tx.hash] = s;
  };
  auto drop_live = [&] {
    std::lock_guard g(live_mu_);
    live_.erase(tx.hash);
  };
  auto st = State::open(opts_.state_path);
  if (!st) return st.take_error();
  (*st)->set_busy_timeout(opts_.busy_ms);
  State& state = **st;
  if (tx.state_tx == 0) {
    // A PROPOSING transaction without a receipt was claimed by a worker that stopped before
    // committing: nothing of it is in the state, so it runs (again) from the start.
    if (tx.status != "PROPOSING") {
      std::lock_guard g(store_mu_);
      if (auto s = store_.set_status(tx.hash, "PROPOSING"); !s) return s;
    }
    tx.status = "PROPOSING";
    set_live("PROPOSING");
    NodeOptions o = node_options();
    o.rounds = 1 + std::clamp(tx.max_rotations, 0, 9);
    o.progress = [&](const Progress& pr) {
      set_live(pr.validators_done == 0 ? "COMMITTING" : "REVEALING");
    };
    Node node(state, o);
    if (auto pending = node.serve_pending(); !pending) {
      drop_live();
      return pending.take_error();
    }
    const Hash h = tx.hash;
    state.set_commit_hook([h](sqlite3* db, std::int64_t id) { return link_receipt(db, h, id); });
    Result<TxOutcome> out = make_error("unreachable");
    if (tx.type == TxType::kDeploy) {
      auto entry = calldata::decode(tx.calldata);
      out = entry ? node.deploy(tx.from, tx.code, *entry, tx.value)
                  : Result<TxOutcome>(make_error("bad_calldata", "the calldata does not decode: " + entry.error().message));
    } else if (tx.type == TxType::kCall) {
      auto entry = calldata::decode(tx.calldata);
      if (!entry) {
        out = make_error("bad_calldata", "the calldata does not decode: " + entry.error().message);
      } else {
        out = node.call(tx.from, tx.to, *entry, tx.value);
      }
    } else {
      out = node.transfer(tx.from, tx.to, tx.value);
    }
    state.set_commit_hook(nullptr);
    drop_live();
    if (!out) {
      const Error& e = out.error();
      if (e.code == "state_locked" || e.code == "interrupted" || e.code == "state_sql") {
        std::lock_guard g(store_mu_);
        (void)store_.set_status(tx.hash, "PENDING");
        return e;  // not decided: retried
      }
      // Refused before anything ran (no receipt): decided with the reason.
      tx.status = "UNDETERMINED";
      tx.error = e.to_string();
      tx.decided_at = now_ms();
      std::lock_guard g(store_mu_);
      return store_.decide(tx);
    }
    tx.state_tx = out->record.id;
    if (tx.type == TxType::kDeploy && out->record.status == "accepted" && out->record.result_kind == 0) {
      tx.to = out->record.target;
    }
    const Round* acc = nullptr;
    for (const auto& r : out->rounds) {
      if (r.accepted) acc = &r;
    }
    if (acc) {
      const Value* d = acc->leader_run.report.find("data");
      tx.result = result_bytes(acc->leader_run.kind, d);
    } else if (tx.type == TxType::kSend) {
      tx.result = result_bytes(0, nullptr);
    }
    tx.status = out->record.status == "accepted" ? "ACCEPTED" : "UNDETERMINED";
  } else {
    // Committed by a worker that stopped before recording the decision: finish from the receipt.
    auto rec = state.tx(tx.state_tx);
    if (!rec) return rec.take_error();
    if (!*rec) return make_error("state_sql", "receipt " + std::to_string(tx.state_tx) + " is missing");
    if ((*rec)->kind == "deploy" && (*rec)->status == "accepted" && (*rec)->result_kind == 0) tx.to = (*rec)->target;
    if ((*rec)->status == "accepted") {
      auto v = (*rec)->result_kind == 0 ? calldata::parse_text((*rec)->result_text) : Result<Value>(Value((*rec)->result_text));
      tx.result = result_bytes((*rec)->result_kind, v ? &*v : nullptr);
    }
    tx.status = (*rec)->status == "accepted" ? "ACCEPTED" : "UNDETERMINED";
  }
  tx.decided_at = now_ms();
  std::lock_guard g(store_mu_);
  return store_.decide(tx);
}

}  // namespace genvm::node::serve
