// The paper's qualitative result on the synthetic task,
// within a CI budget: all factors start at identity x 1e-6 (the authors'
// Fig-2 CACO/FAFO notebook; CACO at the nn.Linear default as there), SGD,
// batch 32, sequence 64. The base learning rate is 0.1 instead of the
// paper's 0.01 so every run fits in 30k steps; docs/measurements.md records the
// paper-scale run (eta_OV = 0.01, ratio 20: converged at 69,000 steps).
#include <gtest/gtest.h>

#include "worker/training/trainer.h"

namespace qkov::training {
namespace {

TrialOutcome Train(Parameterization p, double ratio,
                   InitKind init = InitKind::kIdentity) {
  TrialOptions o;
  o.parameterization = p;
  o.lr_ratio = ratio;
  o.eta_ov = 0.1;
  o.max_steps = 30000;
  o.report_every = 1000;
  o.init.qk = init;
  o.init.ov = init;
  o.seed = 1234;
  auto r = RunTrial(o, nullptr);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : TrialOutcome{};
}

TEST(PaperResultTest, FasterQkSharpensAttentionAtEqualAccuracy) {
  TrialOutcome slow = Train(Parameterization::kFafo, 1);
  TrialOutcome fast = Train(Parameterization::kFafo, 20);
  EXPECT_GE(slow.results["accuracy"], 0.99);
  EXPECT_GE(fast.results["accuracy"], 0.99);
  // Clearly higher: by at least 0.2 of attention mass and 0.5 of AC.
  EXPECT_GT(fast.results["distinct_attention"],
            slow.results["distinct_attention"] + 0.2);
  EXPECT_GT(fast.results["ac"], slow.results["ac"] + 0.5);
  EXPECT_GT(fast.results["separability"], slow.results["separability"]);
}

TEST(PaperResultTest, CollapsedOvConcentratesMoreThanFafoAtEqualRatio) {
  TrialOutcome fafo = Train(Parameterization::kFafo, 1);
  TrialOutcome faco = Train(Parameterization::kFaco, 1);
  TrialOutcome caco =
      Train(Parameterization::kCaco, 1, InitKind::kDefaultLinear);
  for (const TrialOutcome* r : {&fafo, &faco, &caco})
    EXPECT_GE(r->results.at("accuracy"), 0.99);
  EXPECT_GT(faco.results["distinct_attention"],
            fafo.results["distinct_attention"] + 0.1);
  EXPECT_GT(caco.results["distinct_attention"],
            fafo.results["distinct_attention"] + 0.05);
}

}  // namespace
}  // namespace qkov::training
