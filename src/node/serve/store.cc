#include "node/serve/store.h"

#include <sqlite3.h>

#include <cstring>
#include <ctime>

#include "node/sqlite_stmt.h"

namespace genvm::node::serve {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS serve_txs(seq INTEGER PRIMARY KEY AUTOINCREMENT, hash BLOB NOT NULL UNIQUE,
  sender BLOB NOT NULL, nonce INTEGER NOT NULL, type INTEGER NOT NULL, recipient BLOB NOT NULL,
  value INTEGER NOT NULL, code BLOB NOT NULL, calldata BLOB NOT NULL, leader_only INTEGER NOT NULL,
  num_validators INTEGER NOT NULL, max_rotations INTEGER NOT NULL, status TEXT NOT NULL,
  state_tx INTEGER NOT NULL DEFAULT 0, result BLOB NOT NULL DEFAULT x'', error TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL, decided_at INTEGER NOT NULL DEFAULT 0, UNIQUE(sender, nonce));
CREATE INDEX IF NOT EXISTS serve_txs_by_status ON serve_txs(status);
CREATE INDEX IF NOT EXISTS serve_txs_by_recipient ON serve_txs(recipient);
CREATE TABLE IF NOT EXISTS serve_validators(id INTEGER PRIMARY KEY AUTOINCREMENT, address BLOB NOT NULL UNIQUE,
  stake INTEGER NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL, config TEXT NOT NULL, plugin TEXT NOT NULL,
  plugin_config TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS serve_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS serve_providers(id INTEGER PRIMARY KEY AUTOINCREMENT, provider TEXT NOT NULL,
  model TEXT NOT NULL, config TEXT NOT NULL, plugin TEXT NOT NULL, plugin_config TEXT NOT NULL,
  is_default INTEGER NOT NULL);
)sql";

constexpr const char* kValidatorColumns = "id, address, stake, provider, model, config, plugin, plugin_config, created_at";

constexpr const char* kColumns =
    "seq, hash, sender, nonce, type, recipient, value, code, calldata, leader_only, num_validators, max_rotations,"
    " status, state_tx, result, error, created_at, decided_at, sim_config, nodes";


Error db_error(sqlite3* db, const std::string& what) {
  int rc = sqlite3_extended_errcode(db) & 0xff;
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
    return make_error("state_locked", "the state database stayed locked by another writer (" + what + ")");
  }
  return make_error("state_sql", what + ": " + sqlite3_errmsg(db));
}

std::int64_t now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

QueuedTx read_row(Stmt& q) {
  QueuedTx t;
  t.seq = q.col_i64(0);
  Bytes h = q.col_blob(1);
  if (h.size() == 32) std::memcpy(t.hash.data(), h.data(), 32);
  auto addr = [&](int c) {
    Address a;
    Bytes b = q.col_blob(c);
    if (b.size() == 20) std::memcpy(a.bytes.data(), b.data(), 20);
    return a;
  };
  t.from = addr(2);
  t.nonce = static_cast<std::uint64_t>(q.col_i64(3));
  t.type = static_cast<TxType>(q.col_i64(4));
  t.to = addr(5);
  t.value = static_cast<std::uint64_t>(q.col_i64(6));
  t.code = q.col_blob(7);
  t.calldata = q.col_blob(8);
  t.leader_only = q.col_i64(9) != 0;
  t.num_validators = static_cast<int>(q.col_i64(10));
  t.max_rotations = static_cast<int>(q.col_i64(11));
  t.status = q.col_text(12);
  t.state_tx = q.col_i64(13);
  t.result = q.col_blob(14);
  t.error = q.col_text(15);
  t.created_at = q.col_i64(16);
  t.decided_at = q.col_i64(17);
  t.sim_config = q.col_text(18);
  t.nodes = q.col_text(19);
  return t;
}

