#include "storage/sql_console.h"

#include <algorithm>
#include <atomic>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "common/status_macros.h"
#include "common/text.h"
#include "storage/database.h"

namespace qkov::storage {
namespace {

// Functions a console query may call: SQLite's core scalar, aggregate, date,
// math, JSON and window functions. Left out on purpose: anything that reads
// or writes outside the query (load_extension, readfile, writefile, edit),
// reaches SQLite's internals (fts3_tokenizer, sqlite_* but sqlite_version,
// the fts, rtree and zipfile helpers), allocates on request (zeroblob,
// randomblob), or runs long inside one step where the progress handler
// cannot stop it (printf and format: '%.*c' with a count of 2^31 loops for
// seconds even past SQLITE_LIMIT_LENGTH). Numbers format with round().
constexpr const char* kAllowedFunctions[] = {
    // core scalar
    "abs",
    "char",
    "coalesce",
    "format",
    "glob",
    "hex",
    "ifnull",
    "iif",
    "instr",
    "length",
    "like",
    "likelihood",
    "likely",
    "lower",
    "ltrim",
    "max",
    "min",
    "nullif",
    "quote",
    "random",
    "replace",
    "round",
    "rtrim",
    "sign",
    "soundex",
    "sqlite_version",
    "substr",
    "substring",
    "trim",
    "typeof",
    "unicode",
    "unlikely",
    "upper",
    // aggregate
    "avg",
    "count",
    "group_concat",
    "sum",
    "total",
    // date and time
    "date",
    "time",
    "datetime",
    "julianday",
    "strftime",
    "unixepoch",
    "current_date",
    "current_time",
    "current_timestamp",
    // math
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "ceil",
    "ceiling",
    "cos",
    "cosh",
    "degrees",
    "exp",
    "floor",
    "ln",
    "log",
    "log10",
    "log2",
    "mod",
    "pi",
    "pow",
    "power",
    "radians",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "trunc",
    // JSON (reading and building values; nothing here writes)
    "json",
    "json_array",
    "json_array_length",
    "json_extract",
    "json_group_array",
    "json_group_object",
    "json_insert",
    "json_object",
    "json_patch",
    "json_quote",
    "json_remove",
    "json_replace",
    "json_set",
    "json_type",
    "json_valid",
    "->",
    "->>",
    // window
    "row_number",
    "rank",
    "dense_rank",
    "percent_rank",
    "cume_dist",
    "ntile",
    "lag",
    "lead",
    "first_value",
    "last_value",
    "nth_value",
};

// Table-valued functions a query may read: the JSON walkers, and the
// table-valued forms of the schema PRAGMAs below.
constexpr const char* kAllowedTableFunctions[] = {
    "json_each",          "json_tree",
    "pragma_table_info",  "pragma_table_xinfo",
    "pragma_index_list",  "pragma_index_info",
    "pragma_index_xinfo", "pragma_foreign_key_list",
};

// PRAGMAs that only describe the schema, allowed with an argument naming a
// table or index, never as an assignment of a setting.
constexpr const char* kAllowedPragmas[] = {
    "table_info", "table_xinfo", "index_list",
    "index_info", "index_xinfo", "foreign_key_list",
};

bool InList(absl::string_view name, absl::Span<const char* const> list) {
  for (const char* entry : list) {
    if (absl::EqualsIgnoreCase(name, entry)) return true;
  }
  return false;
}

const char* ActionName(int action) {
  switch (action) {
    case SQLITE_ATTACH:
      return "ATTACH";
    case SQLITE_DETACH:
      return "DETACH";
    case SQLITE_TRANSACTION:
      return "transaction control (BEGIN, COMMIT, ROLLBACK)";
    case SQLITE_SAVEPOINT:
      return "SAVEPOINT";
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
      return "writing (INSERT, UPDATE, DELETE)";
    case SQLITE_ANALYZE:
      return "ANALYZE";
    case SQLITE_REINDEX:
      return "REINDEX";
    case SQLITE_ALTER_TABLE:
      return "ALTER TABLE";
    case SQLITE_CREATE_VTABLE:
    case SQLITE_DROP_VTABLE:
      return "creating or dropping virtual tables";
    default:
      return "changing the schema (CREATE, DROP)";
  }
}

// A read-only connection to `path` in the console's sandbox: no
// extensions, defensive, untrusted schema, query_only, and SQLite's limits
// on lengths, attachments, expression depth and VDBE ops.
absl::StatusOr<std::unique_ptr<Database>> OpenSandboxed(
    const std::string& path, const SqlConsole::Options& options) {
  Database::Options ro;
  ro.read_only = true;
  ro.busy_timeout_ms = 1000;
  ASSIGN_OR_RETURN(std::unique_ptr<Database> conn, Database::Open(path, ro));
  sqlite3* db = conn->raw();
  // Connection settings first, while nothing is refused yet.
  for (auto [option, value] : std::initializer_list<std::pair<int, int>>{
           {SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0},
           {SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0},
           {SQLITE_DBCONFIG_DEFENSIVE, 1},
           {SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0},
           {SQLITE_DBCONFIG_DQS_DML, 0},
           {SQLITE_DBCONFIG_DQS_DDL, 0},
       }) {
    sqlite3_db_config(db, option, value, nullptr);
  }
  RETURN_IF_ERROR(conn->Execute("PRAGMA query_only = ON"));
  RETURN_IF_ERROR(conn->Execute("PRAGMA cache_size = -8000"));
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, options.max_value_bytes);
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, options.max_sql_bytes);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 200);
  sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, 100);
  sqlite3_limit(db, SQLITE_LIMIT_FUNCTION_ARG, 32);
  sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000);
  sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, 0);
  sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 1);
  sqlite3_limit(db, SQLITE_LIMIT_WORKER_THREADS, 0);
  sqlite3_limit(db, SQLITE_LIMIT_VDBE_OP, 100000);
  return conn;
}

