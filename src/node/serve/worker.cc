// The worker: one thread runs queued transactions in queue order through the node's consensus
// rounds, records each decision, and finalizes decided transactions after the finality window.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "node/serve/service_core.h"

namespace genvm::node::serve {

using calldata::Value;

namespace {

Status decide(ServiceCore& c, const QueuedTx& tx) {
  Status s;
  {
    std::lock_guard g(c.store_mu);
    s = c.store.decide(tx);
  }
  if (s) c.changed(tx.hash, tx.status);
  return s;
}

// Runs one queued transaction to its decision (or resumes one a stopped worker claimed).
Status process(ServiceCore& c, QueuedTx tx) {
  auto set_live = [&](const std::string& s) {
    {
      std::lock_guard g(c.live_mu);
      auto& now = c.live[tx.hash];
      if (now == s) return;  // the progress callback repeats a step once per validator
      now = s;
    }
    c.changed(tx.hash, s);
  };
  auto drop_live = [&] {
    std::lock_guard g(c.live_mu);
    c.live.erase(tx.hash);
  };
  auto st = State::open(c.opts.state_path);
  if (!st) return st.take_error();
  (*st)->set_busy_timeout(c.opts.busy_ms);
  State& state = **st;
  if (tx.state_tx == 0) {
    // A PROPOSING transaction without a receipt was claimed by a worker that stopped before
    // committing: nothing of it is in the state, so it runs (again) from the start.
    if (tx.status != "PROPOSING") {
      // Only a PENDING transaction is claimed: one canceled since it was read is skipped.
      std::lock_guard g(c.store_mu);
      auto claimed = c.store.claim(tx.hash);
      if (!claimed) return claimed.take_error();
      if (!*claimed) return {};
    }
    tx.status = "PROPOSING";
    set_live("PROPOSING");
    NodeOptions o = c.node_options();
    o.rounds = 1 + std::clamp(tx.max_rotations, 0, 9);
    auto plan = round_plan(c, tx);
    if (!plan) {
      drop_live();
      return plan.take_error();
    }
    // A leader and nodes-1 validators (one stored validator leads and validates itself).
    o.validators = std::max(plan->count - 1, 1);
    tx.nodes = plan->nodes;
    o.host_data = std::move(plan->host_data);
    o.datetime = std::move(plan->datetime);
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
        std::lock_guard g(c.store_mu);
        (void)c.store.set_status(tx.hash, "PENDING");
        c.changed(tx.hash, "PENDING");
        return e;  // not decided: retried
      }
      // Refused before anything ran (no receipt): decided with the reason.
      tx.status = "UNDETERMINED";
      tx.error = e.to_string();
      tx.decided_at = now_ms();
      return decide(c, tx);
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
  return decide(c, tx);
}

}  // namespace

void worker_loop(ServiceCore& c) {
  while (!c.stop) {
    std::optional<QueuedTx> next;
    Result<std::vector<Hash>> finalized = std::vector<Hash>{};
    Status s;
    {
      // One transaction at a time, never while a snapshot is restored or the state cleared.
      std::lock_guard run(c.run_mu);
      {
        std::lock_guard g(c.store_mu);
        finalized = c.store.finalize_until(now_ms() - c.opts.finality_ms);
        auto r = c.store.next_undecided();
        if (r) next = std::move(*r);
      }
      if (finalized) {
        for (const Hash& h : *finalized) c.changed(h, "FINALIZED");
      }
      if (next) s = process(c, std::move(*next));
    }
    if (next) {
      if (s) continue;
      if (c.stop) break;
      std::fprintf(stderr, "genvm-node serve: %s (retrying)\n", s.error().to_string().c_str());
    }
    std::unique_lock lk(c.wake_mu);
    c.wake_cv.wait_for(lk, std::chrono::milliseconds(next ? 500 : 200), [&c] { return c.woken || c.stop; });
    c.woken = false;
  }
}

}  // namespace genvm::node::serve
