// The shape of a transformer, shared by the text tasks' classifier and
// SQuAD's decoder (worker/tasks/text/text_model.h): their settings
// messages (qkov.v1.TextTask, qkov.v1.SquadTask) hold the same six fields
// flat (a stored config's field names are kept: docs/architecture.md,
// "Decisions"), read into this struct by TransformerShapeOf wherever a
// program needs them (each message's checks and memory model,
// worker/training/*/*_settings.cc, and its reader into the model options).
#ifndef QKOV_COMMON_TRANSFORMER_SHAPE_H_
#define QKOV_COMMON_TRANSFORMER_SHAPE_H_

#include <algorithm>
#include <cstdint>

namespace qkov {

struct TransformerShape {
  int64_t n_ctx = 0;  // learned positions
  int64_t d_model = 0;
  int64_t heads = 0;
  int64_t d_head = 0;
  int64_t d_mlp = 0;  // 0: no MLP
  int64_t layers = 0;
};

// The shape a settings message holds: any message with the six fields
// (qkov.v1.TextTask, qkov.v1.SquadTask).
template <class Settings>
TransformerShape TransformerShapeOf(const Settings& x) {
  return {x.n_ctx(), x.d_model(), x.heads(), x.d_head(), x.d_mlp(), x.layers()};
}

// The number of weights over a vocabulary of `vocab` rows: token and
// position embeddings, and per layer Q, K, V, O (heads of width
// max(d_head, d_model), as the largest parameterization holds) and the
// MLP's two matrices. For the servers' memory estimates.
inline double TransformerWeights(const TransformerShape& s, double vocab) {
  const double d = s.d_model, h = s.heads, dh = s.d_head;
  return (vocab + s.n_ctx) * d +
         s.layers * (4 * h * d * std::max(dh, d) + 2 * d * s.d_mlp);
}

}  // namespace qkov

#endif  // QKOV_COMMON_TRANSFORMER_SHAPE_H_
