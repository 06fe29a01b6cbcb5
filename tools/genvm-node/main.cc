// genvm-node: deploy contracts and send them transactions on one machine — a leader and N
// validators, each a real `genvm run`, over a SQLite state file.
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "common/calldata.h"
#include "executor/wasm_check.h"
#include "node/node.h"
#include "node/state.h"

namespace {

using genvm::calldata::Value;
using namespace genvm::node;

constexpr const char* kUsage =
    "usage: genvm-node [OPTIONS] deploy FILE.wasm [ARG...]\n"
    "       genvm-node [OPTIONS] call ADDRESS METHOD [ARG...]\n"
    "       genvm-node [OPTIONS] view ADDRESS METHOD [ARG...]\n"
    "       genvm-node [OPTIONS] tx ID\n"
    "       genvm-node [OPTIONS] state ADDRESS\n"
    "       genvm-node [OPTIONS] fund ADDRESS AMOUNT\n"
    "       genvm-node [OPTIONS] check\n"
    "\n"
    "deploy and call are write transactions: a leader run, then N validator runs that compare\n"
    "their execution hash with the leader's; a majority accepts and the leader's storage changes,\n"
    "events and messages are committed atomically; otherwise the next node leads, up to R rounds,\n"
    "then the transaction is undetermined. Posted messages run as follow-up transactions.\n"
    "view runs once, read-only. tx shows a receipt; state shows a contract or account; fund\n"
    "credits an account from the node's faucet (a `fund` receipt); check verifies the database's\n"
    "consistency (receipts, nonces, and balances summing to what was funded).\n"
    "ARG is one value in calldata text form: 5, \"text\", addr#<40 hex>, b#<hex>, [1, 2], {\"k\": 1}.\n"
    "\n"
    "options:\n"
    "  --state PATH       the SQLite state (default ./genvm-node.db)\n"
    "  --genvm PATH       the executor (default: tools/genvm/genvm next to this binary's build dir)\n"
    "  --validators N     validators per round (default 4)\n"
    "  --rounds R         leader rotations before undetermined (default 3)\n"
    "  --timeout SECONDS  an executor run still going after this is killed (default 120)\n"
    "  --from ADDRESS     the sender (default 0x00000000000000000000000000000000000000a1)\n"
    "  --value N          deploy/call: move N from the sender to the contract with an accepted Return\n"
    "  --json             machine-readable output on stdout\n"
    "  --help             this text\n"
    "exit: 0 done (whatever the contract returned), 1 bad input or a node failure (one line).\n";

int fail(const std::string& line) {
  std::fprintf(stderr, "genvm-node: %s\n", line.c_str());
  return 1;
}

std::string json_str(std::string_view s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o.push_back(static_cast<char>(c));
        }
    }
  }
  return o + "\"";
}

std::string default_genvm() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "genvm";
  std::string self(buf, static_cast<std::size_t>(n));
  std::string dir = self.substr(0, self.rfind('/'));
  for (const std::string& c : {dir + "/../genvm/genvm", dir + "/genvm"}) {
    if (::access(c.c_str(), X_OK) == 0) return c;
  }
  return dir + "/../genvm/genvm";
}

genvm::Result<Value::Array> parse_args(const std::vector<std::string>& raw) {
  Value::Array out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    auto v = genvm::calldata::parse_text(raw[i]);
    if (!v) return genvm::make_error("bad_arg", "argument " + std::to_string(i + 1) + " '" + raw[i] +
                                                    "' is not calldata text: " + v.error().to_string());
    out.push_back(std::move(*v));
  }
  return out;
}

std::string short_hash(const genvm::calldata::Bytes& h) { return h.empty() ? "-" : hex(h).substr(0, 16) + "…"; }

