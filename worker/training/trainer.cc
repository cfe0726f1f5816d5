#include "worker/training/trainer.h"

#include <cmath>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "worker/training/synthetic_task.h"

namespace qkov::training {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Streams derived from the trial seed (MixSeed); the eval stream comes from
// eval_seed so every trial of a sweep sees the same held-out set.
constexpr uint64_t kDataStream = 1;
constexpr uint64_t kInitStream = 2;
constexpr uint64_t kEvalStream = 3;

}  // namespace

const char* TrialEndName(TrialEnd end) {
  switch (end) {
    case TrialEnd::kConverged:
      return "converged";
    case TrialEnd::kMaxSteps:
      return "max_steps";
    case TrialEnd::kDiverged:
      return "diverged";
    case TrialEnd::kStopped:
      return "stopped";
  }
  return "?";
}

LearningRates ScheduledLearningRates(const TrialOptions& o, int64_t step) {
  const double eta_ov = o.eta_ov;
  switch (o.optimizer.schedule) {
    case ScheduleKind::kConstant:
      return {eta_ov * o.lr_ratio, eta_ov};
    case ScheduleKind::kCosineWarmup: {
      const int64_t w = o.optimizer.warmup_steps;
      double m;
      if (step < w) {
        m = static_cast<double>(step + 1) / static_cast<double>(w);
      } else {
        const double span = std::max<int64_t>(1, o.max_steps - w);
        m = 0.5 * (1.0 + std::cos(kPi * static_cast<double>(step - w) / span));
      }
      return {eta_ov * o.lr_ratio * m, eta_ov * m};
    }
    case ScheduleKind::kQkRamp: {
      // eta_QK(step) = eta_OV * (1 + (R - 1) * step / max_steps).
      const double frac = static_cast<double>(step) / static_cast<double>(o.max_steps);
      return {eta_ov * (1.0 + (o.lr_ratio - 1.0) * frac), eta_ov};
    }
  }
  return {eta_ov * o.lr_ratio, eta_ov};
}

std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(AttentionModel& model,
                                                       const TrialOptions& o) {
  const LearningRates lr = ScheduledLearningRates(o, 0);
  const OptimizerOptions& opt = o.optimizer;
  std::vector<torch::optim::OptimizerParamGroup> groups;
  auto add = [&](std::vector<torch::Tensor> params, double rate) {
    if (opt.kind == OptimizerKind::kSgd) {
      auto options = std::make_unique<torch::optim::SGDOptions>(rate);
      options->momentum(opt.momentum).weight_decay(opt.weight_decay);
      groups.emplace_back(std::move(params), std::move(options));
    } else {
      auto options = std::make_unique<torch::optim::AdamWOptions>(rate);
      options->betas({opt.adam_beta1, opt.adam_beta2})
          .eps(opt.adam_eps)
          .weight_decay(opt.weight_decay);
      groups.emplace_back(std::move(params), std::move(options));
    }
  };
  add(model->QkParameters(), lr.qk);
  add(model->OvParameters(), lr.ov);
  if (opt.kind == OptimizerKind::kSgd) {
    return std::make_unique<torch::optim::SGD>(std::move(groups), torch::optim::SGDOptions(lr.ov));
  }
  return std::make_unique<torch::optim::AdamW>(std::move(groups), torch::optim::AdamWOptions(lr.ov));
}

void SetLearningRates(torch::optim::Optimizer& optimizer, const LearningRates& lr) {
  auto& groups = optimizer.param_groups();
  groups[0].options().set_lr(lr.qk);
  groups[1].options().set_lr(lr.ov);
}

std::string TorchVersion() {
  return absl::StrCat("torch ", TORCH_VERSION_MAJOR, ".", TORCH_VERSION_MINOR, ".",
                      TORCH_VERSION_PATCH);
}

