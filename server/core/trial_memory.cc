#include "server/core/trial_memory.h"

#include <algorithm>

#include "common/task_checks.h"
#include "server/core/sweep_spec.h"

namespace qkov::core {

int64_t EstimateTrialMemoryBytes(const qkov::v1::Training& t) {
  if (t.task() == qkov::v1::TASK_THEORY) return 0;
  if (t.task() == qkov::v1::TASK_SQUAD) {
    // As for the text tasks below, over GPT-2's vocabulary, with the
    // next-token logits of a batch ([B, L, V]) and their gradient.
    const auto& x = t.squad();
    const double d = x.d_model(), h = x.heads(), dh = x.d_head();
    const double len = x.n_ctx(), layers = x.layers(), b = t.batch_size();
    const double params =
        (50257.0 + x.n_ctx()) * d +
        layers * (4 * h * d * std::max(dh, d) + 2 * d * x.d_mlp());
    const double bytes =
        4 * (4 * params + layers * h * len * len * 8.0 * b +
             2 * b * len * 50257.0 + layers * b * len * (8 * d + x.d_mlp()));
    return bytes >= 9e18 ? std::numeric_limits<int64_t>::max()
                         : static_cast<int64_t>(bytes);
  }
  if (rules::IsTextTaskKind(t.task())) {
    // Weights with their gradients and two optimizer moments, plus each
    // layer's attention tensors in training ([B, H, L, L], ~8 kept for
    // backward) and in evaluation (256 examples at a time). The datasets
    // themselves are not counted.
    const auto& x = t.text();
    const double d = x.d_model(), h = x.heads(), dh = x.d_head();
    const double len = x.max_len(), layers = x.layers();
    const double params =
        (30522.0 + x.n_ctx()) * d +
        layers * (4 * h * d * std::max(dh, d) + 2 * d * x.d_mlp());
    const double bytes =
        4 * (4 * params +
             layers * h * len * len * (8.0 * t.batch_size() + 3 * 256));
    return bytes >= 9e18 ? std::numeric_limits<int64_t>::max()
                         : static_cast<int64_t>(bytes);
  }
  // In double: the product of the largest accepted shapes overflows int64.
  const double v = t.synthetic().vocab_size();
  const double seq = t.synthetic().seq_len();
  const double b = t.batch_size();
  const double e = t.evaluation().num_examples();
  const double bytes =
      4 * (16 * v * v + 8 * b * seq + 4 * b * v + e * (seq + v)) + 8 * b * seq;
  return bytes >= 9e18 ? std::numeric_limits<int64_t>::max()
                       : static_cast<int64_t>(bytes);
}

int64_t EstimateStackedTrialBytes(const qkov::v1::Training& t) {
  if (t.task() != qkov::v1::TASK_SYNTHETIC) return 0;
  const double v = t.synthetic().vocab_size();
  const double seq = t.synthetic().seq_len();
  const double b = t.batch_size();
  const double bytes =
      4 * (18 * v * v + 16 * b * v + 4 * b * seq) + 16 * b * seq + 65536;
  return bytes >= 9e18 ? std::numeric_limits<int64_t>::max()
                       : static_cast<int64_t>(bytes);
}

int TrialsThatFit(const qkov::v1::Training& t, int64_t budget_bytes,
                  int max_trials, bool fill) {
  max_trials = std::max(1, max_trials);
  const int64_t each = EstimateStackedTrialBytes(t);
  if (each == 0) return 1;
  if (budget_bytes <= 0) return max_trials;
  const int64_t first = EstimateTrialMemoryBytes(t);
  if (budget_bytes <= first) return 1;
  const int64_t more = (budget_bytes - first) / each;
  return static_cast<int>(
      std::min<int64_t>(max_trials, 1 + std::min<int64_t>(more, 1 << 20)));
}

}  // namespace qkov::core
