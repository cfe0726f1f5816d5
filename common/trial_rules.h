// The accepted values of every trial setting, in one place. The server checks
// a submitted sweep with these (field paths under "spec.training."), and the
// worker checks each trial with them again before it trains (paths relative
// to the trial), so both refuse the same values in the same words:
//   "spec.training.batch_size: must be in [1, 65536] (got -1)"
//   "batch_size: must be in [1, 65536] (got -1)"
// Defaults are in common/trial_defaults.h; docs/sweep-files.md lists both.
#ifndef QKOV_COMMON_TRIAL_RULES_H_
#define QKOV_COMMON_TRIAL_RULES_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace qkov::rules {

// An integer setting's closed range.
struct IntRule {
  const char* field;
  int64_t lo;
  int64_t hi;
};
// A real setting's range: finite, in [lo, hi], or (lo, hi] when lo_open.
// A rate (positive) is (0, hi], and its message says "finite and > 0".
struct RealRule {
  const char* field;
  double lo;
  double hi;
  bool lo_open = false;
  bool rate = false;
};

// The sweep axes (one value per trial).
inline constexpr RealRule kLrRatio{"lr_ratio", 0, 1e6, true, true};
inline constexpr RealRule kEtaOv{"eta_ov", 0, 1e3, true, true};
inline constexpr RealRule kAlpha{"alpha", 0, 1, true};

// training.synthetic (also the data of fixed_attention).
inline constexpr IntRule kVocabSize{"synthetic.vocab_size", 2, 100000};
inline constexpr IntRule kNumClasses{"synthetic.num_classes", 1, 10000};
inline constexpr IntRule kDistinctPerClass{"synthetic.distinct_per_class", 1,
                                           100000};
inline constexpr IntRule kSeqLen{"synthetic.seq_len", 3, 100000};

// training.optimizer and training.init.
inline constexpr RealRule kMomentum{"optimizer.momentum", 0, 0.999999};
inline constexpr RealRule kWeightDecay{"optimizer.weight_decay", 0, 1e3};
inline constexpr RealRule kAdamBeta1{"optimizer.adam_beta1", 0, 0.999999};
inline constexpr RealRule kAdamBeta2{"optimizer.adam_beta2", 0, 0.999999999};
inline constexpr RealRule kAdamEps{"optimizer.adam_eps", 0, 1, true};
inline constexpr RealRule kIdentityScale{"init.identity_scale", 0, 1e3, true};

// training's run length, reporting and evaluation.
inline constexpr IntRule kMaxSteps{"max_steps", 1, 1000000000};
inline constexpr IntRule kBatchSize{"batch_size", 1, 65536};
inline constexpr IntRule kReportEvery{"report_every", 1, 1000000000};
inline constexpr IntRule kLossWindow{"loss_window", 1, 1000000};
inline constexpr IntRule kNumExamples{"evaluation.num_examples", 1, 1000000};
inline constexpr IntRule kEvalEvery{"evaluation.eval_every", 0, 1000000000};
inline constexpr IntRule kEvalExamples{"evaluation.eval_examples", 1, 100000};
inline constexpr RealRule kTauAttention{"evaluation.tau_attention", 0, 1};
inline constexpr RealRule kTauProbability{"evaluation.tau_probability", 0, 1};

// INVALID_ARGUMENT "PREFIXfield: reason".
absl::Status Invalid(absl::string_view prefix, absl::string_view field,
                     absl::string_view reason);

// INVALID_ARGUMENT "PREFIXfield: must be in [lo, hi] (got x)" when outside.
absl::Status Check(absl::string_view prefix, const IntRule& rule,
                   int64_t value);
absl::Status Check(absl::string_view prefix, const RealRule& rule,
                   double value);

// The synthetic task's sizes, each in range and fitting together: labels
// and query tokens are common tokens (num_common >= 2 (num_classes + 1)),
// and the class blocks fit the vocabulary.
absl::Status CheckSyntheticShape(absl::string_view prefix, int64_t vocab_size,
                                 int64_t num_common, int64_t num_classes,
                                 int64_t distinct_per_class, int64_t seq_len);

// Run length, reporting and stopping: max_steps, batch_size, report_every,
// loss_window in range, target_loss finite (negative: never stop early),
// warmup_steps in [0, max_steps].
absl::Status CheckRun(absl::string_view prefix, int64_t max_steps,
                      int64_t batch_size, int64_t report_every,
                      int64_t loss_window, double target_loss,
                      int64_t warmup_steps);

// The one_cycle schedule is the squad task's only (its trainer also cycles
// AdamW's beta1): "PREFIXoptimizer.schedule: one_cycle is for task squad
// only".
absl::Status CheckOneCycle(absl::string_view prefix, bool one_cycle,
                           bool squad_task);

// DTAP bin edges: at least 2, finite, strictly increasing.
absl::Status CheckEdges(absl::string_view prefix, const char* field,
                        absl::Span<const double> edges);

}  // namespace qkov::rules

#endif  // QKOV_COMMON_TRIAL_RULES_H_
