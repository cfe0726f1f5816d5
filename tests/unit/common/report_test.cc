// The report built over a source of sweeps (common/report/report.h), with a
// source in memory that answers as the coordinator does (its matched table
// by common/matched_sweep.h, the same code the server runs): the levels come
// from the two compared arms only and never from a plateau both share; every
// trial of an arm is accounted for (a diverged one changes the count and is
// listed); a claim serves from any sweep of its task that holds its arms,
// whatever its name.
#include "common/report/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/aggregate.h"
#include "common/matched_sweep.h"

namespace qkov::report {
namespace {

// One sweep's trials: rows as QueryResults gives them and each trial's
// curves.
struct FakeSweep {
  v1::Sweep sweep;
  std::vector<v1::ResultRow> rows;
  std::map<std::string, std::map<std::string, std::vector<CurvePoint>>> curves;
};

struct FakeDb {
  std::vector<FakeSweep> sweeps;

  const FakeSweep* Find(const std::string& name) const {
    for (const FakeSweep& s : sweeps)
      if (s.sweep.name() == name) return &s;
    return nullptr;
  }
  const FakeSweep* Owner(const std::string& trial) const {
    for (const FakeSweep& s : sweeps)
      if (s.curves.count(trial)) return &s;
    return nullptr;
  }

