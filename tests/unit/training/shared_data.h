// The shared data folder the training tests read (QKOV_SHARED_DATA_DIR,
// ../shared/data beside the checkout) and the GPT-2 tokenizer in it.
#ifndef QKOV_TESTS_UNIT_TRAINING_SHARED_DATA_H_
#define QKOV_TESTS_UNIT_TRAINING_SHARED_DATA_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

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

}  // namespace qkov::training::testing

#endif  // QKOV_TESTS_UNIT_TRAINING_SHARED_DATA_H_
