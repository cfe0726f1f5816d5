// SqlConsole against a real results database: what the sandbox allows, what
// it refuses (and how it says so), its budgets, and a fuzz run of generated
// statements that must neither crash nor write.
#include "storage/sql_console.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "storage/results_store.h"

namespace qkov::storage {
namespace {

namespace fs = std::filesystem;

class SqlConsoleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qkov-sql-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/results.db";
    auto s = ResultsStore::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    SweepRecord sweep;
    sweep.name = "s";
    sweep.spec_json = "{}";
    sweep.max_attempts = 3;
    std::vector<NewTrial> trials;
    for (int i = 0; i < 20; ++i) {
      trials.push_back(NewTrial{absl::StrCat("{\"i\":", i, "}"),
                                absl::StrCat("hash", i), "FAFO", 1.0, 0.1,
                                static_cast<uint64_t>(i), "", ""});
    }
    ASSERT_TRUE(store_->sweeps().SubmitSweep(sweep, trials, 1000).ok());
    console_ = std::make_unique<SqlConsole>(path_, Options());
  }
  void TearDown() override {
    console_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  virtual SqlConsole::Options Options() {
    SqlConsole::Options o;
    o.time_budget = absl::Milliseconds(500);
    return o;
  }

  absl::StatusOr<SqlConsole::Result> Query(const std::string& sql,
                                           int max_rows = 0) {
    return console_->Query(sql, max_rows, {});
  }
  // The files in the test directory (the database, its WAL and shm).
  std::vector<std::string> Files() {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  void ExpectDenied(const std::string& sql, const std::string& reason) {
    absl::StatusOr<SqlConsole::Result> r = Query(sql);
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
        << sql << ": " << r.status();
    EXPECT_NE(r.status().message().find("read-only"), std::string::npos)
        << sql << ": " << r.status();
    EXPECT_NE(r.status().message().find(reason), std::string::npos)
        << sql << ": " << r.status();
  }

  std::string dir_, path_;
  std::unique_ptr<ResultsStore> store_;
  std::unique_ptr<SqlConsole> console_;
};

TEST_F(SqlConsoleTest, ReadsTablesViewsAndJson) {
  auto r = Query("SELECT count(*) AS n FROM trials");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->columns, std::vector<std::string>{"n"});
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(r->rows[0][0]), 20);
  EXPECT_TRUE(r->truncated_by.empty());

  r = Query(
      "SELECT json_extract(config_json, '$.i') AS i, j.value FROM trials, "
      "json_each(trials.config_json) AS j ORDER BY ordinal LIMIT 3");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(std::get<int64_t>(r->rows[2][0]), 2);

  r = Query("SELECT count(*) FROM trial_results");  // a view
  ASSERT_TRUE(r.ok()) << r.status();
  r = Query("SELECT name FROM pragma_table_info('trials') LIMIT 1");
  ASSERT_TRUE(r.ok()) << r.status();
  r = Query("PRAGMA table_info(trials)");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->rows.size(), 5u);
  r = Query(
      "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE "
      "x < 10) SELECT sum(x), avg(x), round(ln(2), 3) FROM n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(std::get<int64_t>(r->rows[0][0]), 55);
  r = Query("SELECT type, name FROM sqlite_schema WHERE type = 'table'");
  ASSERT_TRUE(r.ok()) << r.status();
}

TEST_F(SqlConsoleTest, RefusesSqliteInternalsAndOtherFiles) {
  const std::vector<std::string> before = Files();
  ExpectDenied("SELECT fts3_tokenizer('simple')", "fts3_tokenizer");
  ExpectDenied("SELECT fts3_tokenizer('simple', x'0000000000000000')",
               "fts3_tokenizer");
  ExpectDenied("SELECT load_extension('/tmp/x.so')", "load_extension");
  ExpectDenied("SELECT printf('%.*c', 2000000000, 'x')", "printf");
  ExpectDenied("SELECT zeroblob(500000000)", "zeroblob");
  ExpectDenied("SELECT randomblob(100)", "randomblob");
  ExpectDenied("SELECT sqlite_compileoption_get(0)", "sqlite_compileoption");
  ExpectDenied("SELECT * FROM dbstat", "dbstat");
  ExpectDenied("SELECT * FROM pragma_integrity_check", "pragma_integrity");
  // ATTACH may not read, create or even probe another file.
  ExpectDenied(absl::StrCat("ATTACH '", path_, "' AS other"), "ATTACH");
  ExpectDenied(absl::StrCat("ATTACH '", dir_, "/new.db' AS other"), "ATTACH");
  ExpectDenied("ATTACH '/no/such/dir/x.db' AS other", "ATTACH");
  ExpectDenied("SELECT * FROM temp.sqlite_schema", "reading");
  EXPECT_EQ(Files(), before);
}

