// Node: deploy, call and view the example contracts through real `genvm run` processes, and
// the vote rule that decides what is committed.
#include "node/node.h"
#include "common/host/wire.h"
#include "node/test_state_dir.h"

#include "executor/storage.h"
#include "common/sanitizers.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

namespace genvm::node {
namespace {

using calldata::Value;

std::string binary_dir() {
  const char* e = std::getenv("GENVM_BINARY_DIR");
  return e && *e ? e : GENVM_BINARY_DIR;
}

Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

Address account(std::uint8_t b) {
  Address a;
  a.bytes[19] = b;
  return a;
}

TEST(Majority, MoreThanHalfOfTheValidatorsMustAgree) {
  auto votes = [](std::initializer_list<const char*> vs) {
    std::vector<Vote> out;
    for (const char* v : vs) out.push_back(Vote{0, v, 0, {}, std::nullopt});
    return out;
  };
  EXPECT_TRUE(majority_agrees(votes({"agree", "agree", "agree", "disagree"})));
  EXPECT_FALSE(majority_agrees(votes({"agree", "agree", "disagree", "error"})));  // a tie is not a majority
  EXPECT_TRUE(majority_agrees(votes({"agree"})));
  EXPECT_FALSE(majority_agrees(votes({})));
}

class NodeTest : public testing::StateDir {
 protected:
  void SetUp() override {
    genvm_ = binary_dir() + "/tools/genvm/genvm";
    examples_ = binary_dir() + "/examples/";
    if (::access(genvm_.c_str(), X_OK) != 0 || ::access((examples_ + "counter.wasm").c_str(), R_OK) != 0) {
      GTEST_SKIP() << "needs the genvm binary and the example contracts in " << binary_dir()
                   << " (set GENVM_BINARY_DIR)";
    }
    make_dir();
    ASSERT_TRUE(open_state());
  }
  NodeOptions opts(int validators = 4, int rounds = 3) {
    NodeOptions o;
    o.genvm = genvm_;
    o.validators = validators;
    o.rounds = rounds;
    o.run_timeout_ms = 60000;  // the default 5 s is a developer's loop, not a loaded CI machine
    return o;
  }
  // Every validator agreed, and each one's hash is the leader's, which the receipt carries.
  static void expect_unanimous(const TxOutcome& o, std::size_t validators) {
    ASSERT_EQ(o.rounds.size(), 1u);
    const Round& r = o.rounds[0];
    ASSERT_EQ(r.votes.size(), validators);
    EXPECT_EQ(r.leader_run.execution_hash.size(), 32u);
    for (const Vote& v : r.votes) {
      EXPECT_EQ(v.vote, "agree");
      EXPECT_EQ(v.execution_hash, r.leader_run.execution_hash);
    }
    EXPECT_EQ(o.record.execution_hash, r.leader_run.execution_hash);
    EXPECT_EQ(o.record.status, "accepted");
  }

