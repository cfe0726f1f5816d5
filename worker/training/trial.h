// What every task's training run shares: the metric points it reports, the
// observer that receives them (and may stop the run), and the outcome.
#ifndef QKOV_WORKER_TRAINING_TRIAL_H_
#define QKOV_WORKER_TRAINING_TRIAL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "worker/training/heatmap.h"

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
  // Curves that exist only once the run ends (the theory task's trajectory),
  // stored like reported points.
  std::vector<MetricPoint> final_points;
  // The sha256 of each file the trial read, by its setting ("text.train",
  // "text.vocab_path"); stored with the attempt's provenance.
  std::map<std::string, std::string> input_sha256;
  // Set when the trial was handed back (StopRequest::kHandBack): everything
  // needed to continue bit-identically (model, optimizer, step, data RNG,
  // loss window, partial report sums).
  std::string checkpoint;
};

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_TRIAL_H_
