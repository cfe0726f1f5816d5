#include "worker/training/squad/squad_trainer.h"

#include <cmath>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"
#include "worker/training/optimizer.h"

namespace qkov::training::squad {

absl::StatusOr<int64_t> TrainSquadModel(
    text::TextModel& model, const std::vector<SquadExample>& train,
    int64_t pad_id, const SquadTrainOptions& o, int64_t report_every,
    const std::function<bool(const SquadTrainReport&)>& report) {
  if (train.empty()) return absl::InvalidArgumentError("no training questions");
  for (double rate : {o.base_lr, o.lr_ratio, o.embed_lr_multiplier}) {
    if (!std::isfinite(rate) || rate <= 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "base_lr, lr_ratio and embed_lr_multiplier must be finite and "
          "positive, got ",
          rate));
  }
  // Groups: 0 QK, 1 token embedding, 2 the rest.
  std::array<std::vector<torch::Tensor>, 3> by_group;
  auto named = model->named_parameters();
  for (const auto& [name, group] :
       model->ParamGroups(ParamGroup::kOv, ParamGroup::kOv)) {
    const int g = name == "w_e" ? 1 : group == ParamGroup::kQk ? 0 : 2;
    by_group[g].push_back(named[name]);
  }
  const double multiplier[3] = {o.lr_ratio, o.embed_lr_multiplier, 1.0};
  std::vector<torch::optim::OptimizerParamGroup> groups;
  std::vector<int> group_of;
  std::vector<torch::Tensor> trained;
  for (int g = 0; g < 3; ++g) {
    if (by_group[g].empty()) continue;
    auto opts = std::make_unique<torch::optim::AdamWOptions>(o.base_lr);
    opts->betas({o.adam_beta1, o.adam_beta2})
        .eps(o.adam_eps)
        .weight_decay(g == 1 ? 0.0 : o.weight_decay);
    groups.emplace_back(by_group[g], std::move(opts));
    group_of.push_back(g);
    trained.insert(trained.end(), by_group[g].begin(), by_group[g].end());
  }
  torch::optim::AdamW optimizer(std::move(groups),
                                torch::optim::AdamWOptions(o.base_lr));

  const int64_t n = static_cast<int64_t>(train.size());
  const int64_t micro_per_epoch = (n + o.batch - 1) / o.batch;
  int64_t total = std::max<int64_t>(
      1, o.epochs * micro_per_epoch / std::max<int64_t>(1, o.accumulation));
  if (o.max_steps > 0) total = std::min(total, o.max_steps);
  const torch::Device device = model->parameters().front().device();

  std::mt19937_64 rng(o.seed);
  std::vector<int64_t> order(n);
  int64_t micro = 0;
  double sum_loss = 0;
  int64_t summed = 0;
  model->train();
  int64_t step = 0;
  for (; step < total; ++step) {
    const double scale = CosineWarmupFactor(step, total, o.warmup_steps);
    for (size_t g = 0; g < group_of.size(); ++g)
      optimizer.param_groups()[g].options().set_lr(o.base_lr * scale *
                                                   multiplier[group_of[g]]);
    optimizer.zero_grad();
    for (int64_t a = 0; a < o.accumulation; ++a, ++micro) {
      const int64_t in_epoch = micro % micro_per_epoch;
      if (in_epoch == 0) {
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
      }
      std::vector<const SquadExample*> batch;
      for (int64_t i = in_epoch * o.batch;
           i < std::min(n, (in_epoch + 1) * o.batch); ++i)
        batch.push_back(&train[order[i]]);
      const LmBatch b = MakeLmBatch(batch, pad_id);
      const torch::Tensor loss =
          AnswerLoss(model, model->forward(b.ids.to(device), pad_id).hidden, b,
                     o.label_smoothing);
      (loss / static_cast<double>(o.accumulation)).backward();
      sum_loss += loss.item<double>();
      ++summed;
    }
    if (o.grad_clip > 0)
      torch::nn::utils::clip_grad_norm_(trained, o.grad_clip);
    optimizer.step();
    if ((step + 1) % report_every == 0 || step + 1 == total) {
      SquadTrainReport r;
      r.step = step + 1;
      r.loss = sum_loss / static_cast<double>(summed);
      r.lr_base = o.base_lr * scale;
      r.lr_qk = r.lr_base * o.lr_ratio;
      sum_loss = 0;
      summed = 0;
      if (report && !report(r)) return step + 1;
    }
  }
  return step;
}

}  // namespace qkov::training::squad
