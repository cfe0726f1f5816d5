// One sweep end to end: the real qkov-server, two real qkov-worker processes
// and the qkov CLI on loopback; then the SQLite file is read directly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
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

int64_t DbInt(storage::Database* db, const std::string& sql) {
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
  CommandResult submit =
      RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "submit",
                  dir.File("sweep.yaml")});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("8 trials (8 new, 0 already present, 0 requeued)"),
            std::string::npos)
      << submit.out;

  Process w1({QKOV_WORKER_BIN, "--server=" + server.address(), "--name=w1",
              "--exit_when_idle"},
             dir.File("w1.log"));
  Process w2({QKOV_WORKER_BIN, "--server=" + server.address(), "--name=w2",
              "--exit_when_idle"},
             dir.File("w2.log"));
  CommandResult watch = RunCommand(
      {QKOV_CLI_BIN, "--server=" + server.address(), "watch", "it-sweep"}, 300);
  EXPECT_EQ(watch.exit_code, 0) << watch.err;
  EXPECT_NE(watch.out.find("8/8 finished: 8 done"), std::string::npos)
      << watch.out;
  ASSERT_EQ(w1.Wait(120), 0) << ReadFile(dir.File("w1.log"));
  ASSERT_EQ(w2.Wait(120), 0) << ReadFile(dir.File("w2.log"));

  // Re-submitting the same sweep schedules nothing new.
  submit = RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "submit",
                       dir.File("sweep.yaml")});
  EXPECT_NE(submit.out.find("(0 new, 8 already present, 0 requeued)"),
            std::string::npos)
      << submit.out;

  CommandResult results = RunCommand(
      {QKOV_CLI_BIN, "--server=" + server.address(), "results", "it-sweep"});
  ASSERT_EQ(results.exit_code, 0) << results.err;
  std::vector<std::string> lines =
      absl::StrSplit(results.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 9u) << results.out;  // header + one row per trial
  for (size_t i = 1; i < lines.size(); ++i)
    EXPECT_NE(lines[i].find(" done "), std::string::npos) << lines[i];

  // Aggregated table, plots and exports straight from the running server.
  CommandResult agg = RunCommand(
      {QKOV_CLI_BIN, "--server=" + server.address(), "results", "it-sweep",
       "--by", "parameterization,lr_ratio", "--metrics", "accuracy"});
  ASSERT_EQ(agg.exit_code, 0) << agg.err;
  EXPECT_EQ(
      std::vector<std::string>(absl::StrSplit(agg.out, '\n', absl::SkipEmpty()))
          .size(),
      5u)
      << agg.out;
  CommandResult plot =
      RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "plot",
                  "it-sweep", "--out", dir.File("plots")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  CommandResult csv =
      RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "export",
                  "it-sweep", "--per", "point", "-o", dir.File("points.csv")});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  CommandResult json = RunCommand({QKOV_CLI_BIN, "--server=" + server.address(),
                                   "export", "it-sweep", "--format", "json",
                                   "-o", dir.File("trials.json")});
  ASSERT_EQ(json.exit_code, 0) << json.err;

  server.process().Signal(SIGTERM);
  EXPECT_EQ(server.process().Wait(30), 0);

  // The plots decode and show what the database holds.
  for (const char* name :
       {"ratio_distinct_attention", "ratio_ac", "ratio_accuracy", "dtap_grid",
        "curves_train_loss", "curves_distinct_attention"}) {
    EXPECT_TRUE(IsValidPng(dir.File(std::string("plots/") + name + ".png")))
        << name;
    const std::string svg =
        ReadFile(dir.File(std::string("plots/") + name + ".svg"));
    EXPECT_NE(svg.find("<svg"), std::string::npos) << name;
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << name;
  }
  const std::string ratio_svg =
      ReadFile(dir.File("plots/ratio_distinct_attention.svg"));
  // One legend entry per parameterization in the sweep, none for the others,
  // and two plot elements per series (confidence band + mean line).
  EXPECT_NE(ratio_svg.find("<text>FAFO</text>"), std::string::npos);
  EXPECT_NE(ratio_svg.find("<text>CACO</text>"), std::string::npos);
  EXPECT_EQ(ratio_svg.find("<text>FACO</text>"), std::string::npos);
  EXPECT_EQ(ratio_svg.find("<text>CAFO</text>"), std::string::npos);
  size_t elements = 0;
  for (size_t p = ratio_svg.find("id=\"gnuplot_plot_"); p != std::string::npos;
       p = ratio_svg.find("id=\"gnuplot_plot_", p + 1)) {
    ++elements;
  }
  EXPECT_EQ(elements, 4u);
  // Series means equal the database's means over seeds, point by point.
  auto db_means = QueryRows(
      server.db_path(),
      "SELECT parameterization, printf('%g', lr_ratio), printf('%.10g', "
      "AVG(value)) FROM trial_results "
      "WHERE metric = 'distinct_attention' GROUP BY 1, 2 ORDER BY 1, 2");
  ASSERT_EQ(db_means.size(), 4u);
  const std::string ratio_dat =
      ReadFile(dir.File("plots/ratio_distinct_attention.dat"));
  for (const auto& row : db_means) {
    const std::string line_prefix = row[0] + " " + row[1] + " ";
    const size_t at = ratio_dat.find(line_prefix);
    ASSERT_NE(at, std::string::npos) << line_prefix << "\n" << ratio_dat;
    const double plotted = std::stod(ratio_dat.substr(at + line_prefix.size()));
    EXPECT_NEAR(plotted, std::stod(row[2]),
                1e-9 * std::max(1.0, std::fabs(plotted)))
        << line_prefix;
  }
  // Axis range covers the ratios (log x from 1/1.3 to 20*1.3).
  EXPECT_NE(ReadFile(dir.File("plots/ratio_distinct_attention.gp"))
                .find("set xrange [0.7692307692:26]"),
            std::string::npos);
  // Heatmap cells: the mean over seeds of each stored cell, for every panel.
  auto cells = QueryRows(server.db_path(),
                         "SELECT t.parameterization, printf('%g', t.lr_ratio), "
                         "CAST(j.key AS INTEGER), printf('%.6f', AVG(j.value)) "
                         "FROM artifacts a JOIN trials t USING (trial_id), "
                         "json_each(a.content, '$.values') j "
                         "GROUP BY 1, 2, 3 ORDER BY 1, 2, 3");
  ASSERT_EQ(cells.size(), 4u * 25u);
  const std::string dtap_dat = ReadFile(dir.File("plots/dtap_grid.dat"));
  for (const auto& c : cells) {
    const int index = std::stoi(c[2]);
    const std::string block = "# " + c[0] + " " + c[1] + " ";
    const size_t at = dtap_dat.find(block);
    ASSERT_NE(at, std::string::npos) << block;
    const std::string line =
        absl::StrCat(index % 5, " ", index / 5, " ", c[3], "\n");
    const size_t line_at = dtap_dat.find(line, at);
    const size_t next_block = dtap_dat.find("# ", at + 2);
    EXPECT_TRUE(line_at != std::string::npos &&
                (next_block == std::string::npos || line_at < next_block))
        << block << " cell " << index << " expected " << c[3];
  }
  // Exports: one row per point (+ header) and valid-looking JSON.
  const int64_t points =
      QueryInt(server.db_path(), "SELECT COUNT(*) FROM metrics");
  const std::string points_csv = ReadFile(dir.File("points.csv"));
  EXPECT_EQ(std::count(points_csv.begin(), points_csv.end(), '\n'), points + 1);
  const std::string trials_json = ReadFile(dir.File("trials.json"));
  EXPECT_EQ(std::count(trials_json.begin(), trials_json.end(), '{'),
            16);  // 8 trials x (row + results)

  storage::Database::Options ro;
  ro.read_only = true;
  auto db = storage::Database::Open(server.db_path(), ro);
  ASSERT_TRUE(db.ok()) << db.status();
  storage::Database* d = db->get();
  EXPECT_EQ(DbInt(d, "SELECT COUNT(*) FROM trials"), 8);
  EXPECT_EQ(
      DbInt(
          d,
          "SELECT COUNT(*) FROM trials WHERE state = 'done' AND attempts = 1"),
      8);
  // Exactly once: one attempt per trial, and it is the one that finished.
  EXPECT_EQ(DbInt(d, "SELECT COUNT(*) FROM attempts"), 8);
  EXPECT_EQ(DbInt(d, "SELECT COUNT(*) FROM attempts WHERE state = 'done'"), 8);
  EXPECT_EQ(DbInt(d,
                  "SELECT COUNT(DISTINCT trial_id) FROM results WHERE name = "
                  "'accuracy'"),
            8);
  EXPECT_EQ(DbInt(d,
                  "SELECT COUNT(*) FROM results WHERE name = "
                  "'distinct_attention' AND value BETWEEN 0 AND 1"),
            8);
  EXPECT_EQ(DbInt(d, "SELECT COUNT(*) FROM artifacts WHERE kind = 'heatmap'"),
            8);
  // 800 steps reported every 100: 8 points of each curve per trial.
  EXPECT_EQ(DbInt(d, "SELECT COUNT(*) FROM metrics WHERE name = 'train_loss'"),
            64);
  EXPECT_EQ(DbInt(d,
                  "SELECT MAX(c) FROM (SELECT COUNT(*) AS c FROM metrics GROUP "
                  "BY trial_id, name)"),
            8);
  // Provenance: every attempt names the code and library versions.
  EXPECT_EQ(DbInt(d,
                  "SELECT COUNT(*) FROM attempts WHERE "
                  "json_extract(provenance_json, '$.code_version') != '' "
                  "AND json_extract(provenance_json, '$.torch_version') LIKE "
                  "'torch %'"),
            8);