  std::string genvm_, examples_;
};

TEST_F(NodeTest, CounterDeployCallViewThroughRealExecutors) {
  Node node(*state_, opts(3));
  auto d = node.deploy(account(0xa1), read_file(examples_ + "counter.wasm"), make_entry("", {}));
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  expect_unanimous(*d, 3);
  EXPECT_EQ(d->record.result_kind, 0) << d->record.result_text;
  const Address c = d->record.target;
  ASSERT_TRUE((*state_->contract(c)).has_value());

  auto inc = node.call(account(0xa1), c, make_entry("increment", {}));
  ASSERT_TRUE(inc.ok()) << inc.error().to_string();
  expect_unanimous(*inc, 3);
  EXPECT_EQ(inc->record.result_text, "1");
  auto add = node.call(account(0xa1), c, make_entry("add", {Value(41)}));
  ASSERT_TRUE(add.ok());
  EXPECT_EQ(add->record.result_text, "42");

  auto v = node.view(c, make_entry("get", {}));
  ASSERT_TRUE(v.ok()) << v.error().to_string();
  ASSERT_TRUE(v->report.is_map()) << v->stderr_text;
  EXPECT_EQ(*v->report.find("data"), Value(42));
  // A view commits nothing: the counter is still 42 and no transaction was added.
  auto again = node.view(c, make_entry("get", {}));
  EXPECT_EQ(*again->report.find("data"), Value(42));
  EXPECT_FALSE((*state_->tx(4)).has_value());
  EXPECT_EQ(*state_->nonce(account(0xa1)), 3u);
  EXPECT_TRUE(state_->check_consistency().ok());
}

TEST_F(NodeTest, TokenUserErrorIsAcceptedWithoutStorageChanges) {
  Node node(*state_, opts(2));
  auto d = node.deploy(account(0xa1), read_file(examples_ + "token.wasm"), make_entry("", {Value(1000)}));
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  ASSERT_EQ(d->record.result_kind, 0) << d->record.result_text;
  const Address t = d->record.target;
  auto ok = node.call(account(0xa1), t, make_entry("transfer", {Value(account(0xb2)), Value(300)}));
  ASSERT_TRUE(ok.ok());
  expect_unanimous(*ok, 2);
  EXPECT_EQ(ok->record.result_kind, 0) << ok->record.result_text;
  auto too_much = node.call(account(0xb2), t, make_entry("transfer", {Value(account(0xa1)), Value(301)}));
  ASSERT_TRUE(too_much.ok());
  expect_unanimous(*too_much, 2);
  EXPECT_EQ(too_much->record.result_kind, 1);  // UserError, agreed on, nothing written
  auto bal = [&](std::uint8_t who) {
    auto v = node.view(t, make_entry("balance_of", {Value(account(who))}));
    EXPECT_TRUE(v.ok() && v->report.is_map());
    return v.ok() && v->report.is_map() ? *v->report.find("data") : Value();
  };
  EXPECT_EQ(bal(0xa1), Value(700));
  EXPECT_EQ(bal(0xb2), Value(300));
  EXPECT_TRUE(state_->check_consistency().ok());
}

// Fails when votes are not counted: validators that deliver no result must not let the
// leader's result through, so the transaction ends undetermined with nothing written.
TEST_F(NodeTest, NoMajorityRotatesLeadersThenUndetermined) {
  Node deployer(*state_, opts(1));
  auto d = deployer.deploy(account(0xa1), read_file(examples_ + "counter.wasm"), make_entry("", {}));
  ASSERT_TRUE(d.ok());
  const Address c = d->record.target;
  NodeOptions o = opts(4, 2);
  // Nodes 0 and 1 run the real executor; nodes 2..4 run /bin/false, which delivers nothing.
  o.genvm_for_node = [](int node) { return node >= 2 ? std::string("/bin/false") : std::string(); };
  Node node(*state_, o);
  auto r = node.call(account(0xa1), c, make_entry("increment", {}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->record.status, "undetermined");
  ASSERT_EQ(r->rounds.size(), 2u);
  EXPECT_EQ(r->rounds[0].leader, 0);
  EXPECT_EQ(r->rounds[1].leader, 1);  // rotated
  for (const Round& rd : r->rounds) EXPECT_FALSE(rd.accepted);
  auto v = deployer.view(c, make_entry("get", {}));
  ASSERT_TRUE(v.ok() && v->report.is_map());
  EXPECT_EQ(*v->report.find("data"), Value(0));
  EXPECT_TRUE(state_->check_consistency().ok());

  // Three of four validators delivering the same hash is a majority.
  o.genvm_for_node = [](int node) { return node == 4 ? std::string("/bin/false") : std::string(); };
  Node mostly(*state_, o);
  auto ok = mostly.call(account(0xa1), c, make_entry("increment", {}));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->record.status, "accepted");
  EXPECT_EQ(ok->record.result_text, "1");
}

// Real disagreement: "byzantine" nodes run the real executor on a tampered entry (add 42 where
// the transaction says add 41), so their execution hashes differ from the honest nodes'. With
// nodes 1..3 byzantine, no round finds a majority (1/4, then 2/4 twice: the byzantine leaders
// are seconded only by each other) and the transaction is undetermined with nothing written;
// with node 4 alone byzantine, 3/4 agree and the honest result is committed. Fails when votes
// compare anything other than the execution hash (e.g. only the result kind: all are Return).
TEST_F(NodeTest, ByzantineNodesDisagreeRotateAndEndUndetermined) {
  const std::string tool = binary_dir() + "/tools/genvm-calldata/genvm-calldata";
  if (::access(tool.c_str(), X_OK) != 0) GTEST_SKIP() << "needs " << tool;
  Node deployer(*state_, opts(1));
  auto d = deployer.deploy(account(0xa1), read_file(examples_ + "counter.wasm"), make_entry("", {}));
  ASSERT_TRUE(d.ok());
  const Address c = d->record.target;
  const std::string honest = hex(calldata::encode(make_entry("add", {Value(41)})));
  const std::string tampered = hex(calldata::encode(make_entry("add", {Value(42)})));
  const std::string liar = dir_ + "/byzantine.sh";
  {
    std::ofstream f(liar);
    f << "#!/bin/sh\n\"" << tool << "\" decode | sed 's/" << honest << "/" << tampered << "/' | \"" << tool
      << "\" encode | \"" << genvm_ << "\" \"$@\"\n";
  }
  ASSERT_EQ(::chmod(liar.c_str(), 0755), 0);
  NodeOptions o = opts(4, 3);
  o.genvm_for_node = [liar](int node) { return node >= 1 && node <= 3 ? liar : std::string(); };
  Node node(*state_, o);
  auto r = node.call(account(0xa1), c, make_entry("add", {Value(41)}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->record.status, "undetermined");
  ASSERT_EQ(r->rounds.size(), 3u);
  const int expected_agree[3] = {1, 2, 2};
  for (int i = 0; i < 3; ++i) {
    const Round& rd = r->rounds[i];
    EXPECT_EQ(rd.leader, i);
    EXPECT_FALSE(rd.accepted);
    int agree = 0;
    for (const Vote& v : rd.votes) {
      // Every vote is a delivered result with a real hash, agreeing exactly when it is the leader's.
      EXPECT_EQ(v.execution_hash.size(), 32u);
      EXPECT_EQ(v.vote, v.execution_hash == rd.leader_run.execution_hash ? "agree" : "disagree");
      agree += v.vote == "agree";
    }
    EXPECT_EQ(agree, expected_agree[i]) << "round " << i + 1;
  }
  EXPECT_NE(r->rounds[0].leader_run.execution_hash, r->rounds[1].leader_run.execution_hash);
  auto v = deployer.view(c, make_entry("get", {}));
  ASSERT_TRUE(v.ok() && v->report.is_map());
  EXPECT_EQ(*v->report.find("data"), Value(0));  // nothing committed

  o.genvm_for_node = [liar](int node) { return node == 4 ? liar : std::string(); };
  Node mostly(*state_, o);
  auto ok = mostly.call(account(0xa1), c, make_entry("add", {Value(41)}));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->record.status, "accepted");
  EXPECT_EQ(ok->record.result_text, "41");
  ASSERT_EQ(ok->rounds.size(), 1u);
  for (const Vote& vt : ok->rounds[0].votes) {
    EXPECT_EQ(vt.vote, vt.node == 4 ? "disagree" : "agree");
    if (vt.node != 4) {
      EXPECT_EQ(vt.execution_hash, ok->rounds[0].leader_run.execution_hash);
    }
  }
  ::unlink(liar.c_str());
  EXPECT_TRUE(state_->check_consistency().ok());
}

TEST_F(NodeTest, EventsAreStoredAndPostedMessagesBecomeFollowUps) {
  Node node(*state_, opts(1));
  auto ev = node.deploy(account(0xa1), read_file(examples_ + "events.wasm"), make_entry("", {}));
  ASSERT_TRUE(ev.ok());
  ASSERT_EQ(ev->record.result_kind, 0) << ev->record.result_text;
  auto counter = node.deploy(account(0xa1), read_file(examples_ + "counter.wasm"), make_entry("", {}));
  ASSERT_TRUE(counter.ok());
  // The events contract posts back to its sender. Sent by a plain account, the follow-up is
  // recorded against an address with no contract.
  auto n = node.call(account(0xa1), ev->record.target, make_entry("notify", {Value("hi")}));
  ASSERT_TRUE(n.ok()) << n.error().to_string();
  ASSERT_EQ(n->record.result_kind, 0) << n->record.result_text;
  auto events = state_->events_of_tx(n->record.id);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].blob, Value::map({{"text", "hi"}}));
  ASSERT_EQ(n->follow_ups.size(), 1u);
  auto fu = state_->tx(n->follow_ups[0]);
  ASSERT_TRUE(fu.ok() && fu->has_value());
  EXPECT_EQ((*fu)->parent, n->record.id);
  EXPECT_EQ((*fu)->sender, ev->record.target);
  EXPECT_EQ((*fu)->target, account(0xa1));
  EXPECT_EQ((*fu)->result_kind, 2);
  // Sent "by" the counter contract, the follow-up really runs the counter, which has no
  // on_notified method: a UserError, agreed on by the validators.
  auto m = node.call(counter->record.target, ev->record.target, make_entry("notify", {Value("yo")}));
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->follow_ups.size(), 1u);
  auto fu2 = state_->tx(m->follow_ups[0]);
  ASSERT_TRUE(fu2.ok() && fu2->has_value());
  EXPECT_EQ((*fu2)->target, counter->record.target);
  EXPECT_EQ((*fu2)->status, "accepted");
  EXPECT_EQ((*fu2)->result_kind, 1) << (*fu2)->result_text;
  EXPECT_EQ((*fu2)->rounds, 1);
  EXPECT_TRUE((*state_->pending_messages()).empty());
  EXPECT_TRUE(state_->check_consistency().ok());
}