TEST_F(SqlConsoleTest, RefusesPragmasTransactionsAndWrites) {
  for (const char* sql :
       {"PRAGMA query_only = 0", "PRAGMA writable_schema = 1",
        "PRAGMA locking_mode = EXCLUSIVE",
        "PRAGMA temp_store_directory = '/tmp'", "PRAGMA journal_mode = DELETE",
        "PRAGMA user_version = 7", "PRAGMA user_version",
        "PRAGMA wal_checkpoint(TRUNCATE)"}) {
    ExpectDenied(sql, "PRAGMA");
  }
  for (const char* sql :
       {"BEGIN", "BEGIN IMMEDIATE", "COMMIT", "ROLLBACK", "END"}) {
    ExpectDenied(sql, "transaction control");
  }
  ExpectDenied("SAVEPOINT a", "SAVEPOINT");
  ExpectDenied("DELETE FROM trials", "writing");
  ExpectDenied("UPDATE sweeps SET priority = 9", "writing");
  ExpectDenied("INSERT INTO workers VALUES ('a', 'b', 1, '{}', 0, 0)",
               "writing");
  ExpectDenied("CREATE TABLE x (a)", "schema");
  ExpectDenied("CREATE TEMP TABLE x (a)", "schema");
  ExpectDenied("CREATE TEMP VIEW v AS SELECT 1", "schema");
  ExpectDenied("DROP TABLE metrics", "schema");
  ExpectDenied("CREATE VIRTUAL TABLE t USING fts3(a)", "schema");
  ExpectDenied("ANALYZE", "not allowed");
  auto vacuum = Query("VACUUM");
  EXPECT_EQ(vacuum.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(vacuum.status().message().find("read-only"), std::string::npos);
  // Nothing persisted: the next query reads the same database, live.
  auto r = Query("SELECT count(*) FROM trials");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(std::get<int64_t>(r->rows[0][0]), 20);
  EXPECT_TRUE(store_->IntegrityOk().value());
}

TEST_F(SqlConsoleTest, OneStatementAndSyntaxErrorsAreInvalid) {
  auto r = Query("SELECT 1; DELETE FROM trials");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("one statement"), std::string::npos);
  r = Query("SELEKT 1");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("syntax error"), std::string::npos);
  r = Query("   ");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  r = Query(std::string(200000, ' ') + "SELECT 1");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

// A 1024-character string, built by doubling.
constexpr char kKilobyte[] =
    "(WITH RECURSIVE s(x, n) AS (SELECT 'y', 0 UNION ALL SELECT x || x, n + 1 "
    "FROM s WHERE n < 10) SELECT x FROM s WHERE n = 10)";

TEST_F(SqlConsoleTest, BuiltValuesAreCappedInsideSqlite) {
  // Strings can be built large without zeroblob: SQLite refuses past
  // SQLITE_LIMIT_LENGTH before allocating them.
  auto r = Query(
      "WITH RECURSIVE s(x, n) AS (SELECT 'ab', 0 UNION ALL SELECT x || x, n + "
      "1 FROM s WHERE n < 40) SELECT max(length(x)) FROM s");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("too big"), std::string::npos)
      << r.status();
}

TEST_F(SqlConsoleTest, ResultBytesAreCapped) {
  // A cross join of ~1 KB rows: 400 * 400 * 1 KB = 160 MB if gathered.
  auto r = Query(absl::StrCat(
      "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE "
      "x < 400) SELECT a.x, b.x, ",
      kKilobyte, " FROM n a, n b"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->truncated_by,
            absl::StrCat(console_->options().max_result_bytes, " bytes"));
  EXPECT_LT(r->rows.size(), 9000u);
  EXPECT_GT(r->rows.size(), 7000u);
  r = Query("SELECT trial_id FROM trials", 5);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rows.size(), 5u);
  EXPECT_EQ(r->truncated_by, "5 rows");
}

TEST_F(SqlConsoleTest, BlobsAndNonUtf8TextComeBackAsBytes) {
  auto r = Query("SELECT x'00ff10', CAST(x'c3' AS TEXT), 'caf\xc3\xa9'");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(std::get<SqlConsole::Blob>(r->rows[0][0]).bytes,
            std::string("\x00\xff\x10", 3));
  EXPECT_EQ(std::get<SqlConsole::Blob>(r->rows[0][1]).bytes, "\xc3");
  EXPECT_EQ(std::get<std::string>(r->rows[0][2]), "caf\xc3\xa9");
}

constexpr char kRunaway[] =
    "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) "
    "SELECT count(*) FROM n";

TEST_F(SqlConsoleTest, RunawayQueryEndsAtItsBudget) {
  const absl::Time start = absl::Now();
  auto r = Query(kRunaway);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded)
      << r.status();
  EXPECT_NE(r.status().message().find("time budget"), std::string::npos);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_TRUE(Query("SELECT 1").ok());
}