#if defined(__x86_64__) || defined(__aarch64__)
  // qkov-worker's default: subnormal floats flushed to zero, and recorded.
  EXPECT_EQ(DbInt(d,
                  "SELECT COUNT(*) FROM attempts WHERE "
                  "json_extract(provenance_json, '$.flush_denormals') = 1"),
            8);
#endif
  EXPECT_EQ(DbInt(d,
                  "SELECT COUNT(*) FROM pragma_integrity_check WHERE "
                  "integrity_check = 'ok'"),
            1);
}

}  // namespace
}  // namespace qkov::testing

namespace qkov::testing {
namespace {

TEST(DeployTest, OnlineBackupWhileTheServerWrites) {
  TempDir dir;
  ServerUnderTest server(dir);
  WriteFile(dir.File("sweep.yaml"), kSweep);
  ASSERT_EQ(RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "submit",
                        dir.File("sweep.yaml")})
                .exit_code,
            0);
  Process worker(
      {QKOV_WORKER_BIN, "--server=" + server.address(), "--exit_when_idle"},
      dir.File("w.log"));
  ASSERT_TRUE(WaitUntil(
      [&] {
        return QueryInt(server.db_path(), "SELECT COUNT(*) FROM metrics") > 0;
      },
      60));
  CommandResult backup =
      RunCommand({"/bin/bash", QKOV_SOURCE_DIR "/deploy/systemd/qkov-backup.sh",
                  server.db_path(), dir.File("backups")});
  ASSERT_EQ(backup.exit_code, 0) << backup.err;
  const std::string copy(absl::StripAsciiWhitespace(backup.out));
  EXPECT_EQ(QueryInt(copy, "SELECT COUNT(*) FROM trials"), 8);
  EXPECT_EQ(QueryInt(copy,
                     "SELECT COUNT(*) FROM pragma_integrity_check WHERE "
                     "integrity_check = 'ok'"),
            1);
  EXPECT_GT(QueryInt(copy, "SELECT COUNT(*) FROM metrics"), 0);
  ASSERT_EQ(worker.Wait(120), 0);
}

}  // namespace
}  // namespace qkov::testing