// Fails without the run deadline: the hanging validator would block the transaction forever.
TEST_F(NodeTest, HangingValidatorIsKilledAndVotesTimeout) {
  Node deployer(*state_, opts(1));
  auto d = deployer.deploy(account(0xa1), read_file(examples_ + "counter.wasm"), make_entry("", {}));
  ASSERT_TRUE(d.ok());
  const std::string hang = dir_ + "/hang.sh";
  {
    std::ofstream f(hang);
    f << "#!/bin/sh\nexec sleep 600\n";
  }
  ASSERT_EQ(::chmod(hang.c_str(), 0755), 0);
  NodeOptions o = opts(2, 1);
  o.run_timeout_ms = 2000;
  o.genvm_for_node = [hang](int node) { return node == 2 ? hang : std::string(); };
  Node node(*state_, o);
  auto r = node.call(account(0xa1), d->record.target, make_entry("increment", {}));
  ::unlink(hang.c_str());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->rounds.size(), 1u);
  ASSERT_EQ(r->rounds[0].votes.size(), 2u);
  for (const Vote& v : r->rounds[0].votes) {
    if (v.node == 2) {
      EXPECT_EQ(v.vote, "timeout");
    }
  }
  EXPECT_EQ(r->record.status, "undetermined");  // one agree of two is not a majority
}

