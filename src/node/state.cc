#include "node/state.h"

#include <sqlite3.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "common/sha3.h"
#include "common/host/wire.h"
#include "executor/storage.h"
#include "node/sqlite_stmt.h"

namespace genvm::node {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS accounts(address BLOB PRIMARY KEY, balance BLOB NOT NULL, nonce INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS contracts(address BLOB PRIMARY KEY, code_hash BLOB NOT NULL, deployer BLOB NOT NULL,
                                     deploy_tx INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS storage(address BLOB NOT NULL, slot BLOB NOT NULL, data BLOB NOT NULL,
                                   PRIMARY KEY(address, slot)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS transactions(id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, sender BLOB NOT NULL,
  target BLOB NOT NULL, calldata BLOB NOT NULL, code_hash BLOB, status TEXT NOT NULL, result_kind INTEGER NOT NULL,
  result_text TEXT NOT NULL, execution_hash BLOB, rounds INTEGER NOT NULL, votes TEXT NOT NULL, parent INTEGER NOT NULL,
  value INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS transactions_by_parent ON transactions(parent);
CREATE TABLE IF NOT EXISTS events(tx INTEGER NOT NULL, idx INTEGER NOT NULL, contract BLOB NOT NULL, topics BLOB NOT NULL,
                                  blob BLOB NOT NULL, PRIMARY KEY(tx, idx));
CREATE TABLE IF NOT EXISTS messages(tx INTEGER NOT NULL, idx INTEGER NOT NULL, sender BLOB NOT NULL, emission BLOB NOT NULL,
                                    follow_up INTEGER, PRIMARY KEY(tx, idx));
)sql";

// Added after the first files were made: created by a writer that finds it missing (readers
// of such a file see no debug records).
constexpr const char* kRunDebugTable = R"sql(
CREATE TABLE IF NOT EXISTS run_debug(tx INTEGER NOT NULL, seq INTEGER NOT NULL, round INTEGER NOT NULL,
  node INTEGER NOT NULL, role TEXT NOT NULL, debug_mode TEXT NOT NULL, exit_code INTEGER NOT NULL,
  stdout BLOB NOT NULL, stderr BLOB NOT NULL, log TEXT NOT NULL, stdout_bytes INTEGER NOT NULL,
  stderr_bytes INTEGER NOT NULL, log_entries INTEGER NOT NULL, omitted INTEGER NOT NULL, kind INTEGER NOT NULL DEFAULT -1,
  result BLOB NOT NULL DEFAULT x'', result_bytes INTEGER NOT NULL DEFAULT 0, timed_out INTEGER NOT NULL DEFAULT 0,
  run_us INTEGER NOT NULL DEFAULT 0, eq_outputs BLOB NOT NULL DEFAULT x'', PRIMARY KEY(tx, seq));
)sql";
// Added to run_debug after its first files: the result of each run (RunDebug::kind ...).
constexpr const char* kRunDebugResultColumns[] = {
    "kind INTEGER NOT NULL DEFAULT -1", "result BLOB NOT NULL DEFAULT x''", "result_bytes INTEGER NOT NULL DEFAULT 0",
    "timed_out INTEGER NOT NULL DEFAULT 0", "run_us INTEGER NOT NULL DEFAULT 0", "eq_outputs BLOB NOT NULL DEFAULT x''"};

// The transactions columns every receipt reader selects, in TxRecord order (read_tx_row).
constexpr const char* kTxColumns =
    "id, kind, sender, target, calldata, code_hash, status, result_kind, result_text, execution_hash, rounds, votes,"
    " parent, value";


Error db_error(sqlite3* db, const std::string& what) {
  int rc = sqlite3_extended_errcode(db);
  if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
    return make_error("state_locked", "the state database is locked by another process (" + what + ")");
  }
  return make_error("state_sql", what + ": " + sqlite3_errmsg(db));
}

TxRecord read_tx_row(Stmt& q) {
  TxRecord r;
  r.id = q.col_i64(0);
  r.kind = q.col_text(1);
  r.sender = q.col_addr(2);
  r.target = q.col_addr(3);
  r.calldata = q.col_blob(4);
  r.code_hash = q.col_blob(5);
  r.status = q.col_text(6);
  r.result_kind = static_cast<int>(q.col_i64(7));
  r.result_text = q.col_text(8);
  r.execution_hash = q.col_blob(9);
  r.rounds = static_cast<int>(q.col_i64(10));
  r.votes_json = q.col_text(11);
  r.parent = q.col_i64(12);
  r.value = static_cast<std::uint64_t>(q.col_i64(13));
  return r;
}

// Rolls back unless committed: a failure anywhere in commit() leaves the database untouched.
class TxGuard {
 public:
  explicit TxGuard(sqlite3* db) : db_(db) {}
  ~TxGuard() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void done() { done_ = true; }

 private:
  sqlite3* db_;
  bool done_ = false;
};

// u256 little-endian arithmetic for balances.
using U256 = std::array<std::uint8_t, 32>;
U256 u256_of(std::uint64_t v) {
  U256 out{};
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
  return out;
}
// a += b; false on overflow past 2^256.
bool u256_add_to(U256& a, const U256& b) {
  unsigned carry = 0;
  for (int i = 0; i < 32; ++i) {
    unsigned s = unsigned(a[i]) + b[i] + carry;
    a[i] = static_cast<std::uint8_t>(s);
    carry = s >> 8;
  }
  return carry == 0;
}
// a -= b; false (a unchanged) when b > a.
bool u256_sub_from(U256& a, const U256& b) {
  U256 r = a;
  int borrow = 0;
  for (int i = 0; i < 32; ++i) {
    int d = int(r[i]) - b[i] - borrow;
    borrow = d < 0;
    r[i] = static_cast<std::uint8_t>(d + (borrow ? 256 : 0));
  }
  if (borrow) return false;
  a = r;
  return true;
}

}  // namespace

bool u256_less(const std::array<std::uint8_t, 32>& a, std::uint64_t v) {
  U256 b = u256_of(v);
  for (int i = 31; i >= 0; --i) {
    if (a[i] != b[i]) return a[i] < b[i];
  }
  return false;
}

std::string hex(const std::uint8_t* p, std::size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    s.push_back(d[p[i] >> 4]);
    s.push_back(d[p[i] & 15]);
  }
  return s;
}

