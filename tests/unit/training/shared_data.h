// The shared data folder the training tests read (QKOV_SHARED_DATA_DIR,
// ../shared/data beside the checkout) and the GPT-2 tokenizer in it.
#ifndef QKOV_TESTS_UNIT_TRAINING_SHARED_DATA_H_
#define QKOV_TESTS_UNIT_TRAINING_SHARED_DATA_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "common/trial_defaults.h"
#include "worker/tasks/squad/squad_options.h"
#include "worker/tasks/text/gpt2_bpe.h"
#include "worker/tasks/text/text_defaults.h"
#include "worker/tasks/text/text_options.h"
#include "worker/training/config.h"

namespace qkov::training::testing {

inline std::string SharedData() { return QKOV_SHARED_DATA_DIR; }

// The shipped encoder.json and vocab.bpe, with their published checksums.
inline text::Gpt2BpeOptions SharedGpt2Options() {
  text::Gpt2BpeOptions o;
  o.encoder_path = SharedData() + "/tokenizers/gpt2/encoder.json";
  o.merges_path = SharedData() + "/tokenizers/gpt2/vocab.bpe";
  return o;
}

// The shipped GPT-2 tokenizer, loaded once per test binary; a load that
// fails is reported and aborts the binary (every caller needs it).
inline const text::Gpt2BpeTokenizer& SharedGpt2() {
  static const text::Gpt2BpeTokenizer* t = [] {
    auto loaded = text::Gpt2BpeTokenizer::Load(SharedGpt2Options());
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return loaded.ok() ? loaded->release() : nullptr;
  }();
  if (t == nullptr) std::abort();
  return *t;
}

// What the text tests' trials share: FAFO, seed 1234, batch 32, the cosine
// schedule, the shipped vocabulary, and the task's AC thresholds and DTAP
// edges from `d` (common/trial_defaults.h, as the presets take them).
inline TrialOptions TextTrialOptions(const defaults::TextDefaults& d) {
  TrialOptions o;
  o.task = "text";
  o.parameterization = Parameterization::kFafo;
  o.seed = 1234;
  o.batch_size = 32;
  o.optimizer.schedule = ScheduleKind::kCosineWarmup;
  o.eval.tau_attention = d.tau_attention;
  o.eval.tau_probability = d.tau_probability;
  o.eval.dtap_attention_edges = {d.dtap_attention_edges.begin(),
                                 d.dtap_attention_edges.end()};
  o.eval.dtap_probability_edges = {defaults::kTextDtapProbabilityEdges.begin(),
                                   defaults::kTextDtapProbabilityEdges.end()};
  o.MutableTaskOptions<text::TextTaskOptions>().tokenizer.vocab_path =
      SharedData() + "/tokenizers/bert-base-uncased/vocab.txt";
  return o;
}

// A HateXplain trial as the authors train the 1-layer block (FAFO, seed
// 1234, batch 32, AdamW with the cosine schedule, the token embedding in the
// QK group, HateXplain's DTAP edges and AC thresholds, the shipped
// vocabulary), trained on hatexplain/`train` and tested on
// hatexplain/`test`; rates, lengths and sizes are the caller's.
inline TrialOptions HateXplainOptions(const std::string& train,
                                      const std::string& test) {
  TrialOptions o = TextTrialOptions(defaults::kHateXplainText);
  o.optimizer.kind = OptimizerKind::kAdamW;
  text::TextTaskOptions& t = o.MutableTaskOptions<text::TextTaskOptions>();
  t.train.format = text::TextFormat::kHateXplain;
  t.train.path = SharedData() + "/hatexplain/" + train;
  t.test.format = text::TextFormat::kHateXplain;
  t.test.path = SharedData() + "/hatexplain/" + test;
  t.embed_group = ParamGroup::kQk;
  return o;
}

// An SVA trial as the authors train the attention-only block (FAFO, seed
// 1234, batch 32, the settings of common/trial_defaults.h's kSvaText that
// the paper-sva preset takes: SGD with momentum, the cosine schedule, the
// position embedding in the QK group, SVA's DTAP edges and AC thresholds),
// on the shipped subj_agr_filtered file split `train_fraction` for training
// and the rest for test; rates and epochs are the caller's.
inline TrialOptions SvaOptions(double train_fraction) {
  const defaults::TextDefaults& d = defaults::kSvaText;
  TrialOptions o = TextTrialOptions(d);
  o.report_every = 100;
  o.max_steps = 1000000;
  o.optimizer.kind = d.sgd ? OptimizerKind::kSgd : OptimizerKind::kAdamW;
  o.optimizer.momentum = d.momentum;
  o.optimizer.weight_decay = d.weight_decay;
  o.eval.num_examples = 100000;
  text::TextTaskOptions& t = o.MutableTaskOptions<text::TextTaskOptions>();
  t.train.format = text::TextFormat::kSvaFiltered;
  t.train.path = SharedData() + "/sva/subj_agr_filtered.text";
  t.train_fraction = train_fraction;
  text::TextModelOptions& m = t.model;
  m.max_len = d.max_len;
  m.shape = d.shape();
  m.residual = d.residual;
  m.layer_norm = d.layer_norm;
  m.causal = d.causal;
  m.padding_mask = d.padding_mask;
  m.readout = text::Readout::kLastToken;
  m.init_std = d.init_std;
  t.epochs = d.epochs;
  t.embed_group = ParamGroup::kQk;
  t.pos_group = d.pos_embed_in_qk ? ParamGroup::kQk : ParamGroup::kOv;
  t.weight_decay = {d.weight_decay, d.weight_decay, d.weight_decay};
  t.grad_clip = d.grad_clip;
  t.warmup_fraction = d.warmup_fraction;
  t.rollout_alpha = d.rollout_alpha;
  t.k_percent = d.k_percent;
  return o;
}

}  // namespace qkov::training::testing

#endif  // QKOV_TESTS_UNIT_TRAINING_SHARED_DATA_H_
