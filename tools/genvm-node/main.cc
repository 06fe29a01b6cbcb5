// genvm-node: deploy contracts and send them transactions on one machine — a leader and N
// validators, each a real `genvm run`, over a SQLite state file.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/calldata.h"
#include "common/debug_mode.h"
#include "common/exe_dir.h"
#include "executor/wasm_check.h"
#include "common/json.h"
#include "node/cli_args.h"
#include "node/node.h"
#include "node/serve/serve.h"
#include "node/state.h"
#include "runners/runners.h"

namespace {

using genvm::Error;
using genvm::calldata::Value;
using genvm::JsonValue;
using genvm::JsonWriter;
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
    "usage: genvm-node [OPTIONS] deploy FILE [ARG...]\n"
    "       genvm-node [OPTIONS] call ADDRESS METHOD [ARG...]\n"
    "       genvm-node [OPTIONS] view ADDRESS METHOD [ARG...]\n"
    "       genvm-node [OPTIONS] tx ID\n"
    "       genvm-node [OPTIONS] state ADDRESS\n"
    "       genvm-node [OPTIONS] fund ADDRESS AMOUNT\n"
    "       genvm-node [OPTIONS] check [FILE]\n"
    "       genvm-node [OPTIONS] contracts | txs [ADDRESS] | storage ADDRESS | schema ADDRESS\n"
    "       genvm-node serve [SERVE OPTIONS]   (a Studio-compatible JSON-RPC node: serve --help)\n"
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
    "(receipts, nonces, balances summing to what was funded, each contract's stored code\n"
    "against its code hash) and lists every problem; writes are then refused until a check\n"
    "finds the state consistent again (a call whose contract code changed is refused too);\n"
    "check FILE checks a contract\n"
    "instead, as deploy does before running anything: a wasm module loads, its imports link\n"
    "against genvm's, _start is [] -> []; any other FILE is a runner contract (a .py with its\n"
    "`# v0.1.0` / `# { \"Depends\": \"py-genlayer:...\" }` header, or a ZIP) whose form and\n"
    "runner.json must parse (genvm finds the runners: GENVM_RUNNERS_DIR, passed on to it, or its\n"
    "install layout). Read commands (view, tx, state, check) never create a state\n"
    "file and run while a write transaction is in progress (they see the last commit).\n"
    "contracts lists the deployed contracts (oldest first); txs the transactions (newest first;\n"
    "with ADDRESS only those it sent or received); both page with --limit and --offset. storage\n"
    "dumps one contract's storage slots (id, size, the first --bytes bytes in hex). schema calls\n"
    "the contract's `#get-schema` method read-only (the GenVM ABI's special method: it returns a\n"
    "JSON object as a string) and lists its methods; a contract without one says so (exit 3).\n"
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
    "  --module-llm-config FILE\n"
    "                     give every run the LLM module: genvm-module-llm (found beside this\n"
    "                     binary), started by the node with FILE, its YAML configuration\n"
    "                     (backends, models, prompt templates; keys from the environment)\n"
    "  --module-web-config FILE\n"
    "                     the same for the web module (genvm-module-web: allowed hosts, ...).\n"
    "                     With either, both modules start before the first run (the one without\n"
    "                     a file answers every call with the user error MODULE_USER_ERROR) and a\n"
    "                     module found dead before a run is started again; without them,\n"
    "                     ExecPrompt, ExecPromptTemplate, WebRender and WebRequest are forbidden\n"
    "  --from ADDRESS     the sender (default 0x00000000000000000000000000000000000000a1)\n"
    "  --value N          deploy/call: move N from the sender to the contract with an accepted Return\n"
    "  --json             machine-readable output on stdout, one object with \"exit_code\"\n"
    "  --debug-mode LEVEL disabled (default), safe, safe-unbounded, unsafe or unsafe-tracing,\n"
    "                     the executor's levels: from safe up, each run's stdout, stderr and log\n"
    "                     (gl_trace lines among them from safe-unbounded up, where the executor\n"
    "                     emits them) are kept with the receipt, leader and every validator, and\n"
    "                     shown by tx ID (--json: \"debug\"); a view prints them on stderr.\n"
    "                     Bounded: per run the last 16 KiB of stdout and of stderr and the newest\n"
    "                     log entries within 32 KiB, at most 1 MiB per transaction (later runs\n"
    "                     keep their sizes only). disabled keeps nothing. unsafe-tracing gives\n"
    "                     contracts real time: validators may then disagree.\n"
    "  --result-text N    keep and show at most N characters of a result's text (default 65536,\n"
    "                     256 to 16777216; past it the text is cut with a note, and an integer\n"
    "                     above 32768 bits is shown by its size, never converted to decimal)\n"
    "  --limit N          contracts, txs, storage: at most N rows (default 20, 1 to 1000)\n"
    "  --offset N         contracts, txs, storage: skip the first N rows (default 0)\n"
    "  --bytes N          storage: show at most N bytes of each slot (default 64, 0 to 65536)\n"
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
    "  tx ID         the receipt, then with --debug-mode records: debug (LEVEL): N run(s), and\n"
    "                per run `round R leader|validator node N: exit E, stdout B B, stderr B B,\n"
    "                L log entries` followed by `stdout | ...`, `stderr | ...`, `trace  | ...`,\n"
    "                `log    | LEVEL TARGET: MESSAGE` lines\n"
    "  contracts     N contract(s) (showing A-B), then per contract one line: ADDRESS  tx T ...\n"
    "  txs           N transaction(s) (showing A-B, newest first), then: tx N  KIND ADDRESS  STATUS ...\n"
    "  storage       ADDRESS: N slot(s), B bytes (showing A-B), then: slot ID  SIZE bytes  HEX\n"
    "  schema        schema of ADDRESS (#get-schema), then: ctor(...), view|write NAME(...) -> TYPE\n"
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
// --result-text: how much of a result (a receipt's, a view's, an event's) is kept and shown.
genvm::node::ResultTextLimits g_result_text;

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
                                    "state_missing",  "state_foreign", "state_open",    "insufficient_balance", "state_readonly",
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

// `check`: every problem, one per line on stdout (`inconsistent: ...`), and one line on stderr
// naming them; the verdict is kept in the file, so writes are refused until a check finds the
// state consistent again (a state we cannot write is only reported).
int run_check(State& state) {
  auto problems = state.inconsistencies();
  if (!problems) return fail(problems.error());
  auto recorded = state.read_only() ? genvm::Status{} : state.record_verdict(!problems->empty());
  if (problems->empty()) {
    std::printf(g_json ? "{\"consistent\":true,\"exit_code\":0}\n" : "consistent\n");
    return kExitOk;
  }
  std::string line;
  for (std::size_t i = 0; i < problems->size() && i < State::kMaxListed; ++i) line += (i ? "; " : "") + (*problems)[i];
  if (problems->size() > State::kMaxListed) line += "; and " + std::to_string(problems->size() - State::kMaxListed) + " more";
  line = "state_inconsistent: " + line +
         (state.read_only() ? " (read-only: not recorded)"
          : recorded        ? " (writes are refused until a check finds the state consistent)"
                            : " (could not record it: " + recorded.error().message + ")");
  std::fprintf(stderr, "genvm-node: %s\n", line.c_str());
  if (g_json) {
    JsonWriter w;
    w.begin_object().key("consistent").boolean(false).key("problems").begin_array();
    for (const auto& p : *problems) w.string(p);
    w.end_array().key("error").string(line).key("error_code").string("state_inconsistent").key("exit_code").number(kExitNodeFailure);
    std::printf("%s\n", w.end_object().take().c_str());
  } else {
    for (const auto& p : *problems) std::printf("inconsistent: %s\n", p.c_str());
  }
  return kExitNodeFailure;
}

// What deploy and `check FILE` accept. Raw wasm is checked as genvm would link it. Any other
// code is a runner contract (a `.py` with its `# v0.1.0` / `# { "Depends": ... }` header, or a
// ZIP): its form and its runner.json are checked here; the runners it names are genvm's to find
// in its runner directory (a missing one is the run's VMError, as on a GenVM node).
genvm::Status check_contract_code(const genvm::calldata::Bytes& code) {
  if (code.size() >= 4 && std::memcmp(code.data(), "\0asm", 4) == 0) return genvm::executor::check_contract_module(code);
  auto blob = std::make_shared<const std::string>(code.begin(), code.end());
  auto archive = genvm::runners::archive_from_code(blob);
  if (!archive) return archive.take_error();
  const std::string_view* runner_json = archive->find("runner.json");
  if (!runner_json) return genvm::make_error("invalid_contract runner malformed", "the archive has no runner.json");
  if (auto action = genvm::runners::parse_runner_json(*runner_json); !action) return action.take_error();
  return {};
}


std::string default_genvm() {
  std::string dir = genvm::executable_dir();
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
  auto parsed = genvm::parse_json(votes);
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

// A run's debug record in --json: its sizes, the kept tails, the log entries as the objects the
// executor wrote and the gl_trace messages among them.
void write_debug_json(JsonWriter& w, const RunDebug& d) {
  w.begin_object().key("round").number(d.round).key("node").number(d.node).key("role").string(d.role);
  w.key("debug_mode").string(d.debug_mode).key("exit_code").number(d.exit_code).key("omitted").boolean(d.omitted);
  w.key("stdout_bytes").unsigned_number(d.stdout_bytes).key("stderr_bytes").unsigned_number(d.stderr_bytes);
  w.key("log_entries").unsigned_number(d.log_entries).key("stdout").string(d.stdout_text).key("stderr").string(d.stderr_text);
  w.key("result_kind").string(kind_name(d.kind)).key("timed_out").boolean(d.timed_out).key("run_us").unsigned_number(d.run_us);
  w.key("result_bytes").unsigned_number(d.result_bytes);
  w.key("log").begin_array();
  std::vector<std::string> traces;
  for (const auto& line : d.log) {
    auto v = genvm::parse_json(line);
    if (!v || !v->is_object()) {
      w.string(line);
      continue;
    }
    w.raw(line);
    const JsonValue* ev = v->find("event");
    const JsonValue* msg = v->find("message");
    if (ev && ev->is_string() && ev->text() == "trace" && msg && msg->is_string()) traces.push_back(msg->text());
  }
  w.end_array().key("traces").begin_array();
  for (const auto& t : traces) w.string(t);
  w.end_array().end_object();
}

// What a contract wrote, safe for a terminal: control characters (escape sequences among
// them) become '.', tabs and UTF-8 stay.
std::string printable(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && u != '\t') || u == 0x7f) c = '.';
  }
  return out;
}