std::string address_text(const Address& a) { return "0x" + hex(a.bytes.data(), a.bytes.size()); }

Result<Address> parse_address(std::string_view s) {
  std::string_view h = s;
  if (h.substr(0, 2) == "0x") {
    h.remove_prefix(2);
  } else if (h.substr(0, 5) == "addr#") {
    h.remove_prefix(5);
  }
  Address a;
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (h.size() != 40) return make_error("bad_address", "an address is 0x followed by 40 hex digits: '" + std::string(s) + "'");
  for (int i = 0; i < 20; ++i) {
    int hi = nib(h[2 * i]), lo = nib(h[2 * i + 1]);
    if (hi < 0 || lo < 0) return make_error("bad_address", "an address is 0x followed by 40 hex digits: '" + std::string(s) + "'");
    a.bytes[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return a;
}

Address derive_contract_address(const Address& deployer, std::uint64_t nonce) {
  // Our choice (the spec leaves addresses to the node): SHA3-256 of a domain tag, the deployer
  // and its nonce as u64 LE; the first 20 bytes. Deterministic, so replays give the same address.
  Bytes in;
  const char* tag = "genvm-node contract";
  in.insert(in.end(), tag, tag + std::strlen(tag));
  in.insert(in.end(), deployer.bytes.begin(), deployer.bytes.end());
  for (int i = 0; i < 8; ++i) in.push_back(static_cast<std::uint8_t>(nonce >> (8 * i)));
  auto d = sha3_256(in);
  Address a;
  std::memcpy(a.bytes.data(), d.data(), 20);
  return a;
}

namespace {

// PRAGMA application_id of a genvm-node state ("GnNd"): a SQLite file without it is not ours.
constexpr std::int64_t kApplicationId = 0x476e4e64;
constexpr const char* kTables[] = {"accounts", "contracts", "events", "messages", "storage", "transactions"};

}  // namespace

Result<std::unique_ptr<State>> State::open(const std::string& path, OpenMode mode) {
  // What the path is, before SQLite sees it: a read-only command must not create a file, and a
  // directory is one clear line rather than SQLite's "unable to open database file". stat()
  // only: opening the file ourselves and closing it would drop SQLite's POSIX locks on it.
  struct stat sb {};
  const bool exists = ::stat(path.c_str(), &sb) == 0;
  if (!exists) {
    if (errno == ENOENT && mode == OpenMode::kCreate) {
      // created below
    } else if (errno == ENOENT) {
      return make_error("state_missing", "no state database " + path +
                                             " (the first deploy or fund creates it; check --state)");
    } else {
      return make_error("state_open", "cannot open state database " + path + ": " + std::strerror(errno));
    }
  } else if (S_ISDIR(sb.st_mode)) {
    return make_error("state_open", "the state database " + path + " is a directory (--state names a file)");
  } else if (!S_ISREG(sb.st_mode)) {
    return make_error("state_open", "the state database " + path + " is not a regular file");
  } else if (sb.st_size == 0) {
    // SQLite would take a 0-byte file for a new database: a write would silently start a fresh
    // chain where the user's state was (a truncated copy, a failed restore).
    return make_error("state_foreign", path + " is an empty file (0 bytes), not a genvm-node state: remove it to "
                                              "start a new chain (check --state)");
  }
  // A state we may not write (its file, or the folder its -wal and -shm live in): readers open
  // it read-only, writers are refused in one line before anything runs.
  const std::string folder = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
  const bool read_only = exists && (::access(path.c_str(), W_OK) != 0 || ::access(folder.c_str(), W_OK) != 0);
  if (read_only && mode == OpenMode::kCreate) {
    return make_error("state_readonly", "the state database " + path +
                                            " is read-only (a write needs the file and its folder writable)");
  }
  sqlite3* db = nullptr;
  int flags = (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_FULLMUTEX |
              (mode == OpenMode::kCreate ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string m = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return make_error("state_open", "cannot open state database " + path + ": " + m);
  }
  // Small on purpose: a second writer on the same file fails fast with one clear line instead
  // of hanging. Readers never wait for a writer in WAL mode; this only bounds the moments a
  // reader must wait for another connection's WAL recovery or checkpoint.
  sqlite3_busy_timeout(db, mode == OpenMode::kCreate ? 100 : 2000);
  std::unique_ptr<State> st(new State(db));
  // Normal locking, WAL. Readers see the last committed snapshot while a node holds the write
  // lock for a whole transaction (begin() .. commit()); a kill -9 at any point leaves the WAL
  // that the next connection recovers from (docs/PROTOCOLS.md, "genvm-node state").
  auto ours = st->identify(path);
  if (!ours && read_only) {
    // A read-only WAL database whose -shm SQLite cannot create: without a -wal left by a
    // killed writer nothing is unread, so it is read as immutable.
    struct stat wal {};
    if (::stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0) {
      return make_error("state_readonly", "the state database " + path +
                                              " is read-only and holds an unrecovered -wal (a writer was killed); "
                                              "make it writable once so SQLite can recover it");
    }
    sqlite3_close(st->db_);
    st->db_ = nullptr;
    std::string uri = "file:";
    for (char ch : path) {
      if (ch == '?' || ch == '#' || ch == '%') {
        char esc[4];
        std::snprintf(esc, sizeof esc, "%%%02X", static_cast<unsigned char>(ch));
        uri += esc;
      } else {
        uri += ch;
      }
    }
    uri += "?immutable=1";
    rc = sqlite3_open_v2(uri.c_str(), &st->db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_URI, nullptr);
    if (rc != SQLITE_OK) return make_error("state_open", "cannot open state database " + path + ": " + sqlite3_errmsg(st->db_));
    db = st->db_;
    ours = st->identify(path);
  }
  if (!ours) return ours.take_error();
  if (*ours == Identity::kEmpty && mode != OpenMode::kCreate) {
    return make_error("state_foreign", path + " is an empty database, not a genvm-node state (check --state)");
  }
  if (mode == OpenMode::kCreate) {
    // journal_mode=WAL is persistent: set once, then a no-op.
    if (auto s = st->exec("PRAGMA journal_mode=WAL"); !s) return s.take_error();
  }
  // NORMAL: in WAL mode a commit survives a killed process (the WAL is in the OS's cache);
  // only a power loss may drop the last commits, and then whole transactions, never half.
  if (auto s = st->exec("PRAGMA synchronous=NORMAL"); !s) return s.take_error();
  if (auto s = st->exec("PRAGMA foreign_keys=ON"); !s) return s.take_error();
  st->read_only_ = read_only;
  if (mode == OpenMode::kCreate && *ours != Identity::kOurs) {
    // A new file (or one from before the marker): the schema and the marker in one transaction.
    if (auto s = st->exec("BEGIN IMMEDIATE"); !s) return s.take_error();
    TxGuard guard(db);
    if (auto s = st->exec(kSchema); !s) return s.take_error();
    if (auto s = st->exec(("PRAGMA application_id=" + std::to_string(kApplicationId)).c_str()); !s) {
      return s.take_error();
    }
    if (auto s = st->exec("COMMIT"); !s) return s.take_error();
    guard.done();
  }
  if (mode == OpenMode::kCreate &&
      sqlite3_exec(db, "SELECT value FROM transactions LIMIT 0", nullptr, nullptr, nullptr) != SQLITE_OK) {
    // A file made before transactions carried a value gets the column (default 0: nothing moved).
    if (auto s = st->exec("ALTER TABLE transactions ADD COLUMN value INTEGER NOT NULL DEFAULT 0"); !s) {
      return s.take_error();
    }
  }
  if (mode == OpenMode::kCreate) {
    // A file made before debug records gets their table (checked first: a writer that finds it
    // takes no lock here).
    auto has = st->has_table("run_debug");
    if (!has) return has.take_error();
    if (!*has) {
      if (auto s = st->exec(kRunDebugTable); !s) return s.take_error();
    } else if (sqlite3_exec(db, "SELECT run_us FROM run_debug LIMIT 0", nullptr, nullptr, nullptr) != SQLITE_OK) {
      // A file whose debug records predate the results in them gets the columns (defaults: none).
      for (const char* col : kRunDebugResultColumns) {
        if (auto s = st->exec((std::string("ALTER TABLE run_debug ADD COLUMN ") + col).c_str()); !s) {
          return s.take_error();
        }
      }
    }
  }
  return st;
}

Result<State::Identity> State::identify(const std::string& path) {
  Stmt id(db_, "PRAGMA application_id");
  int rc = id.ok() ? id.step() : SQLITE_ERROR;
  if (rc != SQLITE_ROW) {
    if ((sqlite3_errcode(db_) & 0xff) == SQLITE_NOTADB) {
      return make_error("state_foreign", path + " is not a SQLite database, so not a genvm-node state (check --state)");
    }
    return db_error(db_, "read " + path);
  }
  const std::int64_t app = id.col_i64(0);
  if (app == kApplicationId) return Identity::kOurs;
  std::vector<std::string> tables;
  {
    Stmt q(db_, "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
    if (!q.ok()) return db_error(db_, "read " + path);
    while ((rc = q.step()) == SQLITE_ROW) tables.push_back(q.col_text(0));
    if (rc != SQLITE_DONE) return db_error(db_, "read " + path);
  }
  if (app == 0 && tables.empty()) return Identity::kEmpty;
  if (app == 0 && std::equal(tables.begin(), tables.end(), std::begin(kTables), std::end(kTables))) {
    return Identity::kUnmarked;  // made by genvm-node before it set application_id
  }
  std::string names;
  for (std::size_t i = 0; i < tables.size() && i < 4; ++i) names += (i ? ", " : "") + tables[i];
  if (tables.size() > 4) names += ", ...";
  return make_error("state_foreign", path + " is a SQLite database that genvm-node did not make (application_id " +
                                         std::to_string(app) + (names.empty() ? "" : ", tables " + names) +
                                         "); use another --state");
}

State::~State() { sqlite3_close(db_); }

Status State::exec(const char* sql) {
  char* msg = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &msg);
  sqlite3_free(msg);
  if (rc != SQLITE_OK) {
    std::string head(sql, std::min<std::size_t>(std::strlen(sql), 40));
    while (!head.empty() && (head[0] == '\n' || head[0] == ' ')) head.erase(0, 1);
    return db_error(db_, head.substr(0, head.find('\n')));
  }
  return {};
}

Result<Bytes> State::read_storage(const Address& a, const SlotId& slot, std::uint32_t index, std::uint32_t len) {
  Bytes out(len, 0);
  Stmt q(db_, "SELECT data FROM storage WHERE address=? AND slot=?");
  if (!q.ok()) return db_error(db_, "read storage");
  q.addr(1, a).blob(2, slot.data(), slot.size());
  int rc = q.step();
  if (rc == SQLITE_ROW) {
    Bytes d = q.col_blob(0);
    for (std::uint32_t i = 0; i < len; ++i) {
      std::uint64_t at = std::uint64_t(index) + i;
      if (at < d.size()) out[i] = d[at];
    }
  } else if (rc != SQLITE_DONE) {
    return db_error(db_, "read storage");
  }
  return out;
}

Result<std::array<std::uint8_t, 32>> State::balance(const Address& a) {
  std::array<std::uint8_t, 32> out{};
  Stmt q(db_, "SELECT balance FROM accounts WHERE address=?");
  if (!q.ok()) return db_error(db_, "read balance");
  q.addr(1, a);
  int rc = q.step();
  if (rc == SQLITE_ROW) {
    Bytes b = q.col_blob(0);
    if (q.col_type(0) != SQLITE_BLOB || b.size() != 32) {
      return make_error("state_inconsistent", "the balance of " + address_text(a) + " is not a u256 (" +
                                                  std::to_string(b.size()) + " bytes, expected 32): the state is damaged");
    }
    std::memcpy(out.data(), b.data(), 32);
  } else if (rc != SQLITE_DONE) {
    return db_error(db_, "read balance");
  }
  return out;
}

Status State::add_balance(const Address& a, std::uint64_t v, bool credit) {
  auto cur = balance(a);
  if (!cur) return cur.take_error();
  U256 b = *cur;
  if (credit ? !u256_add_to(b, u256_of(v)) : !u256_sub_from(b, u256_of(v))) {
    return make_error(credit ? "balance_overflow" : "insufficient_balance",
                      address_text(a) + (credit ? " would hold more than 2^256-1" : " holds less than " + std::to_string(v)));
  }
  Stmt q(db_, "INSERT INTO accounts(address, balance) VALUES(?, ?) ON CONFLICT(address) DO UPDATE SET balance=excluded.balance");
  if (!q.ok()) return db_error(db_, "write balance");
  q.addr(1, a).blob(2, b.data(), b.size());
  if (q.step() != SQLITE_DONE) return db_error(db_, "write balance");
  return {};
}

Result<std::uint64_t> State::nonce(const Address& a) {
  Stmt q(db_, "SELECT nonce FROM accounts WHERE address=?");
  if (!q.ok()) return db_error(db_, "read nonce");
  q.addr(1, a);
  int rc = q.step();
  if (rc == SQLITE_ROW) return static_cast<std::uint64_t>(q.col_i64(0));
  if (rc != SQLITE_DONE) return db_error(db_, "read nonce");
  return std::uint64_t{0};
}

Result<std::optional<ContractInfo>> State::contract(const Address& a) {
  Stmt q(db_,
         "SELECT code_hash, deployer, deploy_tx, (SELECT count(*) FROM storage WHERE address=c.address),"
         " (SELECT coalesce(sum(length(data)),0) FROM storage WHERE address=c.address),"
         " (SELECT count(*) FROM events WHERE contract=c.address) FROM contracts c WHERE address=?");
  if (!q.ok()) return db_error(db_, "read contract");
  q.addr(1, a);
  int rc = q.step();
  if (rc == SQLITE_DONE) return std::optional<ContractInfo>();
  if (rc != SQLITE_ROW) return db_error(db_, "read contract");
  ContractInfo c;
  c.address = a;
  c.code_hash = q.col_blob(0);
  c.deployer = q.col_addr(1);
  c.deploy_tx = q.col_i64(2);
  c.slots = q.col_i64(3);
  c.bytes = q.col_i64(4);
  c.events = q.col_i64(5);
  return std::optional<ContractInfo>(c);
}

Result<std::optional<TxRecord>> State::tx(std::int64_t id) {
  Stmt q(db_, (std::string("SELECT ") + kTxColumns + " FROM transactions WHERE id=?").c_str());
  if (!q.ok()) return db_error(db_, "read transaction");
  q.i64(1, id);
  int rc = q.step();
  if (rc == SQLITE_DONE) return std::optional<TxRecord>();
  if (rc != SQLITE_ROW) return db_error(db_, "read transaction");
  return std::optional<TxRecord>(read_tx_row(q));
}

Result<bool> State::has_table(const char* name) {
  Stmt q(db_, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?");
  if (!q.ok()) return db_error(db_, "read schema");
  q.text(1, name);
  int rc = q.step();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_error(db_, "read schema");
  return rc == SQLITE_ROW;
}

Result<std::vector<RunDebug>> State::debug_of_tx(std::int64_t id) {
  std::vector<RunDebug> out;
  auto has = has_table("run_debug");
  if (!has) return has.take_error();
  if (!*has) return out;
  // A file no writer opened since run_debug got its result columns reads them as none.
  const bool with_results = sqlite3_exec(db_, "SELECT run_us FROM run_debug LIMIT 0", nullptr, nullptr, nullptr) == SQLITE_OK;
  Stmt q(db_, with_results ? "SELECT round, node, role, debug_mode, exit_code, stdout, stderr, log, stdout_bytes, stderr_bytes,"
                             " log_entries, omitted, kind, result, result_bytes, timed_out, run_us, eq_outputs"
                             " FROM run_debug WHERE tx=? ORDER BY seq"
                           : "SELECT round, node, role, debug_mode, exit_code, stdout, stderr, log, stdout_bytes, stderr_bytes,"
                             " log_entries, omitted FROM run_debug WHERE tx=? ORDER BY seq");
  if (!q.ok()) return db_error(db_, "read debug records");
  q.i64(1, id);
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    RunDebug d;
    d.round = static_cast<int>(q.col_i64(0));
    d.node = static_cast<int>(q.col_i64(1));
    d.role = q.col_text(2);
    d.debug_mode = q.col_text(3);
    d.exit_code = static_cast<int>(q.col_i64(4));
    Bytes o = q.col_blob(5), e = q.col_blob(6);
    d.stdout_text.assign(o.begin(), o.end());
    d.stderr_text.assign(e.begin(), e.end());
    const std::string log = q.col_text(7);
    for (std::size_t at = 0; at < log.size();) {
      std::size_t nl = log.find('\n', at);
      if (nl == std::string::npos) nl = log.size();
      if (nl > at) d.log.push_back(log.substr(at, nl - at));
      at = nl + 1;
    }
    d.stdout_bytes = static_cast<std::uint64_t>(q.col_i64(8));
    d.stderr_bytes = static_cast<std::uint64_t>(q.col_i64(9));
    d.log_entries = static_cast<std::uint64_t>(q.col_i64(10));
    d.omitted = q.col_i64(11) != 0;
    if (with_results) {
      d.kind = static_cast<int>(q.col_i64(12));
      d.result = q.col_blob(13);
      d.result_bytes = static_cast<std::uint64_t>(q.col_i64(14));
      d.timed_out = q.col_i64(15) != 0;
      d.run_us = static_cast<std::uint64_t>(q.col_i64(16));
      const Bytes eq = q.col_blob(17);
      if (!eq.empty()) {
        auto v = calldata::decode(eq);
        if (v && v->is_array()) {
          for (const calldata::Value& b : v->as_array()) {
            if (b.is_bytes()) d.eq_outputs.push_back(b.as_bytes());
          }
        }
      }
    }
    out.push_back(std::move(d));
  }
  if (rc != SQLITE_DONE) return db_error(db_, "read debug records");
  return out;
}

namespace {
// COUNT(*) of a query with one optional bound address parameter (bound twice when `twice`).
Result<std::int64_t> count_rows(sqlite3* db, const std::string& sql, const std::optional<Address>& a, bool twice) {
  Stmt q(db, sql.c_str());
  if (!q.ok()) return db_error(db, "count rows");
  if (a) {
    q.addr(1, *a);
    if (twice) q.addr(2, *a);
  }
  if (q.step() != SQLITE_ROW) return db_error(db, "count rows");
  return q.col_i64(0);
}
}  // namespace

Result<std::vector<ContractInfo>> State::contracts(std::int64_t limit, std::int64_t offset, std::int64_t* total) {
  if (total) {
    auto n = count_rows(db_, "SELECT count(*) FROM contracts", std::nullopt, false);
    if (!n) return n.take_error();
    *total = *n;
  }
  Stmt q(db_, "SELECT address FROM contracts ORDER BY deploy_tx, address LIMIT ? OFFSET ?");
  if (!q.ok()) return db_error(db_, "list contracts");
  q.i64(1, limit).i64(2, offset);
  std::vector<Address> addrs;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) addrs.push_back(q.col_addr(0));
  if (rc != SQLITE_DONE) return db_error(db_, "list contracts");
  std::vector<ContractInfo> out;
  for (const Address& a : addrs) {
    auto c = contract(a);
    if (!c) return c.take_error();
    if (*c) out.push_back(**c);
  }
  return out;
}

Result<std::vector<TxRecord>> State::txs(std::int64_t limit, std::int64_t offset, const std::optional<Address>& about,
                                         std::int64_t* total) {
  const std::string where = about ? " WHERE sender=? OR target=?" : "";
  if (total) {
    auto n = count_rows(db_, "SELECT count(*) FROM transactions" + where, about, true);
    if (!n) return n.take_error();
    *total = *n;
  }
  Stmt q(db_, (std::string("SELECT ") + kTxColumns + " FROM transactions" + where + " ORDER BY id DESC LIMIT ? OFFSET ?").c_str());
  if (!q.ok()) return db_error(db_, "list transactions");
  int i = 1;
  if (about) {
    q.addr(i++, *about);
    q.addr(i++, *about);
  }
  q.i64(i, limit).i64(i + 1, offset);
  std::vector<TxRecord> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) out.push_back(read_tx_row(q));
  if (rc != SQLITE_DONE) return db_error(db_, "list transactions");
  return out;
}

Result<std::vector<State::SlotData>> State::storage_slots(const Address& a, std::int64_t limit, std::int64_t offset,
                                                          std::uint32_t max_bytes, std::int64_t* total) {
  if (total) {
    auto n = count_rows(db_, "SELECT count(*) FROM storage WHERE address=?", a, false);
    if (!n) return n.take_error();
    *total = *n;
  }
  Stmt q(db_, "SELECT slot, length(data), substr(data, 1, ?) FROM storage WHERE address=? ORDER BY slot LIMIT ? OFFSET ?");
  if (!q.ok()) return db_error(db_, "list storage");
  q.i64(1, max_bytes).addr(2, a).i64(3, limit).i64(4, offset);
  std::vector<SlotData> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    SlotData d;
    Bytes id = q.col_blob(0);
    if (id.size() == d.slot.size()) std::memcpy(d.slot.data(), id.data(), id.size());
    d.size = q.col_i64(1);
    d.head = q.col_blob(2);
    out.push_back(std::move(d));
  }
  if (rc != SQLITE_DONE) return db_error(db_, "list storage");
  return out;
}

