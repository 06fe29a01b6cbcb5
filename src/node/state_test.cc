// State: atomic commits, rollback on failure, locked database, consistency checks.
#include "node/state.h"
#include "node/test_state_dir.h"

#include "common/sha3.h"
#include "executor/storage.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

namespace genvm::node {
namespace {

using calldata::Value;

class StateTest : public testing::StateDir {
 protected:
  // Creates the schema, writes `sql` behind the State's back, reopens and runs the
  // consistency check: the error it reports (the tests expect one).
  Error check_after_raw_write(const char* sql) {
    { EXPECT_TRUE(State::open(path_).ok()); }  // creates the schema, then lets the file go
    sqlite3* raw = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    auto st = State::open(path_);
    if (!st.ok()) return st.error();
    auto s = (*st)->check_consistency();
    EXPECT_FALSE(s.ok());
    return s.ok() ? Error{} : s.error();
  }
};

Address addr(std::uint8_t b) {
  Address a;
  a.bytes.fill(b);
  return a;
}

// A storage change key: the slot id, then the first 32-byte page's index as u32 big-endian.
Bytes key(std::uint8_t slot_byte, std::uint32_t page) {
  Bytes k(36, slot_byte);
  for (int i = 0; i < 4; ++i) k[32 + i] = static_cast<std::uint8_t>(page >> (8 * (3 - i)));
  return k;
}

TxRecord deploy_record(const Address& sender, const Address& target) {
  TxRecord r;
  r.kind = "deploy";
  r.sender = sender;
  r.target = target;
  r.status = "accepted";
  r.result_kind = 0;
  r.result_text = "null";
  // No code stored by these records' effects: the code a contract's storage holds is then
  // empty, and its code hash that of nothing (State::verify_contract_code).
  auto empty = sha3_256(std::span<const std::uint8_t>());
  r.code_hash.assign(empty.begin(), empty.end());
  r.votes_json = "[]";
  return r;
}

TEST_F(StateTest, AcceptedCommitWritesStorageEventsMessagesAndNonce) {
  auto st = State::open(path_);
  ASSERT_TRUE(st.ok()) << st.error().to_string();
  Effects fx;
  fx.create_contract = true;
  fx.storage_changes = Value::array({Value::array({key(1, 0), Bytes{1, 2, 3}}), Value::array({key(1, 1), Bytes{9}})});
  fx.emissions = {Value::map({{"type", "EmitEvent"}, {"topics", Value::Array{}}, {"blob", Value::map({{"x", 1}})}}),
                  Value::map({{"type", "PostMessage"}, {"address", addr(5)}, {"calldata", Value::map({})}})};
  auto id = (*st)->commit(deploy_record(addr(0xa1), addr(0xc0)), fx);
  ASSERT_TRUE(id.ok()) << id.error().to_string();
  SlotId slot;
  slot.fill(1);
  auto b = (*st)->read_storage(addr(0xc0), slot, 0, 42);
  ASSERT_TRUE(b.ok());
  Bytes want(42, 0);
  want[0] = 1, want[1] = 2, want[2] = 3, want[32] = 9;  // page 1 starts at byte 32
  EXPECT_EQ(*b, want);
  // Another contract's slot with the same id is untouched.
  EXPECT_EQ(*(*st)->read_storage(addr(0xc1), slot, 0, 3), Bytes(3, 0));
  EXPECT_EQ(*(*st)->nonce(addr(0xa1)), 1u);
  auto ev = (*st)->events_of_tx(*id);
  ASSERT_TRUE(ev.ok());
  ASSERT_EQ(ev->size(), 1u);
  EXPECT_EQ((*ev)[0].blob, Value::map({{"x", 1}}));
  auto pending = (*st)->pending_messages();
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].index, 1);
  EXPECT_TRUE((*st)->check_consistency().ok());
}