TEST_F(SqlConsoleTest, RunawayQueryEndsWhenTheClientGoesAway) {
  std::atomic<bool> gone{false};
  std::thread client([&] {
    absl::SleepFor(absl::Milliseconds(50));
    gone = true;
  });
  auto r = console_->Query(kRunaway, 0, [&] { return gone.load(); });
  client.join();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled) << r.status();
}

class SqlConsoleLongBudgetTest : public SqlConsoleTest {
  SqlConsole::Options Options() override {
    SqlConsole::Options o;
    o.time_budget = absl::Hours(1);
    o.max_concurrent = 2;
    return o;
  }
};

TEST_F(SqlConsoleLongBudgetTest, ShutdownStopsRunningQueries) {
  // Two runaway queries fill the console; a third is refused, not queued;
  // Shutdown ends both and refuses what comes after.
  std::vector<absl::Status> results(2);
  std::vector<std::thread> runners;
  for (int i = 0; i < 2; ++i) {
    runners.emplace_back(
        [&, i] { results[i] = console_->Query(kRunaway, 0, {}).status(); });
  }
  const absl::Time until = absl::Now() + absl::Seconds(30);
  while (console_->running_queries() < 2 && absl::Now() < until)
    absl::SleepFor(absl::Milliseconds(5));
  EXPECT_EQ(console_->running_queries(), 2);
  absl::StatusOr<SqlConsole::Result> third = Query("SELECT 1");
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted)
      << third.status();
  const absl::Time start = absl::Now();
  console_->Shutdown();
  for (auto& t : runners) t.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  for (const absl::Status& s : results) {
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  }
  EXPECT_EQ(Query("SELECT 1").status().code(), absl::StatusCode::kUnavailable);
}

// Generated statements from fragments of valid and hostile SQL: none may
// crash the process, write to the database, or leave a file behind.
TEST_F(SqlConsoleTest, FuzzedStatementsNeitherCrashNorWrite) {
  const std::vector<std::string> before = Files();
  const std::vector<std::string> heads = {
      "SELECT",
      "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM r)",
      "PRAGMA",
      "ATTACH",
      "DETACH",
      "BEGIN",
      "INSERT INTO trials",
      "UPDATE",
      "DELETE FROM",
      "CREATE",
      "DROP",
      "ALTER TABLE trials",
      "VACUUM INTO",
      "REINDEX",
      "ANALYZE",
      "SAVEPOINT",
      "RELEASE",
      "EXPLAIN",
      "VALUES"};
  const std::vector<std::string> parts = {
      "*",
      "count(*)",
      "trial_id",
      "config_json",
      "FROM",
      "trials",
      "sweeps",
      "metrics",
      "results",
      "workers",
      "attempts",
      "sqlite_schema",
      "sqlite_temp_schema",
      "dbstat",
      "json_each(config_json)",
      "WHERE",
      "1",
      "=",
      "x'ff'",
      "'a'",
      "NULL",
      "zeroblob(999999999)",
      "fts3_tokenizer('simple')",
      "load_extension('x')",
      "writefile('f', 1)",
      "printf('%.*c', 999999999, 'x')",
      "randomblob(99999999)",
      "x || x",
      "(SELECT 1)",
      "UNION",
      "ALL",
      "ORDER",
      "BY",
      "LIMIT",
      "10",
      ",",
      "(",
      ")",
      ";",
      "AS",
      "main.",
      "temp.",
      "query_only",
      "=",
      "0",
      "writable_schema",
      "'/tmp/qkov-fuzz.db'",
      "x",
      "r",
      "JOIN",
      "ON",
      "group_concat(config_json)",
      "replace(config_json, '1', config_json)",
      "CAST(x'c328' AS TEXT)",
      "-",
      "+",
      "||",
      "'\xff\xfe'",
      "?",
      ":a"};
  std::mt19937 rng(20261201);
  int ok = 0, refused = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string sql = heads[rng() % heads.size()];
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < n; ++k) sql += " " + parts[rng() % parts.size()];
    absl::StatusOr<SqlConsole::Result> r = console_->Query(sql, 50, {});
    if (r.ok()) {
      ++ok;
    } else {
      ++refused;
      EXPECT_NE(r.status().code(), absl::StatusCode::kInternal)
          << sql << ": " << r.status();
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(refused, 0);
  auto n = Query("SELECT count(*) FROM trials");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::get<int64_t>(n->rows[0][0]), 20);
  EXPECT_TRUE(store_->IntegrityOk().value());
  EXPECT_EQ(Files(), before);
  EXPECT_FALSE(fs::exists("/tmp/qkov-fuzz.db"));
}

}  // namespace
}  // namespace qkov::storage