Result<std::vector<EventRecord>> State::events_of_tx(std::int64_t id) {
  Stmt q(db_, "SELECT idx, contract, topics, blob FROM events WHERE tx=? ORDER BY idx");
  if (!q.ok()) return db_error(db_, "read events");
  q.i64(1, id);
  std::vector<EventRecord> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    EventRecord e;
    e.tx = id;
    e.index = static_cast<int>(q.col_i64(0));
    e.contract = q.col_addr(1);
    auto t = calldata::decode(q.col_blob(2));
    auto b = calldata::decode(q.col_blob(3));
    if (t) e.topics = *t;
    if (b) e.blob = *b;
    out.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) return db_error(db_, "read events");
  return out;
}

Result<std::vector<PendingMessage>> State::pending_messages() {
  Stmt q(db_, "SELECT tx, idx, sender, emission FROM messages WHERE follow_up IS NULL ORDER BY tx, idx");
  if (!q.ok()) return db_error(db_, "read messages");
  std::vector<PendingMessage> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) {
    PendingMessage m;
    m.tx = q.col_i64(0);
    m.index = static_cast<int>(q.col_i64(1));
    m.from = q.col_addr(2);
    auto e = calldata::decode(q.col_blob(3));
    if (e) m.emission = *e;
    out.push_back(std::move(m));
  }
  if (rc != SQLITE_DONE) return db_error(db_, "read messages");
  return out;
}

