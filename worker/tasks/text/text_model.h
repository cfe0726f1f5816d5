// The authors' text classifiers (docs/text-tasks.md), every size a setting:
// token and learned position embeddings, `layers` attention blocks of
// `heads` heads, optional residual stream, MLP (GELU) and pre-LayerNorm, a
// linear classifier read at one position per example, or (lm_head) the
// next-token logits at every position through the tied token embedding,
// which makes it SQuAD's decoder (docs/squad.md). The attention of
// every head comes in the paper's four parameterizations:
//   QK factorized (FA)  score = (W_Q x_q + b_Q) . (W_K x_k + b_K) /
//   sqrt(d_head) QK collapsed  (CA)  score = (x_q^T W_QK x_k + u . x_k) /
//   sqrt(d_head) OV factorized (FO)  out = sum_h W_O,h (sum_k a_hk (W_V,h x_k +
//   b_V,h)) + b_O OV collapsed  (CO)  out = sum_h sum_k a_hk W_OV,h x_k + b_O
// (u is all that survives of the QK biases under softmax over keys; b_V
// folds into b_O when OV is collapsed, since attention rows sum to 1.)
#ifndef QKOV_WORKER_TASKS_TEXT_TEXT_MODEL_H_
#define QKOV_WORKER_TASKS_TEXT_TEXT_MODEL_H_

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "worker/tasks/text/text_options.h"
#include "worker/training/config.h"

namespace qkov::training::text {

struct TextModelOutput {
  torch::Tensor logits;  // [B, C]; lm_head: undefined
  // lm_head: the final residual stream [B, L, d_model] (after the final
  // LayerNorm); Unembed() turns rows of it into next-token logits.
  torch::Tensor hidden;
  std::vector<torch::Tensor> attention;  // per layer [B, H, L, L]
  torch::Tensor readout;                 // int64 [B]: the position read
};

class TextModelImpl : public torch::nn::Module {
 public:
  // Weights drawn from `seed` with our own generator, so a seed gives the
  // same model on every build. Collapsed matrices start at the scale of a
  // product of two initial factors (std init_std^2 sqrt(d_head)).
  TextModelImpl(const TextModelOptions& options, Parameterization p,
                uint64_t seed, torch::Dtype dtype = torch::kFloat32);

  // ids int64 [B, L]; pad_id marks padding (the padding mask and the
  // readout position follow it). Dropout applies in training mode only.
  TextModelOutput forward(const torch::Tensor& ids, int64_t pad_id);

  // Classifier logits [B, C], forward(ids, pad_id).logits computed with the
  // last layer at the readout positions only: nothing after the last
  // layer's attention reads another position, so its queries, attention
  // rows, OV circuit, MLP and final LayerNorm are needed there alone. The
  // query is folded into the keys' weights (W_K (W_Q^T x_r + b_Q), or
  // W_QK^T x_r + u) and the OV factors are applied to the attended input
  // (sum_k a_k x_k), so no key or value is formed. The same function as
  // forward() to rounding (text_model_test); with dropout, the masks are
  // drawn for these positions only. What training and the deletion metrics
  // call. Not for lm_head.
  torch::Tensor Logits(const torch::Tensor& ids, int64_t pad_id);

  // lm_head: next-token logits of hidden states [..., d_model] through the
  // tied token embedding, [..., vocab]. Only the rows that are needed are
  // unembedded (a 50,257-token vocabulary at every position would dwarf the
  // rest of the step).
  torch::Tensor Unembed(const torch::Tensor& hidden) const {
    return torch::matmul(hidden, w_e_.t());
  }

  // Each parameter's rate group: QK (W_Q, W_K, their biases, W_QK, u), OV
  // (W_V, W_O, their biases, W_OV, classifier), MLP (MLP weights and
  // LayerNorms); the embeddings go where `embed_group` and `pos_group` say.
  std::vector<std::pair<std::string, ParamGroup>> ParamGroups(
      ParamGroup embed_group, ParamGroup pos_group) const;

  // With `sparse` set, backward() hands the token embedding a sparse
  // gradient holding the rows of the batch's tokens only; accumulated into
  // an existing dense .grad, it adds those rows and nothing else. The
  // default (dense) forms a zeroed gradient of every row first and then
  // adds all of it (docs/PERFORMANCE.md: the sparse form made a HateXplain
  // step 1.2-1.45x faster). The same gradient either way. Ignored for
  // lm_head, whose tied output needs the dense one.
  void set_sparse_embedding_gradient(bool sparse) {
    sparse_embedding_gradient_ = sparse;
  }

  // Keeps the token embedding's rows `rows` (int64 [R], full-vocabulary
  // ids, ascending) alone, row i for id rows[i]: the model then reads ids in
  // [0, R). The classifier trainer keeps the tokens its examples hold, since
  // the other rows reach no output and get no gradient. Not for lm_head,
  // whose tied output scores every token.
  void KeepVocabularyRows(const torch::Tensor& rows);

  const TextModelOptions& options() const { return options_; }
  Parameterization parameterization() const { return p_; }

 private:
  struct Layer {
    torch::Tensor w_q, w_k, b_q, b_k, w_qk, u_qk;  // QK
    torch::Tensor w_v, b_v, w_o, w_ov, b_o;        // OV
    torch::Tensor w_in, b_in, w_out, b_out;        // MLP
    torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  };
  // forward() and Logits(): embeddings, then the layers, the last one in
  // full (readout_only false) or at the readout positions; out->logits,
  // out->readout and (lm_head) out->hidden are filled.
  void Run(const torch::Tensor& ids, int64_t pad_id, bool readout_only,
           TextModelOutput* out);
  // One layer over every position: x [B, L, d] -> [B, L, d]; `allowed`
  // [B or 1, 1, L, L] marks the keys each query may attend.
  torch::Tensor FullLayer(Layer& layer, const torch::Tensor& x,
                          const torch::Tensor& allowed, TextModelOutput* out);
  // One layer at the query positions `pos` (int64 [B]) only: x [B, L, d] ->
  // [B, d]; `pad` [B, L] marks the padding. Its attention is stored as
  // [B, H, 1, L].
  torch::Tensor ReadoutLayer(Layer& layer, const torch::Tensor& x,
                             const torch::Tensor& pos, const torch::Tensor& pad,
                             TextModelOutput* out);
  // The MLP block's residual update of x [..., d] (x itself without one).
  torch::Tensor Mlp(Layer& layer, const torch::Tensor& x);
  torch::Tensor Dropout(const torch::Tensor& t);

  TextModelOptions options_;
  Parameterization p_;
  bool sparse_embedding_gradient_ = false;
  torch::Tensor w_e_, w_pos_;
  std::vector<Layer> layers_;
  torch::nn::LayerNorm ln_final_{nullptr};
  torch::Tensor w_cls_, b_cls_;
};
TORCH_MODULE(TextModel);

}  // namespace qkov::training::text

#endif  // QKOV_WORKER_TASKS_TEXT_TEXT_MODEL_H_