// Fails when the rollback guard is removed: the first, valid storage change and the receipt
// would then stay in the database next to a failed commit.
TEST_F(StateTest, FailedCommitLeavesNoTrace) {
  auto st = State::open(path_);
  ASSERT_TRUE(st.ok());
  Effects fx;
  fx.create_contract = true;
  fx.storage_changes = Value::array({Value::array({key(1, 0), Bytes{1}}), Value::array({Bytes{1, 2}, Bytes{1}})});
  auto id = (*st)->commit(deploy_record(addr(0xa1), addr(0xc0)), fx);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, "state_changes");
  SlotId slot;
  slot.fill(1);
  EXPECT_EQ(*(*st)->read_storage(addr(0xc0), slot, 0, 1), Bytes{0});
  EXPECT_EQ(*(*st)->nonce(addr(0xa1)), 0u);
  EXPECT_FALSE((*(*st)->contract(addr(0xc0))).has_value());
  EXPECT_FALSE((*(*st)->tx(1)).has_value());
  // The connection is usable afterwards and the next commit gets a clean slate.
  fx.storage_changes = Value::array({Value::array({key(1, 0), Bytes{1}})});
  ASSERT_TRUE((*st)->commit(deploy_record(addr(0xa1), addr(0xc0)), fx).ok());
  EXPECT_TRUE((*st)->check_consistency().ok());
}

TEST_F(StateTest, UndeterminedCommitRecordsReceiptButNoEffects) {
  auto st = State::open(path_);
  ASSERT_TRUE(st.ok());
  TxRecord r = deploy_record(addr(0xa1), addr(0xc0));
  r.status = "undetermined";
  r.result_kind = -1;
  Effects fx;
  fx.create_contract = true;
  fx.storage_changes = Value::array({Value::array({key(1, 0), Bytes{1}})});
  auto id = (*st)->commit(r, fx);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ((*(*st)->tx(*id))->status, "undetermined");
  EXPECT_FALSE((*(*st)->contract(addr(0xc0))).has_value());
  SlotId slot;
  slot.fill(1);
  EXPECT_EQ(*(*st)->read_storage(addr(0xc0), slot, 0, 1), Bytes{0});
  EXPECT_TRUE((*st)->check_consistency().ok());
}

// Debug records go in with their receipt (also an undetermined one) and come back in run order;
// a file whose writer predates them gains the table at its next write open.
TEST_F(StateTest, DebugRecordsAreCommittedWithTheReceipt) {
  auto st = State::open(path_);
  ASSERT_TRUE(st.ok());
  TxRecord r = deploy_record(addr(0xa1), addr(0xc0));
  r.status = "undetermined";
  r.result_kind = -1;
  RunDebug leader;
  leader.round = 1;
  leader.role = "leader";
  leader.debug_mode = "safe";
  leader.exit_code = 0;
  leader.stdout_text = "out\n";
  leader.stdout_bytes = 4;
  leader.log = {"{\"message\":\"a\"}", "{\"message\":\"b\"}"};
  leader.log_entries = 2;
  leader.kind = 1;
  leader.result = Bytes{'n', 'o'};
  leader.result_bytes = 2;
  leader.run_us = 12345;
  leader.eq_outputs = {Bytes{0, 0x29}, Bytes{1, 'x'}};
  RunDebug validator = leader;
  validator.role = "validator";
  validator.node = 1;
  validator.omitted = true;
  validator.stdout_text.clear();
  validator.log.clear();
  r.debug = {leader, validator};
  auto id = (*st)->commit(r, Effects{});
  ASSERT_TRUE(id.ok()) << id.error().to_string();
  auto kept = (*st)->debug_of_tx(*id);
  ASSERT_TRUE(kept.ok()) << kept.error().to_string();
  ASSERT_EQ(kept->size(), 2u);
  EXPECT_EQ((*kept)[0].role, "leader");
  EXPECT_EQ((*kept)[0].stdout_text, "out\n");
  EXPECT_EQ((*kept)[0].log, leader.log);
  EXPECT_EQ((*kept)[0].log_entries, 2u);
  EXPECT_EQ((*kept)[0].kind, 1);
  EXPECT_EQ((*kept)[0].result, leader.result);
  EXPECT_EQ((*kept)[0].result_bytes, 2u);
  EXPECT_FALSE((*kept)[0].timed_out);
  EXPECT_EQ((*kept)[0].run_us, 12345u);
  EXPECT_EQ((*kept)[0].eq_outputs, leader.eq_outputs);
  EXPECT_EQ((*kept)[1].node, 1);
  EXPECT_TRUE((*kept)[1].omitted);
  EXPECT_EQ((*kept)[1].stdout_bytes, 4u);
  EXPECT_TRUE((*st)->check_consistency().ok());
  st->reset();
  Error orphan = check_after_raw_write("DELETE FROM transactions; UPDATE accounts SET nonce=0");
  EXPECT_EQ(orphan.code, "state_inconsistent");
  EXPECT_NE(orphan.message.find("debug record without a transaction"), std::string::npos) << orphan.message;
}