namespace qkov::testing {
namespace {

// A worker that leases several compatible trials and trains them as one
// batch stores the same numbers, to the last bit, as one trial at a time.
TEST(BatchTest, BatchedWorkerStoresTheSameResultsAsSingleTrials) {
  TempDir dir;
  ServerUnderTest server(dir);
  for (const char* name : {"single", "batched"}) {
    std::string yaml = kSweep;
    yaml.replace(yaml.find("it-sweep"), 8, name);
    WriteFile(dir.File(std::string(name) + ".yaml"), yaml);
  }
  ASSERT_EQ(RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "submit",
                        dir.File("single.yaml")})
                .exit_code,
            0);
  Process one(
      {QKOV_WORKER_BIN, "--server=" + server.address(), "--exit_when_idle"},
      dir.File("one.log"));
  ASSERT_EQ(one.Wait(180), 0) << ReadFile(dir.File("one.log"));
  ASSERT_EQ(RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "submit",
                        dir.File("batched.yaml")})
                .exit_code,
            0);
  Process batch({QKOV_WORKER_BIN, "--server=" + server.address(),
                 "--batch_trials=4", "--exit_when_idle"},
                dir.File("batch.log"));
  ASSERT_EQ(batch.Wait(180), 0) << ReadFile(dir.File("batch.log"));
  const std::string db = server.db_path();
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM trials WHERE state = 'done'"),
            16);
  // Batches of 4 of one parameterization: 2 parameterizations x 4 trials each.
  EXPECT_EQ(
      QueryInt(
          db,
          "SELECT COUNT(*) FROM attempts a JOIN trials t USING (trial_id) JOIN "
          "sweeps s "
          "USING (sweep_id) WHERE s.name = 'batched' AND "
          "json_extract(a.provenance_json, '$.device') = 'cpu (batch of 4)'"),
      8);
  const std::string batched_attempts =
      "(SELECT a.* FROM attempts a JOIN trials t USING (trial_id) JOIN sweeps "
      "s USING (sweep_id) WHERE s.name = 'batched')";
  // Each batch reported in one CompleteTrials call: one transaction, so its
  // 4 trials share their end time and the batch after it was leased with
  // them (2 batches, so 2 distinct end times).
  EXPECT_EQ(ReadFile(dir.File("batch.log")).find("batch_completion_refused"),
            std::string::npos);
  EXPECT_EQ(
      QueryInt(db, "SELECT COUNT(DISTINCT ended_ms) FROM " + batched_attempts),
      2);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM " + batched_attempts +
                             " WHERE started_ms = (SELECT MIN(ended_ms) FROM " +
                             batched_attempts + ")"),
            4);
  const std::string per_sweep =
      "SELECT t.config_hash, r.name, r.value FROM results r JOIN trials t "
      "USING (trial_id) "
      "JOIN sweeps s USING (sweep_id) WHERE s.name = ";
  EXPECT_GT(QueryInt(db, "SELECT COUNT(*) FROM (" + per_sweep +
                             "'single') a JOIN (" + per_sweep +
                             "'batched') b USING (config_hash, name) WHERE "
                             "a.value IS b.value"),
            8 * 15);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM (" + per_sweep +
                             "'single') a LEFT JOIN (" + per_sweep +
                             "'batched') b USING (config_hash, name) WHERE "
                             "a.value IS NOT b.value"),
            0);
}

