// Every preset, and its --quick variant, is a sweep file the server accepts.
#include "common/presets.h"

#include <gtest/gtest.h>

#include "common/sweep_file.h"
#include "common/task_info.h"
#include "common/task_kind.h"
#include "server/core/sweep_spec.h"

namespace qkov {
namespace {

TEST(PresetsTest, EveryPresetAndItsQuickVariantPassTheServersValidation) {
  ASSERT_FALSE(Presets().empty());
  for (const Preset& p : Presets()) {
    for (bool quick : {false, true}) {
      absl::StatusOr<qkov::v1::SweepSpec> spec = ParseSweepText(
          p.yaml, p.name, quick ? p.quick : std::vector<std::string>{});
      ASSERT_TRUE(spec.ok()) << p.name << ": " << spec.status();
      core::ApplySpecDefaults(&*spec);
      const absl::Status s = core::ValidateSweepSpec(*spec, core::SpecLimits());
      EXPECT_TRUE(s.ok()) << p.name << (quick ? " --quick" : "") << ": " << s;
    }
  }
}

// A preset is declared by the task it sweeps (TaskInfo::presets), and
// Presets() is every task's, in the task table's order.
TEST(PresetsTest, EachTasksPresetsSweepThatTask) {
  size_t n = 0;
  for (const TaskInfo& task : Tasks()) {
    for (const Preset& p : task.presets) {
      absl::StatusOr<qkov::v1::SweepSpec> spec = ParseSweepText(p.yaml, p.name);
      ASSERT_TRUE(spec.ok()) << p.name << ": " << spec.status();
      core::ApplySpecDefaults(&*spec);
      EXPECT_EQ(TaskName(spec->training().task()), task.name) << p.name;
      ASSERT_LT(n, Presets().size());
      EXPECT_EQ(Presets()[n].name, p.name);
      ++n;
    }
  }
  EXPECT_EQ(n, Presets().size());
  EXPECT_GE(n, 9u) << "the paper's presets";
}

// `qkov trial` prints a trial as a sweep file of one point; read back, that
// file expands to the same trial (same config, same hash), for every
// preset's task and settings.
TEST(PresetsTest, TrialSweepTextReadsBackToTheSameTrial) {
  for (const Preset& p : Presets()) {
    absl::StatusOr<qkov::v1::SweepSpec> spec = ParseSweepText(p.yaml, p.name);
    ASSERT_TRUE(spec.ok()) << p.name << ": " << spec.status();
    // A search's trials come from its follow-up; as a grid (search: null) at
    // one of its ratios, its trials are what it makes.
    if (spec->has_search()) {
      spec->clear_search();
      spec->mutable_axes()->add_lr_ratios(4.2);
    }
    core::ApplySpecDefaults(&*spec);
    const std::vector<core::ExpandedTrial> trials = core::ExpandSweep(*spec);
    ASSERT_FALSE(trials.empty()) << p.name;
    for (const core::ExpandedTrial& t : {trials.front(), trials.back()}) {
      // The axes, then the trial's training part (its arm's, if any).
      qkov::v1::TrialConfig full;
      ASSERT_TRUE(full.ParseFromString(
          t.axes_pb +
          (t.training_pb.empty() ? core::TrainingPb(*spec) : t.training_pb)));
      const std::string text = TrialSweepText("one", full);
      absl::StatusOr<qkov::v1::SweepSpec> back =
          ParseSweepText(text, "trial.yaml");
      ASSERT_TRUE(back.ok()) << p.name << ": " << back.status() << "\n" << text;
      core::ApplySpecDefaults(&*back);
      const std::vector<core::ExpandedTrial> again = core::ExpandSweep(*back);
      ASSERT_EQ(again.size(), 1u) << text;
      EXPECT_EQ(again[0].config.DebugString(), t.config.DebugString()) << text;
      EXPECT_EQ(back->training().DebugString(), full.training().DebugString())
          << text;
      EXPECT_EQ(again[0].config_hash, t.config_hash) << p.name;
    }
  }
  // The shape a reader sees: lists for the axes, names for enums.
  absl::StatusOr<qkov::v1::SweepSpec> ratio =
      ParseSweepText(FindPreset("paper-ratio")->yaml, "paper-ratio");
  ASSERT_TRUE(ratio.ok());
  core::ApplySpecDefaults(&*ratio);
  qkov::v1::TrialConfig first = core::ExpandSweep(*ratio)[0].config;
  *first.mutable_training() = ratio->training();
  const std::string text = TrialSweepText("paper-ratio", first);
  EXPECT_NE(text.find("axes:\n  parameterization: [FAFO]\n  lr_ratio: [1]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  task: synthetic\n"), std::string::npos) << text;
  EXPECT_NE(text.find("kind: sgd"), std::string::npos) << text;
}

// The SVA preset gets the authors' SVA setup from the task's defaults.
TEST(PresetsTest, SvaPresetTrainsTheAuthorsSvaSetup) {
  absl::StatusOr<Preset> p = FindPreset("paper-sva");
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<qkov::v1::SweepSpec> spec =
      ParseSweepText(p->yaml, p->name, {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  core::ApplySpecDefaults(&*spec);
  const qkov::v1::Training& t = spec->training();
  EXPECT_EQ(t.optimizer().kind(), qkov::v1::SGD);
  EXPECT_DOUBLE_EQ(t.optimizer().momentum(), 0.99);
  EXPECT_EQ(t.text().epochs(), 15);
  EXPECT_DOUBLE_EQ(t.text().train_fraction(), 0.1);
  EXPECT_EQ(t.text().d_mlp(), 0);
  EXPECT_FALSE(t.text().residual());
  EXPECT_TRUE(t.text().padding_mask());
}

}  // namespace
}  // namespace qkov
