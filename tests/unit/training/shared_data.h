// The shared data folder the training tests read (QKOV_SHARED_DATA_DIR,
// ../shared/data beside the checkout) and the GPT-2 tokenizer in it.
#ifndef QKOV_TESTS_UNIT_TRAINING_SHARED_DATA_H_
#define QKOV_TESTS_UNIT_TRAINING_SHARED_DATA_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "worker/training/config.h"
#include "worker/training/text/gpt2_bpe.h"

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

// A HateXplain trial as the authors train the 1-layer block (FAFO, seed
// 1234, batch 32, AdamW with the cosine schedule, the token embedding in the
// QK group, HateXplain's DTAP edges and AC thresholds, the shipped
// vocabulary), trained on hatexplain/`train` and tested on
// hatexplain/`test`; rates, lengths and sizes are the caller's.
inline TrialOptions HateXplainOptions(const std::string& train,
                                      const std::string& test) {
  TrialOptions o;
  o.kind = TaskKind::kText;
  o.parameterization = Parameterization::kFafo;
  o.seed = 1234;
  o.batch_size = 32;
  o.optimizer.kind = OptimizerKind::kAdamW;
  o.optimizer.schedule = ScheduleKind::kCosineWarmup;
  o.eval.tau_attention = 0.33;
  o.eval.tau_probability = 0.66;
  o.eval.dtap_attention_edges = {0, 0.33, 0.66, 1.1};
  o.eval.dtap_probability_edges = {0, 0.33, 0.66, 1.1};
  text::TextTaskOptions& t = o.text;
  t.train.format = text::TextFormat::kHateXplain;
  t.train.path = SharedData() + "/hatexplain/" + train;
  t.test.format = text::TextFormat::kHateXplain;
  t.test.path = SharedData() + "/hatexplain/" + test;
  t.tokenizer.vocab_path =
      SharedData() + "/tokenizers/bert-base-uncased/vocab.txt";
  t.embed_group = ParamGroup::kQk;
  return o;
}

}  // namespace qkov::training::testing

#endif  // QKOV_TESTS_UNIT_TRAINING_SHARED_DATA_H_
