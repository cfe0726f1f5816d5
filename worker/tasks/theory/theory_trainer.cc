#include "worker/tasks/theory/theory_trainer.h"

#include "common/trial_rules.h"
#include "worker/tasks/theory/theory_defaults.h"
#include "worker/tasks/theory/theory_options.h"
#include "worker/tasks/theory/theory_rules.h"

namespace qkov::training {

TrialOutcome TheoryOutcome(const TheoryResult& r) {
  TrialOutcome o;
  auto add = [&o](size_t step, const char* name, double value) {
    o.final_points.push_back({static_cast<int64_t>(step), name, value});
  };
  for (size_t i = 0; i < r.trajectory.size(); ++i) {
    const TheoryPoint& t = r.trajectory[i];
    add(i, "theory_tau", t.tau);
    add(i, "theory_mu_ov", t.mu_ov);
    add(i, "theory_mu_qk", t.mu_qk);
    add(i, "theory_alpha", t.alpha);
    add(i, "theory_loss", t.loss);
  }
  for (size_t i = 0; i < r.at_thresholds.size(); ++i) {
    const TheoryPoint& t = r.at_thresholds[i];
    add(i, "threshold_loss", r.thresholds[i]);
    add(i, "threshold_tau", t.tau);
    add(i, "threshold_mu_ov", t.mu_ov);
    add(i, "threshold_mu_qk", t.mu_qk);
    add(i, "threshold_alpha", t.alpha);
  }
  o.end = r.reached_target ? TrialEnd::kConverged : TrialEnd::kMaxSteps;
  o.steps = static_cast<int64_t>(r.trajectory.size());
  o.results["mu_ov"] = r.final_point.mu_ov;
  o.results["mu_qk"] = r.final_point.mu_qk;
  o.results["alpha"] = r.final_point.alpha;
  o.results["loss"] = r.final_point.loss;
  o.results["tau"] = r.final_point.tau;
  o.results["converged"] = r.reached_target ? 1 : 0;
  return o;
}

absl::StatusOr<TrialOutcome> TheoryTrainer::TrainOne(
    const TrialOptions& options, TrainingObserver* observer,
    const torch::Device& device, const std::string& resume_from) const {
  absl::StatusOr<TheoryResult> result =
      IntegrateTheory(options.TaskOptions<TheoryOptions>(),
                      TheoryRates{options.eta_ov, options.lr_ratio});
  if (!result.ok()) return result.status();
  return TheoryOutcome(*result);
}

TrainingTask TheoryTrainingTask() {
  static const TheoryTrainer trainer;
  return {"theory",
          {"theory"},
          &trainer,
          [](const TrialOptions& o) {
            if (absl::Status s = CheckLrRatio(o); !s.ok()) return s;
            const TheoryOptions& t = o.TaskOptions<TheoryOptions>();
            return rules::CheckTheory("", t.m, t.n, t.b, t.M, t.dtau,
                                      t.relative_step, t.max_tau, t.target_loss,
                                      t.num_thresholds, t.num_samples);
          },
          /*trains_a_model=*/false};
}

namespace {

const TrainingTaskRegistration kTheoryTrainer(TheoryTrainingTask());

}  // namespace

}  // namespace qkov::training