StoredValidator read_validator(Stmt& q) {
  StoredValidator v;
  v.id = q.col_i64(0);
  v.address = q.col_addr(1);
  v.stake = q.col_i64(2);
  v.provider = q.col_text(3);
  v.model = q.col_text(4);
  v.config = q.col_text(5);
  v.plugin = q.col_text(6);
  v.plugin_config = q.col_text(7);
  v.created_at = q.col_i64(8);
  return v;
}

class SqliteStore final : public TxStore {
 public:
  explicit SqliteStore(sqlite3* db) : db_(db) {}
  ~SqliteStore() override { sqlite3_close(db_); }

  // After a BEGIN IMMEDIATE: rolls the write transaction back when it leaves scope without
  // `done` (an error return); set `done` once COMMIT succeeded.
  struct RollbackUnlessDone {
    SqliteStore* s;
    bool done = false;
    ~RollbackUnlessDone() {
      if (!done) sqlite3_exec(s->db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
  };

  Status exec(const char* sql) {
    char* msg = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
      std::string m = msg ? msg : "";
      sqlite3_free(msg);
      return db_error(db_, m);
    }
    return {};
  }

  bool has_column(const char* table, const char* column) {
    Stmt q(db_, (std::string("SELECT 1 FROM pragma_table_info('") + table + "') WHERE name=?").c_str());
    q.text(1, column);
    return q.step() == SQLITE_ROW;
  }

  Result<std::uint64_t> next_nonce(const Address& sender) override {
    Stmt q(db_, "SELECT count(*) FROM serve_txs WHERE sender=?");
    if (!q.ok()) return db_error(db_, "count nonces");
    q.addr(1, sender);
    if (q.step() != SQLITE_ROW) return db_error(db_, "count nonces");
    return static_cast<std::uint64_t>(q.col_i64(0));
  }

