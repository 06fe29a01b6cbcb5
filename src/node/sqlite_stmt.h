// A prepared SQLite statement that finalizes itself, with the binders and column readers the
// node's tables use (bytes, addresses, 32-byte hashes, text, integers). Internal to src/node:
// the state (state.cc) and genvm-node serve's queue (serve/store.cc) share it.
//
//   Stmt q(db, "SELECT a FROM t WHERE id = ?1");
//   if (!q.ok()) ...;                 // the prepare failed
//   q.i64(1, id);
//   while (q.step() == SQLITE_ROW) use(q.col_blob(0));
#pragma once

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "node/state.h"

namespace genvm::node {

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& blob(int i, const std::uint8_t* p, std::size_t n) {
    sqlite3_bind_blob(s_, i, n ? p : reinterpret_cast<const std::uint8_t*>(""), static_cast<int>(n), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& blob(int i, const Bytes& b) { return blob(i, b.data(), b.size()); }
  Stmt& addr(int i, const Address& a) { return blob(i, a.bytes.data(), a.bytes.size()); }
  Stmt& hash(int i, const std::array<std::uint8_t, 32>& h) { return blob(i, h.data(), h.size()); }
  Stmt& text(int i, const std::string& t) {
    sqlite3_bind_text(s_, i, t.data(), static_cast<int>(t.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& i64(int i, std::int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  int step() { return rc_ = sqlite3_step(s_); }
  Bytes col_blob(int c) {
    auto p = static_cast<const std::uint8_t*>(sqlite3_column_blob(s_, c));
    int n = sqlite3_column_bytes(s_, c);
    return p ? Bytes(p, p + n) : Bytes{};
  }
  Address col_addr(int c) {
    Address a;
    Bytes b = col_blob(c);
    if (b.size() == 20) std::memcpy(a.bytes.data(), b.data(), 20);
    return a;
  }
  std::string col_text(int c) {
    auto p = reinterpret_cast<const char*>(sqlite3_column_text(s_, c));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s_, c))) : std::string();
  }
  std::int64_t col_i64(int c) { return sqlite3_column_int64(s_, c); }
  bool col_null(int c) { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  int col_type(int c) { return sqlite3_column_type(s_, c); }

 private:
  sqlite3_stmt* s_ = nullptr;
  int rc_ = SQLITE_OK;
};

}  // namespace genvm::node
