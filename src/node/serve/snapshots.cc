#include "node/serve/snapshots.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <set>
#include <vector>

namespace genvm::node::serve {

namespace {

constexpr const char* kSnapshotsTable =
    "CREATE TABLE IF NOT EXISTS serve_snapshots(id INTEGER PRIMARY KEY AUTOINCREMENT, created_at INTEGER NOT NULL,"
    " ready INTEGER NOT NULL DEFAULT 0)";

struct Db {
  sqlite3* db = nullptr;
  ~Db() { sqlite3_close(db); }
};

Error sql_error(sqlite3* db, const std::string& what) {
  int rc = sqlite3_extended_errcode(db) & 0xff;
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
    return make_error("state_locked", "the state database stayed locked by another writer (" + what + ")");
  }
  return make_error("state_sql", what + ": " + sqlite3_errmsg(db));
}

Status exec(sqlite3* db, const std::string& sql, const std::string& what) {
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) return sql_error(db, what);
  return {};
}

// One statement with text/int parameters; each result row's first column as int64 and text.
struct Row {
  std::int64_t i = 0;
  std::string t;
};
Result<std::vector<Row>> query(sqlite3* db, const std::string& sql, const std::vector<std::string>& texts,
                               const std::vector<std::int64_t>& ints, const std::string& what) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) return sql_error(db, what);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> guard(s, sqlite3_finalize);
  int k = 1;
  for (const auto& t : texts) sqlite3_bind_text(s, k++, t.data(), static_cast<int>(t.size()), SQLITE_TRANSIENT);
  for (auto v : ints) sqlite3_bind_int64(s, k++, v);
  std::vector<Row> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    Row r;
    r.i = sqlite3_column_int64(s, 0);
    if (auto p = sqlite3_column_text(s, 0)) r.t = reinterpret_cast<const char*>(p);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return sql_error(db, what);
  return out;
}

Result<std::unique_ptr<Db>> open_db(const std::string& path, int busy_ms) {
  auto d = std::make_unique<Db>();
  if (sqlite3_open_v2(path.c_str(), &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    return make_error("state_open", "cannot open state database " + path + ": " +
                                        (d->db ? sqlite3_errmsg(d->db) : "out of memory"));
  }
  sqlite3_busy_timeout(d->db, busy_ms);
  if (auto s = exec(d->db, kSnapshotsTable, "create the snapshots' table"); !s) return s.take_error();
  return Result<std::unique_ptr<Db>>(std::move(d));
}

std::string dir_of(const std::string& state_path) { return state_path + ".snapshots"; }
std::string file_of(const std::string& state_path, std::int64_t id) {
  return dir_of(state_path) + "/" + std::to_string(id) + ".db";
}

std::string quoted(const std::string& name) {
  std::string q = "\"";
  for (char ch : name) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + "\"";
}

Status sync_path(const std::string& path, bool dir) {
  int fd = ::open(path.c_str(), O_RDONLY | (dir ? O_DIRECTORY : 0) | O_CLOEXEC);
  if (fd < 0) return make_error("snapshot_io", path + ": " + std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return make_error("snapshot_io", "fsync " + path + ": " + std::strerror(err));
  return {};
}

// The tables of schema `schema` that a restore or a clear replaces: all but SQLite's own and the
// snapshots' list.
Result<std::vector<std::string>> data_tables(sqlite3* db, const std::string& schema) {
  auto rows = query(db,
                    "SELECT name FROM " + schema +
                        ".sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' AND name<>'serve_snapshots'"
                        " ORDER BY name",
                    {}, {}, "list tables");
  if (!rows) return rows.take_error();
  std::vector<std::string> out;
  for (auto& r : *rows) out.push_back(std::move(r.t));
  return out;
}

// Runs `body` inside BEGIN IMMEDIATE .. COMMIT, rolling back on its error.
template <class F>
Status in_write_tx(sqlite3* db, F body) {
  if (auto s = exec(db, "BEGIN IMMEDIATE", "begin"); !s) return s;
  if (auto s = body(); !s) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return s;
  }
  if (auto s = exec(db, "COMMIT", "commit"); !s) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return s;
  }
  return {};
}

}  // namespace

Result<std::int64_t> create_snapshot(const std::string& state_path, int busy_ms, int max) {
  auto d = open_db(state_path, busy_ms);
  if (!d) return d.take_error();
  sqlite3* db = (*d)->db;
  // Rows never made ready are a crash's leftovers: their files may be partial.
  auto stale = query(db, "SELECT id FROM serve_snapshots WHERE ready=0", {}, {}, "list snapshots");
  if (!stale) return stale.take_error();
  for (const auto& r : *stale) {
    ::unlink(file_of(state_path, r.i).c_str());
    ::unlink((file_of(state_path, r.i) + ".tmp").c_str());
    if (auto s = query(db, "DELETE FROM serve_snapshots WHERE id=?", {}, {r.i}, "forget a snapshot"); !s) {
      return s.take_error();
    }
  }
  auto count = query(db, "SELECT count(*) FROM serve_snapshots", {}, {}, "count snapshots");
  if (!count) return count.take_error();
  if (!count->empty() && (*count)[0].i >= max) {
    return make_error("snapshot_limit", "this node keeps at most " + std::to_string(max) +
                                            " snapshots; sim_deleteAllSnapshots frees them");
  }
  if (auto s = query(db, "INSERT INTO serve_snapshots(created_at) VALUES(?)", {}, {std::int64_t(std::time(nullptr))},
                     "add a snapshot");
      !s) {
    return s.take_error();
  }
  const std::int64_t id = sqlite3_last_insert_rowid(db);
  const std::string file = file_of(state_path, id), tmp = file + ".tmp";
  auto fail = [&](Error e) -> Error {
    ::unlink(tmp.c_str());
    (void)query(db, "DELETE FROM serve_snapshots WHERE id=?", {}, {id}, "forget a snapshot");
    return e;
  };
  if (::mkdir(dir_of(state_path).c_str(), 0700) != 0 && errno != EEXIST) {
    return fail(make_error("snapshot_io", dir_of(state_path) + ": " + std::strerror(errno)));
  }
  ::unlink(tmp.c_str());
  if (auto s = query(db, "VACUUM INTO ?", {tmp}, {}, "copy the state"); !s) return fail(s.take_error());
  if (auto s = sync_path(tmp, false); !s) return fail(s.take_error());
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    return fail(make_error("snapshot_io", "rename " + tmp + ": " + std::strerror(errno)));
  }
  if (auto s = sync_path(dir_of(state_path), true); !s) return fail(s.take_error());
  if (auto s = query(db, "UPDATE serve_snapshots SET ready=1 WHERE id=?", {}, {id}, "record a snapshot"); !s) {
    return s.take_error();
  }
  return id;
}

