#include "worker/tasks/squad/squad_settings_reader.h"

#include "common/data_dirs.h"
#include "common/transformer_shape.h"
#include "worker/tasks/squad/squad_options.h"

namespace qkov::training::squad {
namespace {

namespace v1 = ::qkov::v1;

SquadSource ToSource(const v1::SquadData& d) {
  SquadSource s;
  s.path = ResolveDataPath(d.path());  // as this worker finds it
  s.article_begin = d.article_begin();
  s.article_end = d.article_end();
  s.max_questions = d.max_questions();
  s.sha256 = d.sha256();
  return s;
}

absl::Status ReadSquad(const v1::Training& training, TrialOptions* o) {
  const v1::SquadTask& x = training.squad();
  SquadTaskOptions& q = o->MutableTaskOptions<SquadTaskOptions>();
  q.train = ToSource(x.train());
  q.eval = ToSource(x.eval());
  q.validation = ToSource(x.validation());
  q.validation_questions = x.validation_questions();
  q.train_f1_questions = x.train_f1_questions();
  q.tokenizer.encoder_path = ResolveDataPath(x.encoder_path());
  q.tokenizer.merges_path = ResolveDataPath(x.merges_path());
  q.tokenizer.encoder_sha256 =
      x.encoder_sha256() == "none" ? "" : x.encoder_sha256();
  q.tokenizer.merges_sha256 =
      x.merges_sha256() == "none" ? "" : x.merges_sha256();
  q.glove_path = ResolveDataPath(x.glove_path());
  q.prompt.crop_chars = x.crop_chars();
  q.prompt.max_prompt_tokens = x.max_prompt_tokens();
  q.prompt.max_answer_tokens = x.max_answer_tokens();
  q.model.shape = TransformerShapeOf(x);
  q.model.dropout = x.dropout();
  q.model.init_std = x.init_std();
  q.model.embed_init_std = x.embed_init_std();
  q.epochs = x.epochs();
  q.embed_lr_multiplier = x.embed_lr_multiplier();
  q.label_smoothing = x.label_smoothing();
  q.accumulation = x.accumulation();
  q.grad_clip = x.grad_clip();
  q.rollout_alpha = x.rollout_alpha();
  q.k_percent = x.k_percent();
  q.max_new_tokens = x.max_new_tokens();
  return absl::OkStatus();
}

}  // namespace

agent::SettingsReader SquadSettingsReader() { return {"squad", &ReadSquad}; }

namespace {

const agent::SettingsReaderRegistration kSquadReader(SquadSettingsReader());

}  // namespace

}  // namespace qkov::training::squad
