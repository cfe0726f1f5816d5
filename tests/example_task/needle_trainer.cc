// The needle task's trainer (needle_task.cc describes the task), registered
// with the worker's trainers (worker/training/task_registry.h) from here.
//
// A batch: seq_len tokens drawn uniformly from the common tokens
// [0, num_common), one position (uniform) holding a needle drawn uniformly
// from [num_common, vocab_size); the label is the needle. The model, on
// one-hot tokens x_j: scores s_j = w_qk . x_j, attention a = softmax(s),
// logits = W_ov^T sum_j a_j x_j. w_qk starts at zero (uniform attention),
// W_ov at U(-1/sqrt(V), 1/sqrt(V)) from the trial seed. SGD with momentum
// `optimizer.momentum`, eta_QK = lr_ratio * eta_ov on w_qk and eta_ov on W_ov.
// Reports the window's mean train loss and attention on the needle; ends
// converged when the mean of the last loss_window losses is below
// target_loss. Results on eval.num_examples sequences from eval_seed.
// A trial handed back restarts (no checkpoint), as fixed attention's does.
#include <torch/torch.h>

#include <cmath>
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include "worker/training/seeding.h"
#include "worker/training/task_registry.h"
#include "worker/training/task_trainer.h"

namespace qkov::example {
namespace {

using training::MetricPoint;
using training::StopRequest;
using training::SyntheticTaskOptions;
using training::TrainingObserver;
using training::TrialEnd;
using training::TrialOptions;
using training::TrialOutcome;

struct NeedleBatch {
  torch::Tensor tokens;     // [n, seq_len] int64
  torch::Tensor positions;  // [n, 1] int64: where the needle is
  torch::Tensor labels;     // [n] int64: the needle
};

int64_t Draw(std::mt19937_64& rng, int64_t lo, int64_t hi) {  // [lo, hi)
  return lo + static_cast<int64_t>(training::UniformDouble(rng) *
                                   static_cast<double>(hi - lo));
}

NeedleBatch Sample(const SyntheticTaskOptions& s, int n, std::mt19937_64& rng) {
  NeedleBatch b{torch::empty({n, s.seq_len}, torch::kInt64),
                torch::empty({n, 1}, torch::kInt64),
                torch::empty({n}, torch::kInt64)};
  auto tok = b.tokens.accessor<int64_t, 2>();
  auto pos = b.positions.accessor<int64_t, 2>();
  auto lab = b.labels.accessor<int64_t, 1>();
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < s.seq_len; ++j) tok[i][j] = Draw(rng, 0, s.num_common);
    pos[i][0] = Draw(rng, 0, s.seq_len);
    lab[i] = Draw(rng, s.num_common, s.vocab_size);
    tok[i][pos[i][0]] = lab[i];
  }
  return b;
}

struct Needle {
  torch::Tensor w_qk;  // [V]
  torch::Tensor w_ov;  // [V, V]

  // Logits [n, V] and attention [n, seq_len].
  std::pair<torch::Tensor, torch::Tensor> Forward(const torch::Tensor& tokens) {
    const int64_t v = w_ov.size(0);
    auto x = torch::one_hot(tokens, v).to(torch::kFloat32);  // [n, L, V]
    auto attention = torch::softmax(x.matmul(w_qk), 1);      // [n, L]
    auto bag = (attention.unsqueeze(2) * x).sum(1);          // [n, V]
    return {bag.matmul(w_ov), attention};
  }
};

Needle Init(const TrialOptions& o) {
  const int v = o.synthetic.vocab_size;
  std::mt19937_64 rng(training::MixSeed(o.seed, 2));
  const double bound = 1.0 / std::sqrt(static_cast<double>(v));
  auto w = torch::empty({v * v}, torch::kFloat64);
  double* d = w.data_ptr<double>();
  for (int64_t i = 0; i < v * v; ++i)
    d[i] = (2 * training::UniformDouble(rng) - 1) * bound;
  return {torch::zeros({v}, torch::kFloat32).set_requires_grad(true),
          w.view({v, v}).to(torch::kFloat32).set_requires_grad(true)};
}

// The mean attention on each sequence's needle.
double NeedleAttention(const torch::Tensor& attention, const NeedleBatch& b) {
  return attention.gather(1, b.positions).mean().item<double>();
}

