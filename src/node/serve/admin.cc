// The simulator's administration: sim_cancelTransaction, sim_createSnapshot,
// sim_restoreSnapshot, sim_deleteAllSnapshots, sim_clearDbTables.
#include "common/json.h"
#include "common/sha3.h"
#include "node/serve/eth_bridge.h"
#include "node/serve/service_core.h"
#include "node/serve/snapshots.h"

namespace genvm::node::serve {

namespace {

RpcError not_local() {
  return server_error("Operation not available: this node does not listen on a loopback address");
}

// What the sender signs to cancel: keccak256("cancel_transaction" ‖ the hash's 32 octets),
// with personal_sign (genlayer-js's cancelTransaction, Studio's check).
Hash cancel_message(const Hash& h) {
  Bytes m{'c', 'a', 'n', 'c', 'e', 'l', '_', 't', 'r', 'a', 'n', 's', 'a', 'c', 't', 'i', 'o', 'n'};
  m.insert(m.end(), h.begin(), h.end());
  return keccak256(m);
}

RpcResult cancel(ServiceCore& c, const Params& p) {
  auto hs = string_at(p, 0, "the transaction hash");
  if (!hs) return hs.take_error();
  auto h = hs->size() == 66 && hs->substr(0, 2) == "0x" ? parse_hash(*hs) : std::nullopt;
  if (!h) return rpc_error(kInvalidParams, "Invalid transaction hash format");
  auto r = c.get(*h);
  if (!r) return node_error(r.error());
  if (!*r) {
    return not_found("Transaction not found", "{\"transaction_hash\":" + json_string(hash_hex(*h)) + "}");
  }
  const QueuedTx& tx = **r;
  const bool signed_ = p.size() > 1 && p[1].kind() != JsonValue::Kind::kNull;
  if (signed_) {
    if (!p[1].is_string()) return bad_params("the signature (a hex string) at position 1");
    auto sig = from_hex(p[1].text());
    if (!sig) return server_error("Invalid signature: not hex");
    auto signer = recover_personal_signer(cancel_message(*h), *sig);
    if (!signer) return server_error("Invalid signature: " + signer.error().message);
    if (*signer != tx.from) {
      JsonWriter d;
      d.begin_object().key("signer").string(address_text(*signer)).key("sender").string(address_text(tx.from));
      d.end_object();
      return server_error("Only transaction sender can cancel", d.take());
    }
  } else if (!c.opts.local) {
    // Studio's hosted mode also takes an admin key; this node has none.
    return server_error("Cancel requires the sender's signature (this node has no admin key)");
  }
  Result<bool> done = false;
  {
    std::lock_guard g(c.store_mu);
    done = c.store.cancel(*h);
  }
  if (!done) return node_error(done.error());
  if (!*done) {
    auto now = c.get(*h);
    const std::string status = now && *now ? c.live_status(**now) : tx.status;
    JsonWriter d;
    d.begin_object().key("transaction_hash").string(hash_hex(*h)).key("status").string(status).end_object();
    return server_error("Transaction cannot be cancelled: it is " + status + "; only a PENDING transaction can be",
                        d.take());
  }
  c.changed(*h, "CANCELED");
  JsonWriter w;
  w.begin_object().key("transaction_hash").string(hash_hex(*h)).key("status").string("CANCELED").end_object();
  return w.take();
}

RpcError admin_error(const Error& e) {
  if (e.code == "snapshot_limit") return server_error(e.message);
  return node_error(e);
}

RpcResult create(ServiceCore& c) {
  if (!c.opts.local) return not_local();
  std::lock_guard run(c.run_mu);
  auto id = create_snapshot(c.opts.state_path, c.opts.busy_ms, c.opts.max_snapshots);
  if (!id) return admin_error(id.error());
  return std::to_string(*id);
}

RpcResult restore(ServiceCore& c, const Params& p) {
  if (!c.opts.local) return not_local();
  std::optional<std::uint64_t> id;
  if (!p.empty() && p[0].kind() == JsonValue::Kind::kNumber) id = p[0].as_u64();
  if (!id || *id > std::uint64_t(INT64_MAX)) return bad_params("a snapshot id (a number) at position 0");
  Result<bool> ok = false;
  {
    std::lock_guard run(c.run_mu);
    ok = restore_snapshot(c.opts.state_path, c.opts.busy_ms, static_cast<std::int64_t>(*id));
  }
  if (!ok) return admin_error(ok.error());
  if (*ok) c.events.publish("reset", "{}");  // every listed transaction may have changed or gone
  c.wake();  // the restored queue may hold PENDING transactions
  return std::string(*ok ? "true" : "false");
}

RpcResult delete_all(ServiceCore& c) {
  if (!c.opts.local) return not_local();
  std::lock_guard run(c.run_mu);
  auto n = delete_all_snapshots(c.opts.state_path, c.opts.busy_ms);
  if (!n) return admin_error(n.error());
  return "{\"deleted_count\":" + std::to_string(*n) + "}";
}

// Studio's table names: "transactions" (the transactions as served: the queue; the node's
// receipts stay, as its contracts and balances derive from them) and "current_state" (the
// contracts; in this node they cannot go without the receipts and balances that made them, so
// it empties the whole state).
RpcResult clear(ServiceCore& c, const Params& p) {
  if (!c.opts.local) return not_local();
  if (p.empty() || p[0].kind() != JsonValue::Kind::kArray) return bad_params("a list of table names at position 0");
  bool queue = false, everything = false;
  for (const auto& t : p[0].items()) {
    if (t.is_string() && t.text() == "transactions") {
      queue = true;
    } else if (t.is_string() && t.text() == "current_state") {
      everything = true;
    } else {
      return bad_params("the tables this node clears are \"transactions\" and \"current_state\"");
    }
  }
  if (!queue && !everything) return std::string("null");
  std::lock_guard run(c.run_mu);
  if (auto s = clear_state(c.opts.state_path, c.opts.busy_ms, !everything); !s) return node_error(s.error());
  c.events.publish("reset", "{}");
  return std::string("null");
}

}  // namespace

void add_admin_methods(Rpc& rpc, ServiceCore& c) {
  rpc.add("sim_cancelTransaction", [&c](const Params& p) { return cancel(c, p); });
  rpc.add("sim_createSnapshot", [&c](const Params&) { return create(c); });
  rpc.add("sim_restoreSnapshot", [&c](const Params& p) { return restore(c, p); });
  rpc.add("sim_deleteAllSnapshots", [&c](const Params&) { return delete_all(c); });
  rpc.add("sim_clearDbTables", [&c](const Params& p) { return clear(c, p); });
}

}  // namespace genvm::node::serve