TEST_F(StateTest, ListingsPageInOrder) {
  auto st = State::open(path_);
  ASSERT_TRUE(st.ok());
  for (std::uint8_t c = 0xc0; c < 0xc3; ++c) {
    Effects fx;
    fx.create_contract = true;
    fx.storage_changes = Value::array({Value::array({key(c, 0), Bytes(32, c)})});
    ASSERT_TRUE((*st)->commit(deploy_record(addr(0xa1), addr(c)), fx).ok());
  }
  std::int64_t total = 0;
  auto cs = (*st)->contracts(2, 1, &total);
  ASSERT_TRUE(cs.ok());
  EXPECT_EQ(total, 3);
  ASSERT_EQ(cs->size(), 2u);
  EXPECT_EQ((*cs)[0].address, addr(0xc1));  // oldest first, after skipping one
  EXPECT_EQ((*cs)[1].slots, 1);
  auto ts = (*st)->txs(2, 0, std::nullopt, &total);
  ASSERT_TRUE(ts.ok());
  EXPECT_EQ(total, 3);
  ASSERT_EQ(ts->size(), 2u);
  EXPECT_EQ((*ts)[0].id, 3);  // newest first
  EXPECT_EQ((*ts)[0].target, addr(0xc2));
  auto about = (*st)->txs(10, 0, addr(0xc1), &total);
  ASSERT_TRUE(about.ok());
  EXPECT_EQ(total, 1);
  ASSERT_EQ(about->size(), 1u);
  EXPECT_EQ((*about)[0].id, 2);
  auto slots = (*st)->storage_slots(addr(0xc2), 10, 0, 4, &total);
  ASSERT_TRUE(slots.ok());
  EXPECT_EQ(total, 1);
  ASSERT_EQ(slots->size(), 1u);
  EXPECT_EQ((*slots)[0].size, 32);
  EXPECT_EQ((*slots)[0].head, Bytes(4, 0xc2));
  SlotId want;
  want.fill(0xc2);
  EXPECT_EQ((*slots)[0].slot, want);
}

TEST_F(StateTest, MessageIsServedOnlyOnce) {
  auto st = State::open(path_);
  ASSERT_TRUE(st.ok());
  Effects fx;
  fx.create_contract = true;
  fx.emissions = {Value::map({{"type", "PostMessage"}, {"address", addr(5)}, {"calldata", Value::map({})}})};
  auto parent = (*st)->commit(deploy_record(addr(0xa1), addr(0xc0)), fx);
  ASSERT_TRUE(parent.ok());
  TxRecord follow;
  follow.kind = "call";
  follow.sender = addr(0xc0);
  follow.target = addr(5);
  follow.status = "accepted";
  follow.result_kind = 2;
  follow.parent = *parent;
  Effects served;
  served.consumes_message = std::make_pair(*parent, 0);
  ASSERT_TRUE((*st)->commit(follow, served).ok());
  EXPECT_TRUE((*(*st)->pending_messages()).empty());
  auto again = (*st)->commit(follow, served);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, "state_message");
  EXPECT_TRUE((*st)->check_consistency().ok());
}

