#include "storage/database.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace qkov::storage {

absl::Status SqliteStatus(int code, sqlite3* db, absl::string_view what) {
  const int primary = code & 0xff;
  if (primary == SQLITE_OK || primary == SQLITE_DONE || primary == SQLITE_ROW) {
    return absl::OkStatus();
  }
  const std::string msg =
      absl::StrCat(what, ": ", db ? sqlite3_errmsg(db) : sqlite3_errstr(code));
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(msg);
    case SQLITE_CONSTRAINT:
      return absl::AlreadyExistsError(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(msg);
    case SQLITE_FULL:
      // The disk (or the database's size limit) is full: nothing was
      // written, and the same write succeeds once space is freed. Workers
      // retry UNAVAILABLE with backoff.
      return absl::UnavailableError(
          absl::StrCat(msg,
                       " (the database's disk is full; retry when space "
                       "is freed)"));
    case SQLITE_NOMEM:
      return absl::ResourceExhaustedError(msg);
    case SQLITE_CANTOPEN:
      return absl::NotFoundError(msg);
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return absl::PermissionDeniedError(msg);
    case SQLITE_TOOBIG:
      return absl::InvalidArgumentError(msg);
    case SQLITE_INTERRUPT:
      // A pooled read past its deadline, or stopped by a server that stops
      // (ReaderPool); the SQL console names its own interruptions.
      return absl::DeadlineExceededError(absl::StrCat(
          msg, " (the read ran past its deadline or the server is stopping)"));
    default:
      return absl::InternalError(msg);
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

absl::StatusOr<bool> Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteStatus(rc, db_, sqlite3_sql(stmt_));
}

absl::Status Statement::Run() {
  ASSIGN_OR_RETURN(bool row, Step());
  (void)row;
  return absl::OkStatus();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

double Statement::ColumnDouble(int i) const {
  if (ColumnIsNull(i)) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(stmt_, i);
}

std::string Statement::ColumnText(int i) const {
  const unsigned char* p = sqlite3_column_text(stmt_, i);
  if (p == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(p),
                     sqlite3_column_bytes(stmt_, i));
}

std::string Statement::ColumnBlob(int i) const {
  const void* p = sqlite3_column_blob(stmt_, i);
  if (p == nullptr) return "";
  return std::string(static_cast<const char*>(p),
                     sqlite3_column_bytes(stmt_, i));
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(
    const std::string& path, const Options& options) {
  sqlite3* raw = nullptr;
  const int flags =
      (options.read_only ? SQLITE_OPEN_READONLY
                         : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
      SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status s = SqliteStatus(rc, raw, absl::StrCat("open ", path));
    sqlite3_close(raw);
    return s;
  }
  std::unique_ptr<Database> db(new Database(raw));
  sqlite3_extended_result_codes(raw, 1);
  if (options.profile_statements) {
    sqlite3_trace_v2(raw, SQLITE_TRACE_PROFILE, &Database::OnProfile, db.get());
  }
  RETURN_IF_ERROR(db->Execute(
      absl::StrCat("PRAGMA busy_timeout = ", options.busy_timeout_ms)));
  if (!options.read_only) {
    RETURN_IF_ERROR(db->Execute("PRAGMA journal_mode = WAL"));
    RETURN_IF_ERROR(db->Execute(absl::StrCat("PRAGMA journal_size_limit = ",
                                             options.wal_size_limit_bytes)));
    RETURN_IF_ERROR(db->Execute(options.synchronous_full
                                    ? "PRAGMA synchronous = FULL"
                                    : "PRAGMA synchronous = NORMAL"));
  }
  RETURN_IF_ERROR(db->Execute("PRAGMA foreign_keys = ON"));
  // A quick look at the file catches "not a database" before any write.
  RETURN_IF_ERROR(db->Execute("SELECT count(*) FROM sqlite_schema"));
  return db;
}

int Database::OnProfile(unsigned type, void* self, void* stmt, void* nanos) {
  if (type != SQLITE_TRACE_PROFILE) return 0;
  auto* db = static_cast<Database*>(self);
  const char* sql = sqlite3_sql(static_cast<sqlite3_stmt*>(stmt));
  absl::MutexLock lock(&db->profile_mu_);
  StatementTime& t = db->profile_[sql != nullptr ? sql : ""];
  if (t.sql.empty() && sql != nullptr) t.sql = sql;
  ++t.runs;
  t.nanos += *static_cast<const int64_t*>(nanos);
  return 0;
}

std::vector<Database::StatementTime> Database::StatementProfile() const {
  std::vector<StatementTime> out;
  {
    absl::MutexLock lock(&profile_mu_);
    for (const auto& [sql, t] : profile_) out.push_back(t);
  }
  std::sort(out.begin(), out.end(),
            [](const StatementTime& a, const StatementTime& b) {
              return a.nanos > b.nanos;
            });
  return out;
}

Database::~Database() {
  cache_.clear();
  sqlite3_close(db_);
}

absl::Status Database::Execute(absl::string_view sql) {
  char* err = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  if (err != nullptr) sqlite3_free(err);
  return SqliteStatus(rc, db_, text.substr(0, 60));
}

absl::StatusOr<Statement*> Database::Cached(absl::string_view sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) {
    it->second->Reset();
    return it->second.get();
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Statement> stmt, Prepare(sql));
  Statement* ptr = stmt.get();
  cache_.emplace(std::string(sql), std::move(stmt));
  return ptr;
}

void Database::ResetBusyStatements() {
  for (sqlite3_stmt* s = sqlite3_next_stmt(db_, nullptr); s != nullptr;
       s = sqlite3_next_stmt(db_, s)) {
    if (sqlite3_stmt_busy(s)) sqlite3_reset(s);
  }
}

absl::StatusOr<std::unique_ptr<Statement>> Database::Prepare(
    absl::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(
      db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK)
    return SqliteStatus(rc, db_, absl::StrCat("prepare ", sql.substr(0, 60)));
  return std::make_unique<Statement>(db_, stmt);
}

Transaction::~Transaction() {
  if (open_) db_->Execute("ROLLBACK").IgnoreError();
}

absl::Status Transaction::Begin() {
  RETURN_IF_ERROR(db_->Execute("BEGIN IMMEDIATE"));
  open_ = true;
  return absl::OkStatus();
}

absl::Status Transaction::Commit() {
  RETURN_IF_ERROR(db_->Execute("COMMIT"));
  open_ = false;
  return absl::OkStatus();
}

}  // namespace qkov::storage
