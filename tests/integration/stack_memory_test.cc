// The coordinator sizes a worker's batch lease by its estimate of the memory
// one more trial adds to a stack (core::EstimateStackedTrialBytes). This
// holds that estimate against what a stack of synthetic trials takes on the
// CPU: the most heap in use (glibc's mallinfo2, which LibTorch's CPU
// allocator draws from) at the reports of a stack of 1 and of a stack of 17,
// the difference over 16 trials.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "server/core/sweep_spec.h"
#include "server/core/trial_memory.h"
#include "worker/agent/trial_options.h"
#include "worker/training/trainer.h"

namespace qkov::agent {
namespace {

namespace v1 = ::qkov::v1;

// Records the most heap in use at any report of the stack's trials after
// step 0 (every buffer of a step exists then, and no temporary of it).
class HeapAtReports : public training::TrainingObserver {
 public:
  explicit HeapAtReports(int64_t* bytes) : bytes_(bytes) {}
  bool OnReport(int64_t step,
                const std::vector<training::MetricPoint>&) override {
    if (step > 0) {
      const struct mallinfo2 m = mallinfo2();
      *bytes_ = std::max(*bytes_, static_cast<int64_t>(m.uordblks + m.hblkhd));
    }
    return true;
  }

 private:
  int64_t* bytes_;
};

v1::SweepSpec Spec(v1::Parameterization p, v1::OptimizerKind optimizer,
                   int seeds) {
  v1::SweepSpec spec;
  spec.set_name("memory");
  spec.mutable_axes()->add_parameterizations(p);
  spec.mutable_axes()->add_lr_ratios(1);
  spec.mutable_axes()->add_eta_ovs(0.01);
  for (int i = 0; i < seeds; ++i) spec.mutable_axes()->add_seeds(i + 1);
  v1::Training* t = spec.mutable_training();
  t->set_max_steps(4);
  t->set_report_every(2);
  t->mutable_synthetic()->set_vocab_size(210);
  t->mutable_synthetic()->set_distinct_per_class(50);
  t->mutable_evaluation()->set_num_examples(64);
  t->mutable_optimizer()->set_kind(optimizer);
  core::ApplySpecDefaults(&spec);
  return spec;
}

// The most heap in use at the reports of a stack of `n` trials.
int64_t HeapOfStack(v1::Parameterization p, v1::OptimizerKind optimizer,
                    int n) {
  const v1::SweepSpec spec = Spec(p, optimizer, n);
  std::vector<training::TrialOptions> options;
  for (const core::ExpandedTrial& e : core::ExpandSweep(spec)) {
    v1::TrialConfig c = e.config;
    *c.mutable_training() = spec.training();
    absl::StatusOr<training::TrialOptions> o = ToTrialOptions(c);
    EXPECT_TRUE(o.ok()) << o.status();
    if (o.ok()) options.push_back(*o);
  }
  int64_t bytes = 0;
  HeapAtReports observer(&bytes);
  std::vector<training::TrainingObserver*> observers(options.size(), &observer);
  absl::StatusOr<std::vector<training::TrialOutcome>> out =
      training::RunTrials(options, observers, torch::kCPU,
                          std::vector<std::string>(options.size()));
  EXPECT_TRUE(out.ok()) << out.status();
  return bytes;
}

TEST(StackMemoryTest, EstimateBoundsWhatAStackedTrialTakes) {
  for (v1::OptimizerKind optimizer : {v1::ADAMW, v1::SGD}) {
    for (v1::Parameterization p : {v1::FAFO, v1::CACO}) {
      SCOPED_TRACE(testing::Message()
                   << "parameterization " << p << ", optimizer " << optimizer);
      HeapOfStack(p, optimizer, 1);  // LibTorch's one-time allocations
      const int64_t one = HeapOfStack(p, optimizer, 1);
      const int64_t many = HeapOfStack(p, optimizer, 17);
      const double measured = static_cast<double>(many - one) / 16;
      const int64_t estimate =
          core::EstimateStackedTrialBytes(Spec(p, optimizer, 1).training());
      std::printf(
          "stack memory, parameterization %d, optimizer %d: %.0f "
          "bytes a trial measured, %lld estimated\n",
          static_cast<int>(p), static_cast<int>(optimizer), measured,
          static_cast<long long>(estimate));
      EXPECT_GT(measured, 0);
      EXPECT_GE(static_cast<double>(estimate), measured)
          << "measured " << measured << " bytes a trial";
      if (p == v1::FAFO && optimizer == v1::ADAMW) {
        // The case the estimate is written for is not a loose bound.
        EXPECT_LE(static_cast<double>(estimate), 1.5 * measured)
            << "measured " << measured << " bytes a trial";
      }
    }
  }
}

}  // namespace
}  // namespace qkov::agent
