#include "worker/tasks/synthetic/fixed_attention.h"

#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "common/trial_rules.h"
#include "worker/tasks/synthetic/synthetic_task.h"

namespace qkov::training {
namespace {

// Fig-3 sequences: the last two tokens are [y_c, q_c]; the model sees all
// but the last and predicts q_c.
Batch FigThreeBatch(const SyntheticTask& task, int n, std::mt19937_64& rng) {
  Batch b = task.Sample(n, rng);
  const int64_t len = b.tokens.size(1);
  auto tok = b.tokens.accessor<int64_t, 2>();
  auto lab = b.labels.accessor<int64_t, 1>();
  auto cls = b.classes.accessor<int64_t, 1>();
  for (int64_t i = 0; i < n; ++i) {
    const int c = static_cast<int>(cls[i]);
    tok[i][len - 1] = task.LabelToken(c);
    lab[i] = task.QueryToken(c);
  }
  return b;
}

// Bag of tokens weighted by the fixed attention: alpha over distinct
// positions, 1 - alpha over common ones (all mass on the common ones when a
// sequence has no distinct token).
torch::Tensor FixedBag(const torch::Tensor& tokens, double alpha,
                       int num_common, int vocab) {
  auto distinct = tokens.ge(num_common).to(torch::kFloat32);
  auto common = 1 - distinct;
  auto nd = distinct.sum(1, true);
  auto nc = common.sum(1, true);
  auto has_distinct = nd.gt(0).to(torch::kFloat32);
  auto a = distinct * (alpha * has_distinct / nd.clamp_min(1)) +
           common * ((1 - alpha * has_distinct) / nc.clamp_min(1));
  return torch::zeros({tokens.size(0), vocab}).scatter_add(1, tokens, a);
}

TrialOutcome TrainFixedAttention(const TrialOptions& o,
                                 TrainingObserver* observer) {
  const bool factorized = OvFactorized(o.parameterization);
  SyntheticTask task(o.synthetic);
  const int v = o.synthetic.vocab_size;
  std::mt19937_64 data_rng(MixSeed(o.seed, 1));
  torch::nn::Linear collapsed(torch::nn::LinearOptions(v, v).bias(true));
  torch::nn::Linear w_v(torch::nn::LinearOptions(v, v).bias(false));
  torch::nn::Linear w_o(torch::nn::LinearOptions(v, v).bias(false));
  {
    // nn.Linear's default U(-1/sqrt(in), 1/sqrt(in)), drawn from the trial
    // seed with our generator (LibTorch's global one is shared by slots).
    torch::NoGradGuard no_grad;
    std::mt19937_64 init_rng(MixSeed(o.seed, 2));
    const double bound = 1.0 / std::sqrt(static_cast<double>(v));
    for (torch::Tensor t :
         {collapsed->weight, collapsed->bias, w_v->weight, w_o->weight}) {
      auto values = torch::empty({t.numel()}, torch::kFloat64);
      double* d = values.data_ptr<double>();
      for (int64_t i = 0; i < t.numel(); ++i)
        d[i] = (2 * UniformDouble(init_rng) - 1) * bound;
      t.copy_(values.view(t.sizes()).to(t.dtype()));
    }
  }
  std::vector<torch::Tensor> params =
      factorized
          ? std::vector<torch::Tensor>{w_v->weight, w_o->weight}
          : std::vector<torch::Tensor>{collapsed->weight, collapsed->bias};
  torch::optim::SGD sgd(params, torch::optim::SGDOptions(o.eta_ov).momentum(
                                    o.optimizer.momentum));
  auto forward = [&](const torch::Tensor& tokens) {
    auto bag = FixedBag(tokens, o.alpha, o.synthetic.num_common, v);
    return factorized ? w_o->forward(w_v->forward(bag))
                      : collapsed->forward(bag);
  };
  TrialOutcome outcome;
  double sum_loss = 0, sum_acc = 0;
  int64_t since = 0, step = 0;
  for (; step < o.max_steps; ++step) {
    if (observer != nullptr && observer->PollStop() != StopRequest::kNone) {
      outcome.end = TrialEnd::kStopped;
      outcome.steps = step;
      return outcome;
    }
    Batch b = FigThreeBatch(task, o.batch_size, data_rng);
    sgd.zero_grad();
    auto logits = forward(b.tokens);
    auto loss = torch::cross_entropy_loss(logits, b.labels);
    loss.backward();
    sgd.step();
    sum_loss += loss.item<double>();
    sum_acc +=
        logits.argmax(1).eq(b.labels).to(torch::kFloat64).mean().item<double>();
    ++since;
    if ((step + 1) % o.report_every != 0 && step + 1 != o.max_steps) continue;
    const double mean = sum_loss / since;
    std::vector<MetricPoint> points = {
        {step + 1, "train_loss", mean},
        {step + 1, "train_accuracy", sum_acc / since}};
    sum_loss = sum_acc = 0;
    since = 0;
    if (observer != nullptr && !observer->OnReport(step + 1, points)) {
      outcome.end = TrialEnd::kStopped;
      outcome.steps = step + 1;
      return outcome;
    }
    if (!std::isfinite(mean)) {
      outcome.end = TrialEnd::kDiverged;
      ++step;
      break;
    }
  }
  if (outcome.end != TrialEnd::kDiverged) outcome.end = TrialEnd::kMaxSteps;
  outcome.steps = step;
  torch::NoGradGuard no_grad;
  std::mt19937_64 eval_rng(MixSeed(o.eval.eval_seed, 3));
  Batch eval = FigThreeBatch(task, o.eval.num_examples, eval_rng);
  auto logits = forward(eval.tokens).to(torch::kFloat64);
  outcome.results["loss"] =
      torch::cross_entropy_loss(logits, eval.labels).item<double>();
  outcome.results["accuracy"] = logits.argmax(1)
                                    .eq(eval.labels)
                                    .to(torch::kFloat64)
                                    .mean()
                                    .item<double>();
  outcome.results["alpha"] = o.alpha;
  outcome.results["steps"] = static_cast<double>(step);
  return outcome;
}

}  // namespace

absl::StatusOr<TrialOutcome> FixedAttentionTrainer::TrainOne(
    const TrialOptions& options, TrainingObserver* observer,
    const torch::Device& device, const std::string& resume_from) const {
  return TrainFixedAttention(options, observer);
}

TrainingTask FixedAttentionTrainingTask() {
  static const FixedAttentionTrainer trainer;
  return {"fixed_attention",
          {"fixed_attention"},
          &trainer,
          [](const TrialOptions& o) {
            if (absl::Status s = rules::Check("", rules::kAlpha, o.alpha);
                !s.ok())
              return s;
            return o.synthetic.Validate();
          }};
}

namespace {

const TrainingTaskRegistration kFixedAttentionTrainer(
    FixedAttentionTrainingTask());

}  // namespace

}  // namespace qkov::training
