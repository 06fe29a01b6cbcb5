#include "node/node.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>

#include "common/host/execution_data.h"
#include "common/sha3.h"
#include "common/json.h"

namespace genvm::node {

using calldata::Value;

constexpr int kInternalErrorKind = 3;  // RunReport::kind of an InternalError

std::string kind_name(int kind) {
  switch (kind) {
    case 0: return "Return";
    case 1: return "UserError";
    case 2: return "VMError";
    case 3: return "InternalError";
    default: return "none";
  }
}

Value make_entry(const std::string& method, const Value::Array& args) {
  Value::Map m;
  if (!method.empty()) m[""] = method;
  if (!args.empty()) m["args"] = Value(args);
  return Value(std::move(m));
}

RunDebug debug_record(const RunReport& run, int round, int node, const std::string& role, DebugMode mode,
                      std::size_t* budget) {
  RunDebug d;
  d.round = round;
  d.node = node;
  d.role = role;
  d.debug_mode = std::string(to_string(mode));
  d.exit_code = run.exit_code;
  d.stdout_bytes = run.stdout_bytes;
  d.stderr_bytes = run.stderr_bytes;
  d.log_entries = run.log_entries;
  d.kind = run.kind;
  d.timed_out = run.timed_out;
  d.run_us = run.run_us;
  Bytes payload;
  if (const Value* data = run.report.is_map() ? run.report.find("data") : nullptr) {
    if (run.kind == 0) {
      payload = calldata::encode(*data);
    } else {
      const std::string t = data->is_string() ? data->as_string() : calldata::to_text(*data);
      payload.assign(t.begin(), t.end());
    }
  }
  d.result_bytes = payload.size();
  if (payload.size() > kDebugKeepResult) payload.clear();
  std::vector<Bytes> eq;
  std::size_t eq_bytes = 0;
  if (const Value* nd = run.report.is_map() ? run.report.find("nondet_results") : nullptr; nd && nd->is_array()) {
    for (const Value& b : nd->as_array()) {
      if (!b.is_bytes()) continue;
      eq_bytes += b.as_bytes().size();
      eq.push_back(b.as_bytes());
    }
  }
  if (eq_bytes > kDebugKeepResult) eq.clear(), eq_bytes = 0;
  auto keep_tail = [](const std::string& s) {
    return s.size() > kDebugKeepStream ? s.substr(s.size() - kDebugKeepStream) : s;
  };
  std::string out = keep_tail(run.stdout_text), err = keep_tail(run.stderr_text);
  std::vector<std::string> log;
  std::size_t log_bytes = 0;
  for (auto it = run.log.rbegin(); it != run.log.rend() && log_bytes + it->size() <= kDebugKeepLog; ++it) {
    log_bytes += it->size();
    log.push_back(*it);
  }
  std::reverse(log.begin(), log.end());
  const std::size_t size = out.size() + err.size() + log_bytes + payload.size() + eq_bytes;
  if (size > *budget) {
    d.omitted = true;  // the sizes above still say what the run produced
    return d;
  }
  *budget -= size;
  d.result = std::move(payload);
  d.eq_outputs = std::move(eq);
  d.stdout_text = std::move(out);
  d.stderr_text = std::move(err);
  d.log = std::move(log);
  return d;
}

bool majority_agrees(const std::vector<Vote>& votes) {
  std::size_t agree = 0;
  for (const auto& v : votes) agree += v.vote == "agree";
  return !votes.empty() && 2 * agree > votes.size();
}

std::string votes_json(const std::vector<Round>& rounds) {
  JsonWriter w;
  w.begin_array();
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    const Round& rd = rounds[r];
    w.begin_object().key("round").unsigned_number(r + 1).key("leader").number(rd.leader);
    w.key("leader_outcome").string(rd.leader_outcome).key("leader_kind").string(kind_name(rd.leader_run.kind));
    w.key("leader_hash").string(hex(rd.leader_run.execution_hash)).key("accepted").boolean(rd.accepted);
    w.key("votes").begin_array();
    for (const Vote& v : rd.votes) {
      w.begin_object().key("node").number(v.node).key("vote").string(v.vote).key("kind").string(kind_name(v.kind));
      w.key("execution_hash").string(hex(v.execution_hash)).key("nondet_disagreement");
      if (v.nondet_disagreement) {
        w.unsigned_number(*v.nondet_disagreement);
      } else {
        w.null();
      }
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();
  return w.take();
}

std::string Node::genvm_for(int node) const {
  if (opts_.genvm_for_node) {
    std::string p = opts_.genvm_for_node(node);
    if (!p.empty()) return p;
  }
  return opts_.genvm;
}

Value Node::execution_data(const TxRecord& rec, const std::optional<Bytes>& code, const Value& entry,
                           const std::optional<Value>& leader_nondet, int node) const {
  host::ExecutionData d;
  d.calldata = calldata::encode(entry);
  d.message.contract_address = rec.target;
  d.message.sender_address = rec.sender;
  d.message.origin_address = rec.sender;
  d.message.signer_address = rec.sender;
  d.message.chain_id = BigInt(61999);
  d.message.value = BigInt(rec.value);
  d.message.is_init = code.has_value();
  d.message.datetime = opts_.datetime.empty() ? std::string(host::kDefaultDatetime) : opts_.datetime;
  if (!opts_.host_data.empty()) d.host_data = opts_.host_data[static_cast<std::size_t>(node) % opts_.host_data.size()];
  d.code = code;
  // The fee data the executor's default rules read, with buckets no transaction here exhausts.
  host::HostFees fees = host::local_host_fees(BigInt(std::numeric_limits<std::uint64_t>::max()));
  d.bucket_totals = std::move(fees.bucket_totals);
  d.gas_data = std::move(fees.gas_data);
  d.message_fee_allocation = std::move(fees.message_fee_allocation);
  if (leader_nondet) {
    std::vector<Bytes> nd;
    if (const auto* arr = leader_nondet->if_array()) {
      for (const auto& b : *arr) {
        if (b.is_bytes()) nd.push_back(b.as_bytes());
      }
    }
    d.leader_nondet_results = std::move(nd);
  }
  return host::execution_data_to_value(d);
}

Result<TxOutcome> Node::write_tx(TxRecord rec, const std::optional<Bytes>& code, const Value& entry, Effects fx) {
  // Held from the leader's first read to the commit (see State::begin); released on every
  // early return.
  if (!state_.in_transaction()) {
    if (auto s = state_.begin(); !s) return s.take_error();
  }
  struct Abort {
    State& st;
    ~Abort() { st.abort(); }  // no-op once commit() has closed the transaction
  } abort_guard{state_};
  if (rec.kind == "call") {
    // The code about to run must be the code the contract records: a blob changed in the file
    // behind the node's back refuses this write and, marked in the file, every later one until
    // the state is repaired (State::record_verdict).
    if (auto s = state_.verify_contract_code(rec.target); !s) {
      if (s.error().code == "state_inconsistent") {
        state_.abort();
        (void)state_.record_verdict(true);  // best effort: the refusal stands either way
        return make_error("state_inconsistent", "writes are refused while the state is inconsistent: " + s.error().message +
                                                    " (genvm-node check lists every problem; once it finds none, writes resume)");
      }
      return s.take_error();
    }
  }
  if (rec.value > 0) {
    // Checked under the write lock, so it still holds at the commit that moves the value.
    auto bal = state_.balance(rec.sender);
    if (!bal) return bal.take_error();
    if (u256_less(*bal, rec.value)) {
      return make_error("insufficient_balance",
                        address_text(rec.sender) + " holds less than the value " + std::to_string(rec.value));
    }
  }
  TxOutcome out;
  const Round* accepted = nullptr;
  std::size_t debug_budget = kDebugKeepPerTx;
  for (int r = 0; r < std::max(opts_.rounds, 1) && !accepted; ++r) {
    auto round = run_round(r, rec, code, entry, &debug_budget);
    if (!round) return round.take_error();
    for (auto& d : round->debug) rec.debug.push_back(d);
    out.rounds.push_back(std::move(*round));
    if (out.rounds.back().accepted) accepted = &out.rounds.back();
  }
  // A signal that came during the last run's bookkeeping still rolls the transaction back.
  if (int sig = interrupt_signal()) return interrupted_error(sig);
  rec.rounds = static_cast<int>(out.rounds.size());
  rec.votes_json = votes_json(out.rounds);
  if (accepted) {
    const Value& rep = accepted->leader_run.report;
    rec.status = "accepted";
    rec.result_kind = accepted->leader_run.kind;
    const Value* data = rep.find("data");
    rec.result_text = data ? result_text(*data, opts_.result_text) : "null";
    rec.execution_hash = accepted->leader_run.execution_hash;
    const Value* changes = rep.find("storage_changes");
    fx.storage_changes = changes ? *changes : Value();
    if (const Value* em = rep.find("emissions"); em && em->is_array()) fx.emissions = em->as_array();
  } else {
    rec.status = "undetermined";
    rec.result_kind = -1;
    rec.result_text = "";
    fx.storage_changes = Value();
    fx.emissions.clear();
    fx.create_contract = false;
  }
  auto id = state_.commit(rec, fx);
  if (!id) return id.take_error();
  rec.id = *id;
  out.record = std::move(rec);
  return out;
}

Result<Round> Node::run_round(int r, const TxRecord& rec, const std::optional<Bytes>& code, const Value& entry,
                              std::size_t* budget) {
  const int n = std::max(opts_.validators, 1);
  const int total_nodes = n + 1;
  Round round;
  round.leader = r % total_nodes;
  auto lead = runner_.run(genvm_for(round.leader), execution_data(rec, code, entry, std::nullopt, round.leader), "wscn", state_,
                          opts_.run_timeout_ms, opts_.debug_mode);
  if (!lead) return lead.take_error();
  round.leader_run = std::move(*lead);
  const bool record = opts_.debug_mode >= DebugMode::kSafe;
  if (record) round.debug.push_back(debug_record(round.leader_run, r + 1, round.leader, "leader", opts_.debug_mode, budget));
  // An InternalError is the leader's host failing (issue 19: an mmap refused under an address-
  // space limit), not a verdict on the contract: never validated, never committed; the next
  // node leads, as after a crash.
  const bool host_failed = round.leader_run.kind == kInternalErrorKind;
  const bool delivered = round.leader_run.report.is_map() && !host_failed;
  round.leader_outcome = delivered        ? "result"
                         : host_failed    ? "internal_error"
                         : round.leader_run.timed_out ? "timeout"
                                                      : "error";
  Progress p{r + 1, round.leader, round.leader_outcome, 0, delivered ? n : 0};
  if (opts_.progress) opts_.progress(p);
  if (!delivered) return round;  // nothing to validate: the next node leads
  const Value* nd = round.leader_run.report.find("nondet_results");
  const Value leader_nd = nd ? *nd : Value(Value::Array{});
  for (int i = 0; i < n; ++i) {
    Vote v;
    v.node = (round.leader + 1 + i) % total_nodes;
    // Each validator's own host_data (its LLM provider and mocks reach its modules that way).
    Value vdata = execution_data(rec, code, entry, leader_nd, v.node);
    auto run = runner_.run(genvm_for(v.node), vdata, "wscn", state_, opts_.run_timeout_ms, opts_.debug_mode);
    if (!run) return run.take_error();
    if (record) round.debug.push_back(debug_record(*run, r + 1, v.node, "validator", opts_.debug_mode, budget));
    v.kind = run->kind;
    v.execution_hash = run->execution_hash;
    const Value* disagreed = run->report.is_map() ? run->report.find("nondet_disagreement") : nullptr;
    if (disagreed && disagreed->is_int()) {
      auto call_no = disagreed->as_int().to_uint64();
      v.nondet_disagreement = static_cast<std::uint32_t>(call_no.value_or(0));
    }
    if (run->timed_out) {
      v.vote = "timeout";
    } else if (!run->report.is_map() || run->kind == kInternalErrorKind) {
      v.vote = "error";  // a validator whose host failed has no opinion, whatever its hash
    } else if (v.nondet_disagreement) {
      v.vote = "disagree";  // its own block rejected the leader's answer, whatever the hash says
    } else {
      v.vote = run->execution_hash == round.leader_run.execution_hash ? "agree" : "disagree";
    }
    round.votes.push_back(std::move(v));
    p.validators_done = i + 1;
    if (opts_.progress) opts_.progress(p);
  }
  round.accepted = majority_agrees(round.votes);
  return round;
}

Result<std::vector<std::int64_t>> Node::run_follow_ups(std::int64_t first_tx) {
  std::vector<std::int64_t> done;
  std::deque<std::int64_t> parents{first_tx};
  while (!parents.empty() && static_cast<int>(done.size()) < opts_.max_follow_ups) {
    std::int64_t parent = parents.front();
    parents.pop_front();
    auto pending = state_.pending_messages();
    if (!pending) return pending.take_error();
    for (const auto& m : *pending) {
      if ((parent != 0 && m.tx != parent) || static_cast<int>(done.size()) >= opts_.max_follow_ups) continue;
      const Value* type = m.emission.find("type");
      const Value* cd = m.emission.find("calldata");
      std::string t = type && type->is_string() ? type->as_string() : "";
      Value entry = cd ? *cd : Value(Value::Map{});
      Effects fx;
      fx.consumes_message = std::make_pair(m.tx, m.index);
      TxRecord rec;
      rec.sender = m.from;
      rec.parent = m.tx;
      rec.calldata = calldata::encode(entry);
      auto chain = state_.chain_of(m.tx);
      if (!chain) return chain.take_error();
      if (chain->follow_ups >= opts_.max_chain_follow_ups) {
        rec.kind = t == "DeployContract" ? "deploy" : t == "PostMessage" ? "call" : (t.empty() ? "message" : t);
        if (const Value* to = m.emission.find("address"); to && to->is_address()) rec.target = to->as_address();
        rec.status = "dropped";
        rec.result_text = "\"the chain of follow-ups from tx " + std::to_string(chain->origin) + " reached its limit of " +
                          std::to_string(opts_.max_chain_follow_ups) + "\"";
        auto id = state_.commit(rec, fx);
        if (!id) return id.take_error();
        done.push_back(*id);
        continue;
      }
      if (const Value* v = m.emission.find("value"); v && v->is_int()) {
        auto u = v->as_int().to_uint64();
        rec.value = u && *u <= std::uint64_t(INT64_MAX) ? *u : 0;
        if (!u || *u > std::uint64_t(INT64_MAX)) {
          rec.kind = t;
          rec.status = "unsupported";
          rec.result_text = "\"the message's value is above 2^63-1\"";
          auto id = state_.commit(rec, fx);
          if (!id) return id.take_error();
          done.push_back(*id);
          continue;
        }
      }
      Result<TxOutcome> r = make_error("unreachable");
      if (t == "PostMessage") {
        const Value* to = m.emission.find("address");
        if (!to || !to->is_address()) continue;
        rec.kind = "call";
        rec.target = to->as_address();
        auto c = state_.contract(rec.target);
        if (!c) return c.take_error();
        auto bal = state_.balance(m.from);
        if (!bal) return bal.take_error();
        if (!*c || u256_less(*bal, rec.value)) {
          // Nothing to run: the receipt says so, and the message counts as served. The value
          // stays with the posting contract (a VMError moves nothing).
          rec.status = "accepted";
          rec.result_kind = 2;
          rec.result_text = !*c ? "\"no contract at the message's address\""
                                : "\"the posting contract no longer holds the message's value\"";
          auto id = state_.commit(rec, fx);
          if (!id) return id.take_error();
          done.push_back(*id);
          continue;
        }
        r = write_tx(rec, std::nullopt, entry, fx);
      } else if (t == "DeployContract") {
        const Value* code = m.emission.find("code");
        if (!code || !code->is_bytes()) continue;
        // The address depends on the nonce: read it under the write lock write_tx keeps.
        if (auto s = state_.begin(); !s) return s.take_error();
        auto nonce = state_.nonce(m.from);
        if (!nonce) {
          state_.abort();
          return nonce.take_error();
        }
        rec.kind = "deploy";
        rec.target = derive_contract_address(m.from, *nonce);
        auto h = sha3_256(code->as_bytes());
        rec.code_hash.assign(h.begin(), h.end());
        auto bal = state_.balance(m.from);
        if (!bal) {
          state_.abort();
          return bal.take_error();
        }
        if (u256_less(*bal, rec.value)) {
          rec.status = "accepted";  // served, nothing deployed, the value stays (as above)
          rec.result_kind = 2;
          rec.result_text = "\"the posting contract no longer holds the message's value\"";
          auto id = state_.commit(rec, fx);
          if (!id) return id.take_error();
          done.push_back(*id);
          continue;
        }
        fx.create_contract = true;
        r = write_tx(rec, code->as_bytes(), entry, fx);
      } else {
        rec.kind = t.empty() ? "message" : t;
        rec.status = "unsupported";
        rec.result_text = "\"genvm-node has no EVM chain: " + t + " is recorded, not executed\"";
        auto id = state_.commit(rec, fx);
        if (!id) return id.take_error();
        done.push_back(*id);
        continue;
      }
      if (!r) return r.take_error();
      done.push_back(r->record.id);
      parents.push_back(r->record.id);
    }
  }
  return done;
}

Result<std::vector<std::int64_t>> Node::serve_pending() { return run_follow_ups(0); }

namespace {

// The receipt of a value movement that runs no contract: accepted, result null.
TxRecord value_record(const char* kind, const Address& from, const Address& to, std::uint64_t value) {
  TxRecord rec;
  rec.kind = kind;
  rec.sender = from;
  rec.target = to;
  rec.value = value;
  rec.calldata = calldata::encode(Value());
  rec.status = "accepted";
  rec.result_kind = 0;
  rec.result_text = "null";
  return rec;
}

}  // namespace

Result<TxOutcome> Node::commit_value_record(TxRecord rec) {
  auto id = state_.commit(rec, Effects{});
  if (!id) return id.take_error();
  rec.id = *id;
  TxOutcome out;
  out.record = std::move(rec);
  return out;
}

Result<TxOutcome> Node::fund(const Address& to, std::uint64_t value) {
  return commit_value_record(value_record("fund", Address{} /* the faucet */, to, value));
}

Result<TxOutcome> Node::deploy(const Address& sender, const Bytes& code, const Value& entry, std::uint64_t value) {
  // The address depends on the nonce: read it under the write lock write_tx keeps.
  if (auto s = state_.begin(); !s) return s.take_error();
  auto nonce = state_.nonce(sender);
  if (!nonce) {
    state_.abort();
    return nonce.take_error();
  }
  TxRecord rec;
  rec.kind = "deploy";
  rec.sender = sender;
  rec.target = derive_contract_address(sender, *nonce);
  rec.calldata = calldata::encode(entry);
  rec.value = value;
  auto h = sha3_256(code);
  rec.code_hash.assign(h.begin(), h.end());
  Effects fx;
  fx.create_contract = true;
  auto out = write_tx(rec, code, entry, fx);
  if (!out) return out;
  auto f = run_follow_ups(out->record.id);
  if (!f) return f.take_error();
  out->follow_ups = std::move(*f);
  return out;
}

Result<TxOutcome> Node::call(const Address& sender, const Address& contract, const Value& entry,
                             std::uint64_t value) {
  auto c = state_.contract(contract);
  if (!c) return c.take_error();
  if (!*c) return make_error("unknown_address", "no contract at " + address_text(contract));
  TxRecord rec;
  rec.kind = "call";
  rec.sender = sender;
  rec.target = contract;
  rec.calldata = calldata::encode(entry);
  rec.value = value;
  auto out = write_tx(rec, std::nullopt, entry, Effects{});
  if (!out) return out;
  auto f = run_follow_ups(out->record.id);
  if (!f) return f.take_error();
  out->follow_ups = std::move(*f);
  return out;
}

namespace {

// Ends a read transaction begun with State::begin_read when the run over it returns.
struct ReadGuard {
  State& st;
  ~ReadGuard() { st.abort(); }
};

}  // namespace

Result<RunReport> Node::view(const Address& contract, const Value& entry) {
  auto c = state_.contract(contract);
  if (!c) return c.take_error();
  if (!*c) return make_error("unknown_address", "no contract at " + address_text(contract));
  if (auto s = state_.begin_read(); !s) return s.take_error();
  ReadGuard end_read{state_};
  TxRecord rec;
  rec.sender = Address{};
  rec.target = contract;
  // No `w` and no `s`: a view can read, call other contracts and run non-deterministic blocks
  // (as their leader), never change anything.
  return runner_.run(opts_.genvm, execution_data(rec, std::nullopt, entry, std::nullopt), "cn", state_,
                     opts_.run_timeout_ms, opts_.debug_mode);
}

Result<RunReport> Node::view_code(const Bytes& code, const Value& entry) {
  if (auto s = state_.begin_read(); !s) return s.take_error();
  ReadGuard end_read{state_};
  TxRecord rec;
  Value d = execution_data(rec, code, entry, std::nullopt);
  // The executor runs supplied code without writing it when the message is not an init.
  if (auto it = d.as_map().find("message"); it != d.as_map().end() && it->second.is_map()) {
    it->second.as_map().insert_or_assign("is_init", Value(false));
  }
  return runner_.run(opts_.genvm, d, "cn", state_, opts_.run_timeout_ms, opts_.debug_mode);
}

Result<TxOutcome> Node::transfer(const Address& from, const Address& to, std::uint64_t value) {
  if (auto s = state_.begin(); !s) return s.take_error();
  auto bal = state_.balance(from);
  if (!bal) {
    state_.abort();
    return bal.take_error();
  }
  if (u256_less(*bal, value)) {
    state_.abort();
    return make_error("insufficient_balance", address_text(from) + " holds less than the value " + std::to_string(value));
  }
  return commit_value_record(value_record("transfer", from, to, value));
}

}  // namespace genvm::node
