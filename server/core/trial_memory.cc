#include "server/core/trial_memory.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_format.h"
#include "common/task_kind.h"
#include "common/transformer_shape.h"
#include "server/core/sweep_spec.h"

namespace qkov::core {

namespace {

int64_t Clamped(double bytes) {
  return bytes >= 9e18 ? std::numeric_limits<int64_t>::max()
                       : static_cast<int64_t>(bytes);
}

// A transformer's weights over a vocabulary of `vocab` rows: token and
// position embeddings, and per layer Q, K, V, O (h heads of width
// max(d_head, d_model)) and the MLP's two matrices.
double TransformerParams(const TransformerShape& s, double vocab) {
  const double d = s.d_model, h = s.heads, dh = s.d_head;
  return (vocab + s.n_ctx) * d +
         s.layers * (4 * h * d * std::max(dh, d) + 2 * d * s.d_mlp);
}

// As for the text tasks below, over GPT-2's vocabulary, with the
// next-token logits of a batch ([B, L, V]) and their gradient.
int64_t SquadBytes(const qkov::v1::Training& t) {
  const TransformerShape s = TransformerShapeOf(t.squad());
  const double d = s.d_model, h = s.heads;
  const double len = s.n_ctx, layers = s.layers, b = t.batch_size();
  const double params = TransformerParams(s, 50257.0);
  return Clamped(4 * (4 * params + layers * h * len * len * 8.0 * b +
                      2 * b * len * 50257.0 +
                      layers * b * len * (8 * d + s.d_mlp)));
}

// Weights with their gradients and two optimizer moments, plus each layer's
// attention tensors in training ([B, H, L, L], ~8 kept for backward) and in
// evaluation (256 examples at a time). The datasets themselves are not
// counted.
int64_t TextBytes(const qkov::v1::Training& t) {
  const TransformerShape s = TransformerShapeOf(t.text());
  const double len = t.text().max_len(), layers = s.layers, h = s.heads;
  const double params = TransformerParams(s, 30522.0);
  return Clamped(4 * (4 * params + layers * h * len * len *
                                       (8.0 * t.batch_size() + 3 * 256)));
}

// In double: the product of the largest accepted shapes overflows int64.
int64_t SyntheticBytes(const qkov::v1::Training& t) {
  const double v = t.synthetic().vocab_size();
  const double seq = t.synthetic().seq_len();
  const double b = t.batch_size();
  const double e = t.evaluation().num_examples();
  return Clamped(4 * (16 * v * v + 8 * b * seq + 4 * b * v + e * (seq + v)) +
                 8 * b * seq);
}

int64_t NoBytes(const qkov::v1::Training&) { return 0; }

std::string SquadSizes(const qkov::v1::Training& t) {
  return absl::StrFormat(
      "batch_size %d, squad.n_ctx %d, squad.d_model %d, squad.heads %d, "
      "squad.layers %d",
      t.batch_size(), t.squad().n_ctx(), t.squad().d_model(), t.squad().heads(),
      t.squad().layers());
}

std::string TextSizes(const qkov::v1::Training& t) {
  return absl::StrFormat(
      "batch_size %d, text.max_len %d, text.heads %d, text.layers %d",
      t.batch_size(), t.text().max_len(), t.text().heads(), t.text().layers());
}

std::string SyntheticSizes(const qkov::v1::Training& t) {
  return absl::StrFormat(
      "batch_size %d, synthetic.seq_len %d, synthetic.vocab_size %d, "
      "evaluation.num_examples %d",
      t.batch_size(), t.synthetic().seq_len(), t.synthetic().vocab_size(),
      t.evaluation().num_examples());
}

// A trial's memory by the settings that shape it (the task table's
// `settings` field).
struct MemoryModel {
  const char* settings;
  int64_t (*bytes)(const qkov::v1::Training&);
  std::string (*sizes)(const qkov::v1::Training&);
};

const MemoryModel& ModelOf(const qkov::v1::Training& t) {
  static constexpr MemoryModel kModels[] = {
      {"synthetic", &SyntheticBytes, &SyntheticSizes},
      {"theory", &NoBytes, &SyntheticSizes},
      {"text", &TextBytes, &TextSizes},
      {"squad", &SquadBytes, &SquadSizes},
  };
  const std::string& settings = TaskOrSynthetic(t.task()).settings;
  for (const MemoryModel& m : kModels)
    if (settings == m.settings) return m;
  return kModels[0];
}

}  // namespace

int64_t EstimateTrialMemoryBytes(const qkov::v1::Training& t) {
  return ModelOf(t).bytes(t);
}

std::string TrialMemorySizes(const qkov::v1::Training& t) {
  return ModelOf(t).sizes(t);
}

int64_t EstimateStackedTrialBytes(const qkov::v1::Training& t) {
  if (!TaskOrSynthetic(t.task()).stacks) return 0;
  const double v = t.synthetic().vocab_size();
  const double seq = t.synthetic().seq_len();
  const double b = t.batch_size();
  return Clamped(4 * (18 * v * v + 16 * b * v + 4 * b * seq) + 16 * b * seq +
                 65536);
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