TEST_F(StateTest, LockedDatabaseIsOneClearError) {
  { ASSERT_TRUE(State::open(path_).ok()); }  // creates the schema, then lets the file go
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto st = State::open(path_);  // opening needs no lock: the file is ours and set up
  ASSERT_TRUE(st.ok()) << st.error().to_string();
  auto id = (*st)->commit(deploy_record(addr(0xa1), addr(0xc0)), Effects{});
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, "state_locked") << id.error().to_string();
  EXPECT_FALSE((*st)->probe_writable().ok());
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_TRUE((*st)->commit(deploy_record(addr(0xa1), addr(0xc0)), Effects{}).ok());
}

// WAL with normal locking: while a node holds its write transaction (begin() .. commit()),
// other connections — a read-only State, a raw sqlite3 reader — read the last commit at once,
// and see the new one after it. Fails with locking_mode=EXCLUSIVE ("database is locked").
TEST_F(StateTest, ReadersProceedWhileAWriteTransactionIsOpen) {
  auto writer = State::open(path_);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->commit(deploy_record(addr(0xa1), addr(0xc0)), Effects{}).ok());
  ASSERT_TRUE((*writer)->begin().ok());
  TxRecord second = deploy_record(addr(0xa1), addr(0xc1));
  auto reader = State::open(path_, OpenMode::kExisting);
  ASSERT_TRUE(reader.ok()) << reader.error().to_string();
  auto first = (*reader)->tx(1);
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  EXPECT_TRUE(first->has_value());
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(raw, "SELECT count(*) FROM transactions", nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(raw);
  // The writer's transaction holds a view of its own; its commit becomes visible afterwards.
  ASSERT_TRUE((*reader)->begin_read().ok());
  auto id = (*writer)->commit(second, Effects{});
  ASSERT_TRUE(id.ok()) << id.error().to_string();
  EXPECT_FALSE((*(*reader)->tx(*id)).has_value());  // the reader's snapshot predates it
  (*reader)->abort();
  EXPECT_TRUE((*(*reader)->tx(*id)).has_value());
  sqlite3_close(raw);
}

// A read command names a missing file and creates nothing; files that are not a genvm-node
// state are refused, naming them, and left as they were.
TEST_F(StateTest, ReadOpensCreateNothingAndForeignFilesAreRefused) {
  auto missing = State::open(dir_ + "/typo.db", OpenMode::kExisting);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, "state_missing");
  EXPECT_NE(access((dir_ + "/typo.db").c_str(), F_OK), 0);
  auto directory = State::open(dir_, OpenMode::kCreate);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().code, "state_open");

  const std::string foreign = dir_ + "/other.db";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE notes(x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  for (OpenMode m : {OpenMode::kExisting, OpenMode::kCreate}) {
    auto st = State::open(foreign, m);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, "state_foreign");
    EXPECT_NE(st.error().message.find(foreign + " is a SQLite database that genvm-node did not make"),
              std::string::npos)
        << st.error().message;
  }
  const std::string text = dir_ + "/text.db";
  { std::ofstream(text) << std::string(200, 'x'); }
  auto not_sqlite = State::open(text, OpenMode::kExisting);
  ASSERT_FALSE(not_sqlite.ok());
  EXPECT_EQ(not_sqlite.error().code, "state_foreign");
  EXPECT_NE(not_sqlite.error().message.find(text + " is not a SQLite database"), std::string::npos);

  ASSERT_TRUE(State::open(path_).ok());  // ours: created, then opened read-only
  EXPECT_TRUE(State::open(path_, OpenMode::kExisting).ok());
}

