// The helpers the method groups share (service_core.h).
#include <chrono>
#include <cstdio>

#include "common/json.h"
#include "node/serve/service_core.h"

namespace genvm::node::serve {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string hex_u64(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return json_string(buf);
}

RpcError bad_params(const std::string& m) { return rpc_error(kInvalidParams, "Invalid params: " + m); }
RpcError not_found(const std::string& m, const std::string& data_json) { return rpc_error(-32001, m, data_json); }
RpcError server_error(const std::string& m, const std::string& data_json) {
  return rpc_error(kServerError, m, data_json);
}
RpcError node_error(const Error& e) { return rpc_error(kInternalError, e.to_string()); }

std::string node_address(int node) {
  Address a;
  a.bytes[18] = static_cast<std::uint8_t>((node + 1) >> 8);
  a.bytes[19] = static_cast<std::uint8_t>(node + 1);
  return address_text(a);
}

RpcError tx_not_found(const Hash& h) {
  return not_found("Transaction " + hash_hex(h) + " not found", "{\"hash\":" + json_string(hash_hex(h)) + "}");
}

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

Bytes result_bytes(int kind, const calldata::Value* data) {
  Bytes payload;
  if (kind == 0) {
    payload = calldata::encode(data ? *data : calldata::Value());
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

int status_code(const std::string& s) {
  static const char* kNames[] = {"UNINITIALIZED", "PENDING",      "PROPOSING", "COMMITTING", "REVEALING",
                                 "ACCEPTED",      "UNDETERMINED", "FINALIZED", "CANCELED"};
  for (int i = 0; i < 9; ++i) {
    if (s == kNames[i]) return i;
  }
  return 0;
}

NodeOptions ServiceCore::node_options() const {
  NodeOptions o;
  o.genvm = opts.genvm;
  o.validators = opts.validators;
  o.run_timeout_ms = opts.timeout_s * 1000;
  o.modules = opts.modules;
  o.debug_mode = opts.debug_mode;
  return o;
}

std::string ServiceCore::live_status(const QueuedTx& tx) {
  if (tx.status != "PROPOSING") return tx.status;
  std::lock_guard g(live_mu);
  auto it = live.find(tx.hash);
  return it == live.end() ? tx.status : it->second;
}

void ServiceCore::changed(const Hash& h, const std::string& status) {
  JsonWriter w;
  w.begin_object().key("hash").string(hash_hex(h)).key("status").string(status);
  w.key("statusCode").number(status_code(status)).end_object();
  events.publish("status", w.take());
}

void ServiceCore::wake() {
  std::lock_guard g(wake_mu);
  woken = true;
  wake_cv.notify_all();
}

Result<std::optional<QueuedTx>> ServiceCore::get(const Hash& h) {
  std::lock_guard g(store_mu);
  return store.get(h);
}

Result<std::vector<QueuedTx>> ServiceCore::for_address(const Address& a, std::int64_t limit) {
  std::lock_guard g(store_mu);
  return store.for_address(a, limit);
}

}  // namespace genvm::node::serve
