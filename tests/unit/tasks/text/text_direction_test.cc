// The paper's direction on the shipped HateXplain data (docs/paper.md §6), at
// the smallest budget that shows it on 2 cores (one epoch over the 15,383
// reconstructed training posts, 481 steps per arm, about 8 seconds each):
// with the QK group and the token embedding learning 30x faster, the test
// attention on the human rationale is clearly higher and the test accuracy
// not lower. docs/text-tasks.md records the numbers it gave.
#include <gtest/gtest.h>

#include "tests/unit/training/shared_data.h"
#include "worker/training/trainer.h"

namespace qkov::training {
namespace {

TrialOptions HateXplain(double lr_ratio) {
  TrialOptions o =
      testing::HateXplainOptions("train-reconstructed.jsonl", "test.jsonl");
  o.lr_ratio = lr_ratio;
  o.eta_ov = 5e-5;
  o.report_every = 100;
  o.max_steps = 100000;
  o.eval.num_examples = 100000;
  text::TextTaskOptions& t = o.MutableTaskOptions<text::TextTaskOptions>();
  t.train.max_examples = 0;  // all 15,383: one epoch, 481 steps
  t.epochs = 1;
  // The authors' arms: the faster one freezes the MLP and decays 10x more.
  t.mlp_lr_multiplier = lr_ratio > 1 ? 0 : 1;
  const double wd = lr_ratio > 1 ? 1e-3 : 1e-4;
  t.weight_decay = {wd, wd, wd};
  return o;
}

TEST(TextDirectionTest, FasterQkRaisesHateXplainRationaleAttention) {
  auto base = RunTrial(HateXplain(1), nullptr);
  ASSERT_TRUE(base.ok()) << base.status();
  auto fast = RunTrial(HateXplain(30), nullptr);
  ASSERT_TRUE(fast.ok()) << fast.status();
  const auto& b = base->results;
  const auto& f = fast->results;
  std::printf(
      "hatexplain baseline: acc %.3f mass %.4f rollout %.4f comp %.3f suff "
      "%.3f\n",
      b.at("test_accuracy"), b.at("test_rationale_mass"),
      b.at("test_rationale_mass_rollout"), b.at("test_comprehensiveness"),
      b.at("test_sufficiency"));
  std::printf(
      "hatexplain faster:   acc %.3f mass %.4f rollout %.4f comp %.3f suff "
      "%.3f\n",
      f.at("test_accuracy"), f.at("test_rationale_mass"),
      f.at("test_rationale_mass_rollout"), f.at("test_comprehensiveness"),
      f.at("test_sufficiency"));
  EXPECT_GT(f.at("test_rationale_mass"), 2 * b.at("test_rationale_mass"));
  EXPECT_GE(f.at("test_accuracy"), b.at("test_accuracy"));
}

}  // namespace
}  // namespace qkov::training