  Result<std::int64_t> enqueue(const QueuedTx& t) override {
    if (t.value > std::uint64_t(INT64_MAX) || t.nonce > std::uint64_t(INT64_MAX)) {
      return make_error("bad_value", "a value or nonce is at most 2^63-1");
    }
    // The nonce check and the insert in one write transaction: two submissions with the same
    // nonce cannot both pass.
    if (auto s = exec("BEGIN IMMEDIATE"); !s) return s.take_error();
    RollbackUnlessDone guard{this};
    {
      Stmt q(db_, "SELECT 1 FROM serve_txs WHERE hash=?");
      q.hash(1, t.hash);
      if (q.step() == SQLITE_ROW) return make_error("known_transaction", "already known: " + hash_hex(t.hash));
    }
    auto next = next_nonce(t.from);
    if (!next) return next.take_error();
    if (t.nonce != *next) {
      return make_error(t.nonce < *next ? "nonce_too_low" : "nonce_too_high",
                        std::string(t.nonce < *next ? "nonce too low" : "nonce too high") + ": " + address_text(t.from) +
                            " has nonce " + std::to_string(*next) + ", the transaction has " + std::to_string(t.nonce));
    }
    Stmt q(db_,
           "INSERT INTO serve_txs(hash, sender, nonce, type, recipient, value, code, calldata, leader_only,"
           " num_validators, max_rotations, status, created_at, sim_config) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    if (!q.ok()) return db_error(db_, "queue a transaction");
    q.hash(1, t.hash).addr(2, t.from).i64(3, static_cast<std::int64_t>(t.nonce)).i64(4, static_cast<int>(t.type));
    q.addr(5, t.to).i64(6, static_cast<std::int64_t>(t.value)).blob(7, t.code).blob(8, t.calldata);
    q.i64(9, t.leader_only).i64(10, t.num_validators).i64(11, t.max_rotations).text(12, t.status).i64(13, t.created_at);
    q.text(14, t.sim_config);
    if (q.step() != SQLITE_DONE) return db_error(db_, "queue a transaction");
    std::int64_t seq = sqlite3_last_insert_rowid(db_);
    if (auto s = exec("COMMIT"); !s) return s.take_error();
    guard.done = true;
    return seq;
  }

  Result<std::optional<QueuedTx>> one(const std::string& where, const Hash* h) {
    Stmt q(db_, (std::string("SELECT ") + kColumns + " FROM serve_txs " + where).c_str());
    if (!q.ok()) return db_error(db_, "read the queue");
    if (h) q.hash(1, *h);
    int rc = q.step();
    if (rc == SQLITE_DONE) return std::optional<QueuedTx>();
    if (rc != SQLITE_ROW) return db_error(db_, "read the queue");
    return std::optional<QueuedTx>(read_row(q));
  }

  Result<std::optional<QueuedTx>> get(const Hash& h) override { return one("WHERE hash=?", &h); }
  Result<std::optional<QueuedTx>> next_undecided() override {
    return one("WHERE status IN ('PENDING','PROPOSING') ORDER BY seq LIMIT 1", nullptr);
  }

  Status set_status(const Hash& h, const std::string& status) override {
    Stmt q(db_, "UPDATE serve_txs SET status=? WHERE hash=?");
    q.text(1, status).hash(2, h);
    if (q.step() != SQLITE_DONE) return db_error(db_, "update a status");
    return {};
  }

  Result<bool> claim(const Hash& h) override { return move_from_pending(h, "PROPOSING"); }
  Result<bool> cancel(const Hash& h) override { return move_from_pending(h, "CANCELED"); }

  Result<bool> move_from_pending(const Hash& h, const char* status) {
    Stmt q(db_, "UPDATE serve_txs SET status=? WHERE hash=? AND status='PENDING'");
    if (!q.ok()) return db_error(db_, "update a status");
    q.text(1, status).hash(2, h);
    if (q.step() != SQLITE_DONE) return db_error(db_, "update a status");
    return sqlite3_changes(db_) == 1;
  }

  Status decide(const QueuedTx& t) override {
    Stmt q(db_,
           "UPDATE serve_txs SET status=?, state_tx=?, result=?, error=?, decided_at=?, recipient=?, nodes=? WHERE hash=?");
    q.text(1, t.status).i64(2, t.state_tx).blob(3, t.result).text(4, t.error).i64(5, t.decided_at).addr(6, t.to);
    q.text(7, t.nodes).hash(8, t.hash);
    if (q.step() != SQLITE_DONE) return db_error(db_, "record a decision");
    return {};
  }

  Result<std::vector<Hash>> finalize_until(std::int64_t before_ms) override {
    Stmt q(db_,
           "UPDATE serve_txs SET status='FINALIZED' WHERE status IN ('ACCEPTED','UNDETERMINED') AND decided_at<=? "
           "RETURNING hash");
    q.i64(1, before_ms);
    std::vector<Hash> out;
    int rc;
    while ((rc = q.step()) == SQLITE_ROW) {
      Bytes h = q.col_blob(0);
      Hash one{};
      if (h.size() == 32) std::memcpy(one.data(), h.data(), 32);
      out.push_back(one);
    }
    if (rc != SQLITE_DONE) return db_error(db_, "finalize");
    return out;
  }

  Result<std::vector<QueuedTx>> for_address(const Address& a, std::int64_t limit) override {
    Stmt q(db_, (std::string("SELECT ") + kColumns +
                 " FROM serve_txs WHERE sender=?1 OR recipient=?1 ORDER BY seq DESC LIMIT ?2").c_str());
    if (!q.ok()) return db_error(db_, "list transactions");
    q.addr(1, a).i64(2, limit);
    std::vector<QueuedTx> out;
    int rc;
    while ((rc = q.step()) == SQLITE_ROW) out.push_back(read_row(q));
    if (rc != SQLITE_DONE) return db_error(db_, "list transactions");
    return out;
  }

  Result<std::optional<QueuedTx>> by_seq(std::int64_t seq) override {
    Stmt q(db_, (std::string("SELECT ") + kColumns + " FROM serve_txs WHERE seq=?").c_str());
    if (!q.ok()) return db_error(db_, "read the queue");
    q.i64(1, seq);
    int rc = q.step();
    if (rc == SQLITE_DONE) return std::optional<QueuedTx>();
    if (rc != SQLITE_ROW) return db_error(db_, "read the queue");
    return std::optional<QueuedTx>(read_row(q));
  }

  Result<std::vector<QueuedTx>> range(std::int64_t from, std::int64_t to, std::int64_t limit) override {
    Stmt q(db_, (std::string("SELECT ") + kColumns + " FROM serve_txs WHERE seq BETWEEN ? AND ? ORDER BY seq LIMIT ?").c_str());
    if (!q.ok()) return db_error(db_, "read the queue");
    q.i64(1, from).i64(2, to).i64(3, limit);
    std::vector<QueuedTx> out;
    int rc;
    while ((rc = q.step()) == SQLITE_ROW) out.push_back(read_row(q));
    if (rc != SQLITE_DONE) return db_error(db_, "read the queue");
    return out;
  }

  Result<std::vector<StoredValidator>> validators() override {
    Stmt q(db_, (std::string("SELECT ") + kValidatorColumns + " FROM serve_validators ORDER BY id").c_str());
    if (!q.ok()) return db_error(db_, "list validators");
    std::vector<StoredValidator> out;
    int rc;
    while ((rc = q.step()) == SQLITE_ROW) out.push_back(read_validator(q));
    if (rc != SQLITE_DONE) return db_error(db_, "list validators");
    return out;
  }

  Result<std::optional<StoredValidator>> validator(const Address& a) override {
    Stmt q(db_, (std::string("SELECT ") + kValidatorColumns + " FROM serve_validators WHERE address=?").c_str());
    if (!q.ok()) return db_error(db_, "read a validator");
    q.addr(1, a);
    int rc = q.step();
    if (rc == SQLITE_DONE) return std::optional<StoredValidator>();
    if (rc != SQLITE_ROW) return db_error(db_, "read a validator");
    return std::optional<StoredValidator>(read_validator(q));
  }

  Result<StoredValidator> insert_validator(const StoredValidator& v) {
    Stmt q(db_,
           "INSERT INTO serve_validators(address, stake, provider, model, config, plugin, plugin_config, created_at)"
           " VALUES(?,?,?,?,?,?,?,?)");
    if (!q.ok()) return db_error(db_, "store a validator");
    StoredValidator out = v;
    out.created_at = now_s();
    q.addr(1, v.address).i64(2, v.stake).text(3, v.provider).text(4, v.model).text(5, v.config).text(6, v.plugin);
    q.text(7, v.plugin_config).i64(8, out.created_at);
    int rc = q.step();
    if (rc == SQLITE_CONSTRAINT || (sqlite3_extended_errcode(db_) & 0xff) == SQLITE_CONSTRAINT) {
      return make_error("validator_exists", "a validator " + address_text(v.address) + " exists");
    }
    if (rc != SQLITE_DONE) return db_error(db_, "store a validator");
    out.id = sqlite3_last_insert_rowid(db_);
    return out;
  }

  Result<StoredValidator> add_validator(const StoredValidator& v) override { return insert_validator(v); }

  Result<bool> update_validator(const StoredValidator& v) override {
    Stmt q(db_,
           "UPDATE serve_validators SET stake=?, provider=?, model=?, config=?, plugin=?, plugin_config=? WHERE address=?");
    if (!q.ok()) return db_error(db_, "update a validator");
    q.i64(1, v.stake).text(2, v.provider).text(3, v.model).text(4, v.config).text(5, v.plugin).text(6, v.plugin_config);
    q.addr(7, v.address);
    if (q.step() != SQLITE_DONE) return db_error(db_, "update a validator");
    return sqlite3_changes(db_) == 1;
  }

  Result<bool> delete_validator(const Address& a) override {
    Stmt q(db_, "DELETE FROM serve_validators WHERE address=?");
    if (!q.ok()) return db_error(db_, "delete a validator");
    q.addr(1, a);
    if (q.step() != SQLITE_DONE) return db_error(db_, "delete a validator");
    return sqlite3_changes(db_) == 1;
  }

  Result<int> delete_all_validators() override {
    Stmt q(db_, "DELETE FROM serve_validators");
    if (!q.ok() || q.step() != SQLITE_DONE) return db_error(db_, "delete the validators");
    return sqlite3_changes(db_);
  }

  Result<int> seed_validators_once(const std::function<std::vector<StoredValidator>()>& make) override {
    if (auto s = exec("BEGIN IMMEDIATE"); !s) return s.take_error();
    RollbackUnlessDone guard{this};
    {
      Stmt q(db_, "SELECT 1 FROM serve_meta WHERE key='validators_seeded'");
      if (!q.ok()) return db_error(db_, "read the markers");
      int rc = q.step();
      if (rc == SQLITE_ROW) return 0;
      if (rc != SQLITE_DONE) return db_error(db_, "read the markers");
    }
    int n = 0;
    for (const auto& v : make()) {
      auto r = insert_validator(v);
      if (!r) return r.take_error();
      ++n;
    }
    if (auto s = exec("INSERT INTO serve_meta(key, value) VALUES('validators_seeded', '1')"); !s) return s.take_error();
    if (auto s = exec("COMMIT"); !s) return s.take_error();
    guard.done = true;
    return n;
  }

  Status insert_providers(const std::vector<StoredProvider>& ps) {
    for (const auto& p : ps) {
      if (auto id = add_provider(p); !id) return id.take_error();
    }
    return {};
  }

  Result<std::vector<StoredProvider>> providers(const std::vector<StoredProvider>& defaults) override {
    {
      Stmt q(db_, "SELECT 1 FROM serve_meta WHERE key='providers_seeded'");
      if (!q.ok()) return db_error(db_, "read the markers");
      int rc = q.step();
      if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_error(db_, "read the markers");
      if (rc == SQLITE_DONE) {
        if (auto s = reset_providers(defaults); !s) return s.take_error();
      }
    }
    Stmt q(db_, "SELECT id, provider, model, config, plugin, plugin_config, is_default FROM serve_providers ORDER BY id");
    if (!q.ok()) return db_error(db_, "list providers");
    std::vector<StoredProvider> out;
    int rc;
    while ((rc = q.step()) == SQLITE_ROW) {
      StoredProvider p;
      p.id = q.col_i64(0);
      p.provider = q.col_text(1);
      p.model = q.col_text(2);
      p.config = q.col_text(3);
      p.plugin = q.col_text(4);
      p.plugin_config = q.col_text(5);
      p.is_default = q.col_i64(6) != 0;
      out.push_back(std::move(p));
    }
    if (rc != SQLITE_DONE) return db_error(db_, "list providers");
    return out;
  }

  Result<std::int64_t> add_provider(const StoredProvider& p) override {
    Stmt q(db_, "INSERT INTO serve_providers(provider, model, config, plugin, plugin_config, is_default) VALUES(?,?,?,?,?,?)");
    if (!q.ok()) return db_error(db_, "store a provider");
    q.text(1, p.provider).text(2, p.model).text(3, p.config).text(4, p.plugin).text(5, p.plugin_config).i64(6, p.is_default);
    if (q.step() != SQLITE_DONE) return db_error(db_, "store a provider");
    return sqlite3_last_insert_rowid(db_);
  }

  Result<bool> update_provider(const StoredProvider& p) override {
    Stmt q(db_, "UPDATE serve_providers SET provider=?, model=?, config=?, plugin=?, plugin_config=? WHERE id=?");
    if (!q.ok()) return db_error(db_, "update a provider");
    q.text(1, p.provider).text(2, p.model).text(3, p.config).text(4, p.plugin).text(5, p.plugin_config).i64(6, p.id);
    if (q.step() != SQLITE_DONE) return db_error(db_, "update a provider");
    return sqlite3_changes(db_) == 1;
  }

  Result<bool> delete_provider(std::int64_t id) override {
    Stmt q(db_, "DELETE FROM serve_providers WHERE id=?");
    if (!q.ok()) return db_error(db_, "delete a provider");
    q.i64(1, id);
    if (q.step() != SQLITE_DONE) return db_error(db_, "delete a provider");
    return sqlite3_changes(db_) == 1;
  }

  Status reset_providers(const std::vector<StoredProvider>& defaults) override {
    if (auto s = exec("BEGIN IMMEDIATE"); !s) return s;
    RollbackUnlessDone guard{this};
    if (auto s = exec("DELETE FROM serve_providers"); !s) return s;
    if (auto s = insert_providers(defaults); !s) return s;
    if (auto s = exec("INSERT OR REPLACE INTO serve_meta(key, value) VALUES('providers_seeded', '1')"); !s) return s;
    if (auto s = exec("COMMIT"); !s) return s;
    guard.done = true;
    return {};
  }

  Result<std::int64_t> last_seq() override {
    Stmt q(db_, "SELECT coalesce(max(seq), 0) FROM serve_txs");
    if (!q.ok() || q.step() != SQLITE_ROW) return db_error(db_, "read the queue");
    return q.col_i64(0);
  }

 private:
  sqlite3* db_;
};

}  // namespace

Result<std::unique_ptr<TxStore>> open_sqlite_store(const std::string& state_path, int busy_ms) {
  // The file is node::State's: State::open (run first by the caller) created it, its schema
  // and its marker; this connection adds the queue's table.
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(state_path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    std::string m = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return make_error("state_open", "cannot open state database " + state_path + ": " + m);
  }
  sqlite3_busy_timeout(db, busy_ms);
  auto store = std::make_unique<SqliteStore>(db);
  if (auto s = store->exec("PRAGMA synchronous=NORMAL"); !s) return s.take_error();
  if (auto s = store->exec(kSchema); !s) return s.take_error();
  // A state file from before these columns gets them (empty for its rows).
  for (const char* column : {"sim_config", "nodes"}) {
    if (!store->has_column("serve_txs", column)) {
      std::string sql = std::string("ALTER TABLE serve_txs ADD COLUMN ") + column + " TEXT NOT NULL DEFAULT ''";
      if (auto s = store->exec(sql.c_str()); !s) return s.take_error();
    }
  }
  return std::unique_ptr<TxStore>(std::move(store));
}

Status link_receipt(sqlite3* db, const Hash& hash, std::int64_t id) {
  Stmt q(db, "UPDATE serve_txs SET state_tx=? WHERE hash=?");
  if (!q.ok()) return db_error(db, "link a receipt");
  q.i64(1, id).hash(2, hash);
  if (q.step() != SQLITE_DONE) return db_error(db, "link a receipt");
  if (sqlite3_changes(db) != 1) return make_error("state_sql", "no queued transaction " + hash_hex(hash));
  return {};
}

std::string hash_hex(const Hash& h) { return "0x" + hex(h.data(), h.size()); }

std::optional<Hash> parse_hash(std::string_view s) {
  if (s.substr(0, 2) == "0x" || s.substr(0, 2) == "0X") s.remove_prefix(2);
  if (s.size() != 64) return std::nullopt;
  Hash h{};
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (int i = 0; i < 32; ++i) {
    int hi = nib(s[2 * i]), lo = nib(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    h[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return h;
}

}  // namespace genvm::node::serve