TEST_F(StateTest, ConsistencyCheckFindsOrphanStorage) {
  Error e = check_after_raw_write("INSERT INTO storage VALUES(x'01', x'02', x'03')");
  EXPECT_EQ(e.code, "state_inconsistent");
}

TEST(Addresses, ParseAndPrint) {
  auto a = parse_address("0x00000000000000000000000000000000000000A1");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(address_text(*a), "0x00000000000000000000000000000000000000a1");
  EXPECT_TRUE(parse_address("addr#00000000000000000000000000000000000000a1").ok());
  EXPECT_FALSE(parse_address("0x1234").ok());
  EXPECT_FALSE(parse_address("0x00000000000000000000000000000000000000g1").ok());
  EXPECT_NE(derive_contract_address(*a, 0), derive_contract_address(*a, 1));
}

}  // namespace
}  // namespace genvm::node

namespace genvm::node {
namespace {

// Fails when begin() does not take the write lock: a second node could then read the same old
// state and commit a result built on it (a lost update).
TEST_F(StateTest, AWriteTransactionLocksOutASecondWriter) {
  auto a = State::open(path_);
  auto b = State::open(path_);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->begin().ok());
  auto s = (*b)->begin();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, "state_locked");
  EXPECT_FALSE((*b)->probe_writable().ok());
  ASSERT_TRUE((*a)->commit(deploy_record(addr(0xa1), addr(0xc0)), Effects{}).ok());
  EXPECT_FALSE((*a)->in_transaction());
  EXPECT_TRUE((*b)->begin().ok());
  (*b)->abort();
  EXPECT_TRUE((*b)->probe_writable().ok());
}

}  // namespace
}  // namespace genvm::node