// The database's tables and views (the authorizer allows reads of these).
absl::Status ReadTableNames(Database& conn,
                            absl::flat_hash_set<std::string>* tables) {
  ASSIGN_OR_RETURN(auto s,
                   conn.Prepare("SELECT name FROM sqlite_schema WHERE type IN "
                                "('table', 'view') AND name NOT LIKE "
                                "'sqlite\\_%' ESCAPE '\\'"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, s->Step());
    if (!row) return absl::OkStatus();
    tables->insert(s->ColumnText(0));
  }
}

}  // namespace

struct SqlConsole::Run {
  sqlite3* db = nullptr;
  absl::flat_hash_set<std::string> tables;  // the database's tables and views
  std::string denied;                       // the authorizer's last refusal
  absl::Time deadline;
  const std::function<bool()>* cancelled = nullptr;
  std::atomic<bool>* stopping = nullptr;
  enum class Stop {
    kNone,
    kDeadline,
    kCancelled,
    kShutdown
  } stop = Stop::kNone;
};

SqlConsole::SqlConsole(std::string path, Options options)
    : path_(std::move(path)), options_(options) {}

void SqlConsole::Shutdown() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  for (sqlite3* db : running_) sqlite3_interrupt(db);
}

int SqlConsole::running_queries() {
  absl::MutexLock lock(&mu_);
  return slots_;
}