// A validator whose own non-deterministic block rejects the leader's answer votes disagree
// although its execution hash is the leader's (the executor reports the block as
// nondet_disagreement); the vote and the receipt name the block. Fails when votes compare
// execution hashes only (the "4/4 agree").
TEST_F(NodeTest, AValidatorsRejectingBlockIsADisagreeVoteNamingTheBlock) {
  const std::string devloop = binary_dir() + "/tests/node/devloop.wasm";
  if (::access(devloop.c_str(), R_OK) != 0) GTEST_SKIP() << "needs " << devloop << " (genvm_node_test_contracts)";
  Node node(*state_, opts(3, 1));
  auto d = node.deploy(account(0xa1), read_file(devloop), make_entry("", {}));
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  ASSERT_EQ(d->record.result_kind, 0) << d->record.result_text;
  auto r = node.call(account(0xa1), d->record.target, make_entry("disagree", {}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->record.status, "undetermined");
  ASSERT_EQ(r->rounds.size(), 1u);
  ASSERT_EQ(r->rounds[0].votes.size(), 3u);
  for (const Vote& v : r->rounds[0].votes) {
    EXPECT_EQ(v.vote, "disagree");
    EXPECT_EQ(v.nondet_disagreement, std::optional<std::uint32_t>(1));  // the second block
    EXPECT_EQ(v.execution_hash, r->rounds[0].leader_run.execution_hash);  // the hash alone agrees
  }
  EXPECT_NE(r->record.votes_json.find("\"vote\":\"disagree\",\"kind\":\"Return\""), std::string::npos);
  EXPECT_NE(r->record.votes_json.find("\"nondet_disagreement\":1}"), std::string::npos) << r->record.votes_json;
  auto ok = node.call(account(0xa1), d->record.target, make_entry("agree", {}));
  ASSERT_TRUE(ok.ok());
  expect_unanimous(*ok, 3);
  for (const Vote& v : ok->rounds[0].votes) EXPECT_FALSE(v.nondet_disagreement.has_value());
}

// --debug-mode: from safe up every run of a transaction (leader and validators) leaves its
// stdout, stderr and log in the receipt, read back by debug_of_tx; disabled leaves none.
TEST_F(NodeTest, DebugRecordsKeepEachRunsStreamsFromSafeUp) {
  const std::string devloop = binary_dir() + "/tests/node/devloop.wasm";
  if (::access(devloop.c_str(), R_OK) != 0) GTEST_SKIP() << "needs " << devloop << " (genvm_node_test_contracts)";
  NodeOptions quiet = opts(2, 1);
  Node plain(*state_, quiet);
  auto d = plain.deploy(account(0xa1), read_file(devloop), make_entry("", {}));
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  auto none = plain.call(account(0xa1), d->record.target, make_entry("chatty", {}));
  ASSERT_TRUE(none.ok()) << none.error().to_string();
  auto none_kept = state_->debug_of_tx(none->record.id);
  ASSERT_TRUE(none_kept.ok());
  EXPECT_TRUE(none_kept->empty());

  NodeOptions loud = opts(2, 1);
  loud.debug_mode = DebugMode::kSafeUnbounded;
  Node debug(*state_, loud);
  auto r = debug.call(account(0xa1), d->record.target, make_entry("chatty", {}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  auto kept = state_->debug_of_tx(r->record.id);
  ASSERT_TRUE(kept.ok()) << kept.error().to_string();
  ASSERT_EQ(kept->size(), 3u);
  EXPECT_EQ((*kept)[0].role, "leader");
  EXPECT_EQ((*kept)[1].role, "validator");
  EXPECT_EQ((*kept)[2].role, "validator");
  for (const RunDebug& k : *kept) {
    EXPECT_EQ(k.debug_mode, "safe-unbounded");
    EXPECT_EQ(k.round, 1);
    EXPECT_EQ(k.stdout_text, "hello from stdout\n");
    EXPECT_EQ(k.stderr_text, "hello from stderr\n");
    EXPECT_EQ(k.stdout_bytes, k.stdout_text.size());
    EXPECT_FALSE(k.omitted);
    bool traced = false;
    for (const auto& line : k.log) traced |= line.find("\"tracing 42\"") != std::string::npos;
    EXPECT_TRUE(traced) << "no gl_trace line among " << k.log.size() << " log entries";
  }
  EXPECT_TRUE(state_->check_consistency().ok());
}

// The bounds: the last kDebugKeepStream bytes of each stream, the newest log entries within
// kDebugKeepLog bytes, and once a transaction's budget is spent, sizes only.
TEST(NodeDebugRecord, KeepsBoundedTailsAndSizes) {
  RunReport run;
  run.exit_code = 0;
  run.stdout_text = std::string(kDebugKeepStream, 'a') + "tail";
  run.stdout_bytes = run.stdout_text.size() + 100;  // the runner already cut 100 bytes
  run.stderr_text = "err";
  run.stderr_bytes = 3;
  const std::string entry = "{\"level\":\"info\",\"message\":\"" + std::string(1000, 'm') + "\"}";
  for (int i = 0; i < 40; ++i) run.log.push_back(entry);
  run.log.push_back("{\"message\":\"newest\"}");
  run.log_entries = run.log.size();
  std::size_t budget = kDebugKeepPerTx;
  RunDebug d = debug_record(run, 2, 3, "validator", DebugMode::kSafe, &budget);
  EXPECT_EQ(d.stdout_text.size(), kDebugKeepStream);
  EXPECT_EQ(d.stdout_text.substr(d.stdout_text.size() - 4), "tail");
  EXPECT_EQ(d.stdout_bytes, run.stdout_bytes);
  EXPECT_EQ(d.stderr_text, "err");
  EXPECT_EQ(d.log.back(), "{\"message\":\"newest\"}");
  std::size_t log_bytes = 0;
  for (const auto& l : d.log) log_bytes += l.size();
  EXPECT_LE(log_bytes, kDebugKeepLog);
  EXPECT_LT(d.log.size(), run.log.size());
  EXPECT_EQ(d.log_entries, run.log.size());
  EXPECT_EQ(d.debug_mode, "safe");
  EXPECT_EQ(budget, kDebugKeepPerTx - d.stdout_text.size() - d.stderr_text.size() - log_bytes);
  std::size_t small = 10;
  RunDebug over = debug_record(run, 2, 4, "validator", DebugMode::kSafe, &small);
  EXPECT_TRUE(over.omitted);
  EXPECT_TRUE(over.stdout_text.empty());
  EXPECT_TRUE(over.log.empty());
  EXPECT_EQ(over.stdout_bytes, run.stdout_bytes);
  EXPECT_EQ(small, 10u);
}

// The result a record keeps: code, payload (a Return's calldata, an error's text), run time and
// the leader's non-deterministic outputs; a payload past kDebugKeepResult only its size; an
// omitted record its code and time only.
TEST(NodeDebugRecord, KeepsTheResultPayloadTimeAndNondetOutputsWithinTheBound) {
  RunReport ret;
  ret.kind = 0;
  ret.run_us = 4321;
  ret.report = Value::map({{"data", Value(5)}, {"nondet_results", Value::array({Value(Bytes{0, 0x29})})}});
  std::size_t budget = kDebugKeepPerTx;
  RunDebug d = debug_record(ret, 1, 0, "leader", DebugMode::kSafe, &budget);
  EXPECT_EQ(d.kind, 0);
  EXPECT_EQ(d.result, calldata::encode(Value(5)));
  EXPECT_EQ(d.result_bytes, 1u);
  EXPECT_EQ(d.run_us, 4321u);
  ASSERT_EQ(d.eq_outputs.size(), 1u);
  EXPECT_EQ(d.eq_outputs[0], (Bytes{0, 0x29}));
  EXPECT_EQ(budget, kDebugKeepPerTx - 3);

  RunReport err;
  err.kind = 1;
  err.timed_out = false;
  err.report = Value::map({{"data", Value("unknown method")}});
  RunDebug e = debug_record(err, 1, 1, "validator", DebugMode::kSafe, &budget);
  EXPECT_EQ(std::string(e.result.begin(), e.result.end()), "unknown method");

  RunReport big;
  big.kind = 1;
  big.report = Value::map({{"data", Value(std::string(kDebugKeepResult + 1, 'm'))}});
  RunDebug b = debug_record(big, 1, 2, "validator", DebugMode::kSafe, &budget);
  EXPECT_TRUE(b.result.empty());
  EXPECT_EQ(b.result_bytes, kDebugKeepResult + 1);

  std::size_t none = 0;
  RunDebug o = debug_record(ret, 1, 0, "leader", DebugMode::kSafe, &none);
  EXPECT_TRUE(o.omitted);
  EXPECT_TRUE(o.result.empty());
  EXPECT_TRUE(o.eq_outputs.empty());
  EXPECT_EQ(o.kind, 0);
  EXPECT_EQ(o.run_us, 4321u);
}

// A leader still running at the deadline: its round says timeout, no validator runs, the
// progress reports zero validators for it. Fails when a leader timeout reads as any other
// failure ("none") or the progress counts validators that never ran.
TEST_F(NodeTest, ALeaderTimeoutIsNamedAndRunsNoValidators) {
  Node deployer(*state_, opts(1));
  auto d = deployer.deploy(account(0xa1), read_file(examples_ + "counter.wasm"), make_entry("", {}));
  ASSERT_TRUE(d.ok());
  const std::string hang = dir_ + "/hang.sh";
  {
    std::ofstream f(hang);
    f << "#!/bin/sh\nexec sleep 600\n";
  }
  ASSERT_EQ(::chmod(hang.c_str(), 0755), 0);
  NodeOptions o = opts(3, 2);  // round 2: node 1 leads, nodes 2, 3 agree, node 0 times out again
  o.run_timeout_ms = 1000;
  o.genvm_for_node = [hang](int node) { return node == 0 ? hang : std::string(); };
  std::vector<Progress> seen;
  o.progress = [&](const Progress& p) { seen.push_back(p); };
  Node node(*state_, o);
  auto r = node.call(account(0xa1), d->record.target, make_entry("increment", {}));
  ::unlink(hang.c_str());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->rounds.size(), 2u);  // node 1 leads round 2, and its result is accepted
  EXPECT_EQ(r->rounds[0].leader_outcome, "timeout");
  EXPECT_EQ(r->rounds[1].leader_outcome, "result");
  EXPECT_EQ(r->record.status, "accepted");
  ASSERT_EQ(r->rounds[1].votes.size(), 3u);
  EXPECT_EQ(r->rounds[1].votes[2].node, 0);
  EXPECT_EQ(r->rounds[1].votes[2].vote, "timeout");
  EXPECT_TRUE(r->rounds[0].votes.empty());
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen[0].leader_outcome, "timeout");
  EXPECT_EQ(seen[0].validators, 0);
  EXPECT_NE(r->record.votes_json.find("\"leader_outcome\":\"timeout\""), std::string::npos) << r->record.votes_json;
}

// Issue 19: a host fault is not consensus. Under an address-space limit genvm cannot map the
// contract's memory and reports an InternalError; with every node so limited the 4/4 agreeing
// hashes (an InternalError has empty ones) were committed as the outcome. Now a leader's
// InternalError is never validated or committed (the next node leads; when none can, the
// transaction is undetermined), and a validator's InternalError votes "error".
TEST_F(NodeTest, AnInternalErrorIsNeverCommittedAsAnOutcome) {
#if GENVM_ADDRESS_SANITIZER
  GTEST_SKIP() << "under ASan genvm reserves terabytes of shadow memory, so an address-space limit "
                  "stops ASan itself; the make test build runs this";
#endif
  Node deployer(*state_, opts(1));
  auto d = deployer.deploy(account(0xa1), read_file(examples_ + "counter.wasm"), make_entry("", {}));
  ASSERT_TRUE(d.ok());
  const std::string limited = dir_ + "/genvm-limited.sh";
  {
    std::ofstream f(limited);
    f << "#!/bin/sh\nulimit -v 1048576 || exit 97\nexec '" << genvm_ << "' \"$@\"\n";
  }
  ASSERT_EQ(::chmod(limited.c_str(), 0755), 0);

  NodeOptions all = opts(3, 2);
  all.genvm_for_node = [limited](int) { return limited; };
  Node everyone_limited(*state_, all);
  auto r = everyone_limited.call(account(0xa1), d->record.target, make_entry("increment", {}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->rounds.size(), 2u);
  for (const Round& rd : r->rounds) {
    EXPECT_EQ(rd.leader_run.kind, 3) << "the limited genvm reports an InternalError";
    EXPECT_EQ(rd.leader_outcome, "internal_error");
    EXPECT_TRUE(rd.votes.empty());
  }
  EXPECT_EQ(r->record.status, "undetermined");
  EXPECT_EQ(r->record.result_kind, -1);

  // Only node 0 limited: it leads round 1 (no result), votes "error" in round 2, which the
  // others carry.
  NodeOptions one = opts(3, 2);
  one.genvm_for_node = [limited](int node) { return node == 0 ? limited : std::string(); };
  Node one_limited(*state_, one);
  auto r2 = one_limited.call(account(0xa1), d->record.target, make_entry("increment", {}));
  ASSERT_TRUE(r2.ok()) << r2.error().to_string();
  ASSERT_EQ(r2->rounds.size(), 2u);
  EXPECT_EQ(r2->rounds[0].leader_outcome, "internal_error");
  EXPECT_EQ(r2->record.status, "accepted");
  EXPECT_EQ(r2->record.result_kind, 0);
  ASSERT_EQ(r2->rounds[1].votes.size(), 3u);
  EXPECT_EQ(r2->rounds[1].votes[2].node, 0);
  EXPECT_EQ(r2->rounds[1].votes[2].vote, "error");
  ::unlink(limited.c_str());
}

// A message committed by a node that died before running it is served by the next command.
TEST_F(NodeTest, PendingMessagesAreServedLater) {
  Node node(*state_, opts(1));
  auto counter = node.deploy(account(0xa1), read_file(examples_ + "counter.wasm"), make_entry("", {}));
  ASSERT_TRUE(counter.ok());
  // A "dead node": max_follow_ups 0 commits the posting transaction and runs no follow-up.
  NodeOptions dead = opts(1);
  dead.max_follow_ups = 0;
  Node first(*state_, dead);
  auto ev = first.deploy(account(0xa1), read_file(examples_ + "events.wasm"), make_entry("", {}));
  ASSERT_TRUE(ev.ok());
  auto n = first.call(counter->record.target, ev->record.target, make_entry("notify", {Value("later")}));
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(n->follow_ups.empty());
  ASSERT_EQ((*state_->pending_messages()).size(), 1u);
  auto served = node.serve_pending();
  ASSERT_TRUE(served.ok()) << served.error().to_string();
  ASSERT_EQ(served->size(), 1u);
  EXPECT_EQ((*state_->tx((*served)[0]))->parent, n->record.id);
  EXPECT_TRUE((*state_->pending_messages()).empty());
  EXPECT_TRUE(state_->check_consistency().ok());
}

// Issue 19 item 8: a contract whose follow-ups post further messages forever. Per command at most
// max_follow_ups run; per origin at most max_chain_follow_ups, then the chain's next message is
// recorded as dropped, and later commands run nothing of it.
TEST_F(NodeTest, AFollowUpChainEndsAtItsPerOriginLimit) {
  const std::string devloop = binary_dir() + "/tests/node/devloop.wasm";
  if (::access(devloop.c_str(), R_OK) != 0) GTEST_SKIP() << "needs " << devloop << " (genvm_node_test_contracts)";
  NodeOptions o = opts(1);
  o.max_follow_ups = 4;
  o.max_chain_follow_ups = 6;
  Node node(*state_, o);
  auto d = node.deploy(account(0xa1), read_file(devloop), make_entry("", {}));
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  auto p = node.call(account(0xa1), d->record.target, make_entry("ping", {}));
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p->follow_ups.size(), 4u);  // the per-command limit; the chain goes on pending
  auto later = node.serve_pending();
  ASSERT_TRUE(later.ok()) << later.error().to_string();
  // Follow-ups 5 and 6 run, the 7th message is dropped: the chain has 6 runs and one receipt.
  ASSERT_EQ(later->size(), 3u);
  auto last = state_->tx(later->back());
  ASSERT_TRUE(last.ok() && last->has_value());
  EXPECT_EQ((*last)->status, "dropped");
  EXPECT_NE((*last)->result_text.find("reached its limit of 6"), std::string::npos) << (*last)->result_text;
  auto chain = state_->chain_of(later->back());
  ASSERT_TRUE(chain.ok());
  EXPECT_EQ(chain->origin, p->record.id);
  EXPECT_EQ(chain->follow_ups, 7);
  EXPECT_TRUE((*state_->pending_messages()).empty());
  auto idle = node.serve_pending();
  ASSERT_TRUE(idle.ok());
  EXPECT_TRUE(idle->empty());
  EXPECT_TRUE(state_->check_consistency().ok());
}

// Non-deterministic blocks: the leader's block results (a wall clock) differ from anything a
// validator could compute, yet every validator, handed the leader's nondet_results, reaches the
// leader's execution hash.
TEST_F(NodeTest, NondetBlocksAgreeThroughLeaderResults) {
  if (::access((examples_ + "nondet.wasm").c_str(), R_OK) != 0) GTEST_SKIP() << "no nondet.wasm example";
  Node node(*state_, opts(3));
  auto d = node.deploy(account(0xa1), read_file(examples_ + "nondet.wasm"), make_entry("", {}));
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->record.result_kind, 0) << d->record.result_text;
  auto r = node.call(account(0xa1), d->record.target, make_entry("run", {Value(3)}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  expect_unanimous(*r, 3);
  EXPECT_EQ(r->record.result_kind, 0) << r->record.result_text;
  const Value* nd = r->rounds[0].leader_run.report.find("nondet_results");
  ASSERT_NE(nd, nullptr);
  ASSERT_TRUE(nd->is_array());
  EXPECT_EQ(nd->as_array().size(), 3u);  // one per block, handed to every validator
}

std::uint64_t low64(const std::array<std::uint8_t, 32>& le) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | le[i];
  return v;
}

// A call's value moves from sender to contract with the receipt, only on an accepted Return;
// the contract sees it (get_self_balance) during the run and afterwards. Fails when the commit
// does not move the value (balances stay 100/0) or moves it on a UserError.
TEST_F(NodeTest, ValueMovesWithAnAcceptedReturnOnly) {
  Node node(*state_, opts(2));
  ASSERT_TRUE(node.fund(account(0xa1), 100).ok());
  auto ev = node.deploy(account(0xa1), read_file(examples_ + "events.wasm"), make_entry("", {}));
  ASSERT_TRUE(ev.ok());
  const Address c = ev->record.target;
  // pay(3) posts 3 back to the sender and returns its own balance: 0 stored + 10 arriving - 3.
  auto paid = node.call(account(0xa1), c, make_entry("pay", {Value(3)}), 10);
  ASSERT_TRUE(paid.ok()) << paid.error().to_string();
  expect_unanimous(*paid, 2);
  EXPECT_EQ(paid->record.result_text, "7");
  EXPECT_EQ(low64(*state_->balance(account(0xa1))), 90u);
  // The 3 stay with the contract: the message went to an address without a contract.
  EXPECT_EQ(low64(*state_->balance(c)), 10u);
  EXPECT_EQ((*state_->tx(paid->record.id))->value, 10u);

  // A UserError moves nothing.
  auto bad = node.call(account(0xa1), c, make_entry("no_such_method", {}), 5);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->record.result_kind, 1);
  EXPECT_EQ(low64(*state_->balance(account(0xa1))), 90u);
  EXPECT_EQ(low64(*state_->balance(c)), 10u);

  // The committed value is what a later run's get_self_balance reads.
  auto again = node.call(account(0xa1), c, make_entry("pay", {Value(0)}));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->record.result_text, "10");

  // More than the sender holds: refused before anything runs or is recorded.
  auto nonce = *state_->nonce(account(0xa1));
  auto poor = node.call(account(0xa1), c, make_entry("pay", {Value(0)}), 1000);
  ASSERT_FALSE(poor.ok());
  EXPECT_EQ(poor.error().code, "insufficient_balance");
  EXPECT_EQ(*state_->nonce(account(0xa1)), nonce);
  EXPECT_TRUE(state_->check_consistency().ok()) << state_->check_consistency().error().to_string();
}

