// Defaults of the text tasks' settings (training.text), for sweep_spec.cc:
// the task table's (common/task_info.h) text defaults and data format. They are
// checked by common/task_checks.h, as the worker checks them again.
#include "common/task_kind.h"
#include "common/trial_defaults.h"
#include "server/core/sweep_spec.h"

namespace qkov::core {
void ApplyTextDefaults(qkov::v1::Training* t) {
  const TaskInfo* task = FindTask(t->task());
  if (task == nullptr || task->text_defaults == nullptr) return;
  const defaults::TextDefaults& d = *task->text_defaults;
  qkov::v1::TextTask* x = t->mutable_text();
  const std::string& format = task->text_format;
  for (qkov::v1::TextData* data :
       {x->mutable_train(), x->mutable_validation(), x->mutable_test()}) {
    if (data->format().empty()) data->set_format(format);
  }
  if (x->vocab_sha256().empty())
    x->set_vocab_sha256(defaults::kBertVocabSha256);
  if (!x->has_lowercase()) x->set_lowercase(true);
  if (x->max_len() == 0) x->set_max_len(d.max_len);
  if (x->n_ctx() == 0) x->set_n_ctx(std::max(d.n_ctx, x->max_len()));
  if (x->d_model() == 0) x->set_d_model(d.d_model);
  if (x->heads() == 0) x->set_heads(d.heads);
  if (x->d_head() == 0) x->set_d_head(d.d_head);
  if (!x->has_d_mlp()) x->set_d_mlp(d.d_mlp);
  if (x->layers() == 0) x->set_layers(d.layers);
  if (!x->has_residual()) x->set_residual(d.residual);
  if (!x->has_layer_norm()) x->set_layer_norm(d.layer_norm);
  if (!x->has_causal()) x->set_causal(d.causal);
  if (!x->has_padding_mask()) x->set_padding_mask(d.padding_mask);
  if (x->readout() == qkov::v1::READOUT_UNSPECIFIED)
    x->set_readout(d.readout_last_token ? qkov::v1::READOUT_LAST_TOKEN
                                        : qkov::v1::READOUT_FIRST_PAD);
  if (x->init_std() == 0) x->set_init_std(d.init_std);
  if (x->epochs() == 0) x->set_epochs(d.epochs);
  if (x->embed_group() == qkov::v1::PARAM_GROUP_UNSPECIFIED)
    x->set_embed_group(qkov::v1::PARAM_GROUP_QK);
  if (x->pos_group() == qkov::v1::PARAM_GROUP_UNSPECIFIED)
    x->set_pos_group(d.pos_embed_in_qk ? qkov::v1::PARAM_GROUP_QK
                                       : qkov::v1::PARAM_GROUP_OV);
  if (!x->has_mlp_lr_multiplier()) x->set_mlp_lr_multiplier(1);
  if (x->train_fraction() == 0 && x->test().path().empty() &&
      x->train().format() == "sva_filtered")
    x->set_train_fraction(d.train_fraction);
  if (!x->has_grad_clip()) x->set_grad_clip(d.grad_clip);
  if (!x->has_warmup_fraction()) x->set_warmup_fraction(d.warmup_fraction);
  if (!x->has_rollout_alpha()) x->set_rollout_alpha(d.rollout_alpha);
  if (x->k_percent() == 0) x->set_k_percent(d.k_percent);
  auto* o = t->mutable_optimizer();
  if (o->kind() == qkov::v1::OPTIMIZER_KIND_UNSPECIFIED) {
    o->set_kind(d.sgd ? qkov::v1::SGD : qkov::v1::ADAMW);
    if (o->momentum() == 0) o->set_momentum(d.momentum);
  }
  if (o->schedule() == qkov::v1::SCHEDULE_KIND_UNSPECIFIED)
    o->set_schedule(qkov::v1::COSINE_WARMUP);
  if (o->weight_decay() == 0) o->set_weight_decay(d.weight_decay);
  for (auto [has, set] :
       {std::pair{&qkov::v1::TextTask::has_qk_weight_decay,
                  &qkov::v1::TextTask::set_qk_weight_decay},
        std::pair{&qkov::v1::TextTask::has_ov_weight_decay,
                  &qkov::v1::TextTask::set_ov_weight_decay},
        std::pair{&qkov::v1::TextTask::has_mlp_weight_decay,
                  &qkov::v1::TextTask::set_mlp_weight_decay}}) {
    if (!(x->*has)()) (x->*set)(o->weight_decay());
  }
  auto* e = t->mutable_evaluation();
  if (e->dtap_attention_edges().empty()) {
    for (double v : d.dtap_attention_edges) e->add_dtap_attention_edges(v);
  }
  if (e->dtap_probability_edges().empty()) {
    for (double v : defaults::kTextDtapProbabilityEdges)
      e->add_dtap_probability_edges(v);
  }
  if (e->tau_attention() == 0) e->set_tau_attention(d.tau_attention);
  if (e->tau_probability() == 0) e->set_tau_probability(d.tau_probability);
  if (!e->has_eval_every()) e->set_eval_every(defaults::kTextEvalEvery);
  if (!e->has_eval_examples()) e->set_eval_examples(defaults::kEvalExamples);
  if (e->num_examples() == 0) e->set_num_examples(100000);
  if (t->loss_window() == 0) t->set_loss_window(1);
  if (t->report_every() == 0) t->set_report_every(100);
  if (t->target_loss() == 0) t->set_target_loss(-1);  // epochs decide
}

}  // namespace qkov::core