Result<State::Chain> State::chain_of(std::int64_t tx) {
  Stmt q(db_, R"sql(
WITH RECURSIVE up(id, parent) AS (
  SELECT id, parent FROM transactions WHERE id = ?1
  UNION ALL SELECT t.id, t.parent FROM transactions t JOIN up ON t.id = up.parent WHERE up.parent != 0),
origin(id) AS (SELECT id FROM up WHERE parent = 0),
down(id) AS (SELECT id FROM origin UNION ALL SELECT t.id FROM transactions t JOIN down ON t.parent = down.id)
SELECT (SELECT id FROM origin), count(*) - 1 FROM down)sql");
  if (!q.ok()) return db_error(db_, "read a message chain");
  q.i64(1, tx);
  if (q.step() != SQLITE_ROW) return db_error(db_, "read a message chain");
  return Chain{q.col_i64(0), q.col_i64(1)};
}

Result<std::vector<std::pair<int, std::int64_t>>> State::messages_of_tx(std::int64_t id) {
  Stmt q(db_, "SELECT idx, coalesce(follow_up, 0) FROM messages WHERE tx=? ORDER BY idx");
  if (!q.ok()) return db_error(db_, "read messages");
  q.i64(1, id);
  std::vector<std::pair<int, std::int64_t>> out;
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) out.emplace_back(static_cast<int>(q.col_i64(0)), q.col_i64(1));
  if (rc != SQLITE_DONE) return db_error(db_, "read messages");
  return out;
}

