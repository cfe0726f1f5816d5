// SyntheticConfig: a lease's settings for a FAFO trial of the synthetic task
// at the defaults (common/trial_defaults.h), as the coordinator would send
// them, for the agent's unit tests (no server code to complete a spec).
#ifndef QKOV_TESTS_UNIT_AGENT_SYNTHETIC_CONFIG_H_
#define QKOV_TESTS_UNIT_AGENT_SYNTHETIC_CONFIG_H_

#include <cstdint>

#include "common/trial_defaults.h"
#include "qkov/v1/config.pb.h"

namespace qkov::testing {

namespace v1 = ::qkov::v1;
namespace d = ::qkov::defaults;

// A FAFO trial of the synthetic task at the defaults, `steps` steps,
// reports every 50, 64 evaluation examples.
inline v1::TrialConfig SyntheticConfig(uint64_t seed, int64_t steps) {
  v1::TrialConfig c;
  c.set_parameterization(v1::FAFO);
  c.set_lr_ratio(1);
  c.set_eta_ov(0.1);
  c.set_seed(seed);
  v1::Training* t = c.mutable_training();
  t->set_task(v1::TASK_SYNTHETIC);
  v1::SyntheticTask* s = t->mutable_synthetic();
  s->set_vocab_size(d::kVocabSize);
  s->set_num_common(d::kNumCommon);
  s->set_num_classes(d::kNumClasses);
  s->set_distinct_per_class(d::kDistinctPerClass);
  s->set_seq_len(d::kSeqLen);
  v1::Optimizer* o = t->mutable_optimizer();
  o->set_kind(v1::SGD);
  o->set_schedule(v1::CONSTANT);
  o->set_adam_beta1(d::kAdamBeta1);  // checked whatever the kind
  o->set_adam_beta2(d::kAdamBeta2);
  o->set_adam_eps(d::kAdamEps);
  t->mutable_init()->set_qk(v1::INIT_IDENTITY);
  t->mutable_init()->set_ov(v1::INIT_IDENTITY);
  t->mutable_init()->set_identity_scale(d::kIdentityScale);
  t->set_max_steps(steps);
  t->set_batch_size(d::kBatchSize);
  t->set_report_every(50);
  t->set_target_loss(d::kTargetLoss);
  t->set_loss_window(d::kLossWindow);
  v1::Evaluation* e = t->mutable_evaluation();
  e->set_num_examples(64);
  e->set_eval_seed(d::kEvalSeed);
  e->set_tau_attention(d::kTauAttention);
  e->set_tau_probability(d::kTauProbability);
  for (double x : d::kDtapEdges) {
    e->add_dtap_attention_edges(x);
    e->add_dtap_probability_edges(x);
  }
  return c;
}

}  // namespace qkov::testing

#endif  // QKOV_TESTS_UNIT_AGENT_SYNTHETIC_CONFIG_H_
