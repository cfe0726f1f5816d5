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
  virtual bool OnReport(int64_t step, const std::vector<MetricPoint>& points) = 0;
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

// The two parameter groups (QK first, then OV) with every optimizer option
// set from `options`; lr is the step-0 rate of each group.
std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(AttentionModel& model,
                                                       const TrialOptions& options);
void SetLearningRates(torch::optim::Optimizer& optimizer, const LearningRates& lr);

// Runs the trial on `device`, from the start or from `resume_from` (a
// checkpoint of the same options). Returns InvalidArgument for invalid
// options or a checkpoint that does not parse, Internal for a LibTorch error
// (message kept); divergence is an outcome, not an error. `observer` may be
// null.
absl::StatusOr<TrialOutcome> RunTrial(const TrialOptions& options, TrainingObserver* observer,
                                      const torch::Device& device = torch::kCPU,
                                      const std::string& resume_from = "");

// "torch 1.13.0 (cpu, 1 thread)" style description for provenance.
std::string TorchVersion();

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_TRAINER_H_
