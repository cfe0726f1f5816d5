// The defaults of a trial's training settings: the paper's synthetic setup
// (docs/paper.md), and what every task shares. Each task package's own
// settings have their defaults in its folder (worker/tasks/text/
// text_defaults.h, squad/squad_defaults.h, theory/theory_defaults.h). One
// table, read by the server when it completes a submitted spec
// (server/core/sweep_spec.cc ApplyTrainingDefaults) and by the worker's option
// structs (worker/training/config.h); docs/sweep-files.md shows the same
// values, and tests/unit/defaults_test.cc checks all three agree. Header-only,
// so worker/training uses it without linking anything.
#ifndef QKOV_COMMON_TRIAL_DEFAULTS_H_
#define QKOV_COMMON_TRIAL_DEFAULTS_H_

#include <array>
#include <cstdint>

#include "common/transformer_shape.h"

namespace qkov::defaults {

// The synthetic task (docs/paper.md §2).
inline constexpr int kVocabSize = 50;
inline constexpr int kNumCommon = 10;
inline constexpr int kNumClasses = 4;
inline constexpr int kDistinctPerClass = 10;
inline constexpr int kSeqLen = 64;

// Training.
inline constexpr int64_t kMaxSteps = 100000;
inline constexpr int kBatchSize = 32;
inline constexpr int kReportEvery = 500;
inline constexpr double kTargetLoss = 1e-3;
inline constexpr int kLossWindow = 250;

// Optimizer (SGD, constant schedule; the AdamW constants for kind adamw).
inline constexpr double kAdamBeta1 = 0.9;
inline constexpr double kAdamBeta2 = 0.999;
inline constexpr double kAdamEps = 1e-8;

// Initialization: identity times this scale (the paper's 1e-6).
inline constexpr double kIdentityScale = 1e-6;

// Evaluation.
inline constexpr int kNumExamples = 2048;
inline constexpr uint64_t kEvalSeed = 20260807;
inline constexpr double kTauAttention = 0.6;
inline constexpr double kTauProbability = 0.6;
// Evaluation during training (text and SQuAD tasks; docs/metrics.md): the
// validation examples each evaluation reads. The steps between evaluations
// are per task (the text package's kTextEvalEvery, the SQuAD package's
// kSquadEvalEvery), chosen so that evaluating costs at most about a tenth of
// training (docs/PERFORMANCE.md).
inline constexpr int kEvalExamples = 256;
inline constexpr std::array<double, 6> kDtapEdges = {0,   0.2, 0.4,
                                                     0.6, 0.8, 1.0};

// Retry budget of a trial's failures.
inline constexpr int kMaxAttempts = 3;

}  // namespace qkov::defaults

#endif  // QKOV_COMMON_TRIAL_DEFAULTS_H_