namespace {

constexpr int64_t kCheckpointFormat = 1;

// The mutable state of a running trial, and its (de)serialization.
struct TrainState {
  int64_t step = 0;
  std::mt19937_64 data_rng;
  torch::Tensor window;        // per-step losses, ring buffer of loss_window
  torch::Tensor sums;          // [loss, correct, distinct] since the last report
  int64_t since_report = 0;
};

std::string SaveCheckpoint(AttentionModel& model, torch::optim::Optimizer& optimizer,
                           const TrainState& st) {
  torch::serialize::OutputArchive archive;
  archive.write("format", c10::IValue(kCheckpointFormat));
  torch::serialize::OutputArchive model_archive;
  model->save(model_archive);
  archive.write("model", model_archive);
  torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("step", c10::IValue(st.step));
  archive.write("since_report", c10::IValue(st.since_report));
  std::ostringstream rng;
  rng << st.data_rng;
  archive.write("data_rng", c10::IValue(rng.str()));
  archive.write("window", st.window.cpu());
  archive.write("sums", st.sums.cpu());
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

absl::Status LoadCheckpointImpl(const std::string& bytes, const TrialOptions& o, const torch::Device& device,
                                AttentionModel& model, torch::optim::Optimizer& optimizer, TrainState* st) {
  torch::serialize::InputArchive archive;
  std::istringstream in(bytes);
  archive.load_from(in, device);
  c10::IValue v;
  archive.read("format", v);
  if (v.toInt() != kCheckpointFormat) {
    return absl::InvalidArgumentError(absl::StrCat("checkpoint format ", v.toInt(), " is not ", kCheckpointFormat));
  }
  torch::serialize::InputArchive model_archive;
  archive.read("model", model_archive);
  model->load(model_archive);
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  optimizer.load(optimizer_archive);
  archive.read("step", v);
  st->step = v.toInt();
  archive.read("since_report", v);
  st->since_report = v.toInt();
  archive.read("data_rng", v);
  std::istringstream rng(v.toStringRef());
  rng >> st->data_rng;
  torch::Tensor window, sums;
  archive.read("window", window);
  archive.read("sums", sums);
  if (window.numel() != o.loss_window || sums.numel() != 3 || st->step < 0 || st->step > o.max_steps) {
    return absl::InvalidArgumentError("checkpoint does not belong to this trial's options");
  }
  st->window = window.to(device);
  st->sums = sums.to(device);
  return absl::OkStatus();
}

absl::Status LoadCheckpoint(const std::string& bytes, const TrialOptions& o, const torch::Device& device,
                            AttentionModel& model, torch::optim::Optimizer& optimizer, TrainState* st) {
  try {
    return LoadCheckpointImpl(bytes, o, device, model, optimizer, st);
  } catch (const c10::Error& e) {
    return absl::InvalidArgumentError(absl::StrCat("checkpoint does not parse: ", e.what_without_backtrace()));
  }
}

absl::StatusOr<TrialOutcome> RunTrialImpl(const TrialOptions& o, TrainingObserver* observer,
                                          const torch::Device& device, const std::string& resume_from) {
  SyntheticTask task(o.task);
  AttentionModel model(o.parameterization, o.task.vocab_size, o.init, MixSeed(o.seed, kInitStream));
  model->to(device);
  std::unique_ptr<torch::optim::Optimizer> optimizer = MakeOptimizer(model, o);

  // Per-step values stay on the device until a report, so CUDA never syncs
  // inside a window.
  TrainState st;
  st.data_rng.seed(MixSeed(o.seed, kDataStream));
  st.window = torch::zeros({o.loss_window}, torch::TensorOptions().dtype(torch::kFloat64).device(device));
  st.sums = torch::zeros({3}, st.window.options());
  if (!resume_from.empty()) {
    if (absl::Status s = LoadCheckpoint(resume_from, o, device, model, *optimizer, &st); !s.ok()) return s;
  }
  auto sum_loss = st.sums.select(0, 0);
  auto sum_correct = st.sums.select(0, 1);
  auto sum_distinct = st.sums.select(0, 2);
  auto& window = st.window;

  TrialOutcome outcome;
  int64_t& step = st.step;
  for (; step < o.max_steps; ++step) {
    const StopRequest stop = observer != nullptr ? observer->PollStop() : StopRequest::kNone;
    if (stop != StopRequest::kNone) {
      outcome.end = TrialEnd::kStopped;
      outcome.steps = step;
      if (stop == StopRequest::kHandBack) outcome.checkpoint = SaveCheckpoint(model, *optimizer, st);
      return outcome;
    }
    const LearningRates lr = ScheduledLearningRates(o, step);
    SetLearningRates(*optimizer, lr);
    Batch batch = task.Sample(o.batch_size, st.data_rng);
    auto tokens = batch.tokens.to(device);
    auto labels = batch.labels.to(device);

    optimizer->zero_grad();
    ModelOutput out = model->forward(tokens);
    auto loss = torch::cross_entropy_loss(out.logits, labels);
    loss.backward();
    optimizer->step();

    {
      torch::NoGradGuard no_grad;
      auto l = loss.detach().to(torch::kFloat64);
      window.select(0, step % o.loss_window).copy_(l);
      sum_loss += l;
      sum_correct += out.logits.argmax(1).eq(labels).sum().to(torch::kFloat64) / o.batch_size;
      sum_distinct += DistinctTokenAttention(out.attention.detach(), tokens, o.task.num_common)
                          .mean()
                          .to(torch::kFloat64);
    }
    ++st.since_report;
    const int64_t since_report = st.since_report;

    const bool last = step + 1 == o.max_steps;
    if ((step + 1) % o.report_every != 0 && !last) continue;

    torch::NoGradGuard no_grad;
    const double mean_loss = sum_loss.item<double>() / since_report;
    const int64_t filled = std::min<int64_t>(step + 1, o.loss_window);
    const double window_loss = window.narrow(0, 0, filled).mean().item<double>();
    std::vector<MetricPoint> points = {
        {step + 1, "train_loss", mean_loss},
        {step + 1, "train_accuracy", sum_correct.item<double>() / since_report},
        {step + 1, "distinct_attention", sum_distinct.item<double>() / since_report},
        {step + 1, "separability", Separability(out.attention, tokens, o.task.num_common)},
        {step + 1, "qk_norm", model->QkCircuit().norm().item<double>()},
        {step + 1, "ov_norm", model->OvCircuit().norm().item<double>()},
        {step + 1, "lr_qk", lr.qk},
        {step + 1, "lr_ov", lr.ov},
    };
    if (QkFactorized(o.parameterization)) {
      points.push_back({step + 1, "qk_balancedness", model->QkBalancedness()});
    }
    if (OvFactorized(o.parameterization)) {
      points.push_back({step + 1, "ov_balancedness", model->OvBalancedness()});
    }
    st.sums.zero_();
    st.since_report = 0;
    const bool keep_going = observer == nullptr || observer->OnReport(step + 1, points);

    if (!std::isfinite(mean_loss) || !std::isfinite(window_loss)) {
      outcome.end = TrialEnd::kDiverged;
      ++step;
      break;
    }
    if (!keep_going) {
      outcome.end = TrialEnd::kStopped;
      outcome.steps = step + 1;
      return outcome;
    }
    if (filled == o.loss_window && window_loss < o.target_loss) {
      outcome.end = TrialEnd::kConverged;
      ++step;
      break;
    }
  }
  if (step >= o.max_steps && outcome.end != TrialEnd::kDiverged &&
      outcome.end != TrialEnd::kConverged) {
    outcome.end = TrialEnd::kMaxSteps;
  }
  outcome.steps = step;

  std::mt19937_64 eval_rng(MixSeed(o.eval.eval_seed, kEvalStream));
  Batch eval_batch = task.Sample(o.eval.num_examples, eval_rng);
  eval_batch.tokens = eval_batch.tokens.to(device);
  eval_batch.labels = eval_batch.labels.to(device);
  Evaluation ev = Evaluate(model, task, eval_batch, o.eval);
  outcome.results = std::move(ev.scalars);
  outcome.heatmaps = std::move(ev.heatmaps);
  outcome.results["steps"] = static_cast<double>(outcome.steps);
  outcome.results["converged"] = outcome.end == TrialEnd::kConverged ? 1.0 : 0.0;
  outcome.results["train_loss"] =
      window.narrow(0, 0, std::min<int64_t>(std::max<int64_t>(outcome.steps, 1), o.loss_window))
          .mean()
          .item<double>();
  outcome.results["qk_norm"] = model->QkCircuit().norm().item<double>();
  outcome.results["ov_norm"] = model->OvCircuit().norm().item<double>();
  if (QkFactorized(o.parameterization)) outcome.results["qk_balancedness"] = model->QkBalancedness();
  if (OvFactorized(o.parameterization)) outcome.results["ov_balancedness"] = model->OvBalancedness();
  return outcome;
}

}  // namespace

absl::StatusOr<TrialOutcome> RunTrial(const TrialOptions& options, TrainingObserver* observer,
                                      const torch::Device& device, const std::string& resume_from) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  // The one place where LibTorch's exceptions become a Status.
  try {
    return RunTrialImpl(options, observer, device, resume_from);
  } catch (const c10::Error& e) {
    return absl::InternalError(absl::StrCat("libtorch: ", e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("training: ", e.what()));
  }
}

}  // namespace qkov::training
