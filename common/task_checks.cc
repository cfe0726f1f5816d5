#include "common/task_checks.h"

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/task_kind.h"
#include "common/transformer_shape.h"
#include "common/trial_rules.h"

namespace qkov::rules {
namespace {

namespace v1 = ::qkov::v1;

TextSettings TextSettingsOf(const v1::TextTask& x) {
  TextSettings v;
  v.max_len = x.max_len();
  v.shape = TransformerShapeOf(x);
  v.epochs = x.epochs();
  v.train_fraction = x.train_fraction();
  v.validation_fraction = x.validation_fraction();
  v.init_std = x.init_std();
  v.mlp_lr_multiplier = x.mlp_lr_multiplier();
  v.qk_weight_decay = x.qk_weight_decay();
  v.ov_weight_decay = x.ov_weight_decay();
  v.mlp_weight_decay = x.mlp_weight_decay();
  v.grad_clip = x.grad_clip();
  v.warmup_fraction = x.warmup_fraction();
  v.rollout_alpha = x.rollout_alpha();
  v.k_percent = x.k_percent();
  v.has_train_path = !x.train().path().empty();
  v.has_vocab_path = !x.vocab_path().empty();
  v.has_validation_path = !x.validation().path().empty();
  return v;
}

SquadSettings SquadSettingsOf(const v1::Training& t) {
  const v1::SquadTask& x = t.squad();
  SquadSettings v;
  v.crop_chars = x.crop_chars();
  v.max_prompt_tokens = x.max_prompt_tokens();
  v.max_answer_tokens = x.max_answer_tokens();
  v.shape = TransformerShapeOf(x);
  v.epochs = x.epochs();
  v.accumulation = x.accumulation();
  v.max_new_tokens = x.max_new_tokens();
  v.train_article_begin = x.train().article_begin();
  v.train_article_end = x.train().article_end();
  v.train_max_questions = x.train().max_questions();
  v.eval_article_begin = x.eval().article_begin();
  v.eval_article_end = x.eval().article_end();
  v.eval_max_questions = x.eval().max_questions();
  v.validation_article_begin = x.validation().article_begin();
  v.validation_article_end = x.validation().article_end();
  v.validation_max_questions = x.validation().max_questions();
  v.validation_questions = x.validation_questions();
  v.train_f1_questions = x.train_f1_questions();
  v.dropout = x.dropout();
  v.init_std = x.init_std();
  v.embed_init_std = x.embed_init_std();
  v.embed_lr_multiplier = x.embed_lr_multiplier();
  v.label_smoothing = x.label_smoothing();
  v.grad_clip = x.grad_clip();
  v.rollout_alpha = x.rollout_alpha();
  v.k_percent = x.k_percent();
  v.has_train_path = !x.train().path().empty();
  v.has_eval_path = !x.eval().path().empty();
  v.has_validation_path = !x.validation().path().empty();
  v.has_encoder_path = !x.encoder_path().empty();
  v.has_merges_path = !x.merges_path().empty();
  v.adamw = t.optimizer().kind() == v1::ADAMW;
  v.squad_schedule = t.optimizer().schedule() == v1::COSINE_WARMUP ||
                     t.optimizer().schedule() == v1::ONE_CYCLE;
  return v;
}

}  // namespace

bool IsTextTaskKind(v1::TaskKind k) {
  const TaskInfo* t = FindTask(k);
  return t != nullptr && t->settings == "text";
}

absl::Status CheckTextTask(const v1::Training& t, absl::string_view prefix) {
  if (!IsTextTaskKind(t.task())) return absl::OkStatus();
  const v1::TextTask& x = t.text();
  if (absl::Status s = CheckText(prefix, TextSettingsOf(x)); !s.ok()) return s;
  for (auto [name, data] : {std::pair{"train", &x.train()},
                            std::pair{"validation", &x.validation()},
                            std::pair{"test", &x.test()}}) {
    if (absl::StatusOr<int> f = TextFormatIndex(
            prefix, absl::StrCat("text.", name, ".format"), data->format());
        !f.ok())
      return f.status();
    if (data->max_examples() < 0)
      return absl::InvalidArgumentError(absl::StrCat(
          prefix, "text.", name, ".max_examples: must be >= 0 (got ",
          data->max_examples(), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckSquadTask(const v1::Training& t, absl::string_view prefix) {
  const TaskInfo* task = FindTask(t.task());
  if (task == nullptr || task->settings != "squad") return absl::OkStatus();
  return CheckSquad(prefix, SquadSettingsOf(t));
}

}  // namespace qkov::rules
