// Blocks and logs: eth_blockNumber, eth_getBlockByNumber, eth_getBlockByHash, eth_getLogs.
// Each queued transaction is its own block: block N holds the transaction queued N-th, and its
// hash is that transaction's hash (what the receipt's blockHash says); block 0 is an empty
// genesis with the zero hash. A block past the newest is null, as on Ethereum.
#include <algorithm>
#include <cstring>

#include "common/json.h"
#include "node/serve/eth_bridge.h"
#include "node/serve/service_core.h"

namespace genvm::node::serve {

namespace {

constexpr std::int64_t kMaxLogRange = 1000;  // blocks one eth_getLogs may span
constexpr int kLimitExceeded = -32005;       // EIP-1474's "limit exceeded"
const std::string kZeroHash = "0x" + std::string(64, '0');

Result<std::int64_t, RpcError> last_block(ServiceCore& c) {
  std::lock_guard g(c.store_mu);
  auto n = c.store.last_seq();
  if (!n) return node_error(n.error());
  return *n;
}

// A block parameter: a tag or a hex quantity ("0x" and at most 16 hex digits).
Result<std::int64_t, RpcError> block_number(const JsonValue& v, std::int64_t latest, const char* what) {
  if (!v.is_string()) return bad_params(std::string(what) + " is a block tag or a hex number");
  const std::string& t = v.text();
  if (t == "latest" || t == "pending" || t == "safe" || t == "finalized") return latest;
  if (t == "earliest") return std::int64_t{0};
  if (t.size() < 3 || t.size() > 18 || (t[0] != '0') || (t[1] != 'x' && t[1] != 'X')) {
    return bad_params(std::string("Invalid block number format: ") + t.substr(0, 80));
  }
  std::uint64_t n = 0;
  for (std::size_t i = 2; i < t.size(); ++i) {
    char ch = t[i];
    int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
    if (d < 0) return bad_params(std::string("Invalid block number format: ") + t.substr(0, 80));
    n = n << 4 | static_cast<std::uint64_t>(d);
  }
  if (n > std::uint64_t(INT64_MAX)) return bad_params("a block number is at most 2^63-1");
  return static_cast<std::int64_t>(n);
}

std::string block_hash(const std::optional<QueuedTx>& tx) { return tx ? hash_hex(tx->hash) : kZeroHash; }

// The transaction as Ethereum's block body lists it. The node keeps the decoded transaction, not
// the signed bytes: input, gas, v, r and s are not kept and read as empty or zero.
void write_eth_tx(JsonWriter& w, const QueuedTx& tx) {
  const std::string hh = hash_hex(tx.hash);
  w.begin_object().key("hash").string(hh).key("blockHash").string(hh);
  w.key("blockNumber").raw(hex_u64(static_cast<std::uint64_t>(tx.seq))).key("transactionIndex").string("0x0");
  w.key("from").string(address_text(tx.from));
  w.key("to").string(tx.type == TxType::kSend ? address_text(tx.to) : std::string(kConsensusAddress));
  w.key("nonce").raw(hex_u64(tx.nonce)).key("value").raw(hex_u64(tx.value));
  w.key("gas").string("0x0").key("gasPrice").string("0x0").key("input").string("0x").key("type").string("0x0");
  w.key("chainId").raw(hex_u64(kChainId)).key("v").string("0x0").key("r").string("0x0").key("s").string("0x0");
  w.end_object();
}

std::string block_json(std::int64_t number, const std::optional<QueuedTx>& tx, const std::string& parent,
                       bool full) {
  JsonWriter w;
  w.begin_object().key("number").raw(hex_u64(static_cast<std::uint64_t>(number)));
  w.key("hash").string(block_hash(tx)).key("parentHash").string(parent);
  w.key("sha3Uncles").string("0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347");
  w.key("nonce").string("0x0000000000000000").key("logsBloom").string("0x" + std::string(512, '0'));
  w.key("transactionsRoot").string(kZeroHash).key("stateRoot").string(kZeroHash).key("receiptsRoot").string(kZeroHash);
  w.key("miner").string("0x" + std::string(40, '0')).key("difficulty").string("0x0").key("totalDifficulty").string("0x0");
  w.key("gasUsed").string("0x0").key("gasLimit").string("0x1c9c380").key("baseFeePerGas").string("0x0");
  w.key("size").string("0x0").key("extraData").string("0x").key("mixHash").string(kZeroHash);
  w.key("timestamp").raw(hex_u64(tx ? static_cast<std::uint64_t>(tx->created_at) : 0));
  w.key("uncles").begin_array().end_array().key("transactions").begin_array();
  if (tx) {
    if (full) {
      write_eth_tx(w, *tx);
    } else {
      w.string(hash_hex(tx->hash));
    }
  }
  w.end_array().end_object();
  return w.take();
}

Result<bool, RpcError> full_at(const Params& p) {
  if (p.size() < 2 || p[1].kind() == JsonValue::Kind::kNull) return false;
  if (p[1].kind() != JsonValue::Kind::kBool) return bad_params("full transactions (a boolean) at position 1");
  return p[1].as_bool();
}

// Block `number` (known to be at most the newest): its transaction and its parent's hash.
RpcResult block_at(ServiceCore& c, std::int64_t number, bool full) {
  std::optional<QueuedTx> tx, parent;
  {
    std::lock_guard g(c.store_mu);
    if (number > 0) {
      auto r = c.store.by_seq(number);
      if (!r) return node_error(r.error());
      tx = std::move(*r);
    }
    if (number > 1) {
      auto r = c.store.by_seq(number - 1);
      if (!r) return node_error(r.error());
      parent = std::move(*r);
    }
  }
  return block_json(number, tx, block_hash(parent), full);
}

RpcResult get_block_by_number(ServiceCore& c, const Params& p) {
  if (p.empty()) return bad_params("a block number or tag at position 0");
  auto latest = last_block(c);
  if (!latest) return latest.take_error();
  auto n = block_number(p[0], *latest, "the block");
  if (!n) return n.take_error();
  auto full = full_at(p);
  if (!full) return full.take_error();
  if (*n > *latest) return std::string("null");
  return block_at(c, *n, *full);
}

RpcResult get_block_by_hash(ServiceCore& c, const Params& p) {
  auto s = string_at(p, 0, "a block hash");
  if (!s) return s.take_error();
  auto h = parse_hash(*s);
  if (!h) return bad_params("a block hash is 0x and 64 hex digits");
  auto full = full_at(p);
  if (!full) return full.take_error();
  if (*h == Hash{}) return block_at(c, 0, *full);
  auto r = c.get(*h);
  if (!r) return node_error(r.error());
  if (!*r) return std::string("null");
  return block_at(c, (*r)->seq, *full);
}

// eth_getLogs' topic filter: per position, any of a set (empty: any).
using TopicFilter = std::vector<std::vector<Hash>>;

Result<TopicFilter, RpcError> topics_filter(const JsonValue* v) {
  TopicFilter f;
  if (!v || v->kind() == JsonValue::Kind::kNull) return f;
  if (v->kind() != JsonValue::Kind::kArray) return bad_params("'topics' is an array");
  if (v->items().size() > 4) return bad_params("'topics' has at most 4 positions");
  auto one = [](const JsonValue& t) -> std::optional<Hash> {
    if (!t.is_string()) return std::nullopt;
    return parse_hash(t.text());
  };
  for (const auto& pos : v->items()) {
    std::vector<Hash> any;
    if (pos.kind() == JsonValue::Kind::kArray) {
      for (const auto& t : pos.items()) {
        auto h = one(t);
        if (!h) return bad_params("a topic is 0x and 64 hex digits");
        any.push_back(*h);
      }
    } else if (pos.kind() != JsonValue::Kind::kNull) {
      auto h = one(pos);
      if (!h) return bad_params("a topic is 0x and 64 hex digits");
      any.push_back(*h);
    }
    f.push_back(std::move(any));
  }
  return f;
}

Hash padded_hash(const Address& a) {
  Hash h{};
  std::memcpy(h.data() + 12, a.bytes.data(), 20);
  return h;
}

bool matches(const QueuedTx& tx, const TopicFilter& f) {
  const Hash topics[4] = {new_transaction_topic(), tx.hash, padded_hash(tx.to), padded_hash(tx.from)};
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (f[i].empty()) continue;
    bool hit = false;
    for (const auto& h : f[i]) hit = hit || h == topics[i];
    if (!hit) return false;
  }
  return true;
}

RpcResult get_logs(ServiceCore& c, const Params& p) {
  if (p.empty() || !p[0].is_object()) return bad_params("eth_getLogs takes one filter object");
  const JsonValue& f = p[0];
  // Which addresses: the consensus contract is the only one that logs.
  bool address_ok = true;
  if (const JsonValue* a = f.find("address"); a && a->kind() != JsonValue::Kind::kNull) {
    std::vector<JsonValue> list = a->kind() == JsonValue::Kind::kArray ? a->items() : std::vector<JsonValue>{*a};
    const Address consensus = *parse_address(kConsensusAddress);
    bool any = list.empty();
    for (const auto& item : list) {
      auto addr = item.is_string() ? parse_address(item.text()) : Result<Address>(make_error("bad_address", ""));
      if (!addr) return bad_params("'address' is an address or an array of addresses");
      any = any || *addr == consensus;
    }
    address_ok = any;
  }
  auto topics = topics_filter(f.find("topics"));
  if (!topics) return topics.take_error();
  auto latest = last_block(c);
  if (!latest) return latest.take_error();
  std::int64_t from = *latest, to = *latest;
  const JsonValue* block_hash_v = f.find("blockHash");
  const JsonValue* from_v = f.find("fromBlock");
  const JsonValue* to_v = f.find("toBlock");
  if (block_hash_v && block_hash_v->kind() != JsonValue::Kind::kNull) {
    if ((from_v && from_v->kind() != JsonValue::Kind::kNull) || (to_v && to_v->kind() != JsonValue::Kind::kNull)) {
      return bad_params("'blockHash' excludes 'fromBlock' and 'toBlock'");
    }
    auto h = block_hash_v->is_string() ? parse_hash(block_hash_v->text()) : std::nullopt;
    if (!h) return bad_params("'blockHash' is 0x and 64 hex digits");
    if (*h == Hash{}) return std::string("[]");  // genesis: no logs
    auto r = c.get(*h);
    if (!r) return node_error(r.error());
    if (!*r) return server_error("unknown block " + hash_hex(*h));
    from = to = (*r)->seq;
  } else {
    if (from_v && from_v->kind() != JsonValue::Kind::kNull) {
      auto n = block_number(*from_v, *latest, "'fromBlock'");
      if (!n) return n.take_error();
      from = *n;
    }
    if (to_v && to_v->kind() != JsonValue::Kind::kNull) {
      auto n = block_number(*to_v, *latest, "'toBlock'");
      if (!n) return n.take_error();
      to = *n;
    }
    if (from > to) return bad_params("invalid block range: fromBlock " + std::to_string(from) + " is after toBlock " + std::to_string(to));
    if (to - from + 1 > kMaxLogRange) {
      return rpc_error(kLimitExceeded, "eth_getLogs: blocks " + std::to_string(from) + " to " + std::to_string(to) +
                                           " are " + std::to_string(to - from + 1) + " blocks; one query spans at most " +
                                           std::to_string(kMaxLogRange));
    }
  }
  if (!address_ok || from > *latest) return std::string("[]");
  std::vector<QueuedTx> txs;
  {
    std::lock_guard g(c.store_mu);
    auto r = c.store.range(from, std::min(to, *latest), kMaxLogRange);
    if (!r) return node_error(r.error());
    txs = std::move(*r);
  }
  JsonWriter w;
  w.begin_array();
  for (const auto& tx : txs) {
    if (has_log(tx) && matches(tx, *topics)) write_log(w, tx);
  }
  w.end_array();
  return w.take();
}

}  // namespace

void add_chain_methods(Rpc& rpc, ServiceCore& c) {
  rpc.add("eth_blockNumber", [&c](const Params&) -> RpcResult {
    auto n = last_block(c);
    if (!n) return n.take_error();
    return hex_u64(static_cast<std::uint64_t>(*n));
  });
  rpc.add("eth_getBlockByNumber", [&c](const Params& p) { return get_block_by_number(c, p); });
  rpc.add("eth_getBlockByHash", [&c](const Params& p) { return get_block_by_hash(c, p); });
  rpc.add("eth_getLogs", [&c](const Params& p) { return get_logs(c, p); });
}

}  // namespace genvm::node::serve