// A run's debug record as text lines on `f`, each stream line prefixed with its name.
void print_debug(std::FILE* f, const RunDebug& d) {
  std::string who = d.role == "view" ? std::string("view") : "round " + std::to_string(d.round) + " " + d.role + " node " + std::to_string(d.node);
  std::fprintf(f, "    %s: exit %d, stdout %llu B, stderr %llu B, %llu log entries%s\n", who.c_str(), d.exit_code,
               static_cast<unsigned long long>(d.stdout_bytes), static_cast<unsigned long long>(d.stderr_bytes),
               static_cast<unsigned long long>(d.log_entries),
               d.omitted ? " (not kept: the transaction's 1 MiB debug bound was reached)" : "");
  if (d.omitted) return;
  auto stream = [&](const char* name, const std::string& text, std::uint64_t total) {
    if (total > text.size()) {
      std::fprintf(f, "      %s | ... (the first %llu bytes were not kept)\n", name,
                   static_cast<unsigned long long>(total - text.size()));
    }
    for (std::size_t at = 0; at < text.size();) {
      std::size_t nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size();
      std::fprintf(f, "      %s | %s\n", name, printable(std::string_view(text).substr(at, nl - at)).c_str());
      at = nl + 1;
    }
  };
  stream("stdout", d.stdout_text, d.stdout_bytes);
  stream("stderr", d.stderr_text, d.stderr_bytes);
  if (d.log_entries > d.log.size()) {
    std::fprintf(f, "      log    | ... (%llu older entries were not kept)\n",
                 static_cast<unsigned long long>(d.log_entries - d.log.size()));
  }
  for (const auto& line : d.log) {
    auto v = genvm::parse_json(line);
    auto text = [&](const char* k) {
      const JsonValue* x = v ? v->find(k) : nullptr;
      return x && x->is_string() ? x->text() : std::string();
    };
    if (!v || !v->is_object()) {
      std::fprintf(f, "      log    | %s\n", printable(line).c_str());
    } else if (text("event") == "trace") {
      std::fprintf(f, "      trace  | %s\n", printable(text("message")).c_str());
    } else {
      std::fprintf(f, "      log    | %s %s: %s\n", printable(text("level")).c_str(), printable(text("target")).c_str(),
                   printable(text("message")).c_str());
    }
  }
}

