// Plain C++ description of one training trial, independent of the wire
// format (the agent converts qkov.v1.TrialConfig into this). Defaults are the
// paper's synthetic setup (NOTES.md §2-3); docs/metrics.md defines every
// metric these settings feed.
#ifndef QKOV_WORKER_TRAINING_CONFIG_H_
#define QKOV_WORKER_TRAINING_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace qkov::training {

enum class Parameterization { kFafo, kFaco, kCafo, kCaco };

// "FAFO" etc.; ParseParameterization accepts exactly these names.
const char* ParameterizationName(Parameterization p);
absl::StatusOr<Parameterization> ParseParameterization(const std::string& name);

// True when the circuit is written as a product of two matrices.
inline bool QkFactorized(Parameterization p) {
  return p == Parameterization::kFafo || p == Parameterization::kFaco;
}
inline bool OvFactorized(Parameterization p) {
  return p == Parameterization::kFafo || p == Parameterization::kCafo;
}

enum class OptimizerKind { kSgd, kAdamW };
enum class ScheduleKind { kConstant, kCosineWarmup, kQkRamp };
enum class InitKind { kIdentity, kDefaultLinear };

struct SyntheticTaskOptions {
  int vocab_size = 50;
  int num_common = 10;
  int num_classes = 4;
  int distinct_per_class = 10;
  int seq_len = 64;

  // Checks the sizes fit together (e.g. the class blocks fit the vocabulary).
  absl::Status Validate() const;
};

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kSgd;
  double momentum = 0.0;
  double weight_decay = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_eps = 1e-8;
  ScheduleKind schedule = ScheduleKind::kConstant;
  int64_t warmup_steps = 0;
};

struct InitOptions {
  InitKind qk = InitKind::kIdentity;
  InitKind ov = InitKind::kIdentity;
  double identity_scale = 1e-6;
};

struct EvalOptions {
  int num_examples = 2048;
  uint64_t eval_seed = 20260807;
  double tau_attention = 0.6;
  double tau_probability = 0.6;
  std::vector<double> dtap_attention_edges = {0, 0.2, 0.4, 0.6, 0.8, 1.0};
  std::vector<double> dtap_probability_edges = {0, 0.2, 0.4, 0.6, 0.8, 1.0};
  double top_k_percent = 5.0;  // comprehensiveness / sufficiency
};

struct TrialOptions {
  Parameterization parameterization = Parameterization::kFafo;
  double lr_ratio = 1.0;  // eta_QK / eta_OV
  double eta_ov = 1e-2;
  uint64_t seed = 1234;
  SyntheticTaskOptions task;
  OptimizerOptions optimizer;
  InitOptions init;
  int64_t max_steps = 10000;
  int batch_size = 32;
  int report_every = 100;
  double target_loss = 1e-3;
  int loss_window = 250;
  EvalOptions eval;

  absl::Status Validate() const;
};

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_CONFIG_H_