Status State::probe_writable() {
  if (read_only_) return make_error("state_readonly", "the state database is read-only");
  if (auto s = exec("BEGIN IMMEDIATE"); !s) return s;
  if (auto s = refuse_if_inconsistent(); !s) return s;
  return exec("COMMIT");  // nothing written, unless a repaired state's mark was cleared
}

Status State::begin() {
  if (in_tx_) return make_error("state_nested", "a write transaction is already open");
  if (read_only_) return make_error("state_readonly", "the state database is read-only");
  // IMMEDIATE takes the write lock up front, so a concurrent writer is refused here, before
  // anything is read or written, rather than halfway through.
  if (auto s = exec("BEGIN IMMEDIATE"); !s) return s;
  if (auto s = refuse_if_inconsistent(); !s) return s;
  in_tx_ = true;
  return {};
}

namespace {
// PRAGMA user_version bit 0: a check found this state inconsistent (State::record_verdict).
constexpr std::int64_t kMarkedInconsistent = 1;

std::string listed(const std::vector<std::string>& problems) {
  std::string out;
  for (std::size_t i = 0; i < problems.size() && i < State::kMaxListed; ++i) out += (i ? "; " : "") + problems[i];
  if (problems.size() > State::kMaxListed) out += "; and " + std::to_string(problems.size() - State::kMaxListed) + " more";
  return out;
}
}  // namespace

