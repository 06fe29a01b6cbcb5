#include "node/node.h"

#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <thread>

#include "common/sha3.h"
#include "executor/execution_data.h"
#include "node/host_server.h"

namespace genvm::node {

using calldata::Value;

namespace {

bool write_all_fd(int fd, const std::uint8_t* p, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    ssize_t r = ::write(fd, p + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<std::size_t>(r);
  }
  return true;
}

std::string read_all_fd(int fd) {
  std::string s;
  ::lseek(fd, 0, SEEK_SET);
  char buf[4096];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    s.append(buf, static_cast<std::size_t>(r));
  }
  return s;
}

}  // namespace

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

bool majority_agrees(const std::vector<Vote>& votes) {
  std::size_t agree = 0;
  for (const auto& v : votes) agree += v.vote == "agree";
  return !votes.empty() && 2 * agree > votes.size();
}

std::string votes_json(const std::vector<Round>& rounds) {
  std::string s = "[";
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    const Round& rd = rounds[r];
    if (r) s += ",";
    s += "{\"round\":" + std::to_string(r + 1) + ",\"leader\":" + std::to_string(rd.leader) + ",\"leader_kind\":\"" +
         kind_name(rd.leader_run.kind) + "\",\"leader_hash\":\"" + hex(rd.leader_run.execution_hash) +
         "\",\"accepted\":" + (rd.accepted ? "true" : "false") + ",\"votes\":[";
    for (std::size_t i = 0; i < rd.votes.size(); ++i) {
      const Vote& v = rd.votes[i];
      if (i) s += ",";
      s += "{\"node\":" + std::to_string(v.node) + ",\"vote\":\"" + v.vote + "\",\"kind\":\"" + kind_name(v.kind) +
           "\",\"execution_hash\":\"" + hex(v.execution_hash) + "\"}";
    }
    s += "]}";
  }
  return s + "]";
}

