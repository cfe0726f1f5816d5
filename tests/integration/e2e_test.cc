// One sweep end to end: the real qkov-server, two real qkov-worker processes
// and the qkov CLI on loopback; then the SQLite file is read directly.
#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "storage/database.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

constexpr char kSweep[] = R"(name: it-sweep
axes:
  parameterization: [FAFO, CACO]
  lr_ratio: [1, 20]
  eta_ov: [0.1]
  seed: [1, 2]
training:
  max_steps: 800
  report_every: 100
  evaluation: {num_examples: 256}
)";

int64_t QueryInt(storage::Database* db, const std::string& sql) {
  auto st = db->Prepare(sql);
  EXPECT_TRUE(st.ok()) << st.status();
  auto row = (*st)->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return (*st)->ColumnInt64(0);
}

TEST(EndToEndTest, TwoWorkersFinishEveryTrialExactlyOnce) {
  TempDir dir;
  ServerUnderTest server(dir);
  WriteFile(dir.File("sweep.yaml"), kSweep);
  CommandResult submit = RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "submit", dir.File("sweep.yaml")});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("8 trials (8 new, 0 already present, 0 requeued)"), std::string::npos) << submit.out;

  Process w1({QKOV_WORKER_BIN, "--server=" + server.address(), "--name=w1", "--exit_when_idle"}, dir.File("w1.log"));
  Process w2({QKOV_WORKER_BIN, "--server=" + server.address(), "--name=w2", "--exit_when_idle"}, dir.File("w2.log"));
  CommandResult watch = RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "watch", "it-sweep"}, 300);
  EXPECT_EQ(watch.exit_code, 0) << watch.err;
  EXPECT_NE(watch.out.find("8/8 finished: 8 done"), std::string::npos) << watch.out;
  ASSERT_EQ(w1.Wait(120), 0) << ReadFile(dir.File("w1.log"));
  ASSERT_EQ(w2.Wait(120), 0) << ReadFile(dir.File("w2.log"));

  // Re-submitting the same sweep schedules nothing new.
  submit = RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "submit", dir.File("sweep.yaml")});
  EXPECT_NE(submit.out.find("(0 new, 8 already present, 0 requeued)"), std::string::npos) << submit.out;

  CommandResult results = RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "results", "it-sweep"});
  ASSERT_EQ(results.exit_code, 0) << results.err;
  std::vector<std::string> lines = absl::StrSplit(results.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 9u) << results.out;  // header + one row per trial
  for (size_t i = 1; i < lines.size(); ++i) EXPECT_NE(lines[i].find(" done "), std::string::npos) << lines[i];

  server.process().Signal(SIGTERM);
  EXPECT_EQ(server.process().Wait(30), 0);

  storage::Database::Options ro;
  ro.read_only = true;
  auto db = storage::Database::Open(server.db_path(), ro);
  ASSERT_TRUE(db.ok()) << db.status();
  storage::Database* d = db->get();
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM trials"), 8);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM trials WHERE state = 'done' AND attempts = 1"), 8);
  // Exactly once: one attempt per trial, and it is the one that finished.
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM attempts"), 8);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM attempts WHERE state = 'done'"), 8);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(DISTINCT trial_id) FROM results WHERE name = 'accuracy'"), 8);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM results WHERE name = 'distinct_attention' AND value BETWEEN 0 AND 1"), 8);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM artifacts WHERE kind = 'heatmap'"), 8);
  // 800 steps reported every 100: 8 points of each curve per trial.
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM metrics WHERE name = 'train_loss'"), 64);
  EXPECT_EQ(QueryInt(d, "SELECT MAX(c) FROM (SELECT COUNT(*) AS c FROM metrics GROUP BY trial_id, name)"), 8);
  // Provenance: every attempt names the code and library versions.
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM attempts WHERE json_extract(provenance_json, '$.code_version') != '' "
                        "AND json_extract(provenance_json, '$.torch_version') LIKE 'torch %'"),
            8);
  EXPECT_EQ(QueryInt(d, "SELECT COUNT(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"), 1);
}

}  // namespace
}  // namespace qkov::testing