Result<bool> State::marked_inconsistent() {
  Stmt q(db_, "PRAGMA user_version");
  if (!q.ok() || q.step() != SQLITE_ROW) return db_error(db_, "read the consistency mark");
  return (q.col_i64(0) & kMarkedInconsistent) != 0;
}

Status State::record_verdict(bool inconsistent) {
  if (read_only_) return make_error("state_readonly", "the state database is read-only");
  auto marked = marked_inconsistent();
  if (!marked) return marked.take_error();
  if (*marked == inconsistent) return {};
  Stmt q(db_, "PRAGMA user_version");
  if (!q.ok() || q.step() != SQLITE_ROW) return db_error(db_, "read the consistency mark");
  std::int64_t v = q.col_i64(0);
  v = inconsistent ? (v | kMarkedInconsistent) : (v & ~kMarkedInconsistent);
  return exec(("PRAGMA user_version=" + std::to_string(v)).c_str());
}

Status State::refuse_if_inconsistent() {
  auto fail = [this](Error e) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return e;
  };
  auto marked = marked_inconsistent();
  if (!marked) return fail(marked.take_error());
  if (!*marked) return {};
  // Marked: look again, so a repaired file is written to at once and a damaged one says why.
  auto problems = inconsistencies();
  if (!problems) return fail(problems.take_error());
  if (problems->empty()) return record_verdict(false);  // cleared with this transaction
  return fail(make_error("state_inconsistent", "writes are refused while the state is inconsistent: " + listed(*problems) +
                                                   " (genvm-node check lists every problem; once it finds none, writes resume)"));
}

Result<SlotId> State::code_slot(const Address& a) {
  auto at = read_storage(a, executor::kRootSlot, executor::kRootOffsetCodeSlot, kSha3_256Len);
  if (!at) return at.take_error();
  SlotId slot{};
  std::copy(at->begin(), at->end(), slot.begin());
  if (slot == SlotId{}) slot = executor::indirection_slot(executor::kRootSlot, executor::kRootOffsetCode);
  return slot;
}

Result<std::array<std::uint8_t, 32>> State::stored_code_hash(const Address& a) {
  auto slot = code_slot(a);
  if (!slot) return slot.take_error();
  Bytes data;
  {
    Stmt q(db_, "SELECT data FROM storage WHERE address=? AND slot=?");
    if (!q.ok()) return db_error(db_, "read code");
    q.addr(1, a).blob(2, slot->data(), slot->size());
    int rc = q.step();
    if (rc == SQLITE_ROW) {
      data = q.col_blob(0);
    } else if (rc != SQLITE_DONE) {
      return db_error(db_, "read code");
    }
  }
  // The executor's read: u32 LE length, then that many bytes, zero past what is stored.
  std::uint32_t len = 0;
  for (std::size_t i = 0; i < 4 && i < data.size(); ++i) len |= std::uint32_t(data[i]) << (8 * i);
  const std::size_t stored = data.size() > 4 ? static_cast<std::size_t>(std::min<std::uint64_t>(len, data.size() - 4)) : 0;
  Sha3_256 h;
  if (stored > 0) h.update(std::span<const std::uint8_t>(data.data() + 4, stored));
  static const std::uint8_t kZeros[4096] = {};
  for (std::uint64_t left = len - stored; left > 0;) {
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, sizeof(kZeros)));
    h.update(std::span<const std::uint8_t>(kZeros, n));
    left -= n;
  }
  return h.finalize();
}

Status State::verify_contract_code(const Address& a) {
  Bytes recorded;
  {
    Stmt q(db_, "SELECT code_hash FROM contracts WHERE address=?");
    if (!q.ok()) return db_error(db_, "read contract");
    q.addr(1, a);
    int rc = q.step();
    if (rc == SQLITE_DONE) return {};
    if (rc != SQLITE_ROW) return db_error(db_, "read contract");
    recorded = q.col_blob(0);
  }
  auto h = stored_code_hash(a);
  if (!h) return h.take_error();
  if (recorded == Bytes(h->begin(), h->end())) return {};
  return make_error("state_inconsistent", "the code of contract " + address_text(a) + " does not match its code hash (it hashes to " +
                                              hex(h->data(), h->size()) + ", the contract records " + hex(recorded) + ")");
}

Status State::begin_read() {
  if (in_tx_) return make_error("state_nested", "a transaction is already open");
  if (auto s = exec("BEGIN"); !s) return s;
  in_tx_ = true;
  // WAL takes the snapshot at the first read, so read now.
  if (auto s = exec("SELECT 1 FROM accounts LIMIT 1"); !s) {
    abort();
    return s;
  }
  return {};
}