namespace genvm::node {
namespace {

TxRecord call_record(const Address& sender, const Address& target, std::uint64_t value) {
  TxRecord r = deploy_record(sender, target);
  r.kind = "call";
  r.code_hash.clear();
  r.value = value;
  return r;
}

std::uint64_t low64(const std::array<std::uint8_t, 32>& le) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | le[i];
  return v;
}

// The value moves in the receipt's SQL transaction: a debit past zero fails the whole commit
// (no receipt, no nonce, no credit). Fails when the transfer is written outside the commit's
// transaction or without the balance check.
TEST_F(StateTest, ValueMovesWithTheReceiptOrNotAtAll) {
  auto st = State::open(path_);
  ASSERT_TRUE(st.ok());
  TxRecord fund = call_record(Address{}, addr(0xa1), 50);
  fund.kind = "fund";
  ASSERT_TRUE((*st)->commit(fund, Effects{}).ok());
  ASSERT_TRUE((*st)->commit(call_record(addr(0xa1), addr(0xc0), 20), Effects{}).ok());
  EXPECT_EQ(low64(*(*st)->balance(addr(0xa1))), 30u);
  EXPECT_EQ(low64(*(*st)->balance(addr(0xc0))), 20u);
  auto too_much = (*st)->commit(call_record(addr(0xa1), addr(0xc0), 31), Effects{});
  ASSERT_FALSE(too_much.ok());
  EXPECT_EQ(too_much.error().code, "insufficient_balance");
  EXPECT_EQ(low64(*(*st)->balance(addr(0xa1))), 30u);
  EXPECT_EQ(low64(*(*st)->balance(addr(0xc0))), 20u);
  EXPECT_EQ(*(*st)->nonce(addr(0xa1)), 1u);
  EXPECT_FALSE((*(*st)->tx(3)).has_value());
  // A UserError receipt moves nothing.
  TxRecord err = call_record(addr(0xa1), addr(0xc0), 10);
  err.result_kind = 1;
  ASSERT_TRUE((*st)->commit(err, Effects{}).ok());
  EXPECT_EQ(low64(*(*st)->balance(addr(0xa1))), 30u);
  EXPECT_TRUE((*st)->check_consistency().ok());
}

// Fails without the conservation check: a balance that no fund receipt created goes unnoticed.
TEST_F(StateTest, ConsistencyCheckFindsValueFromNowhere) {
  Error e = check_after_raw_write(
      "INSERT INTO accounts(address, balance, nonce) VALUES(x'01',"
      " x'0500000000000000000000000000000000000000000000000000000000000000', 0)");
  EXPECT_EQ(e.code, "state_inconsistent");
  EXPECT_NE(e.message.find("funded"), std::string::npos) << e.message;
}

// The storage change that puts `code` where a deployment does: the default-derived code slot,
// from offset 0, as u32 LE length ‖ bytes.
Value code_change(const Bytes& code, const executor::SlotId& slot = executor::indirection_slot(executor::kRootSlot,
                                                                                                executor::kRootOffsetCode)) {
  Bytes blob(4);
  for (int i = 0; i < 4; ++i) blob[i] = static_cast<std::uint8_t>(code.size() >> (8 * i));
  blob.insert(blob.end(), code.begin(), code.end());
  Bytes k(slot.begin(), slot.end());
  k.resize(36, 0);  // page 0
  return Value::array({k, blob});
}

Bytes hash_of(const Bytes& b) {
  auto h = sha3_256(b);
  return Bytes(h.begin(), h.end());
}

Bytes text_bytes(const char* t) { return Bytes(t, t + std::strlen(t)); }

class CodeHashTest : public StateTest {
 protected:
  // Deploys `code` at addr(0xc0) from addr(0xa1) as the node commits an accepted deploy.
  void deploy(const Bytes& code) {
    auto st = State::open(path_);
    ASSERT_TRUE(st.ok()) << st.error().to_string();
    TxRecord r = deploy_record(addr(0xa1), addr(0xc0));
    r.code_hash = hash_of(code);
    Effects fx;
    fx.create_contract = true;
    fx.storage_changes = Value::array({code_change(code)});
    ASSERT_TRUE((*st)->commit(r, fx).ok());
    ASSERT_TRUE((*st)->check_consistency().ok()) << (*st)->check_consistency().error().to_string();
  }
  void raw(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    EXPECT_EQ(sqlite3_changes(db), 1) << sql;
    sqlite3_free(err);
    sqlite3_close(db);
  }
  static std::string blob_sql(const Bytes& b) { return "x'" + hex(b) + "'"; }
  std::string code_row_sql() {
    auto slot = executor::indirection_slot(executor::kRootSlot, executor::kRootOffsetCode);
    const Address c = addr(0xc0);
    return " WHERE address=" + blob_sql(Bytes(c.bytes.begin(), c.bytes.end())) +
           " AND slot=" + blob_sql(Bytes(slot.begin(), slot.end()));
  }
  TxRecord call_record() {
    TxRecord r = deploy_record(addr(0xa1), addr(0xc0));
    r.kind = "call";
    r.code_hash.clear();
    return r;
  }
};

// Pins `check` against the code hash: a code blob changed in the SQLite file behind the node
// is reported, naming the contract (before, check_consistency passed it), and once a check has
// marked the state, a write is refused with the reason and changes nothing, while reads still
// answer. A repaired file takes writes again.
TEST_F(CodeHashTest, ATamperedCodeBlobIsReportedAndRefusesWritesUntilRepaired) {
  const Bytes code = text_bytes("the contract as deployed");
  deploy(code);
  Bytes tampered(4 + code.size());
  tampered[0] = static_cast<std::uint8_t>(code.size());
  std::copy(code.begin(), code.end(), tampered.begin() + 4);
  tampered.back() ^= 1;
  raw("UPDATE storage SET data=" + blob_sql(tampered) + code_row_sql());

  auto st = State::open(path_);
  ASSERT_TRUE(st.ok());
  State& s = **st;
  auto checked = s.check_consistency();
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error().code, "state_inconsistent");
  auto problems = s.inconsistencies();
  ASSERT_TRUE(problems.ok());
  ASSERT_EQ(problems->size(), 1u);
  EXPECT_NE((*problems)[0].find("the code of contract " + address_text(addr(0xc0)) + " does not match its code hash"),
            std::string::npos)
      << (*problems)[0];
  EXPECT_NE((*problems)[0].find(hex(hash_of(code))), std::string::npos) << "names the recorded hash";