Result<RunReport> run_executor(const std::string& genvm, const Value& data, const std::string& permissions,
                               State& state, int timeout_ms) {
  // The executor may die before reading all of its stdin; that must be an error value here, not
  // a SIGPIPE that kills the node.
  static const bool sigpipe_ignored = [] { return ::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)sigpipe_ignored;
  if (::access(genvm.c_str(), X_OK) != 0) {
    return make_error("genvm_missing", "the executor '" + genvm + "' is not an executable file (use --genvm PATH)");
  }
  Bytes input = calldata::encode(data);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return make_error("spawn", std::string("socketpair: ") + std::strerror(errno));
  }
  int in[2];
  if (::pipe2(in, O_CLOEXEC) != 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    return make_error("spawn", std::string("pipe: ") + std::strerror(errno));
  }
  FILE* errf = std::tmpfile();
  int errfd = errf ? ::fileno(errf) : -1;
  std::vector<std::string> args = {genvm, "run", "--execution-data", "-", "--host", "fd://3", "--permissions",
                                   permissions};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::dup2(in[0], 0);
    if (errfd >= 0) {
      ::dup2(errfd, 1);  // the contract's stdout is diagnostics too: keep it off the node's output
      ::dup2(errfd, 2);
    }
    if (sv[1] == 3) {
      ::fcntl(3, F_SETFD, 0);
    } else {
      ::dup2(sv[1], 3);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(sv[1]);
  if (pid < 0) {
    ::close(in[1]);
    ::close(sv[0]);
    if (errf) std::fclose(errf);
    return make_error("spawn", std::string("fork: ") + std::strerror(errno));
  }
  HostSession session;
  Status served;
  std::thread server([&] {
    served = serve_host_connection(sv[0], state, session);
    // A failed connection must not leave the executor blocked on its host.
    ::shutdown(sv[0], SHUT_RDWR);
  });
  write_all_fd(in[1], input.data(), input.size());  // a short write shows up as the run's failure
  ::close(in[1]);
  bool timed_out = false;
  if (timeout_ms > 0) {
    // A pidfd becomes readable when the child exits: wait on it with the deadline, no polling.
    int pfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pfd >= 0) {
      pollfd p{pfd, POLLIN, 0};
      int rc;
      do {
        rc = ::poll(&p, 1, timeout_ms);
      } while (rc < 0 && errno == EINTR);
      if (rc == 0) {
        ::kill(pid, SIGKILL);
        timed_out = true;
      }
      ::close(pfd);
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // The executor is gone, so its end of the socket is closed and the server sees EOF.
  server.join();
  ::close(sv[0]);
  RunReport out;
  out.timed_out = timed_out;
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (errfd >= 0) out.stderr_text = read_all_fd(errfd);
  if (errf) std::fclose(errf);
  if (!served.ok() && out.stderr_text.empty()) out.stderr_text = served.error().to_string();
  if (!session.results.empty()) {
    auto v = calldata::decode(session.results.back());
    if (v && v->is_map()) {
      out.report = *v;
      if (const Value* h = out.report.find("execution_hash"); h && h->is_bytes()) out.execution_hash = h->as_bytes();
      if (const Value* k = out.report.find("kind"); k && k->is_int()) {
        out.kind = static_cast<int>(k->as_int().to_int64().value_or(-1));
      }
    }
  }
  return out;
}

Value Node::execution_data(const TxRecord& rec, const std::optional<Bytes>& code, const Value& entry,
                           const std::optional<Value>& leader_nondet) const {
  executor::ExecutionData d;
  d.calldata = calldata::encode(entry);
  d.message.contract_address = rec.target;
  d.message.sender_address = rec.sender;
  d.message.origin_address = rec.sender;
  d.message.signer_address = rec.sender;
  d.message.chain_id = BigInt(61999);
  d.message.is_init = code.has_value();
  d.message.datetime = std::string(executor::kDefaultDatetime);
  d.code = code;
  d.message_fee_allocation = Value(Value::Array{});
  if (leader_nondet) {
    std::vector<Bytes> nd;
    if (const auto* arr = leader_nondet->if_array()) {
      for (const auto& b : *arr) {
        if (b.is_bytes()) nd.push_back(b.as_bytes());
      }
    }
    d.leader_nondet_results = std::move(nd);
  }
  return executor::execution_data_to_value(d);
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
  TxOutcome out;
  const int n = std::max(opts_.validators, 1);
  const int total_nodes = n + 1;
  auto genvm_for = [&](int node) {
    if (opts_.genvm_for_node) {
      std::string p = opts_.genvm_for_node(node);
      if (!p.empty()) return p;
    }
    return opts_.genvm;
  };
  const Round* accepted = nullptr;
  for (int r = 0; r < std::max(opts_.rounds, 1) && !accepted; ++r) {
    Round round;
    round.leader = r % total_nodes;
    auto lead = run_executor(genvm_for(round.leader), execution_data(rec, code, entry, std::nullopt), "wscn", state_,
                             opts_.run_timeout_ms);
    if (!lead) return lead.take_error();
    round.leader_run = std::move(*lead);
    if (round.leader_run.report.is_map()) {
      const Value* nd = round.leader_run.report.find("nondet_results");
      Value vdata = execution_data(rec, code, entry, nd ? *nd : Value(Value::Array{}));
      for (int i = 0; i < n; ++i) {
        Vote v;
        v.node = (round.leader + 1 + i) % total_nodes;
        auto run = run_executor(genvm_for(v.node), vdata, "wscn", state_, opts_.run_timeout_ms);
        if (!run) return run.take_error();
        v.kind = run->kind;
        v.execution_hash = run->execution_hash;
        if (run->timed_out) {
          v.vote = "timeout";
        } else if (!run->report.is_map()) {
          v.vote = "error";
        } else {
          v.vote = run->execution_hash == round.leader_run.execution_hash ? "agree" : "disagree";
        }
        round.votes.push_back(std::move(v));
        if (opts_.progress) opts_.progress(r + 1, i + 1, n);
      }
    } else if (opts_.progress) {
      opts_.progress(r + 1, n, n);  // a leader that delivered nothing gets no votes: next leader
    }
    round.accepted = majority_agrees(round.votes);
    out.rounds.push_back(std::move(round));
    if (out.rounds.back().accepted) accepted = &out.rounds.back();
  }
  rec.rounds = static_cast<int>(out.rounds.size());
  rec.votes_json = votes_json(out.rounds);
  if (accepted) {
    const Value& rep = accepted->leader_run.report;
    rec.status = "accepted";
    rec.result_kind = accepted->leader_run.kind;
    const Value* data = rep.find("data");
    rec.result_text = data ? calldata::to_text(*data) : "null";
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
      Result<TxOutcome> r = make_error("unreachable");
      if (t == "PostMessage") {
        const Value* to = m.emission.find("address");
        if (!to || !to->is_address()) continue;
        rec.kind = "call";
        rec.target = to->as_address();
        auto c = state_.contract(rec.target);
        if (!c) return c.take_error();
        if (!*c) {
          // Nothing to run: the receipt says so, and the message counts as served.
          rec.status = "accepted";
          rec.result_kind = 2;
          rec.result_text = "\"no contract at the message's address\"";
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

Result<TxOutcome> Node::deploy(const Address& sender, const Bytes& code, const Value& entry) {
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

Result<TxOutcome> Node::call(const Address& sender, const Address& contract, const Value& entry) {
  auto c = state_.contract(contract);
  if (!c) return c.take_error();
  if (!*c) return make_error("unknown_address", "no contract at " + address_text(contract));
  TxRecord rec;
  rec.kind = "call";
  rec.sender = sender;
  rec.target = contract;
  rec.calldata = calldata::encode(entry);
  auto out = write_tx(rec, std::nullopt, entry, Effects{});
  if (!out) return out;
  auto f = run_follow_ups(out->record.id);
  if (!f) return f.take_error();
  out->follow_ups = std::move(*f);
  return out;
}

Result<RunReport> Node::view(const Address& contract, const Value& entry) {
  auto c = state_.contract(contract);
  if (!c) return c.take_error();
  if (!*c) return make_error("unknown_address", "no contract at " + address_text(contract));
  TxRecord rec;
  rec.sender = Address{};
  rec.target = contract;
  // No `w` and no `s`: a view can read, call other contracts and run non-deterministic blocks
  // (as their leader), never change anything.
  return run_executor(opts_.genvm, execution_data(rec, std::nullopt, entry, std::nullopt), "cn", state_,
                      opts_.run_timeout_ms);
}

}  // namespace genvm::node