void State::abort() {
  if (in_tx_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  in_tx_ = false;
}

Result<std::int64_t> State::commit(const TxRecord& rec, const Effects& fx) {
  if (!in_tx_) {
    if (auto s = begin(); !s) return s.take_error();
  }
  in_tx_ = false;  // this call ends the transaction either way
  TxGuard guard(db_);
  const bool accepted = rec.status == "accepted";
  std::int64_t id = 0;
  {
    Stmt q(db_,
           "INSERT INTO transactions(kind, sender, target, calldata, code_hash, status, result_kind, result_text,"
           " execution_hash, rounds, votes, parent, value) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!q.ok()) return db_error(db_, "insert transaction");
    q.text(1, rec.kind).addr(2, rec.sender).addr(3, rec.target).blob(4, rec.calldata).blob(5, rec.code_hash);
    q.text(6, rec.status).i64(7, rec.result_kind).text(8, rec.result_text).blob(9, rec.execution_hash);
    if (rec.value > std::uint64_t(INT64_MAX)) return make_error("bad_value", "a value is at most 2^63-1");
    q.i64(10, rec.rounds).text(11, rec.votes_json).i64(12, rec.parent).i64(13, static_cast<std::int64_t>(rec.value));
    if (q.step() != SQLITE_DONE) return db_error(db_, "insert transaction");
    id = sqlite3_last_insert_rowid(db_);
  }
  {
    Stmt q(db_,
           "INSERT INTO accounts(address, balance, nonce) VALUES(?, zeroblob(32), 1)"
           " ON CONFLICT(address) DO UPDATE SET nonce=nonce+1");
    if (!q.ok()) return db_error(db_, "bump nonce");
    q.addr(1, rec.sender);
    if (q.step() != SQLITE_DONE) return db_error(db_, "bump nonce");
  }
  if (fx.consumes_message) {
    Stmt q(db_, "UPDATE messages SET follow_up=? WHERE tx=? AND idx=? AND follow_up IS NULL");
    if (!q.ok()) return db_error(db_, "mark message");
    q.i64(1, id).i64(2, fx.consumes_message->first).i64(3, fx.consumes_message->second);
    if (q.step() != SQLITE_DONE) return db_error(db_, "mark message");
    if (sqlite3_changes(db_) != 1) return make_error("state_message", "the message was already served");
  }
  if (accepted && rec.result_kind == 0) {
    if (rec.value > 0) {
      // The value moves with the receipt: debit and credit in this same SQL transaction. A
      // `fund` transaction creates it (the node's faucet); nothing else does.
      if (rec.kind != "fund") {
        if (auto s = add_balance(rec.sender, rec.value, false); !s) return s.take_error();
      }
      if (auto s = add_balance(rec.target, rec.value, true); !s) return s.take_error();
    }
    if (fx.create_contract) {
      Stmt q(db_, "INSERT INTO contracts(address, code_hash, deployer, deploy_tx) VALUES(?,?,?,?)");
      if (!q.ok()) return db_error(db_, "insert contract");
      q.addr(1, rec.target).blob(2, rec.code_hash).addr(3, rec.sender).i64(4, id);
      if (q.step() != SQLITE_DONE) return db_error(db_, "insert contract (address taken?)");
    }
    // The code may change with these writes (its slot, or the root slot's code_slot pointing
    // elsewhere): the contract's code_hash follows what its storage then holds.
    std::optional<SlotId> code_at;
    bool root_written = false, code_written = false;
    if (fx.storage_changes.is_array() && !fx.storage_changes.as_array().empty()) {
      auto at = code_slot(rec.target);
      if (!at) return at.take_error();
      code_at = *at;
    }
    if (fx.storage_changes.is_array()) {
      for (const auto& d : fx.storage_changes.as_array()) {
        const auto* pair = d.if_array();
        if (!pair || pair->size() != 2 || !(*pair)[0].is_bytes() || !(*pair)[1].is_bytes() ||
            (*pair)[0].as_bytes().size() != 36) {
          return make_error("state_changes", "a storage change must be [bytes36, bytes]");
        }
        const Bytes& key = (*pair)[0].as_bytes();
        const Bytes& value = (*pair)[1].as_bytes();
        Bytes data;
        {
          Stmt r(db_, "SELECT data FROM storage WHERE address=? AND slot=?");
          r.addr(1, rec.target).blob(2, key.data(), 32);
          int rc = r.step();
          if (rc == SQLITE_ROW) data = r.col_blob(0);
          else if (rc != SQLITE_DONE) return db_error(db_, "read storage");
        }
        if (auto st = host::apply_storage_change(key, value, data); !st) {
          return make_error("state_changes", st.error().message);
        }
        Stmt w(db_, "INSERT OR REPLACE INTO storage(address, slot, data) VALUES(?,?,?)");
        w.addr(1, rec.target).blob(2, key.data(), 32).blob(3, data);
        if (w.step() != SQLITE_DONE) return db_error(db_, "write storage");
        root_written = root_written || std::equal(key.begin(), key.begin() + 32, executor::kRootSlot.begin());
        code_written = code_written || std::equal(key.begin(), key.begin() + 32, code_at->begin());
      }
    }
    if (root_written && !code_written) {
      auto at = code_slot(rec.target);
      if (!at) return at.take_error();
      code_written = *at != *code_at;
    }
    if (code_written) {
      auto h = stored_code_hash(rec.target);
      if (!h) return h.take_error();
      Stmt q(db_, "UPDATE contracts SET code_hash=? WHERE address=?");
      if (!q.ok()) return db_error(db_, "update code hash");
      q.blob(1, h->data(), h->size()).addr(2, rec.target);
      if (q.step() != SQLITE_DONE) return db_error(db_, "update code hash");
    }
    int idx = 0;
    for (const auto& e : fx.emissions) {
      const auto* type = e.find("type");
      if (type && type->is_string() && type->as_string() == "EmitEvent") {
        Stmt q(db_, "INSERT INTO events(tx, idx, contract, topics, blob) VALUES(?,?,?,?,?)");
        const auto* topics = e.find("topics");
        const auto* blob = e.find("blob");
        q.i64(1, id).i64(2, idx).addr(3, rec.target);
        q.blob(4, calldata::encode(topics ? *topics : calldata::Value()));
        q.blob(5, calldata::encode(blob ? *blob : calldata::Value()));
        if (q.step() != SQLITE_DONE) return db_error(db_, "insert event");
      } else {
        Stmt q(db_, "INSERT INTO messages(tx, idx, sender, emission) VALUES(?,?,?,?)");
        q.i64(1, id).i64(2, idx).addr(3, rec.target).blob(4, calldata::encode(e));
        if (q.step() != SQLITE_DONE) return db_error(db_, "insert message");
      }
      ++idx;
    }
  }
  int seq = 0;
  for (const RunDebug& d : rec.debug) {
    Stmt q(db_,
           "INSERT INTO run_debug(tx, seq, round, node, role, debug_mode, exit_code, stdout, stderr, log, stdout_bytes,"
           " stderr_bytes, log_entries, omitted, kind, result, result_bytes, timed_out, run_us, eq_outputs)"
           " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!q.ok()) return db_error(db_, "insert debug record");
    std::string log;
    for (const auto& line : d.log) log += line + "\n";
    q.i64(1, id).i64(2, seq++).i64(3, d.round).i64(4, d.node).text(5, d.role).text(6, d.debug_mode).i64(7, d.exit_code);
    q.blob(8, reinterpret_cast<const std::uint8_t*>(d.stdout_text.data()), d.stdout_text.size());
    q.blob(9, reinterpret_cast<const std::uint8_t*>(d.stderr_text.data()), d.stderr_text.size());
    q.text(10, log).i64(11, static_cast<std::int64_t>(d.stdout_bytes)).i64(12, static_cast<std::int64_t>(d.stderr_bytes));
    q.i64(13, static_cast<std::int64_t>(d.log_entries)).i64(14, d.omitted ? 1 : 0);
    calldata::Value::Array eq;
    for (const Bytes& b : d.eq_outputs) eq.emplace_back(b);
    q.i64(15, d.kind).blob(16, d.result).i64(17, static_cast<std::int64_t>(d.result_bytes)).i64(18, d.timed_out ? 1 : 0);
    q.i64(19, static_cast<std::int64_t>(d.run_us)).blob(20, eq.empty() ? Bytes{} : calldata::encode(calldata::Value(std::move(eq))));
    if (q.step() != SQLITE_DONE) return db_error(db_, "insert debug record");
  }
  if (commit_hook_) {
    CommitHook hook = std::move(commit_hook_);
    commit_hook_ = nullptr;
    if (auto s = hook(db_, id); !s) return s.take_error();
  }
  if (auto s = exec("COMMIT"); !s) return s.take_error();
  guard.done();
  return id;
}

void State::set_busy_timeout(int ms) { sqlite3_busy_timeout(db_, ms); }

Result<std::vector<std::string>> State::inconsistencies() {
  std::vector<std::string> problems;
  struct Check {
    const char* sql;
    const char* what;
  };
  static const Check kChecks[] = {
      {"SELECT count(*) FROM storage WHERE address NOT IN (SELECT address FROM contracts)", "storage without a contract"},
      {"SELECT count(*) FROM contracts WHERE deploy_tx NOT IN (SELECT id FROM transactions WHERE status='accepted')",
       "contract without its accepted deploy"},
      {"SELECT count(*) FROM events WHERE tx NOT IN (SELECT id FROM transactions)", "event without a transaction"},
      {"SELECT count(*) FROM messages WHERE tx NOT IN (SELECT id FROM transactions)", "message without a transaction"},
      {"SELECT count(*) FROM messages WHERE follow_up IS NOT NULL AND follow_up NOT IN (SELECT id FROM transactions)",
       "message served by a missing transaction"},
      {"SELECT count(*) FROM accounts a WHERE nonce != (SELECT count(*) FROM transactions t WHERE t.sender=a.address)",
       "nonce differs from the sender's transaction count"},
      {"SELECT count(*) FROM transactions t WHERE t.kind='deploy' AND t.status='accepted' AND t.result_kind=0 AND"
       " t.target NOT IN (SELECT address FROM contracts)",
       "accepted deploy without its contract"},
      {"SELECT count(*) FROM accounts WHERE typeof(balance) != 'blob' OR length(balance) != 32",
       "balance that is not a u256 (32 bytes)"},
  };
  auto has_debug = has_table("run_debug");  // absent in a file no writer has opened since
  if (!has_debug) return has_debug.take_error();
  static const Check kDebugCheck = {"SELECT count(*) FROM run_debug WHERE tx NOT IN (SELECT id FROM transactions)",
                                    "debug record without a transaction"};
  std::vector<const Check*> checks;
  for (const auto& c : kChecks) checks.push_back(&c);
  if (*has_debug) checks.push_back(&kDebugCheck);
  for (const Check* c : checks) {
    Stmt q(db_, c->sql);
    if (!q.ok() || q.step() != SQLITE_ROW) return db_error(db_, c->what);
    if (auto n = q.col_i64(0); n != 0) problems.push_back(std::to_string(n) + " x " + c->what);
  }
  {
    // Every contract's code is what its code hash says: a code blob or a code_hash changed
    // behind the node's back is named, contract by contract.
    std::vector<Address> addresses;
    Stmt q(db_, "SELECT address FROM contracts ORDER BY deploy_tx");
    if (!q.ok()) return db_error(db_, "read contracts");
    int rc;
    while ((rc = q.step()) == SQLITE_ROW) addresses.push_back(q.col_addr(0));
    if (rc != SQLITE_DONE) return db_error(db_, "read contracts");
    for (const Address& a : addresses) {
      auto s = verify_contract_code(a);
      if (s) continue;
      if (s.error().code != "state_inconsistent") return s.take_error();
      problems.push_back(s.error().message);
    }
  }
  {
    // Value is conserved: every balance together is exactly what `fund` transactions created.
    U256 held{}, funded{};
    bool overflow = false;
    Stmt b(db_, "SELECT balance FROM accounts");
    if (!b.ok()) return db_error(db_, "read balances");
    int rc;
    while ((rc = b.step()) == SQLITE_ROW) {
      Bytes x = b.col_blob(0);
      U256 v{};
      if (x.size() == 32) std::memcpy(v.data(), x.data(), 32);
      if (!u256_add_to(held, v)) overflow = true;
    }
    if (rc != SQLITE_DONE) return db_error(db_, "read balances");
    Stmt f(db_, "SELECT value FROM transactions WHERE kind='fund' AND status='accepted' AND result_kind=0");
    if (!f.ok()) return db_error(db_, "read funding");
    while ((rc = f.step()) == SQLITE_ROW) u256_add_to(funded, u256_of(static_cast<std::uint64_t>(f.col_i64(0))));
    if (rc != SQLITE_DONE) return db_error(db_, "read funding");
    if (overflow) {
      problems.push_back("balances sum past 2^256");
    } else if (held != funded) {
      problems.push_back("balances do not sum to the funded total");
    }
  }
  Stmt q(db_, "PRAGMA integrity_check");
  if (!q.ok() || q.step() != SQLITE_ROW) return db_error(db_, "integrity_check");
  if (q.col_text(0) != "ok") problems.push_back("sqlite integrity_check: " + q.col_text(0));
  return problems;
}

Status State::check_consistency() {
  auto problems = inconsistencies();
  if (!problems) return problems.take_error();
  if (!problems->empty()) return make_error("state_inconsistent", listed(*problems));
  return {};
}

}  // namespace genvm::node
