// Database, Statement, Transaction: a thin RAII layer over one SQLite
// connection (after Chromium's sql/). The connection pragmas (WAL,
// synchronous, busy_timeout, foreign_keys, journal_size_limit) are set in
// Database::Open; the SQL console adds its read-only ones to its own
// connections (sql_console.cc), and a large submission widens the writer's
// page cache for its transaction (sweep_queries.cc);
// SQLite result codes become absl::Status here and nowhere else.
//
// Thread safety: a Database is not thread-safe; its owner serializes access
// (ResultsStore holds a mutex).
#ifndef QKOV_STORAGE_DATABASE_H_
#define QKOV_STORAGE_DATABASE_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace qkov::storage {

// Maps a SQLite result code (and the connection's message) to a Status:
// BUSY/LOCKED/FULL -> UNAVAILABLE (retryable: a busy database, a full
// disk), CONSTRAINT -> ALREADY_EXISTS, CORRUPT/NOTADB -> DATA_LOSS, NOMEM ->
// RESOURCE_EXHAUSTED, CANTOPEN -> NOT_FOUND, PERM/READONLY/AUTH ->
// PERMISSION_DENIED, TOOBIG -> INVALID_ARGUMENT, INTERRUPT ->
// DEADLINE_EXCEEDED, anything else -> INTERNAL.
absl::Status SqliteStatus(int code, sqlite3* db, absl::string_view what);

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Bind indices are 1-based, as in SQLite. Non-finite doubles are stored
  // as SQLite stores them (NaN becomes NULL).
  void BindInt64(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void BindDouble(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void BindText(int i, absl::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()),
                      SQLITE_TRANSIENT);
  }
  void BindBlob(int i, absl::string_view v) {
    sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()),
                      SQLITE_TRANSIENT);
  }
  void BindNull(int i) { sqlite3_bind_null(stmt_, i); }

  // true: a row is ready; false: done. Errors are statuses.
  absl::StatusOr<bool> Step();
  // Step() that must finish without a row (INSERT/UPDATE/DELETE).
  absl::Status Run();
  // Resets and clears bindings for the next use.
  void Reset();

  int64_t ColumnInt64(int i) const { return sqlite3_column_int64(stmt_, i); }
  double ColumnDouble(int i) const;  // NULL reads as NaN
  bool ColumnIsNull(int i) const {
    return sqlite3_column_type(stmt_, i) == SQLITE_NULL;
  }
  std::string ColumnText(int i) const;
  std::string ColumnBlob(int i) const;
  int ColumnCount() const { return sqlite3_column_count(stmt_); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

class Database {
 public:
  struct Options {
    // FULL: a committed transaction survives power loss; NORMAL (WAL) can
    // lose the last commits on power loss but never on a process crash.
    bool synchronous_full = false;
    int busy_timeout_ms = 5000;
    // The WAL: the checkpoint thread copies it into the database file each
    // time checkpoint_pages frames wait to be copied; past rewind_pages (WAL
    // frames) the writer completes the copy so that the WAL is reused from
    // its start (ResultsStore). After a rewind the file is cut back to
    // wal_size_limit_bytes.
    int checkpoint_pages = 1000;
    int rewind_pages = 16000;
    int64_t wal_size_limit_bytes = int64_t{64} << 20;
    bool read_only = false;
    // Record how often each statement ran and for how long
    // (StatementProfile). For diagnosis, e.g. coordinator_bench
    // --profile_sql; off by default.
    bool profile_statements = false;
  };

  // Opens (creating if needed) the file at `path` and sets the pragmas: WAL,
  // synchronous, busy_timeout, foreign_keys. Does not migrate.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const std::string& path,
                                                        const Options& options);
  ~Database();

  // Runs one or more statements with no results.
  absl::Status Execute(absl::string_view sql);

  // Prepared statement cached by its SQL text; the result is reset and owned
  // by the Database.
  absl::StatusOr<Statement*> Cached(absl::string_view sql);

  // A fresh statement owned by the caller (for dynamic SQL).
  absl::StatusOr<std::unique_ptr<Statement>> Prepare(absl::string_view sql);

  // Resets every statement of this connection that is mid-way (stepped to a
  // row and not reset). Such a statement keeps a read transaction open, and
  // while one is open no checkpoint on this connection runs and the WAL is
  // never reused from its start: it would grow without bound. ResultsStore
  // calls it around each commit.
  void ResetBusyStatements();

  int64_t Changes() const { return sqlite3_changes64(db_); }
  sqlite3* raw() { return db_; }

  struct StatementTime {
    std::string sql;
    int64_t runs = 0;
    int64_t nanos = 0;
  };
  // With Options::profile_statements: each SQL text run on this connection,
  // most time first. Times are SQLite's own (sqlite3_trace_v2,
  // SQLITE_TRACE_PROFILE): from a statement's first step to its last row, or
  // to its reset when it was left mid-way. SQLite's clock for them ticks in
  // milliseconds, so one fast run reads 0 or 1 ms: only sums over many runs
  // are meaningful. Empty when profiling is off.
  std::vector<StatementTime> StatementProfile() const;

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  static int OnProfile(unsigned type, void* self, void* stmt, void* nanos);

  sqlite3* db_;
  absl::flat_hash_map<std::string, std::unique_ptr<Statement>> cache_;
  mutable absl::Mutex profile_mu_;
  absl::flat_hash_map<std::string, StatementTime> profile_
      ABSL_GUARDED_BY(profile_mu_);
};

// BEGIN IMMEDIATE on construction via Begin(); rolls back in the destructor
// unless Commit() succeeded.
class Transaction {
 public:
  explicit Transaction(Database* db) : db_(db) {}
  ~Transaction();
  absl::Status Begin();
  absl::Status Commit();

 private:
  Database* db_;
  bool open_ = false;
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_DATABASE_H_
