// A sweep's arms (server/core/sweep_arms.h): each arm's settings reach its
// trials' configs and hashes, the rest of the sweep's stay, a sweep without
// arms hashes as it did, and every refusal names the arm.
#include "server/core/sweep_arms.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "server/core/sweep_spec.h"

namespace qkov::core {
namespace {

namespace v1 = ::qkov::v1;

// The HateXplain shape of docs/sweep-files.md's example: a baseline at 1x
// with weight decay 1e-4, a faster arm at 30x with weight decay 1e-3 and
// the MLP's rate multiplied by 0. The sweep's own weight decay is 0.5, so
// each arm's value must come from the arm.
v1::SweepSpec TwoArms() {
  v1::SweepSpec s;
  s.set_name("arms");
  s.mutable_axes()->add_parameterizations(v1::FAFO);
  s.mutable_axes()->add_eta_ovs(0.01);
  s.mutable_axes()->add_seeds(1);
  s.mutable_axes()->add_seeds(2);
  s.mutable_training()->set_max_steps(400);
  s.mutable_training()->mutable_optimizer()->set_weight_decay(0.5);
  s.mutable_training()->mutable_optimizer()->set_momentum(0.9);
  v1::Arm* base = s.mutable_axes()->add_arms();
  base->set_name("baseline");
  base->set_lr_ratio(1);
  base->mutable_training()->mutable_optimizer()->set_weight_decay(1e-4);
  base->mutable_training_fields()->add_paths("optimizer.weight_decay");
  v1::Arm* fast = s.mutable_axes()->add_arms();
  fast->set_name("faster");
  fast->set_lr_ratio(30);
  fast->mutable_training()->mutable_optimizer()->set_weight_decay(1e-3);
  fast->mutable_training()->mutable_optimizer()->set_momentum(0);
  fast->mutable_training_fields()->add_paths("optimizer.weight_decay");
  fast->mutable_training_fields()->add_paths("optimizer.momentum");
  return s;
}

v1::SweepSpec Defaulted(v1::SweepSpec s) {
  ApplySpecDefaults(&s);
  return s;
}

std::string ErrorOf(v1::SweepSpec s) {
  ApplySpecDefaults(&s);
  absl::Status st = ValidateSweepSpec(s, SpecLimits{});
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  return std::string(st.message());
}

TEST(SweepArmsTest, EachArmsSettingsReachItsTrials) {
  const v1::SweepSpec s = Defaulted(TwoArms());
  ASSERT_TRUE(ValidateSweepSpec(s, SpecLimits{}).ok());
  const std::vector<ExpandedTrial> trials = ExpandSweep(s);
  ASSERT_EQ(trials.size(), 4u);  // 2 arms x 2 seeds
  std::map<std::string, int> per_arm;
  for (const ExpandedTrial& t : trials) {
    v1::TrialConfig full;
    ASSERT_TRUE(full.ParseFromString(t.axes_pb + t.training_pb));
    ASSERT_TRUE(full.has_arm());
    ++per_arm[full.arm()];
    const auto& o = full.training().optimizer();
    EXPECT_EQ(full.training().max_steps(), 400);  // the sweep's, kept
    if (full.arm() == "baseline") {
      EXPECT_DOUBLE_EQ(full.lr_ratio(), 1);
      EXPECT_DOUBLE_EQ(o.weight_decay(), 1e-4);
      EXPECT_DOUBLE_EQ(o.momentum(), 0.9);
    } else {
      EXPECT_DOUBLE_EQ(full.lr_ratio(), 30);
      EXPECT_DOUBLE_EQ(o.weight_decay(), 1e-3);
      EXPECT_DOUBLE_EQ(o.momentum(), 0);  // set to zero by the arm
    }
    // The assembled canonical JSON is the printed one, arm included.
    EXPECT_EQ(t.config_json, CanonicalJson(full));
    EXPECT_NE(t.config_json.find("\"arm\":\"" + full.arm() + "\""),
              std::string::npos);
    EXPECT_EQ(t.config_hash, Sha256Hex(t.config_json));
  }
  EXPECT_EQ(per_arm,
            (std::map<std::string, int>{{"baseline", 2}, {"faster", 2}}));
  std::set<std::string> hashes;
  for (const ExpandedTrial& t : trials) hashes.insert(t.config_hash);
  EXPECT_EQ(hashes.size(), 4u);
}

// The arm's settings, then the task's and the shared defaults: an arm's
// training part is whole, as every stored config is.
TEST(SweepArmsTest, EachArmGetsTheDefaults) {
  const v1::SweepSpec s = Defaulted(TwoArms());
  for (const v1::Arm& arm : s.axes().arms()) {
    EXPECT_EQ(arm.training().task(), v1::TASK_SYNTHETIC);
    EXPECT_EQ(arm.training().batch_size(), s.training().batch_size());
    EXPECT_EQ(arm.training().synthetic().vocab_size(), 50);
    EXPECT_EQ(arm.training().evaluation().dtap_attention_edges_size(), 6);
  }
}

// Configs of a sweep without arms print no "arm", so their hashes are the
// ones stored before arms existed, and an unnamed arm is not an arm.
TEST(SweepArmsTest, NoArmsNoArmInTheConfig) {
  v1::SweepSpec s = TwoArms();
  s.mutable_axes()->clear_arms();
  s.mutable_axes()->add_lr_ratios(1);
  ApplySpecDefaults(&s);
  for (const ExpandedTrial& t : ExpandSweep(s)) {
    EXPECT_FALSE(t.config.has_arm());
    EXPECT_TRUE(t.training_pb.empty());
    EXPECT_EQ(t.config_json.find("\"arm\""), std::string::npos);
    v1::TrialConfig full = t.config;
    *full.mutable_training() = s.training();
    EXPECT_EQ(t.config_json, CanonicalJson(full));
  }
}

// Re-submitting with one more arm: the old arms' trials keep their hashes
// (the store matches them), the new arm's are new.
TEST(SweepArmsTest, AnotherArmExtendsTheSweep) {
  const std::vector<ExpandedTrial> before = ExpandSweep(Defaulted(TwoArms()));
  v1::SweepSpec more = TwoArms();
  v1::Arm* third = more.mutable_axes()->add_arms();
  third->set_name("faster-wd0");
  third->set_lr_ratio(30);
  third->mutable_training_fields()->add_paths("optimizer.weight_decay");
  const std::vector<ExpandedTrial> after = ExpandSweep(Defaulted(more));
  ASSERT_EQ(after.size(), 6u);
  std::set<std::string> old_hashes;
  for (const ExpandedTrial& t : before) old_hashes.insert(t.config_hash);
  int kept = 0;
  for (const ExpandedTrial& t : after) kept += old_hashes.count(t.config_hash);
  EXPECT_EQ(kept, 4);
}

// The sweep's ratio axis crossed with an arm that gives none; replaced for
// an arm that gives one.
TEST(SweepArmsTest, AnArmsRatioReplacesTheAxis) {
  v1::SweepSpec s = TwoArms();
  s.mutable_axes()->add_lr_ratios(2);
  s.mutable_axes()->add_lr_ratios(5);
  s.mutable_axes()->mutable_arms(0)->clear_lr_ratio();
  s = Defaulted(s);
  ASSERT_TRUE(ValidateSweepSpec(s, SpecLimits{}).ok());
  std::multiset<std::pair<std::string, double>> points;
  for (const ExpandedTrial& t : ExpandSweep(s))
    points.insert({t.config.arm(), t.config.lr_ratio()});
  EXPECT_EQ(points,
            (std::multiset<std::pair<std::string, double>>{{"baseline", 2},
                                                           {"baseline", 2},
                                                           {"baseline", 5},
                                                           {"baseline", 5},
                                                           {"faster", 30},
                                                           {"faster", 30}}));
  SpecLimits limits;
  limits.max_trials = 5;
  EXPECT_EQ(ValidateSweepSpec(s, limits).message(),
            "spec.axes: grid has 6 trials; this server's limit is 5");
}

TEST(SweepArmsTest, RefusalsNameTheArmAndTheKey) {
  v1::SweepSpec s = TwoArms();
  s.mutable_axes()->mutable_arms(1)->mutable_training_fields()->add_paths(
      "optimizer.wd");
  EXPECT_EQ(ErrorOf(s),
            "spec.axes.arms[faster].training_fields: no training setting "
            "named 'optimizer.wd'");

  s = TwoArms();
  s.mutable_axes()
      ->mutable_arms(1)
      ->mutable_training()
      ->mutable_optimizer()
      ->set_weight_decay(-1);
  EXPECT_EQ(ErrorOf(s),
            "spec.axes.arms[faster].training.optimizer.weight_decay: must be "
            "in [0, 1000] (got -1)");

  s = TwoArms();
  s.mutable_axes()->mutable_arms(1)->set_lr_ratio(0);
  EXPECT_EQ(ErrorOf(s),
            "spec.axes.arms[faster].lr_ratio: must be finite and > 0 (got 0)");

  s = TwoArms();
  s.mutable_axes()->mutable_arms(1)->clear_lr_ratio();
  EXPECT_EQ(ErrorOf(s),
            "spec.axes.arms[faster].lr_ratio: the sweep has no lr_ratio axis; "
            "give the arm one");

  s = TwoArms();
  s.mutable_axes()->mutable_arms(1)->set_name("baseline");
  EXPECT_EQ(ErrorOf(s), "spec.axes.arms[1].name: duplicate arm 'baseline'");

  s = TwoArms();
  s.mutable_axes()->mutable_arms(0)->set_name("a b");
  EXPECT_EQ(ErrorOf(s),
            "spec.axes.arms[0].name: may contain only letters, digits, '_', "
            "'-', '.' (got ' ')");

  s = TwoArms();
  s.mutable_axes()->mutable_arms(0)->mutable_training()->set_task(
      v1::TASK_THEORY);
  s.mutable_axes()->mutable_arms(0)->mutable_training_fields()->add_paths(
      "task");
  EXPECT_EQ(ErrorOf(s),
            "spec.axes.arms[baseline].training.task: an arm cannot change the "
            "task; give each task a sweep of its own");

  s = TwoArms();
  s.mutable_search()->set_metric("distinct_attention");
  s.mutable_search()->set_target(0.6);
  s.mutable_search()->set_lo(1);
  s.mutable_search()->set_hi(100);
  EXPECT_NE(ErrorOf(s).find("spec.axes.arms: an adaptive sweep takes no arms"),
            std::string::npos);
}

}  // namespace
}  // namespace qkov::core
