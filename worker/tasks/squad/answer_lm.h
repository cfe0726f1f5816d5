// The SQuAD decoder's training loss and its evaluation (docs/squad.md):
// teacher-forced next-token loss on the answer tokens only (label smoothing
// a setting), and greedy generation that records, at every generated step,
// how much attention reaches the prompt tokens of the answer span.
// The model is text::TextModel with lm_head set (causal, pre-LN, tied
// output), in any of the four parameterizations.
#ifndef QKOV_WORKER_TASKS_SQUAD_ANSWER_LM_H_
#define QKOV_WORKER_TASKS_SQUAD_ANSWER_LM_H_

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "worker/tasks/squad/squad_data.h"
#include "worker/tasks/text/gpt2_bpe.h"
#include "worker/tasks/text/text_model.h"
#include "worker/training/heatmap.h"

namespace qkov::training::squad {

// Examples laid out for teacher forcing: ids = prompt + answer without its
// last token, right-padded; labels[i] = the token after position i (pad_id
// past the end); answer_mask[i] = 1 where labels[i] is an answer token (the
// first is predicted at the prompt's last position).
struct LmBatch {
  torch::Tensor ids;          // int64 [B, L]
  torch::Tensor labels;       // int64 [B, L]
  torch::Tensor answer_mask;  // bool [B, L]
};

LmBatch MakeLmBatch(const std::vector<const SquadExample*>& examples,
                    int64_t pad_id);

// Mean cross-entropy (with `label_smoothing`) over the answer positions of
// the batch, from the model's hidden states [B, L, d]; prompt and padding
// positions add nothing (they are not even unembedded).
torch::Tensor AnswerLoss(text::TextModel& model, const torch::Tensor& hidden,
                         const LmBatch& batch, double label_smoothing);

struct AnswerAttentionOptions {
  double rollout_alpha = 0.5;  // A' = a A + (1 - a) I, per layer
  int32_t max_new_tokens = 50;
  // AC / ACMC thresholds, and the DTAP heatmap's edges.
  double tau_attention = 0.1;
  double tau_probability = 0.5;
  std::vector<double> dtap_attention_edges = {0, 0.05, 0.1, 0.5, 1.001};
  std::vector<double> dtap_probability_edges = {0, 0.05, 0.1, 0.5, 1.001};
  // Comprehensiveness and sufficiency at k = max(1, ceil(k_percent/100 L))
  // of the current length L; 0: not computed (two more forwards per step).
  double k_percent = 5;
};

// One question, generated greedily until <|endoftext|> or max_new_tokens.
struct Generation {
  std::vector<int32_t> tokens;  // generated, without <|endoftext|>
  std::string text;             // their text, trimmed of outer spaces
  // Per generated step (the token chosen included), the attention that the
  // last position pays to the answer span's prompt tokens: through the
  // rollout of all layers; the mean over layers of each layer's head mean;
  // the max over layers of each layer's head mean.
  std::vector<double> rollout_mass, layer_mean_mass, layer_max_mass;
  // Per step (k_percent > 0), with y the token chosen and p its
  // probability: p - p(y | the sequence without its top-k rollout positions)
  // and p - p(y | only those k tokens, in descending attention).
  std::vector<double> comprehensiveness, sufficiency;
};

// The `k` positions of `row` (one attention row) with the most attention,
// the most first; ties to the earlier position.
std::vector<int64_t> TopPositions(const torch::Tensor& row, int64_t k);

// `relevant` marks the prompt positions of the answer span (SquadExample).
Generation Generate(text::TextModel& model, const SquadExample& example,
                    const text::Gpt2BpeTokenizer& bpe,
                    const AnswerAttentionOptions& options);

// The attention masses of one forward's last position (the three variants
// above), from per-layer attention [1, H, L, L] and a 0/1 mask over the
// first relevant.size() positions.
void LastPositionMasses(const std::vector<torch::Tensor>& attention,
                        const std::vector<uint8_t>& relevant, double alpha,
                        double* rollout, double* layer_mean, double* layer_max);

struct AnswerEvaluation {
  // f1, em, answer_mass_*, gold_probability, ac, acmc, comprehensiveness,
  // sufficiency, examples
  std::map<std::string, double> scalars;
  Heatmap dtap;
};

// Greedy answers to `examples` scored by F1/EM (max over each question's
// gold answers), the step-averaged answer attention, AC (rollout mass >=
// tau_attention), ACMC (and the gold answer's mean teacher-forced token
// probability >= tau_probability), and the DTAP heatmap of the two.
AnswerEvaluation EvaluateAnswers(text::TextModel& model,
                                 const std::vector<SquadExample>& examples,
                                 const text::Gpt2BpeTokenizer& bpe,
                                 const AnswerAttentionOptions& options);

// The mean over `examples` of the greedy answer's F1 (max over each
// question's gold answers), decoded as EvaluateAnswers decodes: what
// checkpoint selection compares.
double GreedyAnswerF1(text::TextModel& model,
                      absl::Span<const SquadExample> examples,
                      const text::Gpt2BpeTokenizer& bpe,
                      int32_t max_new_tokens);

}  // namespace qkov::training::squad

#endif  // QKOV_WORKER_TASKS_SQUAD_ANSWER_LM_H_