void print_outcome(const TxOutcome& o, bool json) {
  const TxRecord& r = o.record;
  if (json) {
    std::string fu = "[";
    for (std::size_t i = 0; i < o.follow_ups.size(); ++i) fu += (i ? "," : "") + std::to_string(o.follow_ups[i]);
    fu += "]";
    std::printf(
        "{\"tx\":%lld,\"kind\":%s,\"address\":%s,\"value\":%llu,\"status\":%s,\"result_kind\":%s,\"result\":%s,"
        "\"execution_hash\":%s,\"rounds\":%s,\"follow_ups\":%s}\n",
        static_cast<long long>(r.id), json_str(r.kind).c_str(), json_str(address_text(r.target)).c_str(),
        static_cast<unsigned long long>(r.value),
        json_str(r.status).c_str(), json_str(kind_name(r.result_kind)).c_str(), json_str(r.result_text).c_str(),
        json_str(hex(r.execution_hash)).c_str(), r.votes_json.c_str(), fu.c_str());
    return;
  }
  if (r.kind == "fund") {
    std::printf("tx %lld  fund %s  credited %llu\n", static_cast<long long>(r.id), address_text(r.target).c_str(),
                static_cast<unsigned long long>(r.value));
    return;
  }
  std::printf("tx %lld  %s %s  %s after %d round%s\n", static_cast<long long>(r.id), r.kind.c_str(),
              address_text(r.target).c_str(), r.status.c_str(), r.rounds, r.rounds == 1 ? "" : "s");
  if (r.status == "accepted") std::printf("  result: %s %s\n", kind_name(r.result_kind).c_str(), r.result_text.c_str());
  if (r.value) {
    std::printf("  value: %llu %s\n", static_cast<unsigned long long>(r.value),
                r.status == "accepted" && r.result_kind == 0 ? "moved" : "not moved (stays with the sender)");
  }
  for (std::size_t i = 0; i < o.rounds.size(); ++i) {
    const Round& rd = o.rounds[i];
    std::printf("  round %zu: leader node %d -> %s, execution hash %s\n", i + 1, rd.leader,
                kind_name(rd.leader_run.kind).c_str(), short_hash(rd.leader_run.execution_hash).c_str());
    std::printf("    %-6s %-9s %-13s %s\n", "node", "vote", "result", "execution hash");
    for (const Vote& v : rd.votes) {
      std::printf("    %-6d %-9s %-13s %s\n", v.node, v.vote.c_str(), kind_name(v.kind).c_str(),
                  short_hash(v.execution_hash).c_str());
    }
    std::size_t agree = 0;
    for (const Vote& v : rd.votes) agree += v.vote == "agree";
    std::printf("    %zu/%zu agree -> %s\n", agree, rd.votes.size(), rd.accepted ? "accepted" : "rejected");
  }
  for (auto id : o.follow_ups) std::printf("  follow-up transaction: tx %lld\n", static_cast<long long>(id));
}