int SqlConsole::Authorize(void* self, int action, const char* a, const char* b,
                          const char* db, const char* trigger) {
  auto* run = static_cast<Run*>(self);
  // SQLite asks about a statement's actions in order; the first refusal is
  // the one to name (CREATE TABLE before the INSERT into sqlite_schema).
  if (!run->denied.empty()) return SQLITE_DENY;
  const absl::string_view arg1 = a ? a : "";
  const absl::string_view arg2 = b ? b : "";
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_UPDATE:
      // Asked, column by column of sqlite_master, while a table-valued
      // function (json_each, pragma_table_info) is set up for the statement.
      // Nothing is written: the connection is opened read-only, and a
      // statement that would write is refused (sqlite3_stmt_readonly).
      if (arg1 == "sqlite_master" && db != nullptr &&
          absl::string_view(db) == "main") {
        return SQLITE_OK;
      }
      break;
    case SQLITE_READ: {
      // a: table, b: column, db: schema name ("main", "temp", ...), or
      // null for a CTE or subquery, and for a table when no column of it is
      // read (count(*)). No other schema can hold anything: ATTACH and
      // every CREATE are refused.
      const absl::string_view schema = db ? db : "main";
      if (schema == "main" &&
          (db == nullptr || run->tables.contains(arg1) ||
           arg1 == "sqlite_master" || arg1 == "sqlite_schema")) {
        return SQLITE_OK;
      }
      if (InList(arg1, kAllowedTableFunctions)) return SQLITE_OK;
      run->denied = absl::StrCat("reading '", arg1,
                                 "' is not allowed (only the results "
                                 "database's own tables and views)");
      return SQLITE_DENY;
    }
    case SQLITE_FUNCTION:
      // b: the function's name.
      if (InList(arg2, kAllowedFunctions) ||
          InList(arg2, kAllowedTableFunctions)) {
        return SQLITE_OK;
      }
      run->denied = absl::StrCat("function ", arg2, "() is not allowed");
      return SQLITE_DENY;
    case SQLITE_PRAGMA:
      // a: the pragma, b: its argument or assigned value.
      if (InList(arg1, kAllowedPragmas) && !arg2.empty()) return SQLITE_OK;
      run->denied = absl::StrCat("PRAGMA ", arg1,
                                 " is not allowed (only table_info, "
                                 "table_xinfo, index_list, index_info, "
                                 "index_xinfo, foreign_key_list)");
      return SQLITE_DENY;
    default:
      break;
  }
  const bool schema_table = absl::StartsWith(arg1, "sqlite_");
  run->denied = absl::StrCat(
      schema_table && (action == SQLITE_INSERT || action == SQLITE_UPDATE ||
                       action == SQLITE_DELETE)
          ? "changing the schema (CREATE, DROP)"
          : ActionName(action),
      " is not allowed");
  return SQLITE_DENY;
}

int SqlConsole::Progress(void* self) {
  auto* run = static_cast<Run*>(self);
  if (run->stopping->load(std::memory_order_relaxed)) {
    run->stop = Run::Stop::kShutdown;
  } else if (absl::Now() >= run->deadline) {
    run->stop = Run::Stop::kDeadline;
  } else if (*run->cancelled && (*run->cancelled)()) {
    run->stop = Run::Stop::kCancelled;
  }
  return run->stop == Run::Stop::kNone ? 0 : 1;
}

