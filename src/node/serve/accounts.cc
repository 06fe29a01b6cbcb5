// Accounts: eth_getBalance, eth_getTransactionCount and the faucet sim_fundAccount.
#include "common/json.h"
#include "node/serve/service_core.h"

namespace genvm::node::serve {

namespace {

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

RpcResult balance(ServiceCore& c, const Params& p) {
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  auto st = State::open(c.opts.state_path, OpenMode::kExisting);
  if (!st) return node_error(st.error());
  auto b = (*st)->balance(*a);
  if (!b) return node_error(b.error());
  return hex_u256_le(*b);
}

RpcResult nonce(ServiceCore& c, const Params& p) {
  auto a = address_at(p, 0);
  if (!a) return a.take_error();
  std::lock_guard g(c.store_mu);
  auto n = c.store.next_nonce(*a);
  if (!n) return node_error(n.error());
  return hex_u64(*n);
}

RpcResult fund(ServiceCore& c, const Params& p) {
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
  auto st = State::open(c.opts.state_path);
  if (!st) return node_error(st.error());
  (*st)->set_busy_timeout(c.opts.busy_ms);
  Node node(**st, c.node_options());
  auto out = node.fund(*a, *amount);
  if (!out) return node_error(out.error());
  // Studio answers a transaction hash; the faucet's receipt has none, so its id stands in.
  Hash h{};
  for (int i = 0; i < 8; ++i) h[31 - i] = static_cast<std::uint8_t>(out->record.id >> (8 * i));
  return json_string(hash_hex(h));
}

}  // namespace

void add_account_methods(Rpc& rpc, ServiceCore& c) {
  rpc.add("eth_getBalance", [&c](const Params& p) { return balance(c, p); });
  rpc.add("eth_getTransactionCount", [&c](const Params& p) { return nonce(c, p); });
  rpc.add("sim_fundAccount", [&c](const Params& p) { return fund(c, p); });
}

}  // namespace genvm::node::serve