// Pins the write gate on a tampered state: counter.wasm's code blob changed in the SQLite file
// behind the node. A call to it is refused before anything runs, with the reason, and nothing
// changes (no receipt, no nonce, no storage); the refusal is kept in the file, so a deploy that
// does not touch the contract is refused too; check_consistency names the contract. Before, the
// call ran the changed code and committed.
TEST_F(NodeTest, ATamperedContractCodeRefusesWritesAndChangesNothing) {
  Node node(*state_, opts(1));
  auto d = node.deploy(account(0xa1), read_file(examples_ + "counter.wasm"), make_entry("", {}));
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  const Address c = d->record.target;
  ASSERT_TRUE(node.call(account(0xa1), c, make_entry("increment", {})).ok());
  ASSERT_TRUE(state_->check_consistency().ok()) << state_->check_consistency().error().to_string();

  auto slot = executor::indirection_slot(executor::kRootSlot, executor::kRootOffsetCode);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT data FROM storage WHERE address = ? AND slot = ?", -1, &q, nullptr), SQLITE_OK);
    sqlite3_bind_blob(q, 1, c.bytes.data(), static_cast<int>(c.bytes.size()), SQLITE_TRANSIENT);
    sqlite3_bind_blob(q, 2, slot.data(), static_cast<int>(slot.size()), SQLITE_TRANSIENT);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    const auto* p = static_cast<const std::uint8_t*>(sqlite3_column_blob(q, 0));
    Bytes blob(p, p + sqlite3_column_bytes(q, 0));
    sqlite3_finalize(q);
    ASSERT_GT(blob.size(), 13u);
    blob[12] ^= 0x40;  // one byte of the wasm module's first section header
    ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE storage SET data = ? WHERE address = ? AND slot = ?", -1, &q, nullptr), SQLITE_OK);
    sqlite3_bind_blob(q, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
    sqlite3_bind_blob(q, 2, c.bytes.data(), static_cast<int>(c.bytes.size()), SQLITE_TRANSIENT);
    sqlite3_bind_blob(q, 3, slot.data(), static_cast<int>(slot.size()), SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(q), SQLITE_DONE);
    EXPECT_EQ(sqlite3_changes(db), 1);
    sqlite3_finalize(q);
    sqlite3_close(db);
  }
  const auto nonce = *state_->nonce(account(0xa1));
  SlotId root{};
  const Bytes root_before = *state_->read_storage(c, root, 0, 64);

  auto call = node.call(account(0xa1), c, make_entry("increment", {}));
  ASSERT_FALSE(call.ok());
  EXPECT_EQ(call.error().code, "state_inconsistent");
  EXPECT_NE(call.error().message.find("the code of contract " + address_text(c) + " does not match its code hash"),
            std::string::npos)
      << call.error().message;
  auto other = node.deploy(account(0xa2), read_file(examples_ + "counter.wasm"), make_entry("", {}));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, "state_inconsistent");
  EXPECT_FALSE((*state_->tx(3)).has_value());
  EXPECT_EQ(*state_->nonce(account(0xa1)), nonce);
  EXPECT_EQ(*state_->nonce(account(0xa2)), 0u);
  EXPECT_EQ(*state_->read_storage(c, root, 0, 64), root_before);
  auto checked = state_->check_consistency();
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().message.find(address_text(c)), std::string::npos) << checked.error().message;
}