absl::StatusOr<SqlConsole::Result> SqlConsole::Query(
    absl::string_view sql, int max_rows,
    const std::function<bool()>& cancelled) {
  if (absl::StripAsciiWhitespace(sql).empty())
    return absl::InvalidArgumentError("sql: empty statement");
  if (sql.size() > static_cast<size_t>(options_.max_sql_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sql: ", sql.size(), " bytes; the limit is ", options_.max_sql_bytes));
  }
  if (max_rows < 0) return absl::InvalidArgumentError("max_rows: must be >= 0");
  if (max_rows == 0) max_rows = options_.max_rows;
  // A slot first, so that a refused query costs no connection.
  {
    absl::MutexLock lock(&mu_);
    if (stopping_)
      return absl::UnavailableError("sql: the server is shutting down");
    if (slots_ >= options_.max_concurrent) {
      return absl::ResourceExhaustedError(
          absl::StrCat("sql: ", slots_,
                       " queries are running, the most at once; try again "
                       "when one ends"));
    }
    ++slots_;
  }
  absl::Cleanup release_slot = [this] {
    absl::MutexLock lock(&mu_);
    --slots_;
  };

  ASSIGN_OR_RETURN(std::unique_ptr<Database> conn,
                   OpenSandboxed(path_, options_));
  sqlite3* db = conn->raw();
  Run run;
  run.db = db;
  RETURN_IF_ERROR(ReadTableNames(*conn, &run.tables));
  run.stopping = &stopping_;
  run.cancelled = &cancelled;
  run.deadline = absl::Now() + options_.time_budget;
  sqlite3_set_authorizer(db, &SqlConsole::Authorize, &run);
  sqlite3_progress_handler(db, 1000, &SqlConsole::Progress, &run);
  {
    absl::MutexLock lock(&mu_);  // so that Shutdown can interrupt it
    if (stopping_)
      return absl::UnavailableError("sql: the server is shutting down");
    running_.insert(db);
  }
  absl::StatusOr<Result> result = QueryOn(&run, sql, max_rows);
  {
    absl::MutexLock lock(&mu_);
    running_.erase(db);
    if (stopping_ && run.stop == Run::Stop::kNone && !result.ok())
      run.stop = Run::Stop::kShutdown;  // stopped by sqlite3_interrupt
  }
  if (!result.ok()) {
    switch (run.stop) {
      case Run::Stop::kDeadline:
        return absl::DeadlineExceededError(absl::StrCat(
            "sql: the query ran past its time budget of ",
            absl::FormatDuration(options_.time_budget), " and was stopped"));
      case Run::Stop::kCancelled:
        return absl::CancelledError(
            "sql: the client went away; the query was stopped");
      case Run::Stop::kShutdown:
        return absl::UnavailableError(
            "sql: the server is shutting down; the query was stopped");
      case Run::Stop::kNone:
        break;
    }
  }
  return result;
}

absl::StatusOr<SqlConsole::Result> SqlConsole::QueryOn(Run* run,
                                                       absl::string_view sql,
                                                       int max_rows) {
  sqlite3* db = run->db;
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql.data(),
                                    static_cast<int>(sql.size()), &raw, &tail);
  Statement stmt(db, raw);
  if (rc != SQLITE_OK) {
    if (!run->denied.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sql: ", run->denied,
          ": the SQL console runs read-only statements over the results "
          "tables (docs/security.md)"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("sql: ", sqlite3_errmsg(db)));
  }
  if (raw == nullptr) return absl::InvalidArgumentError("sql: empty statement");
  const absl::string_view rest =
      absl::StripAsciiWhitespace(absl::string_view(tail));
  if (!rest.empty() && rest != ";")
    return absl::InvalidArgumentError("sql: one statement at a time");
  if (!sqlite3_stmt_readonly(raw)) {
    return absl::InvalidArgumentError(
        "sql: read-only access; this statement would write to the database");
  }
  Result out;
  const int columns = sqlite3_column_count(raw);
  for (int i = 0; i < columns; ++i)
    out.columns.push_back(sqlite3_column_name(raw, i));
  int64_t bytes = 0;
  while (true) {
    absl::StatusOr<bool> row = stmt.Step();
    if (!row.ok()) {
      return absl::Status(row.status().code() == absl::StatusCode::kInternal
                              ? absl::StatusCode::kInvalidArgument
                              : row.status().code(),
                          absl::StrCat("sql: ", sqlite3_errmsg(db)));
    }
    if (!*row) break;
    if (static_cast<int>(out.rows.size()) >= max_rows) {
      out.truncated_by = absl::StrCat(max_rows, " rows");
      break;
    }
    std::vector<Value> values;
    values.reserve(columns);
    for (int i = 0; i < columns; ++i) {
      switch (sqlite3_column_type(raw, i)) {
        case SQLITE_INTEGER:
          values.emplace_back(
              static_cast<int64_t>(sqlite3_column_int64(raw, i)));
          bytes += 8;
          break;
        case SQLITE_FLOAT:
          values.emplace_back(sqlite3_column_double(raw, i));
          bytes += 8;
          break;
        case SQLITE_NULL:
          values.emplace_back(std::monostate{});
          bytes += 1;
          break;
        case SQLITE_TEXT: {
          std::string text = stmt.ColumnText(i);
          bytes += static_cast<int64_t>(text.size()) + 2;
          if (IsValidUtf8(text)) {
            values.emplace_back(std::move(text));
          } else {
            values.emplace_back(Blob{std::move(text)});
          }
          break;
        }
        default:
          values.emplace_back(Blob{stmt.ColumnBlob(i)});
          bytes +=
              static_cast<int64_t>(std::get<Blob>(values.back()).bytes.size()) +
              2;
          break;
      }
    }
    if (bytes > options_.max_result_bytes) {
      out.truncated_by = absl::StrCat(options_.max_result_bytes, " bytes");
      break;
    }
    out.rows.push_back(std::move(values));
  }
  return out;
}

}  // namespace qkov::storage