// A stack larger than one completion call holds: 600 tiny trials in one
// lease through real gRPC, reported in calls of 256, 256 and 88.
TEST(BatchTest, AStackOfSixHundredTrialsCompletesInCallsOf256) {
  TempDir dir;
  ServerUnderTest server(dir);
  WriteFile(dir.File("wide.yaml"), R"(name: wide
axes:
  parameterization: [FAFO]
  lr_ratio: [1]
  eta_ov: [0.1]
  seed: {range: [1, 601, 1]}
training:
  max_steps: 20
  report_every: 10
  evaluation: {num_examples: 32}
)");
  ASSERT_EQ(RunCommand({QKOV_CLI_BIN, "--server=" + server.address(), "submit",
                        dir.File("wide.yaml")})
                .exit_code,
            0);
  Process worker({QKOV_WORKER_BIN, "--server=" + server.address(),
                  "--batch_trials=600", "--exit_when_idle"},
                 dir.File("wide.log"));
  ASSERT_EQ(worker.Wait(300), 0) << ReadFile(dir.File("wide.log"));
  const std::string db = server.db_path();
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM trials WHERE state = 'done'"),
            600);
  EXPECT_EQ(QueryInt(db,
                     "SELECT COUNT(*) FROM attempts WHERE "
                     "json_extract(provenance_json, '$.device') = "
                     "'cpu (batch of 600)'"),
            600);
  EXPECT_EQ(ReadFile(dir.File("wide.log")).find("batch_completion_refused"),
            std::string::npos);
  // One transaction per call: three end times, shared by 256, 256 and 88.
  const std::string calls =
      "(SELECT COUNT(*) AS n FROM attempts GROUP BY ended_ms)";
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM " + calls), 3);
  EXPECT_EQ(QueryInt(db, "SELECT MAX(n) FROM " + calls), 256);
  EXPECT_EQ(QueryInt(db, "SELECT MIN(n) FROM " + calls), 88);
}

}  // namespace
}  // namespace qkov::testing

