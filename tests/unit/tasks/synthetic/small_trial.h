// The smallest synthetic trial that trains every part of the model: a few
// milliseconds a step and checkpoints of a few KB. The checkpoint fuzzer
// resumes its checkpoints; checkpoint_bounds_test damages them.
#ifndef QKOV_TESTS_UNIT_TRAINING_SYNTHETIC_SMALL_TRIAL_H_
#define QKOV_TESTS_UNIT_TRAINING_SYNTHETIC_SMALL_TRIAL_H_

#include "worker/training/config.h"

namespace qkov::training::testing {

inline TrialOptions SmallSyntheticTrial(Parameterization p) {
  TrialOptions o;
  o.parameterization = p;
  o.synthetic.vocab_size = 24;
  o.synthetic.num_common = 8;
  o.synthetic.num_classes = 2;
  o.synthetic.distinct_per_class = 4;
  o.synthetic.seq_len = 6;
  o.max_steps = 12;
  o.report_every = 4;
  o.loss_window = 4;
  o.batch_size = 8;
  o.eval.num_examples = 16;
  return o;
}

}  // namespace qkov::training::testing

#endif  // QKOV_TESTS_UNIT_TRAINING_SYNTHETIC_SMALL_TRIAL_H_
