#include "worker/tasks/text/text_settings_reader.h"

#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/data_dirs.h"
#include "common/proto_enums.h"
#include "common/status_macros.h"
#include "common/transformer_shape.h"
#include "worker/tasks/text/text_options.h"

namespace qkov::training::text {
namespace {

namespace v1 = ::qkov::v1;

absl::Status ToSource(const v1::TextData& d, const std::string& field,
                      TextSource* out) {
  if (d.path().empty()) return absl::OkStatus();  // no such split
  ASSIGN_OR_RETURN(out->format,
                   ParseTextFormat(absl::StrCat(field, ".format"), d.format()));
  // A shipped path (../shared/data/...) as this worker finds it.
  out->path = ResolveDataPath(d.path());
  out->divisions_path = ResolveDataPath(d.divisions_path());
  out->split = d.split();
  out->max_examples = d.max_examples();
  out->sha256 = d.sha256();
  return absl::OkStatus();
}

absl::Status ToModelOptions(const v1::TextTask& x, TextModelOptions* m) {
  m->max_len = x.max_len();
  m->shape = TransformerShapeOf(x);
  m->residual = x.residual();
  m->layer_norm = x.layer_norm();
  m->causal = x.causal();
  m->padding_mask = x.padding_mask();
  ASSIGN_OR_RETURN(
      m->readout,
      FromProtoEnum<Readout>(x.readout(), "training.text.readout",
                             {{v1::READOUT_LAST_TOKEN, Readout::kLastToken},
                              {v1::READOUT_FIRST_PAD, Readout::kFirstPad}}));
  m->init_std = x.init_std();
  return absl::OkStatus();
}

absl::Status ReadText(const v1::Training& training, TrialOptions* o) {
  const v1::TextTask& x = training.text();
  TextTaskOptions& t = o->MutableTaskOptions<TextTaskOptions>();
  RETURN_IF_ERROR(ToSource(x.train(), "training.text.train", &t.train));
  RETURN_IF_ERROR(
      ToSource(x.validation(), "training.text.validation", &t.validation));
  RETURN_IF_ERROR(ToSource(x.test(), "training.text.test", &t.test));
  t.train_fraction = x.train_fraction();
  t.validation_fraction = x.validation_fraction();
  t.split_seed = x.split_seed();
  t.tokenizer.vocab_path = ResolveDataPath(x.vocab_path());
  t.tokenizer.vocab_sha256 = x.vocab_sha256() == "none" ? "" : x.vocab_sha256();
  t.tokenizer.lowercase = x.lowercase();
  t.tokenizer.strip_accents = x.lowercase();  // as Hugging Face's default
  RETURN_IF_ERROR(ToModelOptions(x, &t.model));
  t.epochs = x.epochs();
  for (auto [group, field, out] :
       {std::tuple{x.embed_group(), "training.text.embed_group",
                   &t.embed_group},
        std::tuple{x.pos_group(), "training.text.pos_group", &t.pos_group}}) {
    ASSIGN_OR_RETURN(*out, FromProtoEnum<ParamGroup>(
                               group, field,
                               {{v1::PARAM_GROUP_QK, ParamGroup::kQk},
                                {v1::PARAM_GROUP_OV, ParamGroup::kOv}}));
  }
  t.mlp_lr_multiplier = x.mlp_lr_multiplier();
  t.weight_decay = {x.qk_weight_decay(), x.ov_weight_decay(),
                    x.mlp_weight_decay()};
  t.grad_clip = x.grad_clip();
  t.warmup_fraction = x.warmup_fraction();
  t.rollout_alpha = x.rollout_alpha();
  t.k_percent = x.k_percent();
  return absl::OkStatus();
}

}  // namespace

agent::SettingsReader TextSettingsReader() { return {"text", &ReadText}; }

namespace {

const agent::SettingsReaderRegistration kTextReader(TextSettingsReader());

}  // namespace

}  // namespace qkov::training::text