TEST_F(NodeTest, UnknownAddressIsAnError) {
  Node node(*state_, opts(1));
  auto r = node.call(account(0xa1), account(0x77), make_entry("get", {}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "unknown_address");
  auto v = node.view(account(0x77), make_entry("get", {}));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, "unknown_address");
}

// The one size limit end to end: a result above the manager's client message limit
// (max_message_bytes, 64 MiB) but below the host protocol's (host::kMaxResultBytes) passes the
// manager's host connection and reaches the node whole. Fails when the manager reads
// consume_result up to max_message_bytes: the connection is dropped and nothing is delivered
// (`host_closed`, every round undetermined for a transaction). Above kMaxResultBytes the executor
// makes it VMError `out_of memory # result too large` (result_test's ResultSizeLimit; a run at
// that size peaks above 1 GB, too much here).
TEST_F(NodeTest, AResultAboveTheManagersMessageLimitIsDelivered) {
  static_assert(host::kMaxResultBytes > (std::uint64_t(65) << 20));
  const std::string contract = binary_dir() + "/tests/executor/memory_budget.wasm";
  if (::access(contract.c_str(), R_OK) != 0) GTEST_SKIP() << "needs " << contract << " (genvm_executor_test_contracts)";
  NodeOptions o = opts(1);
  o.run_timeout_ms = 600000;  // a bound, not a timing: under ASan at -O0 this run alone takes a minute
  Node node(*state_, o);
  auto d = node.deploy(account(0xa1), read_file(contract), make_entry("", {}));
  ASSERT_TRUE(d.ok()) << d.error().to_string();
  ASSERT_EQ(d->record.result_kind, 0) << d->record.result_text;
  const std::uint64_t n = std::uint64_t(65) << 20;
  auto r = node.view(d->record.target, make_entry("ret", {Value(n)}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_TRUE(r->report.is_map()) << "nothing delivered: " << r->stderr_text;
  ASSERT_EQ(*r->report.find("kind"), Value("Return"));
  ASSERT_TRUE(r->report.find("data")->is_bytes());
  EXPECT_EQ(r->report.find("data")->as_bytes(), Bytes(n, 0x5a));
}

}  // namespace
}  // namespace genvm::node