  ReportSource Source() const {
    ReportSource src;
    src.server = "test";
    src.list_sweeps = [this]() -> absl::StatusOr<v1::ListSweepsResponse> {
      v1::ListSweepsResponse r;
      for (const FakeSweep& s : sweeps) *r.add_sweeps() = s.sweep;
      return r;
    };
    src.get_sweep =
        [this](const std::string& name) -> absl::StatusOr<v1::Sweep> {
      const FakeSweep* s = Find(name);
      if (s == nullptr) return absl::NotFoundError(name);
      return s->sweep;
    };
    src.query = [this](const v1::QueryResultsRequest& q)
        -> absl::StatusOr<v1::QueryResultsResponse> {
      const FakeSweep* s = Find(q.sweep_name());
      if (s == nullptr) return absl::NotFoundError(q.sweep_name());
      absl::StatusOr<std::vector<Filter>> filters =
          ParseWhere({q.where().begin(), q.where().end()});
      if (!filters.ok()) return filters.status();
      v1::QueryResultsResponse r;
      for (const v1::ResultRow& row : s->rows)
        if (Matches(row, *filters)) *r.add_rows() = row;
      r.set_total_rows(r.rows_size());
      return r;
    };
    src.curves = [this](const v1::GetTrialMetricsRequest& q)
        -> absl::StatusOr<v1::GetTrialMetricsResponse> {
      const FakeSweep* s = Owner(q.trial_id());
      if (s == nullptr) return absl::NotFoundError(q.trial_id());
      v1::GetTrialMetricsResponse r;
      for (const auto& [name, points] : s->curves.at(q.trial_id())) {
        bool wanted = q.names().empty();
        for (const std::string& n : q.names()) wanted = wanted || n == name;
        if (!wanted) continue;
        v1::MetricSeries* m = r.add_series();
        m->set_name(name);
        for (const CurvePoint& p : points) {
          m->add_steps(p.step);
          m->add_values(p.value);
        }
      }
      return r;
    };
    src.get_trial = [](const std::string& id) -> absl::StatusOr<v1::Trial> {
      v1::Trial t;
      t.set_trial_id(id);
      t.set_config_hash(absl::StrCat("hash-", id));
      return t;
    };
    src.match = [src](const v1::MatchSweepRequest& r)
        -> absl::StatusOr<v1::MatchedResponse> {
      SweepMatchedArgs args;
      args.sweep = r.sweep_name();
      args.spec = r.curve();
      if (r.levels_size() > 0) {
        std::vector<std::string> ls;
        for (double l : r.levels()) ls.push_back(absl::StrFormat("%.17g", l));
        absl::StrAppend(&args.spec, "=", absl::StrJoin(ls, ","));
      }
      args.window = r.window() == 0 ? 1 : r.window();
      args.metrics.assign(r.metrics().begin(), r.metrics().end());
      args.by.assign(r.by().begin(), r.by().end());
      args.where.assign(r.where().begin(), r.where().end());
      SweepSource ss;
      ss.query = src.query;
      ss.curves = src.curves;
      absl::StatusOr<MatchedTable> t = MatchSweep(args, ss);
      if (!t.ok()) return t.status();
      return MatchedToProto(*t);
    };
    return src;
  }
};

// A synthetic FAFO trial at `ratio`: the loss falls from 4 to 1 in the
// first 1,000 steps while the QK circuit sits at its saddle (attention at
// the uniform share 0.355, the same in every arm: a shared plateau), then
// on to 1e-3; the faster the ratio, the earlier and the more attention
// moves to the distinct tokens.
void AddTrial(FakeSweep* s, double ratio, int seed,
              v1::TrialState state = v1::DONE, int64_t last_step = 10000) {
  const std::string id = absl::StrCat(s->sweep.name(), "-", ratio, "-", seed);
  v1::ResultRow row;
  row.set_trial_id(id);
  row.mutable_config()->set_parameterization(v1::FAFO);
  row.mutable_config()->set_lr_ratio(ratio);
  row.mutable_config()->set_eta_ov(0.1);
  row.mutable_config()->set_seed(seed);
  row.mutable_config()->mutable_training()->set_task(v1::TASK_SYNTHETIC);
  row.mutable_config()->mutable_training()->set_batch_size(32);
  row.set_state(state);
  (*row.mutable_values())["steps"] = static_cast<double>(last_step);
  s->rows.push_back(row);
  auto& curves = s->curves[id];
  const double noise = 0.001 * seed;
  for (int64_t step = 0; step <= last_step; step += 100) {
    double loss, attention;
    if (step <= 1000) {
      loss = 4.0 - 3.0 * static_cast<double>(step) / 1000.0;
      attention = 0.355;
    } else {
      const double t = static_cast<double>(step - 1000) / 9000.0;
      // log-linear from 1 to 1e-3 (the faster a little sooner), attention
      // rising with the ratio.
      loss = std::pow(10.0, -3.0 * std::min(1.0, t * (1 + ratio / 100.0)));
      attention = 0.355 + (0.5 * ratio / 20.0) * t + noise;
    }
    curves["train_loss"].push_back({step, loss});
    curves["distinct_attention"].push_back({step, attention});
  }
}

FakeSweep RatioSweep(const std::string& name, std::vector<double> ratios,
                     int seeds) {
  FakeSweep s;
  s.sweep.set_name(name);
  s.sweep.mutable_spec()->mutable_training()->set_task(v1::TASK_SYNTHETIC);
  for (double r : ratios)
    for (int seed = 1; seed <= seeds; ++seed) AddTrial(&s, r, seed);
  s.sweep.set_total_trials(static_cast<int64_t>(s.rows.size()));
  return s;
}

const ClaimResult& Find(const Report& r, const std::string& id) {
  for (const ClaimResult& c : r.claims)
    if (c.claim->id == id) return c;
  ADD_FAILURE() << "no claim " << id;
  return r.claims.front();
}

TEST(ReportTest, LevelsLieAfterThePlateauBothArmsShare) {
  FakeDb db;
  db.sweeps.push_back(RatioSweep("my-ratio-sweep", {1, 20}, 3));
  absl::StatusOr<Report> r = BuildReport(db.Source(), ReportArgs());
  ASSERT_TRUE(r.ok()) << r.status();
  const ClaimResult& c = Find(*r, "fast-qk-sharpens");
  ASSERT_FALSE(c.levels.levels.empty()) << c.levels.rule << " " << c.note;
  // On the plateau (loss 4 -> 1) attention is 0.355 in both arms: no level
  // at or above loss 1 is chosen.
  for (double level : c.levels.levels) EXPECT_LT(level, 1.0) << level;
  // Each level: an arm's attention there has left 0.355.
  for (const LevelComparison& l : c.judgement.levels) {
    ASSERT_TRUE(l.compared) << l.level;
    EXPECT_GT(std::abs(l.faster_value.mean() - 0.355), 1e-3) << l.level;
  }
  // The lowest level is the lowest both arms reach: 1e-3, the paper's point.
  EXPECT_NEAR(c.levels.levels.back(), 1e-3, 1e-12);
  EXPECT_NE(c.levels.rule.find("the paper's comparison point 0.001"),
            std::string::npos)
      << c.levels.rule;
}

TEST(ReportTest, AThirdArmInTheSweepDoesNotMoveTheLevels) {
  FakeDb two, three;
  two.sweeps.push_back(RatioSweep("s", {1, 20}, 3));
  three.sweeps.push_back(RatioSweep("s", {1, 5, 20}, 3));
  // The third arm starts higher and ends lower than the compared two.
  FakeSweep& s = three.sweeps[0];
  for (auto& [id, curves] : s.curves) {
    if (id.find("-5-") == std::string::npos) continue;
    for (CurvePoint& p : curves["train_loss"]) p.value = p.value * 2 - 1e-4;
  }
  absl::StatusOr<Report> a = BuildReport(two.Source(), ReportArgs());
  absl::StatusOr<Report> b = BuildReport(three.Source(), ReportArgs());
  ASSERT_TRUE(a.ok() && b.ok());
  const ClaimResult& ca = Find(*a, "fast-qk-sharpens");
  const ClaimResult& cb = Find(*b, "fast-qk-sharpens");
  ASSERT_FALSE(ca.levels.levels.empty());
  EXPECT_EQ(ca.levels.levels, cb.levels.levels);
  EXPECT_EQ(ca.judgement.verdict, cb.judgement.verdict);
}

TEST(ReportTest, ADivergedTrialChangesTheCountAndIsListed) {
  FakeDb db;
  db.sweeps.push_back(RatioSweep("s", {1, 20}, 3));
  absl::StatusOr<Report> all = BuildReport(db.Source(), ReportArgs());
  ASSERT_TRUE(all.ok());
  const ClaimResult& before = Find(*all, "fast-qk-sharpens");
  EXPECT_TRUE(before.evidence.not_done.empty());
  EXPECT_EQ(before.judgement.why.find("judged on"), std::string::npos);
  // A fourth seed of the faster arm diverges half way: its curve stops.
  AddTrial(&db.sweeps[0], 20, 4, v1::DIVERGED, /*last_step=*/3000);
  absl::StatusOr<Report> one = BuildReport(db.Source(), ReportArgs());
  ASSERT_TRUE(one.ok());
  const ClaimResult& after = Find(*one, "fast-qk-sharpens");
  EXPECT_EQ(after.evidence.faster_states.at("diverged"), 1);
  EXPECT_EQ(after.evidence.faster_states.at("done"), 3);
  ASSERT_EQ(after.evidence.not_done.size(), 1u);
  EXPECT_EQ(after.evidence.not_done[0], "s-20-4 (diverged)");
  EXPECT_NE(after.judgement.why.find("judged on 6 finished of 7 trials"),
            std::string::npos)
      << after.judgement.why;
  const std::string md = ReportMarkdown(*one);
  EXPECT_NE(md.find("not done: s-20-4 (diverged)"), std::string::npos);
}

TEST(ReportTest, AClaimServesFromAnySweepOfItsTaskHoldingItsArms) {
  FakeDb db;
  // A sweep named for nothing the claim knows, one with only one arm, and
  // one with more finished seeds: the last serves.
  db.sweeps.push_back(RatioSweep("renamed-by-set", {1, 20}, 2));
  db.sweeps.push_back(RatioSweep("one-arm", {20}, 5));
  db.sweeps.push_back(RatioSweep("five-seeds", {1, 20}, 5));
  absl::StatusOr<Report> r = BuildReport(db.Source(), ReportArgs());
  ASSERT_TRUE(r.ok()) << r.status();
  const ClaimResult& c = Find(*r, "fast-qk-sharpens");
  EXPECT_EQ(c.evidence.sweep, "five-seeds");
  ASSERT_EQ(c.evidence.considered.size(), 3u);
  EXPECT_NE(c.evidence.considered[1].find("cannot serve"), std::string::npos);
  // Without the five-seed sweep, the renamed one serves.
  db.sweeps.pop_back();
  r = BuildReport(db.Source(), ReportArgs());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Find(*r, "fast-qk-sharpens").evidence.sweep, "renamed-by-set");
  // A claim of another task finds no sweep and says which task it needs.
  const ClaimResult& text = Find(*r, "hatexplain-rationale");
  EXPECT_EQ(text.judgement.verdict, Verdict::kNotRun);
  EXPECT_EQ(text.note, "no sweep of TASK_HATEXPLAIN holds both arms");
  // The JSON carries the same fields the Markdown shows.
  const std::string json = ReportJson(*r);
  for (const char* field :
       {"\"effect\"", "\"paper_scale\"", "\"scale\"", "\"level_rule\"",
        "\"sweeps_considered\"", "\"faster_states\"", "\"seeds_to_decide\""})
    EXPECT_NE(json.find(field), std::string::npos) << field;
}

TEST(ReportTest, NumbersShowTheDigitsTheirCiAllows) {
  EXPECT_EQ(ValueWithCi(0.34912345, 0.0008663), "0.34912 ± 0.00087");
  EXPECT_EQ(ValueWithCi(0.7651, 0.001447), "0.7651 ± 0.0014");
  EXPECT_EQ(ValueWithCi(29530.4, 702.3), "29530 ± 700");
  EXPECT_EQ(ValueWithCi(1644.2, 0.7099), "1644.20 ± 0.71");
  EXPECT_EQ(ValueWithCi(0.5, NAN), "0.5");
}

}  // namespace
}  // namespace qkov::report