  ASSERT_TRUE(s.record_verdict(true).ok());  // what `genvm-node check` does with problems
  EXPECT_TRUE(*s.marked_inconsistent());
  auto probe = s.probe_writable();
  ASSERT_FALSE(probe.ok());
  EXPECT_EQ(probe.error().code, "state_inconsistent");
  auto id = s.commit(call_record(), Effects{});
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, "state_inconsistent");
  EXPECT_NE(id.error().message.find("does not match its code hash"), std::string::npos) << id.error().message;
  auto begun = s.begin();
  ASSERT_FALSE(begun.ok());
  EXPECT_FALSE(s.in_transaction());
  // Nothing changed, and reads answer.
  EXPECT_FALSE((*s.tx(2)).has_value());
  EXPECT_EQ(*s.nonce(addr(0xa1)), 1u);
  EXPECT_TRUE((*s.contract(addr(0xc0))).has_value());
  auto slot = executor::indirection_slot(executor::kRootSlot, executor::kRootOffsetCode);
  EXPECT_EQ(*s.read_storage(addr(0xc0), slot, 0, static_cast<std::uint32_t>(tampered.size())), tampered);

  // The mark lives in the file: another process is refused too.
  {
    auto other = State::open(path_);
    ASSERT_TRUE(other.ok());
    auto refused = (*other)->commit(call_record(), Effects{});
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, "state_inconsistent");
  }
  // Repaired (the original blob back): the next write finds nothing wrong, clears the mark and
  // commits.
  tampered.back() ^= 1;
  raw("UPDATE storage SET data=" + blob_sql(tampered) + code_row_sql());
  auto after = s.commit(call_record(), Effects{});
  ASSERT_TRUE(after.ok()) << after.error().to_string();
  EXPECT_FALSE(*s.marked_inconsistent());
  EXPECT_TRUE(s.check_consistency().ok());
}

// A code_hash changed in the file (rather than the code) is the same mismatch; so is a code
// length that points past the stored bytes.
TEST_F(CodeHashTest, ACodeHashOrALengthChangedInTheFileIsReported) {
  deploy(text_bytes("abc"));
  raw("UPDATE contracts SET code_hash=" + blob_sql(Bytes(32, 9)));
  {
    auto st = State::open(path_);
    ASSERT_TRUE(st.ok());
    auto v = (*st)->verify_contract_code(addr(0xc0));
    ASSERT_FALSE(v.ok());
    EXPECT_NE(v.error().message.find(hex(Bytes(32, 9))), std::string::npos) << v.error().message;
  }
  raw("UPDATE contracts SET code_hash=" + blob_sql(hash_of(text_bytes("abc"))));
  raw("UPDATE storage SET data=x'ffffff00616263'" + code_row_sql());  // 16 MiB claimed, 3 stored
  auto st = State::open(path_);
  ASSERT_TRUE(st.ok());
  EXPECT_FALSE((*st)->verify_contract_code(addr(0xc0)).ok());
  EXPECT_EQ((*st)->inconsistencies()->size(), 1u);
}

