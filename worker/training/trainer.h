// Trains one trial of the synthetic task and evaluates it. Knows nothing of
// the coordinator: it reports through TrainingObserver, which may also ask it
// to stop (lease lost, sweep cancelled, SIGTERM).
#ifndef QKOV_WORKER_TRAINING_TRAINER_H_
#define QKOV_WORKER_TRAINING_TRAINER_H_

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/training/config.h"
#include "worker/training/metrics.h"
#include "worker/training/model.h"

namespace qkov::training {

struct MetricPoint {
  int64_t step;
  std::string name;
  double value;
};

enum class StopRequest {
  kNone,
  kDrop,      // stop now, nothing to keep (lease lost, sweep cancelled)
  kHandBack,  // stop now and return a checkpoint to resume from (SIGTERM)
};

class TrainingObserver {
 public:
  virtual ~TrainingObserver() = default;
  // Called every report_every steps and at the last step with that window's
  // metrics. Return false to stop training now (the trial ends kStopped).
  virtual bool OnReport(int64_t step,
                        const std::vector<MetricPoint>& points) = 0;
  // Polled before every step (must be cheap).
  virtual StopRequest PollStop() { return StopRequest::kNone; }
};

enum class TrialEnd {
  kConverged,  // windowed train loss fell below target_loss
  kMaxSteps,   // ran max_steps
  kDiverged,   // loss became NaN or inf; metrics so far are kept
  kStopped,    // the observer asked to stop; no final evaluation
};
const char* TrialEndName(TrialEnd end);

struct TrialOutcome {
  TrialEnd end = TrialEnd::kMaxSteps;
  int64_t steps = 0;
  std::map<std::string, double> results;  // final scalars (docs/metrics.md)
  std::vector<Heatmap> heatmaps;
  // Set when the trial was handed back (StopRequest::kHandBack): everything
  // needed to continue bit-identically (model, optimizer, step, data RNG,
  // loss window, partial report sums).
  std::string checkpoint;
};

// Learning rates in effect at `step` (0-based) for the QK and OV groups.
struct LearningRates {
  double qk;
  double ov;
};
LearningRates ScheduledLearningRates(const TrialOptions& options, int64_t step);

// Runs the trial on `device`, from the start or from `resume_from` (a
// checkpoint of the same options). Returns InvalidArgument for invalid
// options or a checkpoint that does not parse, Internal for a LibTorch error
// (message kept); divergence is an outcome, not an error. `observer` may be
// null.
absl::StatusOr<TrialOutcome> RunTrial(const TrialOptions& options,
                                      TrainingObserver* observer,
                                      const torch::Device& device = torch::kCPU,
                                      const std::string& resume_from = "");

// Trains several trials of one shape together: parameters stacked along a
// leading trial dimension (batched matrix products), each trial with its own
// seed, data stream, learning rates, schedule, stopping and observer. Every
// trial, RunTrial included, runs through this one engine, and each trial's
// arithmetic does not depend on its batch-mates, so a trial's metrics are
// bit-identical alone or batched (trainer_test). The optimizers are SGD
// (momentum, weight decay) and AdamW exactly as torch.optim defines them,
// applied per trial. InvalidArgument when the trials do not share a shape
// (CheckBatchable).
absl::StatusOr<std::vector<TrialOutcome>> RunTrials(
    const std::vector<TrialOptions>& options,
    const std::vector<TrainingObserver*>& observers,
    const torch::Device& device, const std::vector<std::string>& resume_from);
// OK when the trials can train in one batch: same parameterization, task
// sizes, batch size and optimizer settings (rates, seeds, schedules, steps
// and stopping may differ).
absl::Status CheckBatchable(const std::vector<TrialOptions>& options);

// The LibTorch version this was built against, "torch 1.13.1", for
// provenance (the device and threads are recorded beside it).
std::string TorchVersion();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_TRAINER_H_