// The receipt keeps the votes as the JSON that votes_json() wrote; this reads that fixed shape
// back into the same table the write commands print.
void print_stored_votes(const std::string& votes) {
  static const std::regex kRound(R"re(\{"round":(\d+),"leader":(\d+),"leader_kind":"(\w+)","leader_hash":"([0-9a-f]*)","accepted":(true|false),"votes":\[([^\]]*)\])re");
  static const std::regex kVote(R"re(\{"node":(\d+),"vote":"(\w+)","kind":"(\w+)","execution_hash":"([0-9a-f]*)"\})re");
  auto short_hex = [](const std::string& h) { return h.empty() ? std::string("-") : h.substr(0, 16) + "…"; };
  for (std::sregex_iterator r(votes.begin(), votes.end(), kRound), end; r != end; ++r) {
    const auto& m = *r;
    std::printf("  round %s: leader node %s -> %s, execution hash %s\n", m[1].str().c_str(), m[2].str().c_str(),
                m[3].str().c_str(), short_hex(m[4].str()).c_str());
    std::printf("    %-6s %-9s %-13s %s\n", "node", "vote", "result", "execution hash");
    std::string list = m[6].str();
    int agree = 0, n = 0;
    for (std::sregex_iterator v(list.begin(), list.end(), kVote); v != end; ++v) {
      const auto& vm = *v;
      std::printf("    %-6s %-9s %-13s %s\n", vm[1].str().c_str(), vm[2].str().c_str(), vm[3].str().c_str(),
                  short_hex(vm[4].str()).c_str());
      agree += vm[2].str() == "agree";
      ++n;
    }
    std::printf("    %d/%d agree -> %s\n", agree, n, m[5].str() == "true" ? "accepted" : "rejected");
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string state_path = "genvm-node.db";
  std::string genvm_path;
  int validators = 4, rounds = 3, timeout_s = 120;
  bool json = false;
  Address sender;
  sender.bytes[19] = 0xa1;
  std::uint64_t value = 0;
  auto u63 = [](std::string_view s, std::uint64_t* out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && p == s.data() + s.size() && *out <= std::uint64_t(INT64_MAX);
  };
  std::vector<std::string> pos;
  bool only_pos = false;
  auto int_opt = [](const char* v, int lo, int hi, int* out) {
    if (!v) return false;
    std::string_view s(v);
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && p == s.data() + s.size() && *out >= lo && *out <= hi;
  };
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value_arg = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (only_pos || a.size() < 2 || a.substr(0, 2) != "--") {
      pos.emplace_back(a);
    } else if (a == "--") {
      only_pos = true;
    } else if (a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--state") {
      const char* v = value_arg();
      if (!v || !*v) return fail("--state needs a path");
      state_path = v;
    } else if (a == "--genvm") {
      const char* v = value_arg();
      if (!v || !*v) return fail("--genvm needs a path");
      genvm_path = v;
    } else if (a == "--validators") {
      if (!int_opt(value_arg(), 1, 100, &validators)) return fail("--validators needs a number from 1 to 100");
    } else if (a == "--rounds") {
      if (!int_opt(value_arg(), 1, 100, &rounds)) return fail("--rounds needs a number from 1 to 100");
    } else if (a == "--timeout") {
      if (!int_opt(value_arg(), 1, 86400, &timeout_s)) return fail("--timeout needs seconds from 1 to 86400");
    } else if (a == "--value") {
      const char* v = value_arg();
      if (!v || !u63(v, &value)) return fail("--value needs an amount from 0 to 2^63-1");
    } else if (a == "--from") {
      const char* v = value_arg();
      auto ad = parse_address(v ? v : "");
      if (!ad) return fail("--from: " + ad.error().message);
      sender = *ad;
    } else {
      return fail("unknown option '" + std::string(a) + "' (see genvm-node --help)");
    }
  }
  if (pos.empty()) return fail("no command (see genvm-node --help)");
  const std::string cmd = pos[0];
  auto need = [&](std::size_t n, const char* usage) -> bool {
    if (pos.size() < n) {
      fail(std::string("usage: genvm-node ") + usage);
      return false;
    }
    return true;
  };
  if (cmd != "deploy" && cmd != "call" && cmd != "view" && cmd != "tx" && cmd != "state" && cmd != "check" &&
      cmd != "fund") {
    return fail("unknown command '" + cmd + "' (see genvm-node --help)");
  }
  // Check what can be checked before touching the database.
  genvm::calldata::Bytes code;
  Value::Array args;
  Address target;
  if (cmd == "deploy") {
    if (!need(2, "deploy FILE.wasm [ARG...]")) return 1;
    std::ifstream f(pos[1], std::ios::binary);
    if (!f) return fail("cannot read " + pos[1]);
    code.assign(std::istreambuf_iterator<char>(f), {});
    if (auto s = genvm::executor::check_contract_module(code); !s) {
      return fail(pos[1] + " is not a contract module: " + s.error().to_string());
    }
    auto a = parse_args({pos.begin() + 2, pos.end()});
    if (!a) return fail(a.error().message);
    args = std::move(*a);
  } else if (cmd == "call" || cmd == "view") {
    if (!need(3, (cmd + " ADDRESS METHOD [ARG...]").c_str())) return 1;
    auto ad = parse_address(pos[1]);
    if (!ad) return fail(ad.error().message);
    target = *ad;
    auto a = parse_args({pos.begin() + 3, pos.end()});
    if (!a) return fail(a.error().message);
    args = std::move(*a);
  } else if (cmd == "fund") {
    if (!need(3, "fund ADDRESS AMOUNT")) return 1;
    auto ad = parse_address(pos[1]);
    if (!ad) return fail(ad.error().message);
    target = *ad;
    if (!u63(pos[2], &value) || value == 0) return fail("an amount is from 1 to 2^63-1: '" + pos[2] + "'");
  } else if (cmd == "state") {
    if (!need(2, "state ADDRESS")) return 1;
    auto ad = parse_address(pos[1]);
    if (!ad) return fail(ad.error().message);
    target = *ad;
  }
  std::int64_t tx_id = 0;
  if (cmd == "tx") {
    if (!need(2, "tx ID")) return 1;
    auto [p, ec] = std::from_chars(pos[1].data(), pos[1].data() + pos[1].size(), tx_id);
    if (ec != std::errc() || p != pos[1].data() + pos[1].size() || tx_id <= 0) {
      return fail("a transaction id is a positive integer: '" + pos[1] + "'");
    }
  }

  auto st = State::open(state_path);
  if (!st) return fail(st.error().message.empty() ? st.error().code : st.error().message);
  State& state = **st;

  NodeOptions opts;
  opts.genvm = genvm_path.empty() ? default_genvm() : genvm_path;
  opts.validators = validators;
  opts.rounds = rounds;
  opts.run_timeout_ms = timeout_s * 1000;
  const bool tty = ::isatty(2);
  const bool writes = cmd == "deploy" || cmd == "call" || cmd == "fund";
  if (cmd == "deploy" || cmd == "call" || cmd == "view") {
    if (::access(opts.genvm.c_str(), X_OK) != 0) {
      return fail("the executor '" + opts.genvm + "' is not an executable file (use --genvm PATH)");
    }
  }
  if (cmd == "call" || cmd == "view") {
    auto c = state.contract(target);
    if (!c) return fail(c.error().message);
    if (!*c) return fail("no contract at " + address_text(target));
  }
  if (writes) {
    if (auto s = state.probe_writable(); !s) return fail(s.error().message);
  }
  bool announced = false;
  opts.progress = [tty, json, &announced, &cmd, validators](int round, int done, int total) {
    if (!announced && !json) {
      std::fprintf(stderr, "%s: a leader and %d validators running\n", cmd.c_str(), validators);
      announced = true;
    }
    if (tty) {
      std::fprintf(stderr, "\r  round %d: validators %d/%d done", round, done, total);
      if (done == total) std::fputc('\n', stderr);
    } else if (done == total) {
      std::fprintf(stderr, "  round %d: validators %d/%d done\n", round, done, total);
    }
    std::fflush(stderr);
  };
  Node node(state, opts);

  if (cmd == "fund") {
    auto o = node.fund(target, value);
    if (!o) return fail(o.error().message.empty() ? o.error().code : o.error().message);
    print_outcome(*o, json);
    return 0;
  }

  if (cmd == "deploy" || cmd == "call") {
    // Messages a killed node committed but never ran go first, in the order they were posted.
    auto pending = node.serve_pending();
    if (!pending) return fail(pending.error().message.empty() ? pending.error().code : pending.error().message);
    if (!pending->empty() && !json) {
      std::fprintf(stderr, "served %zu pending message(s) left by an interrupted node\n", pending->size());
    }
    auto o = cmd == "deploy" ? node.deploy(sender, code, make_entry("", args), value)
                             : node.call(sender, target, make_entry(pos[2], args), value);
    if (!o) return fail(o.error().message.empty() ? o.error().code : o.error().message);
    print_outcome(*o, json);
    return 0;
  }
  if (cmd == "view") {
    auto r = node.view(target, make_entry(pos[2], args));
    if (!r) return fail(r.error().message.empty() ? r.error().code : r.error().message);
    if (r->timed_out) return fail("the view was still running after " + std::to_string(timeout_s) + " s and was killed");
    if (!r->report.is_map()) {
      return fail("the executor delivered no result (exit " + std::to_string(r->exit_code) + "): " +
                  r->stderr_text.substr(0, r->stderr_text.find('\n')));
    }
    const Value* data = r->report.find("data");
    std::string text = data ? genvm::calldata::to_text(*data) : "null";
    if (json) {
      std::printf("{\"result_kind\":%s,\"result\":%s}\n", json_str(kind_name(r->kind)).c_str(), json_str(text).c_str());
    } else {
      std::printf("%s %s\n", kind_name(r->kind).c_str(), text.c_str());
    }
    return 0;
  }
  if (cmd == "tx") {
    auto r = state.tx(tx_id);
    if (!r) return fail(r.error().message);
    if (!*r) return fail("no transaction " + std::to_string(tx_id));
    const TxRecord& t = **r;
    auto events = state.events_of_tx(tx_id);
    auto msgs = state.messages_of_tx(tx_id);
    if (!events) return fail(events.error().message);
    if (!msgs) return fail(msgs.error().message);
    auto cd = genvm::calldata::decode(t.calldata);
    std::string entry = cd ? genvm::calldata::to_text(*cd) : "?";
    if (json) {
      std::string ev = "[";
      for (std::size_t i = 0; i < events->size(); ++i) {
        const auto& e = (*events)[i];
        ev += std::string(i ? "," : "") + "{\"index\":" + std::to_string(e.index) + ",\"topics\":" +
              json_str(genvm::calldata::to_text(e.topics)) + ",\"blob\":" + json_str(genvm::calldata::to_text(e.blob)) +
              "}";
      }
      ev += "]";
      std::string ms = "[";
      for (std::size_t i = 0; i < msgs->size(); ++i) {
        ms += std::string(i ? "," : "") + "{\"index\":" + std::to_string((*msgs)[i].first) +
              ",\"follow_up\":" + ((*msgs)[i].second ? std::to_string((*msgs)[i].second) : "null") + "}";
      }
      ms += "]";
      std::printf(
          "{\"tx\":%lld,\"kind\":%s,\"sender\":%s,\"address\":%s,\"entry\":%s,\"status\":%s,\"result_kind\":%s,"
          "\"result\":%s,\"execution_hash\":%s,\"parent\":%lld,\"value\":%llu,\"rounds\":%s,\"events\":%s,"
          "\"messages\":%s}\n",
          static_cast<long long>(t.id), json_str(t.kind).c_str(), json_str(address_text(t.sender)).c_str(),
          json_str(address_text(t.target)).c_str(), json_str(entry).c_str(), json_str(t.status).c_str(),
          json_str(kind_name(t.result_kind)).c_str(), json_str(t.result_text).c_str(),
          json_str(hex(t.execution_hash)).c_str(), static_cast<long long>(t.parent),
          static_cast<unsigned long long>(t.value), t.votes_json.c_str(), ev.c_str(),
          ms.c_str());
    } else {
      std::printf("tx %lld  %s %s  %s\n", static_cast<long long>(t.id), t.kind.c_str(), address_text(t.target).c_str(),
                  t.status.c_str());
      std::printf("  sender:         %s\n", address_text(t.sender).c_str());
      std::printf("  entry:          %s\n", entry.c_str());
      if (t.parent) std::printf("  message of tx:  %lld\n", static_cast<long long>(t.parent));
      if (t.value) std::printf("  value:          %llu\n", static_cast<unsigned long long>(t.value));
      std::printf("  result:         %s %s\n", kind_name(t.result_kind).c_str(), t.result_text.c_str());
      std::printf("  execution hash: %s\n", t.execution_hash.empty() ? "-" : hex(t.execution_hash).c_str());
      std::printf("  rounds:         %d\n", t.rounds);
      print_stored_votes(t.votes_json);
      for (const auto& e : *events) {
        std::printf("  event %d: topics %s blob %s\n", e.index, genvm::calldata::to_text(e.topics).c_str(),
                    genvm::calldata::to_text(e.blob).c_str());
      }
      for (const auto& [idx, fu] : *msgs) {
        if (fu) {
          std::printf("  message %d: served by tx %lld\n", idx, static_cast<long long>(fu));
        } else {
          std::printf("  message %d: pending\n", idx);
        }
      }
    }
    return 0;
  }
  if (cmd == "state") {
    auto c = state.contract(target);
    auto bal = state.balance(target);
    auto nonce = state.nonce(target);
    if (!c) return fail(c.error().message);
    if (!bal) return fail(bal.error().message);
    if (!nonce) return fail(nonce.error().message);
    genvm::BigInt::Limbs limbs(8, 0);
    for (int i = 0; i < 32; ++i) limbs[i / 4] |= std::uint32_t((*bal)[i]) << (8 * (i % 4));
    std::string bal_text = genvm::BigInt::from_magnitude(false, limbs).to_decimal();
    if (!*c && *nonce == 0 && bal_text == "0") return fail("unknown address " + address_text(target));
    if (json) {
      std::printf("{\"address\":%s,\"balance\":%s,\"nonce\":%llu,\"contract\":", json_str(address_text(target)).c_str(),
                  json_str(bal_text).c_str(), static_cast<unsigned long long>(*nonce));
      if (*c) {
        std::printf("{\"code_hash\":%s,\"deployer\":%s,\"deploy_tx\":%lld,\"storage_slots\":%lld,\"storage_bytes\":%lld,"
                    "\"events\":%lld}}\n",
                    json_str(hex((*c)->code_hash)).c_str(), json_str(address_text((*c)->deployer)).c_str(),
                    static_cast<long long>((*c)->deploy_tx), static_cast<long long>((*c)->slots),
                    static_cast<long long>((*c)->bytes), static_cast<long long>((*c)->events));
      } else {
        std::printf("null}\n");
      }
    } else {
      std::printf("%s\n  balance: %s\n  nonce:   %llu\n", address_text(target).c_str(), bal_text.c_str(),
                  static_cast<unsigned long long>(*nonce));
      if (*c) {
        std::printf("  contract: code sha3 %s, deployed by %s in tx %lld\n  storage: %lld slots, %lld bytes; %lld events\n",
                    hex((*c)->code_hash).c_str(), address_text((*c)->deployer).c_str(),
                    static_cast<long long>((*c)->deploy_tx), static_cast<long long>((*c)->slots),
                    static_cast<long long>((*c)->bytes), static_cast<long long>((*c)->events));
      }
    }
    return 0;
  }
  // check
  if (auto s = state.check_consistency(); !s) return fail(s.error().to_string());
  std::printf(json ? "{\"consistent\":true}\n" : "consistent\n");
  return 0;
}