namespace qkov::testing {
namespace {

// A fixed-attention sweep through a real worker: `qkov plot`'s `all` draws
// its task's one figure, the final loss against alpha for each
// parameterization (the paper's Fig. 3), at a budget of 600 steps a trial.
TEST(PlotTest, FixedAttentionDrawsItsOwnFigure) {
  TempDir dir;
  ServerUnderTest server(dir);
  const std::string at = "--server=" + server.address();
  ASSERT_EQ(RunCommand({QKOV_CLI_BIN, at, "submit", "--preset",
                        "paper-fixed-attention", "--quick", "--set",
                        "training.max_steps=600", "--set",
                        "training.report_every=300"})
                .exit_code,
            0);
  Process worker({QKOV_WORKER_BIN, at, "--batch_trials=5", "--exit_when_idle"},
                 dir.File("w.log"));
  ASSERT_EQ(worker.Wait(180), 0) << ReadFile(dir.File("w.log"));

  CommandResult plot =
      RunCommand({QKOV_CLI_BIN, at, "plot", "paper-fixed-attention-quick",
                  "--out", dir.File("plots")});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  const std::string base = dir.File("plots/fixed_attention_loss");
  EXPECT_EQ(plot.out, base + ".png " + base + ".svg " + base + ".dat\n");
  EXPECT_TRUE(IsValidPng(base + ".png"));
  // One block of five alphas per parameterization, each the stored loss.
  const std::string dat = ReadFile(base + ".dat");
  auto losses = QueryRows(server.db_path(),
                          "SELECT t.parameterization, printf('%.10g', "
                          "json_extract(t.config_json, '$.alpha')), "
                          "printf('%.10g', r.value) FROM results r JOIN "
                          "trials t USING (trial_id) WHERE r.name = 'loss'");
  ASSERT_EQ(losses.size(), 10u);
  for (const auto& l : losses) {
    const size_t block = dat.find("# " + l[0] + "\n");
    ASSERT_NE(block, std::string::npos) << l[0] << "\n" << dat;
    // Through the block's last line break.
    const std::string body =
        dat.substr(block, dat.find("\n\n", block) + 1 - block);
    EXPECT_NE(body.find("\n" + l[1] + " " + l[2] + "\n"), std::string::npos)
        << l[0] << " alpha " << l[1] << "\n"
        << body;
  }
  // A kind no table row names is refused with one line.
  CommandResult unknown = RunCommand(
      {QKOV_CLI_BIN, at, "plot", "paper-fixed-attention-quick", "--kind", "x"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("--kind"), std::string::npos) << unknown.err;
}

// The theory preset through a real worker, plotted with a trained sweep
// overlaid; status shows throughput and ETA, watch the latest metrics.
TEST(PlotTest, TheoryCurvesWithTrainedModelsOverlaid) {
  TempDir dir;
  ServerUnderTest server(dir);
  const std::string at = "--server=" + server.address();
  ASSERT_EQ(RunCommand({QKOV_CLI_BIN, at, "submit", "--preset", "paper-theory"})
                .exit_code,
            0);
  WriteFile(dir.File("sweep.yaml"), kSweep);
  ASSERT_EQ(RunCommand({QKOV_CLI_BIN, at, "submit", dir.File("sweep.yaml")})
                .exit_code,
            0);
  Process worker({QKOV_WORKER_BIN, at, "--batch_trials=4", "--exit_when_idle"},
                 dir.File("w.log"));
  ASSERT_EQ(worker.Wait(180), 0) << ReadFile(dir.File("w.log"));

  CommandResult plot =
      RunCommand({QKOV_CLI_BIN, at, "plot", "paper-theory", "--out",
                  dir.File("plots"), "--overlay", "it-sweep"});
  ASSERT_EQ(plot.exit_code, 0) << plot.err;
  // `all` of an ODE sweep is the ODE's figures (its task's defaults).
  std::string listed;
  for (const char* f : {"theory_time", "theory_thresholds", "theory_alpha"}) {
    const std::string base = dir.File(std::string("plots/") + f);
    absl::StrAppend(&listed, base, ".png ", base, ".svg ", base, ".dat\n");
  }
  EXPECT_EQ(plot.out, listed);
  EXPECT_TRUE(IsValidPng(dir.File("plots/theory_alpha.png")));
  const std::string svg = ReadFile(dir.File("plots/theory_alpha.svg"));
  for (const char* r : {"r = 0.01", "r = 0.1", "r = 1", "r = 10", "r = 100",
                        "trained CACO r=1", "trained CACO r=20"}) {
    EXPECT_NE(svg.find(std::string("<text>") + r + "</text>"),
              std::string::npos)
        << r;
  }
  // Each theory curve has exactly the threshold crossings stored for its r.
  const std::string dat = ReadFile(dir.File("plots/theory_alpha.dat"));
  auto counts = QueryRows(server.db_path(),
                          "SELECT printf('%.6g', t.lr_ratio), COUNT(*) FROM "
                          "metrics m JOIN trials t USING (trial_id) "
                          "WHERE m.name = 'threshold_alpha' GROUP BY 1");
  ASSERT_EQ(counts.size(), 5u);
  for (const auto& c : counts) {
    const size_t block = dat.find("# r = " + c[0] + "\n");
    ASSERT_NE(block, std::string::npos) << c[0];
    const size_t end = dat.find("\n\n", block);
    const std::string body = dat.substr(
        block, end == std::string::npos ? std::string::npos : end - block);
    EXPECT_EQ(std::count(body.begin(), body.end(), '\n'), std::stoi(c[1]))
        << c[0];
  }
  // The trained sweep's four arms (2 parameterizations x 2 ratios) at
  // matched training loss, each point as `qkov results --matched` gives it.
  CommandResult matched = RunCommand(
      {QKOV_CLI_BIN, at, "results", "it-sweep", "--matched", "train_loss",
       "--window", "5", "--metrics", "distinct_attention", "--by",
       "parameterization,lr_ratio", "--format", "csv"});
  ASSERT_EQ(matched.exit_code, 0) << matched.err;
  int points = 0;
  for (absl::string_view line : absl::StrSplit(matched.out, '\n')) {
    std::vector<std::string> f = absl::StrSplit(line, ',');
    if (f.size() != 7 || f[0] == "parameterization" || f[5] == "-") continue;
    const size_t block = dat.find("# trained " + f[0] + " r=" + f[1] + "\n");
    ASSERT_NE(block, std::string::npos) << line << "\n" << dat;
    const size_t end = dat.find("\n\n", block);
    const std::string body = dat.substr(block, end - block);
    double level = 0, mean = 0;
    ASSERT_TRUE(absl::SimpleAtod(f[2], &level) &&
                absl::SimpleAtod(f[5], &mean));
    bool found = false;
    for (absl::string_view row : absl::StrSplit(body, '\n')) {
      std::vector<std::string> xy = absl::StrSplit(row, ' ');
      double x = 0, y = 0;
      if (xy.size() != 2 || !absl::SimpleAtod(xy[0], &x) ||
          !absl::SimpleAtod(xy[1], &y))
        continue;
      if (std::fabs(x - level) <= 5e-4 * std::fabs(level)) {
        EXPECT_NEAR(y, mean, 5e-4 * std::fabs(mean)) << line;
        found = true;
      }
    }
    EXPECT_TRUE(found) << line << "\n" << body;
    ++points;
  }
  EXPECT_GT(points, 0) << matched.out;

  CommandResult status = RunCommand({QKOV_CLI_BIN, at, "status", "it-sweep"});
  ASSERT_EQ(status.exit_code, 0);
  EXPECT_NE(status.out.find("per hour"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find(" done "), std::string::npos)
      << status.out;  // the ETA column
  // The terminal's width comes from $COLUMNS when stdout is not a terminal.
  setenv("COLUMNS", "300", 1);
  CommandResult watch =
      RunCommand({QKOV_CLI_BIN, at, "watch", "it-sweep", "--tty"});
  ASSERT_EQ(watch.exit_code, 0);
  EXPECT_NE(watch.out.find("train_loss="), std::string::npos) << watch.out;
  EXPECT_NE(watch.out.find("[" + std::string(30, '#') + "]"), std::string::npos)
      << watch.out;
  // In a narrow terminal every redraw fits in one line (a longer one would
  // wrap, and each update would print a new line).
  setenv("COLUMNS", "40", 1);
  CommandResult narrow =
      RunCommand({QKOV_CLI_BIN, at, "watch", "it-sweep", "--tty"});
  unsetenv("COLUMNS");
  ASSERT_EQ(narrow.exit_code, 0);
  int redraws = 0;
  for (absl::string_view part :
       absl::StrSplit(narrow.out, '\r', absl::SkipEmpty())) {
    absl::ConsumePrefix(&part, "\033[K");
    part = absl::StripTrailingAsciiWhitespace(part);
    if (part.empty()) continue;
    EXPECT_LE(part.size(), 39u) << part;
    ++redraws;
  }
  EXPECT_GE(redraws, 1);
  EXPECT_NE(narrow.out.find("[" + std::string(10, '#') + "]"),
            std::string::npos)
      << narrow.out;
}

}  // namespace
}  // namespace qkov::testing
