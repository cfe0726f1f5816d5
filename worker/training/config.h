// Plain C++ description of one training trial, independent of the wire
// format (the agent converts qkov.v1.TrialConfig into this). Defaults come
// from common/trial_defaults.h, the same table the server fills submitted
// specs from; docs/metrics.md defines every metric these settings feed.
#ifndef QKOV_WORKER_TRAINING_CONFIG_H_
#define QKOV_WORKER_TRAINING_CONFIG_H_

#include <any>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/trial_defaults.h"
#include "worker/training/param_group.h"

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
enum class ScheduleKind { kConstant, kCosineWarmup, kQkRamp, kOneCycle };
enum class InitKind { kIdentity, kDefaultLinear };

struct SyntheticTaskOptions {
  int vocab_size = defaults::kVocabSize;
  int num_common = defaults::kNumCommon;
  int num_classes = defaults::kNumClasses;
  int distinct_per_class = defaults::kDistinctPerClass;
  int seq_len = defaults::kSeqLen;

  // Checks the sizes fit together (e.g. the class blocks fit the vocabulary).
  absl::Status Validate() const;
};

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kSgd;
  double momentum = 0.0;
  double weight_decay = 0.0;
  double adam_beta1 = defaults::kAdamBeta1;
  double adam_beta2 = defaults::kAdamBeta2;
  double adam_eps = defaults::kAdamEps;
  ScheduleKind schedule = ScheduleKind::kConstant;
  int64_t warmup_steps = 0;
};

struct InitOptions {
  InitKind qk = InitKind::kIdentity;
  InitKind ov = InitKind::kIdentity;
  double identity_scale = defaults::kIdentityScale;
};

struct EvalOptions {
  int num_examples = defaults::kNumExamples;
  uint64_t eval_seed = defaults::kEvalSeed;
  double tau_attention = defaults::kTauAttention;
  double tau_probability = defaults::kTauProbability;
  std::vector<double> dtap_attention_edges = {defaults::kDtapEdges.begin(),
                                              defaults::kDtapEdges.end()};
  std::vector<double> dtap_probability_edges = {defaults::kDtapEdges.begin(),
                                                defaults::kDtapEdges.end()};
  double top_k_percent = 5.0;  // comprehensiveness / sufficiency
  // During training (text, SQuAD): every eval_every steps (0: never), on the
  // first eval_examples validation examples.
  int eval_every = 0;
  int eval_examples = defaults::kEvalExamples;
};

struct TrialOptions {
  // The task, as the task table (common/task_info.h) names it; its trainer
  // is the task registry's entry that trains it (task_registry.h). Empty:
  // the default task (DefaultTask(), config.proto's first).
  std::string task;
  Parameterization parameterization = Parameterization::kFafo;
  double lr_ratio = 1.0;  // eta_QK / eta_OV
  double eta_ov = 1e-2;
  uint64_t seed = 1234;
  SyntheticTaskOptions synthetic;  // synthetic and fixed_attention
  double alpha = 0;                // fixed_attention: mass on distinct tokens
  // The options of a task with a settings message of its own, as its trainer
  // uses them (theory/theory_options.h's TheoryOptions,
  // text/text_options.h's TextTaskOptions, squad/squad_options.h's
  // SquadTaskOptions, ...), read from the message by the agent's reader of
  // it (worker/agent/settings_reader.h). Empty for the synthetic tasks.
  std::any task_options;
  OptimizerOptions optimizer;
  InitOptions init;
  int64_t max_steps = defaults::kMaxSteps;
  int batch_size = defaults::kBatchSize;
  int report_every = defaults::kReportEvery;
  double target_loss = defaults::kTargetLoss;
  int loss_window = defaults::kLossWindow;
  EvalOptions eval;

  // The checks common/trial_rules.h makes on the server, with field paths
  // relative to a trial ("synthetic.vocab_size: ..."): the rates, the
  // synthetic task's shape, the ODE, the optimizer, the run and the
  // evaluation. Each task's settings message is checked before conversion,
  // on the proto (its entry in common/task_settings.h, called by the agent's
  // ToTrialOptions), and the text and SQuAD settings are not checked again
  // here.
  absl::Status Validate() const;

  // `task`, or the default task's name when it is empty.
  const std::string& TaskName() const;

  // task_options as the T its task reads; T's defaults when it holds none.
  // Throws std::bad_any_cast when it holds another task's (a programming
  // error: a trainer is handed only its own task's trials).
  template <class T>
  const T& TaskOptions() const {
    if (!task_options.has_value()) {
      static const T* const empty = new T();
      return *empty;
    }
    return std::any_cast<const T&>(task_options);
  }
  // task_options as a T to fill: T's defaults first when it holds none.
  template <class T>
  T& MutableTaskOptions() {
    if (!task_options.has_value()) task_options.emplace<T>();
    return std::any_cast<T&>(task_options);
  }
};

}  // namespace qkov::training

#endif  // QKOV_WORKER_TRAINING_CONFIG_H_
