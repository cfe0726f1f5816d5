// Defaults of the SQuAD task's settings (training.squad), for sweep_spec.cc:
// common/trial_defaults.h's kSquad. They are checked by common/task_checks.h,
// as the worker checks them again.
#include "common/task_kind.h"
#include "common/trial_defaults.h"
#include "server/core/sweep_spec.h"

namespace qkov::core {

void ApplySquadDefaults(qkov::v1::Training* t) {
  const TaskInfo* task = FindTask(t->task());
  if (task == nullptr || task->settings != "squad") return;
  const defaults::SquadDefaults& d = defaults::kSquad;
  qkov::v1::SquadTask* x = t->mutable_squad();
  if (x->encoder_sha256().empty())
    x->set_encoder_sha256(defaults::kGpt2EncoderSha256);
  if (x->merges_sha256().empty())
    x->set_merges_sha256(defaults::kGpt2MergesSha256);
  if (x->crop_chars() == 0) x->set_crop_chars(d.crop_chars);
  if (x->max_prompt_tokens() == 0)
    x->set_max_prompt_tokens(d.max_prompt_tokens);
  if (x->max_answer_tokens() == 0)
    x->set_max_answer_tokens(d.max_answer_tokens);
  if (x->n_ctx() == 0) x->set_n_ctx(d.n_ctx);
  if (x->d_model() == 0) x->set_d_model(d.d_model);
  if (x->heads() == 0) x->set_heads(d.heads);
  if (x->d_head() == 0) x->set_d_head(x->d_model() / x->heads());
  if (x->d_mlp() == 0) x->set_d_mlp(4 * x->d_model());
  if (x->layers() == 0) x->set_layers(d.layers);
  if (!x->has_dropout()) x->set_dropout(d.dropout);
  if (x->init_std() == 0) x->set_init_std(d.init_std);
  if (x->embed_init_std() == 0) x->set_embed_init_std(d.embed_init_std);
  if (x->epochs() == 0) x->set_epochs(d.epochs);
  if (x->embed_lr_multiplier() == 0)
    x->set_embed_lr_multiplier(d.embed_lr_multiplier);
  if (!x->has_label_smoothing()) x->set_label_smoothing(d.label_smoothing);
  if (x->accumulation() == 0) x->set_accumulation(d.accumulation);
  if (!x->has_grad_clip()) x->set_grad_clip(d.grad_clip);
  if (!x->has_rollout_alpha()) x->set_rollout_alpha(d.rollout_alpha);
  if (!x->has_k_percent()) x->set_k_percent(d.k_percent);
  if (x->max_new_tokens() == 0) x->set_max_new_tokens(d.max_new_tokens);
  auto* o = t->mutable_optimizer();
  if (o->kind() == qkov::v1::OPTIMIZER_KIND_UNSPECIFIED)
    o->set_kind(qkov::v1::ADAMW);
  if (o->schedule() == qkov::v1::SCHEDULE_KIND_UNSPECIFIED)
    o->set_schedule(qkov::v1::ONE_CYCLE);
  if (o->weight_decay() == 0) o->set_weight_decay(d.weight_decay);
  if (o->warmup_steps() == 0) o->set_warmup_steps(d.warmup_steps);
  auto* e = t->mutable_evaluation();
  if (e->dtap_attention_edges().empty()) {
    for (double v : d.dtap_edges) e->add_dtap_attention_edges(v);
  }
  if (e->dtap_probability_edges().empty()) {
    for (double v : d.dtap_edges) e->add_dtap_probability_edges(v);
  }
  if (e->tau_attention() == 0) e->set_tau_attention(d.tau_attention);
  if (e->tau_probability() == 0) e->set_tau_probability(d.tau_probability);
  if (!e->has_eval_every()) e->set_eval_every(defaults::kSquadEvalEvery);
  if (!e->has_eval_examples()) e->set_eval_examples(defaults::kEvalExamples);
  if (e->num_examples() == 0) e->set_num_examples(d.num_examples);
  if (t->batch_size() == 0) t->set_batch_size(d.batch_size);
  if (t->loss_window() == 0) t->set_loss_window(1);
  if (t->report_every() == 0) t->set_report_every(100);
  if (t->target_loss() == 0) t->set_target_loss(-1);  // epochs decide
}

}  // namespace qkov::core
