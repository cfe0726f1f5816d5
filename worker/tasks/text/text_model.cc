#include "worker/tasks/text/text_model.h"

#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "worker/training/seeding.h"

namespace qkov::training::text {
namespace {

// The authors' mask value (DemoTransformer's IGNORE).
constexpr double kMasked = -1e5;

// N(0, std^2) of `shape` from `rng` (Box-Muller over our uniform draws).
torch::Tensor Normal(std::vector<int64_t> shape, double std,
                     std::mt19937_64& rng, torch::Dtype dtype) {
  auto t = torch::empty(shape, torch::kFloat64);
  double* d = t.data_ptr<double>();
  const int64_t n = t.numel();
  constexpr double kTwoPi = 6.283185307179586;
  for (int64_t i = 0; i < n; i += 2) {
    const double u1 = 1.0 - UniformDouble(rng), u2 = UniformDouble(rng);
    const double r = std::sqrt(-2.0 * std::log(u1));
    d[i] = r * std::cos(kTwoPi * u2) * std;
    if (i + 1 < n) d[i + 1] = r * std::sin(kTwoPi * u2) * std;
  }
  return t.to(dtype);
}

}  // namespace

TextModelImpl::TextModelImpl(const TextModelOptions& o, Parameterization p,
                             uint64_t seed, torch::Dtype dtype)
    : options_(o), p_(p) {
  std::mt19937_64 rng(seed);
  const int64_t d = o.shape.d_model, h = o.shape.heads, dh = o.shape.d_head;
  const double s = o.init_std;
  const double s_collapsed = s * s * std::sqrt(static_cast<double>(dh));
  auto zeros = [dtype](std::vector<int64_t> shape) {
    return torch::zeros(shape, dtype);
  };
  w_e_ = register_parameter(
      "w_e", Normal({o.vocab_size, d},
                    o.embed_init_std > 0 ? o.embed_init_std : s, rng, dtype));
  w_pos_ =
      register_parameter("w_pos", Normal({o.shape.n_ctx, d}, s, rng, dtype));
  for (int64_t l = 0; l < o.shape.layers; ++l) {
    Layer L;
    const std::string n = absl::StrCat("layer", l, "_");
    if (QkFactorized(p)) {
      L.w_q = register_parameter(n + "w_q", Normal({h, d, dh}, s, rng, dtype));
      L.w_k = register_parameter(n + "w_k", Normal({h, d, dh}, s, rng, dtype));
      L.b_q = register_parameter(n + "b_q", zeros({h, dh}));
      L.b_k = register_parameter(n + "b_k", zeros({h, dh}));
    } else {
      L.w_qk = register_parameter(n + "w_qk",
                                  Normal({h, d, d}, s_collapsed, rng, dtype));
      L.u_qk = register_parameter(n + "u_qk", zeros({h, d}));
    }
    if (OvFactorized(p)) {
      L.w_v = register_parameter(n + "w_v", Normal({h, d, dh}, s, rng, dtype));
      L.b_v = register_parameter(n + "b_v", zeros({h, dh}));
      L.w_o = register_parameter(n + "w_o", Normal({h, dh, d}, s, rng, dtype));
    } else {
      L.w_ov = register_parameter(n + "w_ov",
                                  Normal({h, d, d}, s_collapsed, rng, dtype));
    }
    L.b_o = register_parameter(n + "b_o", zeros({d}));
    if (o.shape.d_mlp > 0) {
      L.w_in = register_parameter(n + "w_in",
                                  Normal({d, o.shape.d_mlp}, s, rng, dtype));
      L.b_in = register_parameter(n + "b_in", zeros({o.shape.d_mlp}));
      L.w_out = register_parameter(n + "w_out",
                                   Normal({o.shape.d_mlp, d}, s, rng, dtype));
      L.b_out = register_parameter(n + "b_out", zeros({d}));
    }
    if (o.layer_norm) {
      L.ln1 = register_module(
          n + "ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
      L.ln2 = register_module(
          n + "ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
      L.ln1->to(dtype);
      L.ln2->to(dtype);
    }
    layers_.push_back(std::move(L));
  }
  if (o.layer_norm) {
    ln_final_ = register_module(
        "ln_final", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
    ln_final_->to(dtype);
  }
  if (!o.lm_head) {
    w_cls_ =
        register_parameter("w_cls", Normal({o.num_classes, d}, s, rng, dtype));
    b_cls_ = register_parameter("b_cls", zeros({o.num_classes}));
  }
}

TextModelOutput TextModelImpl::forward(const torch::Tensor& ids,
                                       int64_t pad_id) {
  TextModelOutput out;
  Run(ids, pad_id, /*readout_only=*/false, &out);
  return out;
}

torch::Tensor TextModelImpl::Logits(const torch::Tensor& ids, int64_t pad_id) {
  TextModelOutput out;
  Run(ids, pad_id, /*readout_only=*/!options_.lm_head, &out);
  return out.logits;
}

torch::Tensor TextModelImpl::Dropout(const torch::Tensor& t) {
  return is_training() && options_.dropout > 0
             ? torch::dropout(t, options_.dropout, true)
             : t;
}

torch::Tensor TextModelImpl::Mlp(Layer& L, const torch::Tensor& x) {
  const TextModelOptions& o = options_;
  if (o.shape.d_mlp <= 0) return x;
  const torch::Tensor m = o.layer_norm ? L.ln2->forward(x) : x;
  return x +
         Dropout(torch::matmul(torch::gelu(torch::matmul(m, L.w_in) + L.b_in,
                                           o.gelu_tanh ? "tanh" : "none"),
                               L.w_out) +
                 L.b_out);
}

torch::Tensor TextModelImpl::FullLayer(Layer& L, const torch::Tensor& x,
                                       const torch::Tensor& allowed,
                                       TextModelOutput* out) {
  const TextModelOptions& o = options_;
  const int64_t h = o.shape.heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(o.shape.d_head));
  const torch::Tensor hx = o.layer_norm ? L.ln1->forward(x) : x;
  torch::Tensor scores;
  if (QkFactorized(p_)) {
    auto q =
        torch::einsum("bld,hde->bhle", {hx, L.w_q}) + L.b_q.view({1, h, 1, -1});
    auto k =
        torch::einsum("bld,hde->bhle", {hx, L.w_k}) + L.b_k.view({1, h, 1, -1});
    scores = torch::matmul(q, k.transpose(-1, -2));
  } else {
    auto t = torch::einsum("bld,hde->bhle", {hx, L.w_qk});  // [B,H,L,d]
    scores = torch::matmul(t, hx.unsqueeze(1).transpose(-1, -2)) +
             torch::einsum("hd,bkd->bhk", {L.u_qk, hx}).unsqueeze(2);
  }
  scores = (scores * scale).masked_fill(allowed.logical_not(), kMasked);
  torch::Tensor a = torch::softmax(scores, -1);  // [B, H, L, L]
  out->attention.push_back(a);
  a = Dropout(a);
  torch::Tensor attn_out;
  if (OvFactorized(p_)) {
    auto v =
        torch::einsum("bld,hde->bhle", {hx, L.w_v}) + L.b_v.view({1, h, 1, -1});
    attn_out =
        torch::einsum("bhle,hed->bld", {torch::matmul(a, v), L.w_o}) + L.b_o;
  } else {
    auto v = torch::einsum("bld,hde->bhle", {hx, L.w_ov});  // [B,H,L,d]
    attn_out = torch::matmul(a, v).sum(1) + L.b_o;
  }
  attn_out = Dropout(attn_out);
  return Mlp(L, o.residual ? x + attn_out : attn_out);
}

torch::Tensor TextModelImpl::ReadoutLayer(Layer& L, const torch::Tensor& x,
                                          const torch::Tensor& pos,
                                          const torch::Tensor& pad,
                                          TextModelOutput* out) {
  const TextModelOptions& o = options_;
  const int64_t b = x.size(0), len = x.size(1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(o.shape.d_head));
  auto at_pos = [&](const torch::Tensor& t) {  // [B, L, d] -> [B, d]
    return t.gather(1, pos.view({b, 1, 1}).expand({b, 1, t.size(2)}))
        .squeeze(1);
  };
  const torch::Tensor hx = o.layer_norm ? L.ln1->forward(x) : x;
  const torch::Tensor xr = at_pos(hx);  // [B, d]
  // w [B, H, d]: score_k = w . x_k (+ the key bias's term, the same for
  // every key).
  torch::Tensor w, key_bias;
  if (QkFactorized(p_)) {
    const torch::Tensor q =
        torch::einsum("bd,hde->bhe", {xr, L.w_q}) + L.b_q;  // [B, H, dh]
    w = torch::einsum("bhe,hde->bhd", {q, L.w_k});
    key_bias = (q * L.b_k).sum(-1, /*keepdim=*/true);  // [B, H, 1]
  } else {
    w = torch::einsum("bd,hde->bhe", {xr, L.w_qk}) + L.u_qk;
  }
  torch::Tensor scores = torch::matmul(w, hx.transpose(1, 2));  // [B, H, L]
  if (key_bias.defined()) scores = scores + key_bias;
  // The keys row `pos` of FullLayer's mask allows.
  torch::Tensor allowed = torch::ones(
      {b, len}, torch::TensorOptions().dtype(torch::kBool).device(x.device()));
  if (o.causal)
    allowed =
        torch::arange(len, pos.options()).view({1, len}).le(pos.view({b, 1}));
  if (o.padding_mask) allowed = allowed.logical_and(pad.logical_not());
  scores =
      (scores * scale).masked_fill(allowed.logical_not().unsqueeze(1), kMasked);
  torch::Tensor a = torch::softmax(scores, -1);  // [B, H, L]
  out->attention.push_back(a.unsqueeze(2));
  a = Dropout(a);
  const torch::Tensor attended = torch::matmul(a, hx);  // [B, H, d]
  torch::Tensor attn_out;
  if (OvFactorized(p_)) {
    // sum_k a_k (W_V x_k + b_V): the bias weighs sum_k a_k, which dropout
    // moves away from 1.
    const torch::Tensor v = torch::einsum("bhd,hde->bhe", {attended, L.w_v}) +
                            a.sum(-1, /*keepdim=*/true) * L.b_v;
    attn_out = torch::einsum("bhe,hed->bd", {v, L.w_o}) + L.b_o;
  } else {
    attn_out = torch::einsum("bhd,hde->be", {attended, L.w_ov}) + L.b_o;
  }
  attn_out = Dropout(attn_out);
  return Mlp(L, o.residual ? at_pos(x) + attn_out : attn_out);
}

void TextModelImpl::Run(const torch::Tensor& ids, int64_t pad_id,
                        bool readout_only, TextModelOutput* out) {
  const TextModelOptions& o = options_;
  const int64_t b = ids.size(0), len = ids.size(1);
  const torch::Tensor tokens =
      sparse_embedding_gradient_ && !o.lm_head
          ? torch::embedding(w_e_, ids.reshape(-1), /*padding_idx=*/-1,
                             /*scale_grad_by_freq=*/false, /*sparse=*/true)
          : w_e_.index_select(0, ids.reshape(-1));
  torch::Tensor x =
      Dropout(tokens.view({b, len, -1}) + w_pos_.narrow(0, 0, len));
  const torch::Tensor pad = ids.eq(pad_id);  // [B, L]
  torch::Tensor pos;
  if (!o.lm_head) {
    // The authors' readouts: (ids == pad).argmax(), which is 0 when there
    // is no pad; the last real token is the position before it (from the
    // end when that is -1).
    pos = pad.to(torch::kInt64).argmax(1);
    if (o.readout == Readout::kLastToken) {
      pos = pos - 1;
      pos = torch::where(pos.lt(0), pos + len, pos);
    }
    out->readout = pos;
  }
  const size_t full =
      readout_only && !layers_.empty() ? layers_.size() - 1 : layers_.size();
  if (full > 0) {  // the [L, L] mask only where a layer runs in full
    torch::Tensor allowed = torch::ones(
        {1, 1, len, len},
        torch::TensorOptions().dtype(torch::kBool).device(ids.device()));
    if (o.causal) allowed = allowed.tril();
    if (o.padding_mask)
      allowed = allowed.logical_and(pad.logical_not().view({b, 1, 1, len}));
    for (size_t l = 0; l < full; ++l)
      x = FullLayer(layers_[l], x, allowed, out);
  }
  torch::Tensor picked;  // [B, d]
  if (full < layers_.size()) {
    picked = ReadoutLayer(layers_.back(), x, pos, pad, out);
    if (o.layer_norm) picked = ln_final_->forward(picked);
  } else {
    if (o.layer_norm) x = ln_final_->forward(x);
    if (o.lm_head) {
      out->hidden = x;
      return;
    }
    picked =
        x.gather(1, pos.view({b, 1, 1}).expand({b, 1, x.size(2)})).squeeze(1);
  }
  out->logits = torch::matmul(picked, w_cls_.t()) + b_cls_;
}

void TextModelImpl::KeepVocabularyRows(const torch::Tensor& rows) {
  TORCH_CHECK(!options_.lm_head, "an lm_head model scores every token");
  torch::NoGradGuard no_grad;
  w_e_.set_data(w_e_.index_select(0, rows.to(w_e_.device())));
  options_.vocab_size = rows.size(0);
}

std::vector<std::pair<std::string, ParamGroup>> TextModelImpl::ParamGroups(
    ParamGroup embed_group, ParamGroup pos_group) const {
  std::vector<std::pair<std::string, ParamGroup>> groups;
  for (const auto& item : named_parameters()) {
    const std::string& name = item.key();
    // "layer0_w_q" -> "w_q"; LayerNorms are "layer0_ln1.weight".
    const std::string leaf =
        name.rfind("layer", 0) == 0 ? name.substr(name.find('_') + 1) : name;
    ParamGroup g = ParamGroup::kOv;
    if (name == "w_e") {
      g = embed_group;
    } else if (name == "w_pos") {
      g = pos_group;
    } else if (leaf == "w_q" || leaf == "w_k" || leaf == "b_q" ||
               leaf == "b_k" || leaf == "w_qk" || leaf == "u_qk") {
      g = ParamGroup::kQk;
    } else if (leaf == "w_in" || leaf == "b_in" || leaf == "w_out" ||
               leaf == "b_out" || name.find("ln") != std::string::npos) {
      g = ParamGroup::kMlp;
    }
    groups.emplace_back(name, g);
  }
  return groups;
}

}  // namespace qkov::training::text
