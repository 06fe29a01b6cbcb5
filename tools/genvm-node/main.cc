// genvm-node: deploy contracts and send them transactions on one machine — a leader and N
// validators, each a real `genvm run`, over a SQLite state file.
#include <unistd.h>

#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "common/calldata.h"
#include "executor/wasm_check.h"
#include "manager/json.h"
#include "node/cli_args.h"
#include "node/node.h"
#include "node/state.h"

namespace {

using genvm::Error;
using genvm::calldata::Value;
using genvm::manager::JsonValue;
using genvm::manager::JsonWriter;
using namespace genvm::node;

// Exit statuses (also the "exit_code" of every --json object). Documented in kUsage and in
// docs/PROTOCOLS.md ("genvm-node exit codes"); the tutorial quotes them.
enum Exit : int {
  kExitOk = 0,             // Return (write accepted with Return, view Return), or a read done
  kExitNodeFailure = 1,    // the node could not do it: database locked or broken, executor failed
  kExitBadInput = 2,       // usage, option, argument, file, address or transaction id
  kExitContractError = 3,  // accepted (or viewed) result UserError, VMError or InternalError
  kExitNotAccepted = 4,    // undetermined: no majority within --rounds
};
constexpr int kDefaultTimeoutS = 5;
constexpr int kDefaultRounds = 3;
constexpr int kDefaultValidators = 4;

constexpr const char* kUsage =
    "usage: genvm-node [OPTIONS] deploy FILE.wasm [ARG...]\n"
    "       genvm-node [OPTIONS] call ADDRESS METHOD [ARG...]\n"
    "       genvm-node [OPTIONS] view ADDRESS METHOD [ARG...]\n"
    "       genvm-node [OPTIONS] tx ID\n"
    "       genvm-node [OPTIONS] state ADDRESS\n"
    "       genvm-node [OPTIONS] fund ADDRESS AMOUNT\n"
    "       genvm-node [OPTIONS] check [FILE.wasm]\n"
    "\n"
    "deploy and call are write transactions: a leader run, then N validator runs. A validator\n"
    "agrees when its execution hash is the leader's and none of its non-deterministic blocks\n"
    "rejected the leader's result (then it votes disagree and the receipt names the block). A\n"
    "majority accepts, and the leader's storage changes, events and messages are committed\n"
    "atomically; otherwise the next node leads, up to R rounds, then the transaction is\n"
    "undetermined and changes nothing. A leader or validator still running at the timeout is\n"
    "killed and shows as `timeout`. A deploy whose result is not Return creates no contract.\n"
    "Posted messages run as follow-up transactions.\n"
    "view runs once, read-only. tx shows a receipt; state shows a contract or account; fund\n"
    "credits an account from the node's faucet (a `fund` receipt). check verifies the database\n"
    "(receipts, nonces, balances summing to what was funded); check FILE.wasm checks a contract\n"
    "module instead (it loads, its imports link against genvm's, _start is [] -> []), as deploy\n"
    "does before running anything. Read commands (view, tx, state, check) never create a state\n"
    "file and run while a write transaction is in progress (they see the last commit).\n"
    "\n"
    "ARG is one value in calldata text form: 5, -3, \"text\" (quoted: '\"text\"' in a shell),\n"
    "addr#<40 hex> or 0x<40 hex> (an address), b#<hex> (bytes), [1, 2], {\"k\": 1}, true, null.\n"
    "@FILE or @- reads one value's text from FILE or stdin; b@FILE or b@- passes FILE's or\n"
    "stdin's raw bytes as a bytes value (stdin at most once).\n"
    "\n"
    "options:\n"
    "  --state PATH       the SQLite state (default ./genvm-node.db)\n"
    "  --genvm PATH       the executor (default: tools/genvm/genvm next to this binary's build dir)\n"
    "  --validators N     validators per round (default 4)\n"
    "  --rounds R         leader rotations before undetermined (default 3)\n"
    "  --timeout SECONDS  each executor run (leader, validator, view) still going after this is\n"
    "                     killed and counts as `timeout` (default 5: a contract that loops\n"
    "                     forever costs rounds x 5 s; raise it for slow contracts)\n"
    "  --from ADDRESS     the sender (default 0x00000000000000000000000000000000000000a1)\n"
    "  --value N          deploy/call: move N from the sender to the contract with an accepted Return\n"
    "  --json             machine-readable output on stdout, one object with \"exit_code\"\n"
    "  --help             this text\n"
    "\n"
    "output (stdout; progress lines go to stderr, --json prints one object instead):\n"
    "  deploy, call  tx N  deploy|call ADDRESS  accepted|undetermined after R round(s)\n"
    "                  result: KIND VALUE          (KIND: Return, UserError, VMError, ...)\n"
    "                  round R: leader node L -> KIND, execution hash H...   then per validator\n"
    "                  NODE VOTE KIND HASH (VOTE: agree, disagree, timeout, error), A/N agree\n"
    "                or tx N  deployment failed: KIND VALUE, no contract created\n"
    "                or   round R: leader node L -> timeout (...); no validators ran\n"
    "  view          KIND VALUE\n"
    "\n"
    "exit status (--json: \"exit_code\", and \"outcome\" for deploy, call and view):\n"
    "  0    done: the accepted (or viewed) result is Return, or a read command succeeded\n"
    "  1    node failure: the database is locked, broken or inconsistent, or the executor failed\n"
    "  2    bad input: usage, option, argument, file, address, amount or transaction id (one line)\n"
    "  3    contract error (outcome contract_error): the result is UserError, VMError or\n"
    "       InternalError, or a view was killed at the timeout; a failed deploy creates nothing\n"
    "  4    not accepted (outcome not_accepted): undetermined after --rounds rounds, nothing changed\n"
    "  130  interrupted by SIGINT, 143 by SIGTERM: the transaction running was rolled back\n";

bool g_json = false;

std::string json_str(std::string_view s) {
  JsonWriter w;
  w.string(s);
  return w.take();
}

// One line on stderr; with --json also {"error", "error_code", "exit_code"} on stdout.
int fail(int code, const std::string& line, const std::string& error_code = "") {
  std::fprintf(stderr, "genvm-node: %s\n", line.c_str());
  if (g_json) {
    JsonWriter w;
    w.begin_object().key("error").string(line).key("error_code").string(error_code).key("exit_code").number(code);
    std::printf("%s\n", w.end_object().take().c_str());
  }
  return code;
}

bool is_bad_input(const std::string& code) {
  static const char* kBadInput[] = {"bad_arg",        "bad_file",      "bad_address",   "invalid_module",
                                    "bad_import",     "no_entrypoint", "bad_entrypoint", "unknown_address",
                                    "state_missing",  "state_foreign", "state_open",    "insufficient_balance",
                                    "genvm_missing",  "no_transaction"};
  for (const char* c : kBadInput) {
    if (code == c) return true;
  }
  return false;
}

int fail(const Error& e) {
  std::string line = e.message.empty() ? e.code : e.message;
  if (e.code == "interrupted") {
    int sig = interrupt_signal();
    return fail(128 + (sig ? sig : SIGINT), line + ": the transaction in progress was rolled back (what `tx` shows "
                                                   "stays committed; pending messages run with the next write)",
                e.code);
  }
  return fail(is_bad_input(e.code) ? kExitBadInput : kExitNodeFailure, line, e.code);
}

void on_signal(int sig) { request_interrupt(sig); }

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

std::string short_hex(const std::string& h) { return h.empty() ? std::string("-") : h.substr(0, 16) + "…"; }

const char* outcome_name(int exit_code) {
  switch (exit_code) {
    case kExitOk: return "return";
    case kExitContractError: return "contract_error";
    case kExitNotAccepted: return "not_accepted";
    default: return "error";
  }
}

int exit_for(const TxRecord& r) {
  if (r.status == "accepted") return r.result_kind == 0 ? kExitOk : kExitContractError;
  if (r.status == "undetermined") return kExitNotAccepted;
  return kExitContractError;  // unsupported: nothing ran
}

bool created_contract(const TxRecord& r) { return r.kind == "deploy" && r.status == "accepted" && r.result_kind == 0; }

// The receipt's first line. A deploy that created nothing shows no address.
void print_headline(const TxRecord& r) {
  const long long id = static_cast<long long>(r.id);
  const std::string after = std::to_string(r.rounds) + (r.rounds == 1 ? " round" : " rounds");
  if (r.kind == "deploy" && !created_contract(r)) {
    if (r.status == "accepted") {
      std::printf("tx %lld  deployment failed: %s %s, no contract created\n", id, kind_name(r.result_kind).c_str(),
                  r.result_text.c_str());
    } else {
      std::printf("tx %lld  deployment not accepted: %s after %s, no contract created\n", id, r.status.c_str(),
                  after.c_str());
    }
    return;
  }
  if (r.kind == "fund") {
    std::printf("tx %lld  fund %s  credited %llu\n", id, address_text(r.target).c_str(),
                static_cast<unsigned long long>(r.value));
    return;
  }
  std::printf("tx %lld  %s %s  %s after %s%s\n", id, r.kind.c_str(), address_text(r.target).c_str(), r.status.c_str(),
              after.c_str(), r.status == "undetermined" ? ": no majority, nothing changed" : "");
}

// The rounds of a receipt, from its votes JSON (votes_json()); the same table for a fresh
// transaction and a stored one. Receipts from before leader_outcome read it from leader_kind.
void print_rounds(const std::string& votes) {
  auto parsed = genvm::manager::parse_json(votes);
  if (!parsed || parsed->kind() != JsonValue::Kind::kArray) return;
  auto text = [](const JsonValue& o, const char* k) {
    const JsonValue* v = o.find(k);
    return v && v->is_string() ? v->text() : std::string();
  };
  auto num = [](const JsonValue& o, const char* k) {
    const JsonValue* v = o.find(k);
    auto n = v ? v->as_u64() : std::nullopt;
    return n ? std::to_string(*n) : std::string("?");
  };
  for (const JsonValue& rd : parsed->items()) {
    std::string outcome = text(rd, "leader_outcome");
    if (outcome.empty()) outcome = text(rd, "leader_kind") == "none" ? "error" : "result";
    if (outcome == "timeout") {
      std::printf("  round %s: leader node %s -> timeout (killed at the deadline, --timeout); no validators ran\n",
                  num(rd, "round").c_str(), num(rd, "leader").c_str());
      continue;
    }
    if (outcome != "result") {
      std::printf("  round %s: leader node %s -> error (delivered no result); no validators ran\n",
                  num(rd, "round").c_str(), num(rd, "leader").c_str());
      continue;
    }
    std::printf("  round %s: leader node %s -> %s, execution hash %s\n", num(rd, "round").c_str(),
                num(rd, "leader").c_str(), text(rd, "leader_kind").c_str(), short_hex(text(rd, "leader_hash")).c_str());
    std::printf("    %-6s %-9s %-13s %s\n", "node", "vote", "result", "execution hash");
    int agree = 0, n = 0;
    if (const JsonValue* vs = rd.find("votes"); vs && vs->kind() == JsonValue::Kind::kArray) {
      for (const JsonValue& v : vs->items()) {
        std::string note;
        if (const JsonValue* b = v.find("nondet_disagreement"); b && b->as_u64()) {
          note = "  (non-deterministic block " + std::to_string(*b->as_u64()) + " rejected the leader's result)";
        }
        std::printf("    %-6s %-9s %-13s %s%s\n", num(v, "node").c_str(), text(v, "vote").c_str(), text(v, "kind").c_str(),
                    short_hex(text(v, "execution_hash")).c_str(), note.c_str());
        agree += text(v, "vote") == "agree";
        ++n;
      }
    }
    const JsonValue* acc = rd.find("accepted");
    std::printf("    %d/%d agree -> %s\n", agree, n, acc && acc->as_bool() ? "accepted" : "rejected");
  }
}

int print_outcome(const TxOutcome& o) {
  const TxRecord& r = o.record;
  const int code = r.kind == "fund" ? kExitOk : exit_for(r);
  if (g_json) {
    JsonWriter w;
    w.begin_object().key("tx").number(r.id).key("kind").string(r.kind).key("address");
    if (r.kind == "deploy" && !created_contract(r)) {
      w.null();
    } else {
      w.string(address_text(r.target));
    }
    w.key("value").unsigned_number(r.value).key("status").string(r.status);
    w.key("result_kind").string(kind_name(r.result_kind)).key("result").string(r.result_text);
    w.key("execution_hash").string(hex(r.execution_hash)).key("rounds").raw(r.votes_json.empty() ? "[]" : r.votes_json);
    w.key("follow_ups").begin_array();
    for (auto id : o.follow_ups) w.number(id);
    w.end_array().key("outcome").string(outcome_name(code)).key("exit_code").number(code).end_object();
    std::printf("%s\n", w.take().c_str());
    return code;
  }
  print_headline(r);
  if (r.kind == "fund") return code;
  const bool headline_has_result = r.kind == "deploy" && !created_contract(r);
  if (r.status == "accepted" && !headline_has_result) {
    std::printf("  result: %s %s\n", kind_name(r.result_kind).c_str(), r.result_text.c_str());
  }
  if (r.value) {
    std::printf("  value: %llu %s\n", static_cast<unsigned long long>(r.value),
                r.status == "accepted" && r.result_kind == 0 ? "moved" : "not moved (stays with the sender)");
  }
  print_rounds(r.votes_json);
  for (auto id : o.follow_ups) std::printf("  follow-up transaction: tx %lld\n", static_cast<long long>(id));
  return code;
}

int show_tx(State& state, std::int64_t tx_id) {
  auto r = state.tx(tx_id);
  if (!r) return fail(r.error());
  if (!*r) return fail(kExitBadInput, "no transaction " + std::to_string(tx_id), "no_transaction");
  const TxRecord& t = **r;
  auto events = state.events_of_tx(tx_id);
  auto msgs = state.messages_of_tx(tx_id);
  if (!events) return fail(events.error());
  if (!msgs) return fail(msgs.error());
  auto cd = genvm::calldata::decode(t.calldata);
  std::string entry = cd ? genvm::calldata::to_text(*cd) : "?";
  if (g_json) {
    JsonWriter w;
    w.begin_object().key("tx").number(t.id).key("kind").string(t.kind).key("sender").string(address_text(t.sender));
    w.key("address").string(address_text(t.target)).key("contract_created").boolean(created_contract(t));
    w.key("entry").string(entry).key("status").string(t.status).key("result_kind").string(kind_name(t.result_kind));
    w.key("result").string(t.result_text).key("execution_hash").string(hex(t.execution_hash));
    w.key("parent").number(t.parent).key("value").unsigned_number(t.value);
    w.key("rounds").raw(t.votes_json.empty() ? "[]" : t.votes_json).key("events").begin_array();
    for (const auto& e : *events) {
      w.begin_object().key("index").number(e.index).key("topics").string(genvm::calldata::to_text(e.topics));
      w.key("blob").string(genvm::calldata::to_text(e.blob)).end_object();
    }
    w.end_array().key("messages").begin_array();
    for (const auto& [idx, fu] : *msgs) {
      w.begin_object().key("index").number(idx).key("follow_up");
      if (fu) {
        w.number(fu);
      } else {
        w.null();
      }
      w.end_object();
    }
    w.end_array().key("exit_code").number(kExitOk).end_object();
    std::printf("%s\n", w.take().c_str());
    return kExitOk;
  }
  print_headline(t);
  std::printf("  sender:         %s\n", address_text(t.sender).c_str());
  if (t.kind == "deploy" && !created_contract(t)) {
    std::printf("  address:        none (it would have been %s)\n", address_text(t.target).c_str());
  }
  std::printf("  entry:          %s\n", entry.c_str());
  if (t.parent) std::printf("  message of tx:  %lld\n", static_cast<long long>(t.parent));
  if (t.value) std::printf("  value:          %llu\n", static_cast<unsigned long long>(t.value));
  std::printf("  result:         %s %s\n", kind_name(t.result_kind).c_str(), t.result_text.c_str());
  std::printf("  execution hash: %s\n", t.execution_hash.empty() ? "-" : hex(t.execution_hash).c_str());
  std::printf("  rounds:         %d\n", t.rounds);
  print_rounds(t.votes_json);
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
  return kExitOk;
}

int show_state(State& state, const Address& target) {
  auto c = state.contract(target);
  auto bal = state.balance(target);
  auto nonce = state.nonce(target);
  if (!c) return fail(c.error());
  if (!bal) return fail(bal.error());
  if (!nonce) return fail(nonce.error());
  genvm::BigInt::Limbs limbs(8, 0);
  for (int i = 0; i < 32; ++i) limbs[i / 4] |= std::uint32_t((*bal)[i]) << (8 * (i % 4));
  std::string bal_text = genvm::BigInt::from_magnitude(false, limbs).to_decimal();
  if (!*c && *nonce == 0 && bal_text == "0") {
    return fail(kExitBadInput, "unknown address " + address_text(target), "unknown_address");
  }
  if (g_json) {
    JsonWriter w;
    w.begin_object().key("address").string(address_text(target)).key("balance").string(bal_text);
    w.key("nonce").unsigned_number(*nonce).key("contract");
    if (*c) {
      w.begin_object().key("code_hash").string(hex((*c)->code_hash)).key("deployer").string(address_text((*c)->deployer));
      w.key("deploy_tx").number((*c)->deploy_tx).key("storage_slots").number((*c)->slots);
      w.key("storage_bytes").number((*c)->bytes).key("events").number((*c)->events).end_object();
    } else {
      w.null();
    }
    std::printf("%s\n", w.key("exit_code").number(kExitOk).end_object().take().c_str());
    return kExitOk;
  }
  std::printf("%s\n  balance: %s\n  nonce:   %llu\n", address_text(target).c_str(), bal_text.c_str(),
              static_cast<unsigned long long>(*nonce));
  if (*c) {
    std::printf("  contract: code sha3 %s, deployed by %s in tx %lld\n  storage: %lld slots, %lld bytes; %lld events\n",
                hex((*c)->code_hash).c_str(), address_text((*c)->deployer).c_str(),
                static_cast<long long>((*c)->deploy_tx), static_cast<long long>((*c)->slots),
                static_cast<long long>((*c)->bytes), static_cast<long long>((*c)->events));
  }
  return kExitOk;
}

int show_view(const RunReport& r, int timeout_s) {
  if (r.timed_out) {
    return fail(kExitContractError, "the view was still running after " + std::to_string(timeout_s) +
                                        " s and was killed (--timeout)", "timeout");
  }
  if (!r.report.is_map()) {
    return fail(kExitNodeFailure, "the executor delivered no result (exit " + std::to_string(r.exit_code) +
                                      "): " + r.stderr_text.substr(0, r.stderr_text.find('\n')), "no_result");
  }
  const Value* data = r.report.find("data");
  std::string text = data ? genvm::calldata::to_text(*data) : "null";
  const int code = r.kind == 0 ? kExitOk : kExitContractError;
  if (g_json) {
    JsonWriter w;
    w.begin_object().key("result_kind").string(kind_name(r.kind)).key("result").string(text);
    w.key("outcome").string(outcome_name(code)).key("exit_code").number(code).end_object();
    std::printf("%s\n", w.take().c_str());
  } else {
    std::printf("%s %s\n", kind_name(r.kind).c_str(), text.c_str());
  }
  return code;
}

bool parse_int(std::string_view s, long long lo, long long hi, long long* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= lo && *out <= hi;
}

struct Options {
  std::string state_path = "genvm-node.db";
  std::string genvm_path;
  int validators = kDefaultValidators, rounds = kDefaultRounds, timeout_s = kDefaultTimeoutS;
  Address sender;
  std::uint64_t value = 0;
  std::vector<std::string> pos;
};

// 0 and the options, or an exit code (after --help, or with the error line printed).
int parse_options(int argc, char** argv, Options& o) {
  o.sender.bytes[19] = 0xa1;
  bool only_pos = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value_arg = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    auto int_opt = [&](int lo, int hi, int* out) {
      const char* v = value_arg();
      long long n = 0;
      if (!v || !parse_int(v, lo, hi, &n)) return false;
      *out = static_cast<int>(n);
      return true;
    };
    if (only_pos || a.size() < 2 || a.substr(0, 2) != "--") {
      o.pos.emplace_back(a);
    } else if (a == "--") {
      only_pos = true;
    } else if (a == "--help") {
      std::fputs(kUsage, stdout);
      return -1;
    } else if (a == "--json") {
      g_json = true;
    } else if (a == "--state" || a == "--genvm") {
      const char* v = value_arg();
      if (!v || !*v) return fail(kExitBadInput, std::string(a) + " needs a path", "usage");
      (a == "--state" ? o.state_path : o.genvm_path) = v;
    } else if (a == "--validators") {
      if (!int_opt(1, 100, &o.validators)) return fail(kExitBadInput, "--validators needs a number from 1 to 100", "usage");
    } else if (a == "--rounds") {
      if (!int_opt(1, 100, &o.rounds)) return fail(kExitBadInput, "--rounds needs a number from 1 to 100", "usage");
    } else if (a == "--timeout") {
      if (!int_opt(1, 86400, &o.timeout_s)) return fail(kExitBadInput, "--timeout needs seconds from 1 to 86400", "usage");
    } else if (a == "--value") {
      const char* v = value_arg();
      long long n = 0;
      if (!v || !parse_int(v, 0, INT64_MAX, &n)) return fail(kExitBadInput, "--value needs an amount from 0 to 2^63-1", "usage");
      o.value = static_cast<std::uint64_t>(n);
    } else if (a == "--from") {
      const char* v = value_arg();
      auto ad = parse_address(v ? v : "");
      if (!ad) return fail(kExitBadInput, "--from: " + ad.error().message, "bad_address");
      o.sender = *ad;
    } else {
      return fail(kExitBadInput, "unknown option " + quote_prefix(a) + " (see genvm-node --help)", "usage");
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (int rc = parse_options(argc, argv, o); rc != 0) return rc < 0 ? kExitOk : rc;
  if (o.pos.empty()) return fail(kExitBadInput, "no command (see genvm-node --help)", "usage");
  const std::string cmd = o.pos[0];
  const auto& pos = o.pos;
  auto usage = [](const char* u) { return fail(kExitBadInput, std::string("usage: genvm-node ") + u, "usage"); };
  auto address_at = [&](std::size_t i, Address* out) {
    auto ad = parse_address(pos[i]);
    if (!ad) return fail(kExitBadInput, ad.error().message, "bad_address");
    *out = *ad;
    return 0;
  };
  if (cmd != "deploy" && cmd != "call" && cmd != "view" && cmd != "tx" && cmd != "state" && cmd != "check" &&
      cmd != "fund") {
    return fail(kExitBadInput, "unknown command " + quote_prefix(cmd) + " (see genvm-node --help)", "usage");
  }
  // Check what can be checked before touching the database.
  genvm::calldata::Bytes code;
  Value::Array args;
  Address target;
  ArgReader arg_reader;
  auto read_args = [&](std::size_t first) {
    for (std::size_t i = first; i < pos.size(); ++i) {
      auto v = arg_reader.parse(pos[i], i - first + 1);
      if (!v) return fail(kExitBadInput, v.error().message, v.error().code);
      args.push_back(std::move(*v));
    }
    return 0;
  };
  auto read_module = [&](const std::string& path) {
    auto bytes = read_input_file(path, kMaxContractBytes);
    if (!bytes) return fail(kExitBadInput, bytes.error().message, bytes.error().code);
    code = std::move(*bytes);
    if (auto s = genvm::executor::check_contract_module(code); !s) {
      return fail(kExitBadInput, path + " is not a contract genvm can run: " + s.error().message, s.error().code);
    }
    return 0;
  };
  if (cmd == "deploy") {
    if (pos.size() < 2) return usage("deploy FILE.wasm [ARG...]");
    if (int rc = read_module(pos[1])) return rc;
    if (int rc = read_args(2)) return rc;
  } else if (cmd == "call" || cmd == "view") {
    if (pos.size() < 3) return usage((cmd + " ADDRESS METHOD [ARG...]").c_str());
    if (int rc = address_at(1, &target)) return rc;
    if (int rc = read_args(3)) return rc;
  } else if (cmd == "fund") {
    if (pos.size() != 3) return usage("fund ADDRESS AMOUNT");
    if (int rc = address_at(1, &target)) return rc;
    long long n = 0;
    if (!parse_int(pos[2], 1, INT64_MAX, &n)) {
      return fail(kExitBadInput, "an amount is from 1 to 2^63-1: " + quote_prefix(pos[2]), "usage");
    }
    o.value = static_cast<std::uint64_t>(n);
  } else if (cmd == "state") {
    if (pos.size() != 2) return usage("state ADDRESS");
    if (int rc = address_at(1, &target)) return rc;
  } else if (cmd == "check") {
    if (pos.size() > 2) return usage("check [FILE.wasm]");
    if (pos.size() == 2) {
      if (int rc = read_module(pos[1])) return rc;
      if (g_json) {
        std::printf("{\"module\":%s,\"ok\":true,\"exit_code\":0}\n", json_str(pos[1]).c_str());
      } else {
        std::printf("%s: a contract genvm can run\n", pos[1].c_str());
      }
      return kExitOk;
    }
  }
  long long tx_id = 0;
  if (cmd == "tx") {
    if (pos.size() != 2) return usage("tx ID");
    if (!parse_int(pos[1], 1, INT64_MAX, &tx_id)) {
      return fail(kExitBadInput, "a transaction id is a positive integer: " + quote_prefix(pos[1]), "usage");
    }
  }

  const bool writes = cmd == "deploy" || cmd == "call" || cmd == "fund";
  auto st = State::open(o.state_path, writes ? OpenMode::kCreate : OpenMode::kExisting);
  if (!st) return fail(st.error());
  State& state = **st;

  NodeOptions opts;
  opts.genvm = o.genvm_path.empty() ? default_genvm() : o.genvm_path;
  opts.validators = o.validators;
  opts.rounds = o.rounds;
  opts.run_timeout_ms = o.timeout_s * 1000;
  if (cmd == "deploy" || cmd == "call" || cmd == "view") {
    if (::access(opts.genvm.c_str(), X_OK) != 0) {
      return fail(kExitBadInput, "the executor '" + opts.genvm + "' is not an executable file (use --genvm PATH)",
                  "genvm_missing");
    }
    // From here on runs start: an interrupt cancels the one running, the transaction rolls back
    // and the run's socket folder is removed as the node unwinds.
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
  }
  if (cmd == "call" || cmd == "view") {
    auto c = state.contract(target);
    if (!c) return fail(c.error());
    if (!*c) return fail(kExitBadInput, "no contract at " + address_text(target), "unknown_address");
  }
  if (writes) {
    if (auto s = state.probe_writable(); !s) return fail(s.error());
  }
  const bool tty = ::isatty(2);
  bool announced = false;
  opts.progress = [&](const Progress& p) {
    if (g_json) return;
    if (!announced) {
      std::fprintf(stderr, "%s: a leader and %d validators, %d s per run\n", cmd.c_str(), o.validators, o.timeout_s);
      announced = true;
    }
    if (p.leader_outcome != "result") {
      std::fprintf(stderr, "%s  round %d: leader node %d %s, no validators ran\n", tty ? "\r" : "", p.round, p.leader,
                   p.leader_outcome == "timeout" ? "timed out" : "delivered no result");
    } else if (tty || p.validators_done == p.validators) {
      std::fprintf(stderr, "%s  round %d: leader node %d done, validators %d/%d done%s", tty ? "\r" : "", p.round,
                   p.leader, p.validators_done, p.validators, p.validators_done == p.validators || !tty ? "\n" : "");
    }
    std::fflush(stderr);
  };
  Node node(state, opts);

  if (cmd == "fund") {
    auto out = node.fund(target, o.value);
    if (!out) return fail(out.error());
    return print_outcome(*out);
  }
  if (cmd == "deploy" || cmd == "call") {
    // Messages a killed node committed but never ran go first, in the order they were posted.
    auto pending = node.serve_pending();
    if (!pending) return fail(pending.error());
    if (!pending->empty() && !g_json) {
      std::fprintf(stderr, "served %zu pending message(s) left by an interrupted node\n", pending->size());
    }
    auto out = cmd == "deploy" ? node.deploy(o.sender, code, make_entry("", args), o.value)
                               : node.call(o.sender, target, make_entry(pos[2], args), o.value);
    if (!out) return fail(out.error());
    return print_outcome(*out);
  }
  if (cmd == "view") {
    auto r = node.view(target, make_entry(pos[2], args));
    if (!r) return fail(r.error());
    return show_view(*r, o.timeout_s);
  }
  if (cmd == "tx") return show_tx(state, tx_id);
  if (cmd == "state") return show_state(state, target);
  if (auto s = state.check_consistency(); !s) return fail(kExitNodeFailure, s.error().to_string(), s.error().code);
  std::printf(g_json ? "{\"consistent\":true,\"exit_code\":0}\n" : "consistent\n");
  return kExitOk;
}
