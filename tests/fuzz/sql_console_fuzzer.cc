// The SQL console's guard (storage::SqlConsole, behind `qkov sql` and the
// QuerySql RPC) on any statement, against a results database holding a
// sweep. Properties: no crash, no leak; a refusal is INVALID_ARGUMENT,
// DEADLINE_EXCEEDED or RESOURCE_EXHAUSTED with a message starting "sql: ";
// and nothing is ever written: the database file's bytes and the folder's
// list of files are the same after every statement.
#include <dirent.h>
#include <sys/stat.h>

#include <iterator>
#include <set>

#include "common/sha256.h"
#include "storage/results_store.h"
#include "storage/sql_console.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::set<std::string> Files(const std::string& dir) {
  std::set<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) names.insert(e->d_name);
    closedir(d);
  }
  return names;
}

struct Fixture {
  std::string dir = qkov::fuzz::ScratchDir() + "/db";
  std::string path = dir + "/results.db";
  std::string digest;
  std::set<std::string> files;
  std::unique_ptr<qkov::storage::SqlConsole> console;

  Fixture() {
    mkdir(dir.c_str(), 0700);
    {
      // A real database (every table, a sweep and its trials), closed
      // before the console reads it, so no writer holds a WAL open.
      auto store = qkov::storage::ResultsStore::Open(path);
      if (!store.ok()) std::abort();
      qkov::storage::SweepRecord sweep;
      sweep.name = "s";
      sweep.spec_json = "{}";
      std::vector<qkov::storage::NewTrial> trials;
      for (int i = 0; i < 4; ++i)
        trials.push_back({"{\"seed\":" + std::to_string(i) + "}",
                          "h" + std::to_string(i), "FAFO", 1, 0.1,
                          static_cast<uint64_t>(i), ""});
      if (!(*store)->sweeps().SubmitSweep(sweep, trials, 1, {}).ok())
        std::abort();
    }
    qkov::storage::SqlConsole::Options o;
    o.time_budget = absl::Milliseconds(200);
    o.max_rows = 100;
    o.max_result_bytes = 1 << 16;
    console = std::make_unique<qkov::storage::SqlConsole>(path, o);
    // The first read of a WAL database makes its -shm index (a reader's
    // right in SQLite); what is compared is taken after it.
    if (!console->Query("SELECT 1", 0, nullptr).ok()) std::abort();
    digest = qkov::Sha256Hex(FileBytes(path));
    files = Files(dir);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* f = new Fixture;
  const std::string sql(reinterpret_cast<const char*>(data), size);
  auto result = f->console->Query(sql, 0, nullptr);
  if (!result.ok()) {
    const absl::StatusCode code = result.status().code();
    QKOV_FUZZ_CHECK(code == absl::StatusCode::kInvalidArgument ||
                        code == absl::StatusCode::kDeadlineExceeded ||
                        code == absl::StatusCode::kResourceExhausted,
                    result.status().ToString());
    QKOV_FUZZ_CHECK(result.status().message().rfind("sql: ", 0) == 0,
                    result.status().ToString());
  } else {
    QKOV_FUZZ_CHECK(result->rows.size() <= 100, "max_rows");
  }
  QKOV_FUZZ_CHECK(Files(f->dir) == f->files, "a file appeared: " + sql);
  QKOV_FUZZ_CHECK(qkov::Sha256Hex(FileBytes(f->path)) == f->digest,
                  "the database changed: " + sql);
  return 0;
}
