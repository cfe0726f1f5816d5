// The paper's synthetic next-token task (docs/paper.md §2): tokens 0..C-1 of
// the vocabulary are common (class-agnostic), then one block of distinct tokens
// per class with weights 1/D, 2/D, ..., 1 (0.1..1.0 for D = 10). A sequence is
// seq_len - 2 context tokens drawn i.i.d. from its class's distribution, then
// the class's query token, then the label token; the model sees the first
// seq_len - 1 tokens and predicts the last.
//
// Sampling uses our own mt19937_64 stream and Walker's alias tables (one
// 64-bit draw per token: the high 32 bits pick a column, the low 32 bits toss
// its coin, so probabilities are exact to 2^-32), so a seed gives the same
// batches on every platform and LibTorch build.
#ifndef QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_TASK_H_
#define QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_TASK_H_

#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "worker/training/config.h"
#include "worker/training/seeding.h"

namespace qkov::training {

struct Batch {
  torch::Tensor
      tokens;  // int64 [B, seq_len - 1]; the last column is the query token
  torch::Tensor labels;   // int64 [B]
  torch::Tensor classes;  // int64 [B]
};

class SyntheticTask {
 public:
  // `options` must be valid (SyntheticTaskOptions::Validate).
  explicit SyntheticTask(const SyntheticTaskOptions& options);

  const SyntheticTaskOptions& options() const { return options_; }
  int input_len() const { return options_.seq_len - 1; }
  int QueryToken(int c) const { return options_.num_common / 2 + c; }
  int LabelToken(int c) const { return 1 + c; }
  bool IsDistinct(int token) const { return token >= options_.num_common; }
  // First token of class c's distinct block.
  int DistinctBegin(int c) const {
    return options_.num_common + c * options_.distinct_per_class;
  }

  // p_c over the vocabulary (sums to 1).
  std::vector<double> ClassDistribution(int c) const;

  // Draws `batch_size` fresh sequences from `rng`. Classes are uniform.
  Batch Sample(int batch_size, std::mt19937_64& rng) const;

  // Sample() into caller-owned buffers: tokens [batch_size * input_len()],
  // labels [batch_size]; the same draws as Sample() from a generator of the
  // same numbers (std::mt19937_64 or Mt19937_64).
  template <typename Rng>
  void SampleInto(int batch_size, Rng& rng, int64_t* tokens, int64_t* labels,
                  int64_t* classes = nullptr) const;

  // Context-token sampling alone, exposed for the frequency test.
  template <typename Rng>
  int SampleContextToken(int c, Rng& rng) const;

 private:
  SyntheticTaskOptions options_;
  struct AliasTable {
    std::vector<uint32_t>
        threshold;           // keep column i when the coin < threshold[i]
    std::vector<int> token;  // column i's own token
    std::vector<int> alias;  // the token taken otherwise
  };
  std::vector<AliasTable> alias_;  // per class, over tokens with weight > 0
};

template <typename Rng>
int SyntheticTask::SampleContextToken(int c, Rng& rng) const {
  const AliasTable& t = alias_[c];
  const uint64_t r = rng();
  const size_t column =
      static_cast<size_t>(((r >> 32) * t.threshold.size()) >> 32);
  const uint32_t coin = static_cast<uint32_t>(r);
  // Both candidates are loaded and the pick is arithmetic: the coin is a
  // fair random branch, which the CPU would mispredict half the time.
  const int keep = static_cast<int>(coin < t.threshold[column]);
  const int token = t.token[column], alias = t.alias[column];
  return alias + keep * (token - alias);
}

template <typename Rng>
void SyntheticTask::SampleInto(int batch_size, Rng& rng, int64_t* tok,
                               int64_t* lab, int64_t* cls) const {
  const int len = input_len();
  for (int b = 0; b < batch_size; ++b) {
    const int c =
        std::min(static_cast<int>(UniformDouble(rng) * options_.num_classes),
                 options_.num_classes - 1);
    int64_t* row = tok + static_cast<int64_t>(b) * len;
    for (int i = 0; i < len - 1; ++i) row[i] = SampleContextToken(c, rng);
    row[len - 1] = QueryToken(c);
    lab[b] = LabelToken(c);
    if (cls != nullptr) cls[b] = c;
  }
}

}  // namespace qkov::training

#endif  // QKOV_WORKER_TASKS_SYNTHETIC_SYNTHETIC_TASK_H_