Result<bool> restore_snapshot(const std::string& state_path, int busy_ms, std::int64_t id) {
  auto d = open_db(state_path, busy_ms);
  if (!d) return d.take_error();
  sqlite3* db = (*d)->db;
  auto known = query(db, "SELECT id FROM serve_snapshots WHERE id=? AND ready=1", {}, {id}, "find a snapshot");
  if (!known) return known.take_error();
  if (known->empty()) return false;
  const std::string file = file_of(state_path, id);
  if (::access(file.c_str(), R_OK) != 0) {
    return make_error("snapshot_io", "snapshot " + std::to_string(id) + ": " + file + ": " + std::strerror(errno));
  }
  if (auto s = query(db, "ATTACH DATABASE ? AS snap", {file}, {}, "open the snapshot"); !s) return s.take_error();
  auto restored = in_write_tx(db, [&]() -> Status {
    auto mine = data_tables(db, "main");
    if (!mine) return mine.take_error();
    auto theirs = data_tables(db, "snap");
    if (!theirs) return theirs.take_error();
    std::set<std::string> have(mine->begin(), mine->end());
    for (const auto& t : *mine) {
      if (auto s = exec(db, "DELETE FROM main." + quoted(t), "clear " + t); !s) return s;
    }
    for (const auto& t : *theirs) {
      if (!have.count(t)) return make_error("state_sql", "the snapshot has a table this state lacks: " + t);
      if (auto s = exec(db, "INSERT INTO main." + quoted(t) + " SELECT * FROM snap." + quoted(t), "restore " + t); !s) {
        return s;
      }
    }
    if (auto s = exec(db, "DELETE FROM main.sqlite_sequence WHERE name<>'serve_snapshots'", "reset counters"); !s) {
      return s;
    }
    auto snap_seq = query(db, "SELECT 1 FROM snap.sqlite_master WHERE name='sqlite_sequence'", {}, {}, "read counters");
    if (!snap_seq) return snap_seq.take_error();
    if (snap_seq->empty()) return {};
    return exec(db,
                "INSERT INTO main.sqlite_sequence(name, seq) SELECT name, seq FROM snap.sqlite_sequence"
                " WHERE name<>'serve_snapshots'",
                "restore counters");
  });
  (void)exec(db, "DETACH DATABASE snap", "close the snapshot");
  if (!restored) return restored.take_error();
  return true;
}

Result<std::int64_t> delete_all_snapshots(const std::string& state_path, int busy_ms) {
  auto d = open_db(state_path, busy_ms);
  if (!d) return d.take_error();
  sqlite3* db = (*d)->db;
  std::vector<Row> rows;
  std::int64_t ready = 0;
  auto s = in_write_tx(db, [&]() -> Status {
    auto r = query(db, "SELECT id FROM serve_snapshots", {}, {}, "list snapshots");
    if (!r) return r.take_error();
    rows = std::move(*r);
    auto n = query(db, "SELECT count(*) FROM serve_snapshots WHERE ready=1", {}, {}, "count snapshots");
    if (!n) return n.take_error();
    ready = n->empty() ? 0 : (*n)[0].i;
    return exec(db, "DELETE FROM serve_snapshots", "delete snapshots");
  });
  if (!s) return s.take_error();
  // The rows are gone first: a crash now leaves files no row names, never a row without its file.
  for (const auto& r : rows) {
    ::unlink(file_of(state_path, r.i).c_str());
    ::unlink((file_of(state_path, r.i) + ".tmp").c_str());
  }
  ::rmdir(dir_of(state_path).c_str());  // when empty
  return ready;
}

Status clear_state(const std::string& state_path, int busy_ms, bool queue_only) {
  auto d = open_db(state_path, busy_ms);
  if (!d) return d.take_error();
  sqlite3* db = (*d)->db;
  return in_write_tx(db, [&]() -> Status {
    std::vector<std::string> tables;
    if (queue_only) {
      tables = {"serve_txs"};
    } else {
      auto all = data_tables(db, "main");
      if (!all) return all.take_error();
      // The validators are the node's configuration, not its state (Studio keeps them too).
      for (auto& t : *all) {
        if (t != "serve_validators" && t != "serve_meta" && t != "serve_providers") tables.push_back(std::move(t));
      }
    }
    for (const auto& t : tables) {
      if (auto s = exec(db, "DELETE FROM main." + quoted(t), "clear " + t); !s) return s;
      auto r = query(db, "DELETE FROM main.sqlite_sequence WHERE name=?", {t}, {}, "reset a counter");
      if (!r) return r.take_error();
    }
    return {};
  });
}

}  // namespace genvm::node::serve
