#include "worker/training/trainer.h"

#include "absl/strings/str_cat.h"
#include "worker/training/task_registry.h"
#include "worker/training/torch_status.h"

namespace qkov::training {

const char* TrialEndName(TrialEnd end) {
  switch (end) {
    case TrialEnd::kConverged:
      return "converged";
    case TrialEnd::kMaxSteps:
      return "max_steps";
    case TrialEnd::kDiverged:
      return "diverged";
    case TrialEnd::kStopped:
      return "stopped";
  }
  return "?";
}

std::string TorchVersion() {
  return absl::StrCat("torch ", TORCH_VERSION_MAJOR, ".", TORCH_VERSION_MINOR,
                      ".", TORCH_VERSION_PATCH);
}

const TaskTrainer& TrainerFor(const TrialOptions& options) {
  return *TrainingTaskNamed(options.TaskName())->trainer;
}

absl::Status CheckBatchable(const std::vector<TrialOptions>& options) {
  if (options.empty()) return absl::InvalidArgumentError("no trials");
  for (const TrialOptions& o : options) {
    if (absl::Status s = o.Validate(); !s.ok()) return s;
    if (o.TaskName() != options[0].TaskName()) {
      return absl::InvalidArgumentError(
          absl::StrCat("trials in one batch need one task (",
                       options[0].TaskName(), " and ", o.TaskName(), ")"));
    }
  }
  return TrainerFor(options[0]).CheckBatchable(options);
}

absl::StatusOr<std::vector<TrialOutcome>> RunTrials(
    const std::vector<TrialOptions>& options,
    const std::vector<TrainingObserver*>& observers,
    const torch::Device& device, const std::vector<std::string>& resume_from) {
  if (absl::Status s = CheckBatchable(options); !s.ok()) return s;
  if (observers.size() != options.size() ||
      resume_from.size() != options.size()) {
    return absl::InvalidArgumentError(
        "one observer and one resume checkpoint (or \"\") per trial");
  }
  return CatchTorchErrors([&] {
    return TrainerFor(options[0])
        .Train(options, observers, device, resume_from);
  });
}

absl::StatusOr<TrialOutcome> RunTrial(const TrialOptions& options,
                                      TrainingObserver* observer,
                                      const torch::Device& device,
                                      const std::string& resume_from) {
  absl::StatusOr<std::vector<TrialOutcome>> out =
      RunTrials({options}, {observer}, device, {resume_from});
  if (!out.ok()) return out.status();
  return std::move((*out)[0]);
}

}  // namespace qkov::training