// A contract that rewrites its own code (its code slot, or the root slot's code_slot pointing
// at another slot) is not a tampered state: commit keeps code_hash on the stored code.
TEST_F(CodeHashTest, ACodeRewriteByTheContractKeepsTheHashInStep) {
  deploy(text_bytes("version 1"));
  auto st = State::open(path_);
  ASSERT_TRUE(st.ok());
  Effects rewrite;
  rewrite.storage_changes = Value::array({code_change(text_bytes("version two"))});
  ASSERT_TRUE((*st)->commit(call_record(), rewrite).ok());
  EXPECT_EQ((*(*st)->contract(addr(0xc0)))->code_hash, hash_of(text_bytes("version two")));
  EXPECT_TRUE((*st)->check_consistency().ok());

  executor::SlotId other{};
  other.fill(0x5c);
  Bytes root_key(36, 0);  // the root slot, page 0: code_slot is bytes 5..36
  Bytes root_page(37, 0);
  std::copy(other.begin(), other.end(), root_page.begin() + executor::kRootOffsetCodeSlot);
  Effects moved;
  moved.storage_changes = Value::array({code_change(text_bytes("version 3"), other), Value::array({root_key, root_page})});
  ASSERT_TRUE((*st)->commit(call_record(), moved).ok());
  EXPECT_EQ((*(*st)->contract(addr(0xc0)))->code_hash, hash_of(text_bytes("version 3")));
  EXPECT_TRUE((*st)->check_consistency().ok()) << (*st)->check_consistency().error().to_string();
}

}  // namespace
}  // namespace genvm::node

namespace genvm::node {
namespace {

// A file whose run_debug predates the result columns: readers see its records without results,
// the next writer adds the columns and keeps its records' results. (Fails when the columns are
// only in CREATE TABLE: the insert names columns the old table lacks.)
TEST_F(StateTest, OldDebugRecordsGainTheResultColumnsAtTheNextWrite) {
  { ASSERT_TRUE(State::open(path_).ok()); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "DROP TABLE run_debug; CREATE TABLE run_debug(tx INTEGER NOT NULL, seq INTEGER NOT NULL,"
                         " round INTEGER NOT NULL, node INTEGER NOT NULL, role TEXT NOT NULL, debug_mode TEXT NOT NULL,"
                         " exit_code INTEGER NOT NULL, stdout BLOB NOT NULL, stderr BLOB NOT NULL, log TEXT NOT NULL,"
                         " stdout_bytes INTEGER NOT NULL, stderr_bytes INTEGER NOT NULL, log_entries INTEGER NOT NULL,"
                         " omitted INTEGER NOT NULL, PRIMARY KEY(tx, seq));"
                         "INSERT INTO run_debug VALUES(7, 0, 1, 0, 'leader', 'safe', 0, x'', x'', '', 0, 0, 0, 0)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  {
    auto ro = State::open(path_, OpenMode::kExisting);
    ASSERT_TRUE(ro.ok());
    auto old = (*ro)->debug_of_tx(7);
    ASSERT_TRUE(old.ok()) << old.error().to_string();
    ASSERT_EQ(old->size(), 1u);
    EXPECT_EQ((*old)[0].kind, -1);
  }
  auto st = State::open(path_);
  ASSERT_TRUE(st.ok()) << st.error().to_string();
  TxRecord r = deploy_record(addr(0xa1), addr(0xc0));
  r.status = "undetermined";
  r.result_kind = -1;
  RunDebug d;
  d.round = 1;
  d.role = "leader";
  d.debug_mode = "safe";
  d.kind = 2;
  d.result = Bytes{'x'};
  d.timed_out = true;
  r.debug = {d};
  auto id = (*st)->commit(r, Effects{});
  ASSERT_TRUE(id.ok()) << id.error().to_string();
  auto kept = (*st)->debug_of_tx(*id);
  ASSERT_TRUE(kept.ok() && kept->size() == 1u);
  EXPECT_EQ((*kept)[0].kind, 2);
  EXPECT_TRUE((*kept)[0].timed_out);
  EXPECT_EQ((*kept)[0].result, d.result);
  auto old = (*st)->debug_of_tx(7);
  ASSERT_TRUE(old.ok() && old->size() == 1u);
  EXPECT_EQ((*old)[0].kind, -1);
  EXPECT_EQ((*old)[0].run_us, 0u);
}

}  // namespace
}  // namespace genvm::node