void Evaluate(const TrialOptions& o, Needle& model, TrialOutcome* out) {
  torch::NoGradGuard no_grad;
  std::mt19937_64 rng(training::MixSeed(o.eval.eval_seed, 3));
  NeedleBatch b = Sample(o.synthetic, o.eval.num_examples, rng);
  auto [logits, attention] = model.Forward(b.tokens);
  out->results["loss"] =
      torch::cross_entropy_loss(logits.to(torch::kFloat64), b.labels)
          .item<double>();
  out->results["accuracy"] =
      logits.argmax(1).eq(b.labels).to(torch::kFloat64).mean().item<double>();
  out->results["needle_attention"] = NeedleAttention(attention, b);
}

TrialOutcome TrainNeedle(const TrialOptions& o, TrainingObserver* observer) {
  Needle model = Init(o);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{model.w_qk},
                      std::make_unique<torch::optim::SGDOptions>(
                          torch::optim::SGDOptions(o.eta_ov * o.lr_ratio)
                              .momentum(o.optimizer.momentum)));
  groups.emplace_back(
      std::vector<torch::Tensor>{model.w_ov},
      std::make_unique<torch::optim::SGDOptions>(
          torch::optim::SGDOptions(o.eta_ov).momentum(o.optimizer.momentum)));
  torch::optim::SGD sgd(std::move(groups), torch::optim::SGDOptions(o.eta_ov));
  std::mt19937_64 data_rng(training::MixSeed(o.seed, 1));
  TrialOutcome outcome;
  std::deque<double> window;  // the last loss_window losses
  double window_sum = 0, sum_loss = 0, sum_attention = 0;
  int64_t since = 0, step = 0;
  while (step < o.max_steps) {
    if (observer != nullptr && observer->PollStop() != StopRequest::kNone) {
      outcome.end = TrialEnd::kStopped;
      outcome.steps = step;
      return outcome;
    }
    NeedleBatch b = Sample(o.synthetic, o.batch_size, data_rng);
    sgd.zero_grad();
    auto [logits, attention] = model.Forward(b.tokens);
    auto loss = torch::cross_entropy_loss(logits, b.labels);
    loss.backward();
    sgd.step();
    ++step;
    const double l = loss.item<double>();
    sum_loss += l;
    sum_attention += NeedleAttention(attention.detach(), b);
    ++since;
    window.push_back(l);
    window_sum += l;
    if (static_cast<int>(window.size()) > o.loss_window) {
      window_sum -= window.front();
      window.pop_front();
    }
    const bool converged = static_cast<int>(window.size()) == o.loss_window &&
                           window_sum / o.loss_window < o.target_loss;
    if (step % o.report_every == 0 || step == o.max_steps || converged ||
        !std::isfinite(l)) {
      std::vector<MetricPoint> points = {
          {step, "train_loss", sum_loss / since},
          {step, "needle_attention", sum_attention / since}};
      sum_loss = sum_attention = 0;
      since = 0;
      if (observer != nullptr && !observer->OnReport(step, points)) {
        outcome.end = TrialEnd::kStopped;
        outcome.steps = step;
        return outcome;
      }
    }
    if (!std::isfinite(l)) {
      outcome.end = TrialEnd::kDiverged;
      break;
    }
    if (converged) {
      outcome.end = TrialEnd::kConverged;
      break;
    }
  }
  outcome.steps = step;
  outcome.results["steps"] = static_cast<double>(step);
  if (outcome.end != TrialEnd::kDiverged) Evaluate(o, model, &outcome);
  return outcome;
}

class NeedleTrainer : public training::InTurnTrainer {
 protected:
  absl::StatusOr<TrialOutcome> TrainOne(
      const TrialOptions& options, TrainingObserver* observer,
      const torch::Device& device,
      const std::string& resume_from) const override {
    return TrainNeedle(options, observer);
  }
};

// The worker's checks of what the server checked (field paths relative to
// a trial): the ratio and the synthetic settings' shape.
absl::Status CheckNeedle(const TrialOptions& o) {
  if (absl::Status s = training::CheckLrRatio(o); !s.ok()) return s;
  return o.synthetic.Validate();
}

const NeedleTrainer kTrainer;
const training::TrainingTaskRegistration kNeedle({
    "needle",
    {"needle"},
    &kTrainer,
    &CheckNeedle,
});

}  // namespace
}  // namespace qkov::example
