// SqlConsole: the read-only SQL console over the results database (`qkov
// sql`, QuerySql), as a sandbox built from SQLite's own mechanisms.
//
// Each query runs on a connection opened for it alone (read-only, so no state
// one request sets survives into the next), with
//   - an authorizer that allows SELECT over the database's own tables and
//     views (and sqlite_schema), the functions of an allow-list, and a few
//     read-only PRAGMAs; ATTACH, transaction control, every write, every other
//     PRAGMA and every other function are refused while the statement is
//     prepared, with the reason named;
//   - sqlite3_limit caps (value size, SQL length, expression depth, no
//     attached databases), so `zeroblob(500000000)` fails inside SQLite
//     before it allocates;
//   - a progress handler that ends the statement when its time budget is
//     spent, when the caller's `cancelled` says the client went away, or when
//     Shutdown() is called (which also sqlite3_interrupt()s every running
//     query);
//   - a cap on result bytes that stops stepping once the rows gathered reach
//     it (the result says it was truncated).
// docs/security.md lists exactly what is allowed.
//
// Thread safety: Query may be called from many threads; at most
// Options::max_concurrent queries run at once, more are refused with
// RESOURCE_EXHAUSTED.
#ifndef QKOV_STORAGE_SQL_CONSOLE_H_
#define QKOV_STORAGE_SQL_CONSOLE_H_

#include <sqlite3.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace qkov::storage {

class SqlConsole {
 public:
  struct Options {
    // Wall time one statement may run, from prepare to its last row.
    absl::Duration time_budget = absl::Seconds(10);
    // Rows stop being gathered once their values reach this many bytes.
    int64_t max_result_bytes = int64_t{8} << 20;
    int max_rows = 100000;  // used when the caller asks for 0
    int max_concurrent = 4;
    // Largest string or blob SQLite may build (SQLITE_LIMIT_LENGTH).
    int max_value_bytes = 1 << 20;
    int max_sql_bytes = 100000;
  };

  // A BLOB, or TEXT that is not valid UTF-8: raw bytes.
  struct Blob {
    std::string bytes;
    bool operator==(const Blob& o) const { return bytes == o.bytes; }
  };
  using Value =
      std::variant<std::monostate, int64_t, double, std::string, Blob>;
  struct Result {
    std::vector<std::string> columns;
    std::vector<std::vector<Value>> rows;
    // Empty when every row came back; else what stopped it ("100000 rows",
    // "8388608 bytes").
    std::string truncated_by;
  };

  // `path`: the results database (opened read-only per query).
  SqlConsole(std::string path, Options options);
  SqlConsole(const SqlConsole&) = delete;
  SqlConsole& operator=(const SqlConsole&) = delete;

  // Runs one statement. `max_rows` 0: Options::max_rows. `cancelled` is
  // polled while the statement runs (may be empty). Errors, all prefixed
  // "sql: ":
  //   INVALID_ARGUMENT    empty, several statements, too long, does not
  //                       compile (SQLite's message kept), a value too big,
  //                       or an action the sandbox refuses (named);
  //   DEADLINE_EXCEEDED   the time budget ran out;
  //   CANCELLED           `cancelled` returned true;
  //   UNAVAILABLE         Shutdown() was called;
  //   RESOURCE_EXHAUSTED  max_concurrent queries already running.
  absl::StatusOr<Result> Query(absl::string_view sql, int max_rows,
                               const std::function<bool()>& cancelled);

  // Interrupts every running query and refuses new ones. Idempotent.
  void Shutdown();

  const Options& options() const { return options_; }
  // Queries admitted and not yet ended.
  int running_queries() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Run;  // one query's connection and state
  static int Authorize(void* run, int action, const char* a, const char* b,
                       const char* db, const char* trigger);
  static int Progress(void* run);
  absl::StatusOr<Result> QueryOn(Run* run, absl::string_view sql, int max_rows);

  const std::string path_;
  const Options options_;
  absl::Mutex mu_;
  int slots_ ABSL_GUARDED_BY(mu_) = 0;  // queries admitted and not ended
  // Their connections, once open (for sqlite3_interrupt).
  absl::flat_hash_set<sqlite3*> running_ ABSL_GUARDED_BY(mu_);
  // Set (under mu_) by Shutdown; read by Query and the progress handler.
  std::atomic<bool> stopping_{false};
};

}  // namespace qkov::storage

#endif  // QKOV_STORAGE_SQL_CONSOLE_H_
