// SQLite (Debian source package `sqlite3`, its amalgamation built from the source tree): an
// in-memory database: bulk inserts in a transaction, an index, indexed range queries, a
// GROUP BY, a join, LIKE with ORDER BY, an UPDATE and a DELETE. The checksum covers the text
// of every result row. Built with SQLITE_OS_OTHER: the only VFS is the one below, which opens
// no files (the database and temporary storage stay in memory), so the same code runs on
// both targets without POSIX file locking.
#include <string.h>

#include "../common.h"
#include "sqlite3.h"

static int vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out) {
  (void)vfs; (void)name; (void)flags; (void)out;
  file->pMethods = NULL;
  return SQLITE_CANTOPEN;
}
static int vfs_delete(sqlite3_vfs *vfs, const char *name, int sync) {
  (void)vfs; (void)name; (void)sync;
  return SQLITE_IOERR_DELETE;
}
static int vfs_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
  (void)vfs; (void)name; (void)flags;
  *out = 0;
  return SQLITE_OK;
}
static int vfs_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out) {
  (void)vfs;
  sqlite3_snprintf(n, out, "%s", name);
  return SQLITE_OK;
}
static int vfs_randomness(sqlite3_vfs *vfs, int n, char *out) {
  (void)vfs;
  for (int i = 0; i < n; i++) out[i] = (char)realworld_rand();
  return n;
}
static int vfs_sleep(sqlite3_vfs *vfs, int micros) {
  (void)vfs;
  return micros;
}
static int vfs_current_time(sqlite3_vfs *vfs, double *julian_day) {
  (void)vfs;
  *julian_day = 2461000.5;  // a fixed date: the workload uses no time functions
  return SQLITE_OK;
}
static int vfs_last_error(sqlite3_vfs *vfs, int n, char *out) {
  (void)vfs;
  if (n > 0) out[0] = 0;
  return 0;
}
static sqlite3_vfs memory_only_vfs = {
    1, (int)sizeof(sqlite3_file), 512, NULL, "memory-only", NULL,
    vfs_open, vfs_delete, vfs_access, vfs_full_pathname,
    NULL, NULL, NULL, NULL,  // no loadable extensions (SQLITE_OMIT_LOAD_EXTENSION)
    vfs_randomness, vfs_sleep, vfs_current_time, vfs_last_error};
int sqlite3_os_init(void) { return sqlite3_vfs_register(&memory_only_vfs, 1); }
int sqlite3_os_end(void) { return SQLITE_OK; }

static sqlite3 *db;
static uint64_t sum = REALWORLD_FNV_INIT;

static void fail(const char *what) {
  fprintf(stderr, "sqlite3: %s: %s\n", what, sqlite3_errmsg(db));
  exit(1);
}
static sqlite3_stmt *prepare(const char *sql) {
  sqlite3_stmt *stmt;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK) fail(sql);
  return stmt;
}
// Steps a statement to the end, folding every column of every row into the checksum.
static void drain(sqlite3_stmt *stmt) {
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    for (int c = 0; c < sqlite3_column_count(stmt); c++) {
      const unsigned char *text = sqlite3_column_text(stmt, c);
      sum = text ? realworld_fnv(sum, text, strlen((const char *)text)) : realworld_fnv(sum, "~", 1);
    }
  }
  if (rc != SQLITE_DONE) fail("step");
  sqlite3_reset(stmt);
}
static void run(const char *sql) {
  sqlite3_stmt *stmt = prepare(sql);
  drain(stmt);
  sqlite3_finalize(stmt);
}

int main(int argc, char **argv) {
  int rows = (argc > 1 ? atoi(argv[1]) : 250) * 1000;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) fail("open");
  run("CREATE TABLE cats(id INTEGER PRIMARY KEY, label TEXT NOT NULL)");
  run("CREATE TABLE items(id INTEGER PRIMARY KEY, category INTEGER NOT NULL, price REAL NOT NULL,"
      " name TEXT NOT NULL)");
  run("BEGIN");
  sqlite3_stmt *cat = prepare("INSERT INTO cats VALUES (?, ?)");
  for (int i = 0; i < 500; i++) {
    char label[32];
    snprintf(label, sizeof label, "category-%03d", (i * 37) % 500);
    sqlite3_bind_int(cat, 1, i);
    sqlite3_bind_text(cat, 2, label, -1, SQLITE_TRANSIENT);
    drain(cat);
  }
  sqlite3_finalize(cat);
  sqlite3_stmt *item = prepare("INSERT INTO items(category, price, name) VALUES (?, ?, ?)");
  for (int i = 0; i < rows; i++) {
    char name[16];
    for (int k = 0; k < 8; k++) name[k] = (char)('a' + realworld_rand() % 26);
    name[8] = 0;
    sqlite3_bind_int(item, 1, (int)(realworld_rand() % 500));
    sqlite3_bind_double(item, 2, (double)(realworld_rand() % 100000) / 100.0);
    sqlite3_bind_text(item, 3, name, -1, SQLITE_TRANSIENT);
    drain(item);
  }
  sqlite3_finalize(item);
  run("COMMIT");
  run("CREATE INDEX items_category_price ON items(category, price)");
  run("CREATE INDEX items_name ON items(name)");
  sqlite3_stmt *range = prepare(
      "SELECT count(*), sum(price), min(name) FROM items WHERE category = ? AND price BETWEEN ? AND ?");
  for (int i = 0; i < 4000; i++) {
    sqlite3_bind_int(range, 1, i % 500);
    sqlite3_bind_double(range, 2, (double)(i % 700));
    sqlite3_bind_double(range, 3, (double)(i % 700) + 150.0);
    drain(range);
  }
  sqlite3_finalize(range);
  run("SELECT category, count(*), round(avg(price), 2), max(name) FROM items GROUP BY category"
      " ORDER BY 3 DESC, 1 LIMIT 50");
  run("SELECT c.label, count(*), round(sum(i.price), 2) FROM items i JOIN cats c ON c.id = i.category"
      " WHERE i.price > 500 GROUP BY c.label ORDER BY 2 DESC, 1 LIMIT 20");
  run("SELECT name, price FROM items WHERE name LIKE 'ab%' ORDER BY price, name LIMIT 200");
  run("UPDATE items SET price = round(price * 1.01, 2) WHERE category % 7 = 0");
  run("DELETE FROM items WHERE id % 11 = 0");
  run("SELECT count(*), round(sum(price), 2), max(id) FROM items");
  run("SELECT substr(name, 1, 2) AS p, count(*) FROM items GROUP BY p ORDER BY 2 DESC, 1 LIMIT 30");
  sqlite3_close(db);
  realworld_report("sqlite3", sum);
  return 0;
}