int show_tx(State& state, std::int64_t tx_id) {
  auto r = state.tx(tx_id);
  if (!r) return fail(r.error());
  if (!*r) return fail(kExitBadInput, "no transaction " + std::to_string(tx_id), "no_transaction");
  const TxRecord& t = **r;
  auto events = state.events_of_tx(tx_id);
  auto msgs = state.messages_of_tx(tx_id);
  auto debug = state.debug_of_tx(tx_id);
  if (!events) return fail(events.error());
  if (!msgs) return fail(msgs.error());
  if (!debug) return fail(debug.error());
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
      w.begin_object().key("index").number(e.index).key("topics").string(genvm::node::result_text(e.topics, g_result_text));
      w.key("blob").string(genvm::node::result_text(e.blob, g_result_text)).end_object();
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
    w.end_array().key("debug").begin_array();
    for (const auto& d : *debug) write_debug_json(w, d);
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
    std::printf("  event %d: topics %s blob %s\n", e.index, genvm::node::result_text(e.topics, g_result_text).c_str(),
                genvm::node::result_text(e.blob, g_result_text).c_str());
  }
  for (const auto& [idx, fu] : *msgs) {
    if (fu) {
      std::printf("  message %d: served by tx %lld\n", idx, static_cast<long long>(fu));
    } else {
      std::printf("  message %d: pending\n", idx);
    }
  }
  if (!debug->empty()) {
    std::printf("  debug (%s): %zu run%s\n", debug->front().debug_mode.c_str(), debug->size(), debug->size() == 1 ? "" : "s");
    for (const auto& d : *debug) print_debug(stdout, d);
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

int show_view(const RunReport& r, int timeout_s, genvm::DebugMode mode) {
  std::optional<RunDebug> debug;
  if (mode >= genvm::DebugMode::kSafe) {
    std::size_t budget = kDebugKeepPerTx;
    debug = debug_record(r, 0, 0, "view", mode, &budget);
    if (!g_json) {
      std::fprintf(stderr, "  debug (%s):\n", debug->debug_mode.c_str());
      print_debug(stderr, *debug);
    }
  }
  if (r.timed_out) {
    return fail(kExitContractError, "the view was still running after " + std::to_string(timeout_s) +
                                        " s and was killed (--timeout)", "timeout");
  }
  if (!r.report.is_map()) {
    return fail(kExitNodeFailure, "the executor delivered no result (exit " + std::to_string(r.exit_code) +
                                      "): " + r.stderr_text.substr(0, r.stderr_text.find('\n')), "no_result");
  }
  const Value* data = r.report.find("data");
  std::string text = data ? genvm::node::result_text(*data, g_result_text) : "null";
  const int code = r.kind == 0 ? kExitOk : kExitContractError;
  if (g_json) {
    JsonWriter w;
    w.begin_object().key("result_kind").string(kind_name(r.kind)).key("result").string(text);
    if (debug) write_debug_json(w.key("debug"), *debug);
    w.key("outcome").string(outcome_name(code)).key("exit_code").number(code).end_object();
    std::printf("%s\n", w.take().c_str());
  } else {
    std::printf("%s %s\n", kind_name(r.kind).c_str(), text.c_str());
  }
  return code;
}

struct Page {
  std::int64_t limit = 20, offset = 0;
  std::uint32_t bytes = 64;  // storage: per slot
};

// "N things (showing A-B)" / "no things"; a last line says how to see the next page.
void print_page_head(std::int64_t total, std::size_t shown, const Page& pg, const char* one, const char* many,
                     const std::string& prefix, const char* order) {
  if (total == 0) {
    std::printf("%sno %s\n", prefix.c_str(), many);
    return;
  }
  std::printf("%s%lld %s", prefix.c_str(), static_cast<long long>(total), total == 1 ? one : many);
  if (shown == 0) {
    std::printf(" (none after --offset %lld)\n", static_cast<long long>(pg.offset));
  } else {
    std::printf(" (showing %lld-%lld%s)\n", static_cast<long long>(pg.offset + 1),
                static_cast<long long>(pg.offset + static_cast<std::int64_t>(shown)), order);
  }
}
void print_page_tail(std::int64_t total, std::size_t shown, const Page& pg) {
  const std::int64_t next = pg.offset + static_cast<std::int64_t>(shown);
  if (shown > 0 && next < total) {
    std::printf("  ... %lld more: --offset %lld\n", static_cast<long long>(total - next), static_cast<long long>(next));
  }
}
void write_page_json(JsonWriter& w, std::int64_t total, const Page& pg) {
  w.key("total").number(total).key("offset").number(pg.offset).key("limit").number(pg.limit);
}

// At most n bytes of s, cut at a UTF-8 character boundary, "…" when cut.
std::string clip(const std::string& s, std::size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "…";
}

int list_contracts(State& state, const Page& pg) {
  std::int64_t total = 0;
  auto cs = state.contracts(pg.limit, pg.offset, &total);
  if (!cs) return fail(cs.error());
  if (g_json) {
    JsonWriter w;
    w.begin_object();
    write_page_json(w, total, pg);
    w.key("contracts").begin_array();
    for (const auto& c : *cs) {
      w.begin_object().key("address").string(address_text(c.address)).key("code_hash").string(hex(c.code_hash));
      w.key("deployer").string(address_text(c.deployer)).key("deploy_tx").number(c.deploy_tx);
      w.key("storage_slots").number(c.slots).key("storage_bytes").number(c.bytes).key("events").number(c.events);
      w.end_object();
    }
    std::printf("%s\n", w.end_array().key("exit_code").number(kExitOk).end_object().take().c_str());
    return kExitOk;
  }
  print_page_head(total, cs->size(), pg, "contract", "contracts", "", "");
  for (const auto& c : *cs) {
    std::printf("  %s  tx %lld  code sha3 %s  %lld slot%s, %lld bytes, %lld event%s\n", address_text(c.address).c_str(),
                static_cast<long long>(c.deploy_tx), short_hex(hex(c.code_hash)).c_str(), static_cast<long long>(c.slots),
                c.slots == 1 ? "" : "s", static_cast<long long>(c.bytes), static_cast<long long>(c.events),
                c.events == 1 ? "" : "s");
  }
  print_page_tail(total, cs->size(), pg);
  return kExitOk;
}

int list_txs(State& state, const Page& pg, const std::optional<Address>& about) {
  std::int64_t total = 0;
  auto ts = state.txs(pg.limit, pg.offset, about, &total);
  if (!ts) return fail(ts.error());
  if (g_json) {
    JsonWriter w;
    w.begin_object();
    write_page_json(w, total, pg);
    w.key("transactions").begin_array();
    for (const auto& t : *ts) {
      w.begin_object().key("tx").number(t.id).key("kind").string(t.kind).key("sender").string(address_text(t.sender));
      w.key("address").string(address_text(t.target)).key("contract_created").boolean(created_contract(t));
      w.key("status").string(t.status).key("result_kind").string(kind_name(t.result_kind)).key("result").string(t.result_text);
      w.key("rounds").number(t.rounds).key("parent").number(t.parent).key("value").unsigned_number(t.value).end_object();
    }
    std::printf("%s\n", w.end_array().key("exit_code").number(kExitOk).end_object().take().c_str());
    return kExitOk;
  }
  print_page_head(total, ts->size(), pg, "transaction", "transactions",
                  about ? address_text(*about) + ": " : std::string(), ", newest first");
  for (const auto& t : *ts) {
    std::string what = t.status;
    if (t.status == "accepted") what += "  " + kind_name(t.result_kind) + " " + clip(t.result_text, 60);
    if (t.parent) what += "  (message of tx " + std::to_string(t.parent) + ")";
    // A deploy that created nothing shows no address (as its receipt's headline).
    const std::string where = t.kind == "deploy" && !created_contract(t) ? "(no contract created)" : address_text(t.target);
    std::printf("  tx %lld  %-7s %s  %s\n", static_cast<long long>(t.id), t.kind.c_str(), where.c_str(), what.c_str());
  }
  print_page_tail(total, ts->size(), pg);
  return kExitOk;
}

int dump_storage(State& state, const Address& a, const Page& pg) {
  auto c = state.contract(a);
  if (!c) return fail(c.error());
  if (!*c) return fail(kExitBadInput, "no contract at " + address_text(a), "unknown_address");
  std::int64_t total = 0;
  auto slots = state.storage_slots(a, pg.limit, pg.offset, pg.bytes, &total);
  if (!slots) return fail(slots.error());
  if (g_json) {
    JsonWriter w;
    w.begin_object().key("address").string(address_text(a)).key("storage_bytes").number((*c)->bytes);
    write_page_json(w, total, pg);
    w.key("bytes_per_slot").unsigned_number(pg.bytes).key("slots").begin_array();
    for (const auto& sl : *slots) {
      w.begin_object().key("slot").string(hex(sl.slot.data(), sl.slot.size())).key("size").number(sl.size);
      w.key("data").string(hex(sl.head)).key("truncated").boolean(static_cast<std::int64_t>(sl.head.size()) < sl.size);
      w.end_object();
    }
    std::printf("%s\n", w.end_array().key("exit_code").number(kExitOk).end_object().take().c_str());
    return kExitOk;
  }
  print_page_head(total, slots->size(), pg, "slot", "slots", address_text(a) + ": ", "");
  if (total > 0) std::printf("  %lld bytes in all\n", static_cast<long long>((*c)->bytes));
  for (const auto& sl : *slots) {
    const std::int64_t rest = sl.size - static_cast<std::int64_t>(sl.head.size());
    std::printf("  slot %s  %lld bytes  %s%s\n", hex(sl.slot.data(), sl.slot.size()).c_str(),
                static_cast<long long>(sl.size), sl.head.empty() ? "-" : hex(sl.head).c_str(),
                rest > 0 ? ("… (" + std::to_string(rest) + " more: --bytes)").c_str() : "");
  }
  print_page_tail(total, slots->size(), pg);
  return kExitOk;
}

// A schema type as text: a string as itself, anything else as compact JSON.
std::string type_text(const JsonValue* t) {
  if (!t) return "?";
  if (t->is_string()) return t->text();
  JsonWriter w;
  genvm::write_json(w, *t);
  return w.take();
}

// "(a: int, b: string, *, k: bool)" from a schema entry's params ([[name, type]...]) and kwparams.
std::string params_text(const JsonValue& m) {
  std::string out = "(";
  bool first = true;
  if (const JsonValue* ps = m.find("params"); ps && ps->kind() == JsonValue::Kind::kArray) {
    for (const JsonValue& p : ps->items()) {
      out += first ? "" : ", ";
      first = false;
      if (p.kind() == JsonValue::Kind::kArray && p.items().size() == 2 && p.items()[0].is_string()) {
        out += p.items()[0].text() + ": " + type_text(&p.items()[1]);
      } else {
        out += type_text(&p);
      }
    }
  }
  if (const JsonValue* kw = m.find("kwparams"); kw && kw->is_object() && !kw->members().empty()) {
    out += first ? "*" : ", *";
    for (const auto& [k, t] : kw->members()) out += ", " + k + ": " + type_text(&t);
  }
  return out + ")";
}

// schema ADDRESS: the `#get-schema` answer (a Return whose value is a string holding a JSON
// object: spec 04-contract-interface/02-abi.rst, "Special Methods").
int show_schema(const Address& a, const RunReport& r, int timeout_s) {
  const std::string who = address_text(a);
  if (r.timed_out) {
    return fail(kExitContractError, "#get-schema of " + who + " was still running after " + std::to_string(timeout_s) +
                                        " s and was killed (--timeout)", "timeout");
  }
  if (!r.report.is_map()) {
    return fail(kExitNodeFailure, "the executor delivered no result for #get-schema (exit " +
                                      std::to_string(r.exit_code) + ")", "no_result");
  }
  const Value* data = r.report.find("data");
  if (r.kind != 0) {
    return fail(kExitContractError, who + " exposes no schema: its #get-schema method answered " + kind_name(r.kind) +
                                        " " + clip(data ? genvm::node::result_text(*data, {.max_chars = 120}) : "null", 120), "no_schema");
  }
  auto parsed = data && data->is_string() ? genvm::parse_json(data->as_string())
                                          : genvm::Result<JsonValue>(genvm::make_error("not_a_string", ""));
  if (!parsed || !parsed->is_object()) {
    return fail(kExitContractError, who + "'s #get-schema returned " +
                                        clip(data ? genvm::node::result_text(*data, {.max_chars = 80}) : "null", 80) +
                                        ", not a string holding a JSON object", "bad_schema");
  }
  if (g_json) {
    JsonWriter w;
    w.begin_object().key("address").string(who).key("schema");
    genvm::write_json(w, *parsed);
    std::printf("%s\n", w.key("exit_code").number(kExitOk).end_object().take().c_str());
    return kExitOk;
  }
  std::printf("schema of %s (#get-schema)\n", who.c_str());
  const JsonValue* ctor = parsed->find("ctor");
  const JsonValue* methods = parsed->find("methods");
  if (!methods || !methods->is_object()) {
    JsonWriter w;
    genvm::write_json(w, *parsed);
    std::printf("  %s\n", w.take().c_str());  // not the ctor/methods shape: as it is
    return kExitOk;
  }
  if (ctor && ctor->is_object()) std::printf("  ctor%s\n", params_text(*ctor).c_str());
  for (const auto& [name, m] : methods->members()) {
    if (!m.is_object()) continue;
    const JsonValue* ro = m.find("readonly");
    const JsonValue* payable = m.find("payable");
    std::printf("  %s %s%s -> %s%s\n", ro && ro->as_bool() ? "view " : "write", name.c_str(), params_text(m).c_str(),
                type_text(m.find("ret")).c_str(), payable && payable->as_bool() ? "  (payable)" : "");
  }
  return kExitOk;
}

bool parse_int(std::string_view s, long long lo, long long hi, long long* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= lo && *out <= hi;
}

// A module configuration file as the module will open it: absolute (the module is not started
// from here), readable, a regular file. Error code bad_file, one line naming the option.
genvm::Result<std::string> module_config_path(std::string_view option, const char* path) {
  char* real = ::realpath(path, nullptr);
  if (!real) return genvm::make_error("bad_file", std::string(option) + ": " + path + ": " + std::strerror(errno));
  std::string abs(real);
  std::free(real);
  struct stat st {};
  if (::stat(abs.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return genvm::make_error("bad_file", std::string(option) + ": " + path + " is not a file");
  }
  if (::access(abs.c_str(), R_OK) != 0) {
    return genvm::make_error("bad_file", std::string(option) + ": " + path + ": " + std::strerror(errno));
  }
  return abs;
}

struct Options {
  std::string state_path = "genvm-node.db";
  std::string genvm_path;
  genvm::node::ModuleFiles modules;
  int validators = kDefaultValidators, rounds = kDefaultRounds, timeout_s = kDefaultTimeoutS;
  Address sender;
  std::uint64_t value = 0;
  genvm::DebugMode debug_mode = genvm::DebugMode::kDisabled;
  Page page;
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
    } else if (a == "--result-text") {
      const char* v = value_arg();
      long long n = 0;
      if (!v || !parse_int(v, 256, 16777216, &n)) {
        return fail(kExitBadInput, "--result-text needs a number of characters from 256 to 16777216", "usage");
      }
      g_result_text.max_chars = static_cast<std::size_t>(n);
    } else if (a == "--json") {
      g_json = true;
    } else if (a == "--state" || a == "--genvm") {
      const char* v = value_arg();
      if (!v || !*v) return fail(kExitBadInput, std::string(a) + " needs a path", "usage");
      (a == "--state" ? o.state_path : o.genvm_path) = v;
    } else if (a == "--module-llm-config" || a == "--module-web-config") {
      const char* v = value_arg();
      if (!v || !*v) return fail(kExitBadInput, std::string(a) + " needs a module configuration file", "usage");
      auto path = module_config_path(a, v);
      if (!path) return fail(path.error());
      (a == "--module-llm-config" ? o.modules.llm_config : o.modules.web_config) = *path;
    } else if (a == "--validators") {
      if (!int_opt(1, 100, &o.validators)) return fail(kExitBadInput, "--validators needs a number from 1 to 100", "usage");
    } else if (a == "--rounds") {
      if (!int_opt(1, 100, &o.rounds)) return fail(kExitBadInput, "--rounds needs a number from 1 to 100", "usage");
    } else if (a == "--timeout") {
      if (!int_opt(1, 86400, &o.timeout_s)) return fail(kExitBadInput, "--timeout needs seconds from 1 to 86400", "usage");
    } else if (a == "--debug-mode") {
      const char* v = value_arg();
      auto m = genvm::parse_debug_mode(v ? v : "");
      if (!m) {
        return fail(kExitBadInput, "--debug-mode needs one of disabled, safe, safe-unbounded, unsafe, unsafe-tracing" +
                                       std::string(v ? ": " + quote_prefix(v) : ""), "usage");
      }
      o.debug_mode = *m;
    } else if (a == "--limit" || a == "--offset" || a == "--bytes") {
      const char* v = value_arg();
      long long n = 0;
      const long long lo = a == "--limit" ? 1 : 0, hi = a == "--limit" ? 1000 : a == "--bytes" ? 65536 : INT64_MAX;
      if (!v || !parse_int(v, lo, hi, &n)) {
        return fail(kExitBadInput, std::string(a) + " needs a number from " + std::to_string(lo) + " to " +
                                       (a == "--offset" ? std::string("2^63-1") : std::to_string(hi)), "usage");
      }
      if (a == "--limit") o.page.limit = n;
      if (a == "--offset") o.page.offset = n;
      if (a == "--bytes") o.page.bytes = static_cast<std::uint32_t>(n);
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
  if (argc > 1 && std::string_view(argv[1]) == "serve") {
    return genvm::node::serve::serve_main(argc - 1, argv + 1, default_genvm());
  }
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
      cmd != "fund" && cmd != "contracts" && cmd != "txs" && cmd != "storage" && cmd != "schema") {
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
    if (auto s = check_contract_code(code); !s) {
      return fail(kExitBadInput, path + " is not a contract genvm can run: " + s.error().message, s.error().code);
    }
    return 0;
  };
  if (cmd == "deploy") {
    if (pos.size() < 2) return usage("deploy FILE [ARG...]");
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
  } else if (cmd == "state" || cmd == "storage" || cmd == "schema") {
    if (pos.size() != 2) return usage((cmd + " ADDRESS").c_str());
    if (int rc = address_at(1, &target)) return rc;
  } else if (cmd == "contracts") {
    if (pos.size() != 1) return usage("contracts");
  } else if (cmd == "txs") {
    if (pos.size() > 2) return usage("txs [ADDRESS]");
    if (pos.size() == 2) {
      if (int rc = address_at(1, &target)) return rc;
    }
  } else if (cmd == "check") {
    if (pos.size() > 2) return usage("check [FILE]");
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
  opts.debug_mode = o.debug_mode;
  opts.result_text = g_result_text;
  opts.modules = o.modules;
  if (cmd == "deploy" || cmd == "call" || cmd == "view" || cmd == "schema") {
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
  if (cmd == "call" || cmd == "view" || cmd == "schema") {
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
    return show_view(*r, o.timeout_s, o.debug_mode);
  }
  if (cmd == "schema") {
    auto r = node.view(target, make_entry("#get-schema", {}));
    if (!r) return fail(r.error());
    return show_schema(target, *r, o.timeout_s);
  }
  if (cmd == "contracts") return list_contracts(state, o.page);
  if (cmd == "txs") return list_txs(state, o.page, pos.size() == 2 ? std::optional<Address>(target) : std::nullopt);
  if (cmd == "storage") return dump_storage(state, target, o.page);
  if (cmd == "tx") return show_tx(state, tx_id);
  if (cmd == "state") return show_state(state, target);
  return run_check(state);
}
