#include "worker/training/task_trainer.h"

#include <utility>

#include "common/trial_rules.h"

namespace qkov::training {

absl::StatusOr<std::vector<TrialOutcome>> InTurnTrainer::Train(
    const std::vector<TrialOptions>& options,
    const std::vector<TrainingObserver*>& observers,
    const torch::Device& device,
    const std::vector<std::string>& resume_from) const {
  std::vector<TrialOutcome> out;
  for (size_t i = 0; i < options.size(); ++i) {
    absl::StatusOr<TrialOutcome> outcome =
        TrainOne(options[i], observers[i], device, resume_from[i]);
    if (!outcome.ok()) return outcome.status();
    out.push_back(*std::move(outcome));
  }
  return out;
}

absl::Status CheckLrRatio(const TrialOptions& options) {
  return rules::Check("", rules::kLrRatio, options.lr_ratio);
}

}  // namespace qkov::training
