#include "worker/training/trainer.h"

#include <cmath>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "worker/training/synthetic_task.h"
#include "worker/training/torch_status.h"

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
      const double frac =
          static_cast<double>(step) / static_cast<double>(o.max_steps);
      return {eta_ov * (1.0 + (o.lr_ratio - 1.0) * frac), eta_ov};
    }
  }
  return {eta_ov * o.lr_ratio, eta_ov};
}

std::string TorchVersion() {
  return absl::StrCat("torch ", TORCH_VERSION_MAJOR, ".", TORCH_VERSION_MINOR,
                      ".", TORCH_VERSION_PATCH);
}

namespace {

constexpr int64_t kCheckpointFormat = 2;

// One trial's place in a batch: everything that is not a stacked tensor.
struct TrialState {
  const TrialOptions* o = nullptr;
  TrainingObserver* observer = nullptr;
  int64_t step = 0;
  int64_t since_report = 0;
  int64_t adam_steps = 0;
  std::mt19937_64 data_rng;
  bool done = false;
  TrialOutcome outcome;
};

// The stacked state of T trials of one shape: parameters [T, V, V] under the
// AttentionModel names, optimizer buffers, loss windows [T, W], report sums
// [T, 3] (loss, correct, distinct).
struct Stack {
  std::vector<std::string> names;         // e.g. w_q, w_k, w_v, w_o
  std::vector<bool> is_qk;                // parameter belongs to the QK circuit
  std::vector<torch::Tensor> params;      // [T, V, V], requires grad
  std::vector<torch::Tensor> buf1, buf2;  // momentum | Adam m, v
  torch::Tensor window, sums;
};

std::vector<std::string> ParamNames(Parameterization p) {
  std::vector<std::string> n = QkFactorized(p)
                                   ? std::vector<std::string>{"w_q", "w_k"}
                                   : std::vector<std::string>{"w_qk"};
  if (OvFactorized(p)) n.push_back("w_v");
  n.push_back("w_o");
  return n;
}

torch::Tensor Param(const Stack& s, const std::string& name) {
  for (size_t i = 0; i < s.names.size(); ++i) {
    if (s.names[i] == name) return s.params[i];
  }
  return torch::Tensor();
}

torch::Tensor QkStack(const Stack& s, Parameterization p) {
  return QkFactorized(p)
             ? torch::bmm(Param(s, "w_q").transpose(1, 2), Param(s, "w_k"))
             : Param(s, "w_qk");
}

torch::Tensor OvStack(const Stack& s, Parameterization p) {
  return OvFactorized(p) ? torch::bmm(Param(s, "w_o"), Param(s, "w_v"))
                         : Param(s, "w_o");
}

// An AttentionModel holding trial t's slice (for evaluation and reporting).
AttentionModel SliceModel(const Stack& s, const TrialOptions& o, int64_t t,
                          const torch::Device& device) {
  AttentionModel m(o.parameterization, o.task.vocab_size, o.init, 0);
  m->to(device);
  torch::NoGradGuard no_grad;
  auto named = m->named_parameters();
  for (size_t i = 0; i < s.names.size(); ++i)
    named[s.names[i]].copy_(s.params[i][t]);
  return m;
}

std::string SaveCheckpoint(const Stack& s, const TrialState& st, int64_t t) {
  torch::serialize::OutputArchive archive;
  archive.write("format", c10::IValue(kCheckpointFormat));
  for (size_t i = 0; i < s.names.size(); ++i) {
    archive.write("param/" + s.names[i], s.params[i][t].detach().cpu());
    if (s.buf1[i].defined())
      archive.write("buf1/" + s.names[i], s.buf1[i][t].cpu());
    if (s.buf2[i].defined())
      archive.write("buf2/" + s.names[i], s.buf2[i][t].cpu());
  }
  archive.write("step", c10::IValue(st.step));
  archive.write("since_report", c10::IValue(st.since_report));
  archive.write("adam_steps", c10::IValue(st.adam_steps));
  std::ostringstream rng;
  rng << st.data_rng;
  archive.write("data_rng", c10::IValue(rng.str()));
  archive.write("window", s.window[t].cpu());
  archive.write("sums", s.sums[t].cpu());
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

absl::Status LoadCheckpointImpl(const std::string& bytes, Stack& s,
                                TrialState& st, int64_t t,
                                const torch::Device& device) {
  const TrialOptions& o = *st.o;
  torch::serialize::InputArchive archive;
  std::istringstream in(bytes);
  archive.load_from(in, device);
  c10::IValue v;
  archive.read("format", v);
  if (v.toInt() != kCheckpointFormat) {
    return absl::InvalidArgumentError(absl::StrCat(
        "checkpoint format ", v.toInt(), " is not ", kCheckpointFormat));
  }
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < s.names.size(); ++i) {
    torch::Tensor x;
    archive.read("param/" + s.names[i], x);
    if (!x.sizes().equals(s.params[i][t].sizes())) {
      return absl::InvalidArgumentError(
          "checkpoint does not belong to this trial's options");
    }
    s.params[i][t].copy_(x);
    if (s.buf1[i].defined()) {
      archive.read("buf1/" + s.names[i], x);
      s.buf1[i][t].copy_(x);
    }
    if (s.buf2[i].defined()) {
      archive.read("buf2/" + s.names[i], x);
      s.buf2[i][t].copy_(x);
    }
  }
  archive.read("step", v);
  st.step = v.toInt();
  archive.read("since_report", v);
  st.since_report = v.toInt();
  archive.read("adam_steps", v);
  st.adam_steps = v.toInt();
  archive.read("data_rng", v);
  std::istringstream rng(v.toStringRef());
  rng >> st.data_rng;
  torch::Tensor window, sums;
  archive.read("window", window);
  archive.read("sums", sums);
  if (window.numel() != o.loss_window || sums.numel() != 3 || st.step < 0 ||
      st.step > o.max_steps) {
    return absl::InvalidArgumentError(
        "checkpoint does not belong to this trial's options");
  }
  s.window[t].copy_(window);
  s.sums[t].copy_(sums);
  return absl::OkStatus();
}

absl::Status LoadCheckpoint(const std::string& bytes, Stack& s, TrialState& st,
                            int64_t t, const torch::Device& device) {
  try {
    return LoadCheckpointImpl(bytes, s, st, t, device);
  } catch (const c10::Error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        "checkpoint does not parse: ", e.what_without_backtrace()));
  }
}

// Ends trial t: final evaluation on the held-out set (not for kStopped).
void Finish(const Stack& s, TrialState& st, int64_t t,
            const torch::Device& device) {
  st.done = true;
  const TrialOptions& o = *st.o;
  TrialOutcome& outcome = st.outcome;
  outcome.steps = st.step;
  if (outcome.end == TrialEnd::kStopped) return;
  torch::NoGradGuard no_grad;
  SyntheticTask task(o.task);
  AttentionModel model = SliceModel(s, o, t, device);
  std::mt19937_64 eval_rng(MixSeed(o.eval.eval_seed, kEvalStream));
  Batch eval_batch = task.Sample(o.eval.num_examples, eval_rng);
  eval_batch.tokens = eval_batch.tokens.to(device);
  eval_batch.labels = eval_batch.labels.to(device);
  Evaluation ev = Evaluate(model, task, eval_batch, o.eval);
  outcome.results = std::move(ev.scalars);
  outcome.heatmaps = std::move(ev.heatmaps);
  outcome.results["steps"] = static_cast<double>(outcome.steps);
  outcome.results["converged"] =
      outcome.end == TrialEnd::kConverged ? 1.0 : 0.0;
  const int64_t filled =
      std::min<int64_t>(std::max<int64_t>(outcome.steps, 1), o.loss_window);
  outcome.results["train_loss"] =
      s.window[t].narrow(0, 0, filled).mean().item<double>();
  outcome.results["qk_norm"] = model->QkCircuit().norm().item<double>();
  outcome.results["ov_norm"] = model->OvCircuit().norm().item<double>();
  if (QkFactorized(o.parameterization))
    outcome.results["qk_balancedness"] = model->QkBalancedness();
  if (OvFactorized(o.parameterization))
    outcome.results["ov_balancedness"] = model->OvBalancedness();
}

absl::StatusOr<std::vector<TrialOutcome>> RunTrialsImpl(
    const std::vector<TrialOptions>& options,
    const std::vector<TrainingObserver*>& observers,
    const torch::Device& device, const std::vector<std::string>& resume_from) {
  const int64_t n = static_cast<int64_t>(options.size());
  const TrialOptions& first = options[0];
  const Parameterization p = first.parameterization;
  const int v = first.task.vocab_size;
  const int64_t len = first.task.seq_len - 1;
  const int64_t b = first.batch_size;
  const bool adam = first.optimizer.kind == OptimizerKind::kAdamW;
  SyntheticTask task(first.task);

  Stack s;
  s.names = ParamNames(p);
  std::vector<TrialState> states(n);
  for (size_t i = 0; i < s.names.size(); ++i) {
    s.is_qk.push_back(s.names[i] == "w_q" || s.names[i] == "w_k" ||
                      s.names[i] == "w_qk");
    std::vector<torch::Tensor> slices;
    for (int64_t t = 0; t < n; ++t) {
      // The same initial weights as AttentionModel with this trial's seed.
      AttentionModel init(p, v, options[t].init,
                          MixSeed(options[t].seed, kInitStream));
      slices.push_back(init->named_parameters()[s.names[i]].detach());
    }
    s.params.push_back(torch::stack(slices).to(device).set_requires_grad(true));
    const bool momentum = !adam && first.optimizer.momentum > 0;
    s.buf1.push_back(adam || momentum ? torch::zeros_like(s.params[i]).detach()
                                      : torch::Tensor());
    s.buf2.push_back(adam ? torch::zeros_like(s.params[i]).detach()
                          : torch::Tensor());
  }
  s.window = torch::zeros(
      {n, first.loss_window},
      torch::TensorOptions().dtype(torch::kFloat64).device(device));
  s.sums = torch::zeros({n, 3}, s.window.options());
  for (int64_t t = 0; t < n; ++t) {
    states[t].o = &options[t];
    states[t].observer = observers[t];
    states[t].data_rng.seed(MixSeed(options[t].seed, kDataStream));
    if (!resume_from[t].empty()) {
      if (absl::Status st =
              LoadCheckpoint(resume_from[t], s, states[t], t, device);
          !st.ok())
        return st;
    }
    if (states[t].step >= options[t].max_steps) {
      states[t].outcome.end = TrialEnd::kMaxSteps;
      Finish(s, states[t], t, device);
    }
  }

  auto tokens_host = torch::empty({n, b, len}, torch::kInt64);
  auto labels_host = torch::empty({n, b}, torch::kInt64);
  auto offsets = (torch::arange(n, torch::kInt64) * v).view({n, 1}).to(device);
  std::vector<double> lr_qk(n), lr_ov(n), active(n);
  while (true) {
    // Stop requests and per-trial learning rates; finished trials train on
    // with rate 0 (their slices stay as they ended) until the batch ends.
    int64_t live = 0;
    for (int64_t t = 0; t < n; ++t) {
      TrialState& st = states[t];
      if (!st.done && st.observer != nullptr) {
        const StopRequest stop = st.observer->PollStop();
        if (stop != StopRequest::kNone) {
          st.outcome.end = TrialEnd::kStopped;
          if (stop == StopRequest::kHandBack)
            st.outcome.checkpoint = SaveCheckpoint(s, st, t);
          Finish(s, st, t, device);
        }
      }
      active[t] = st.done ? 0.0 : 1.0;
      if (st.done) {
        lr_qk[t] = lr_ov[t] = 0;
        continue;
      }
      ++live;
      const LearningRates lr = ScheduledLearningRates(*st.o, st.step);
      lr_qk[t] = lr.qk;
      lr_ov[t] = lr.ov;
      task.SampleInto(static_cast<int>(b), st.data_rng,
                      tokens_host.data_ptr<int64_t>() + t * b * len,
                      labels_host.data_ptr<int64_t>() + t * b);
    }
    if (live == 0) break;
    auto tokens = tokens_host.to(device);
    auto labels = labels_host.to(device);
    auto active_t =
        torch::tensor(active, torch::TensorOptions().dtype(torch::kFloat64))
            .to(device);

    for (auto& param : s.params) param.mutable_grad() = torch::Tensor();
    auto a = QkStack(s, p);                  // [T, V, V]
    auto bc = OvStack(s, p);                 // [T, V, V]
    auto query = tokens.select(2, len - 1);  // [T, B]
    auto rows = a.reshape({n * v, v})
                    .index_select(0, (query + offsets).view(-1));  // [T*B, V]
    auto flat = tokens.view({n * b, len});
    auto scores = rows.gather(1, flat) / std::sqrt(static_cast<double>(v));
    auto attention = torch::softmax(scores, 1);  // [T*B, L]
    auto bag = torch::zeros({n * b, v}, attention.options())
                   .scatter_add(1, flat, attention);
    auto logits =
        torch::bmm(bag.view({n, b, v}), bc.transpose(1, 2));  // [T, B, V]
    auto per_example = torch::nn::functional::cross_entropy(
        logits.reshape({n * b, v}), labels.view(-1),
        torch::nn::functional::CrossEntropyFuncOptions().reduction(
            torch::kNone));
    auto loss = per_example.view({n, b}).mean(1);  // [T]
    (loss * active_t.to(loss.dtype())).sum().backward();

    {
      torch::NoGradGuard no_grad;
      auto lq = torch::tensor(lr_qk, torch::kFloat64)
                    .to(device)
                    .to(s.params[0].dtype())
                    .view({n, 1, 1});
      auto lo = torch::tensor(lr_ov, torch::kFloat64)
                    .to(device)
                    .to(s.params[0].dtype())
                    .view({n, 1, 1});
      const OptimizerOptions& opt = first.optimizer;
      torch::Tensor bc1, bc2;
      if (adam) {
        std::vector<double> c1(n), c2(n);
        for (int64_t t = 0; t < n; ++t) {
          if (!states[t].done) ++states[t].adam_steps;
          const double k =
              static_cast<double>(std::max<int64_t>(states[t].adam_steps, 1));
          c1[t] = 1 - std::pow(opt.adam_beta1, k);
          c2[t] = 1 - std::pow(opt.adam_beta2, k);
        }
        bc1 = torch::tensor(c1, torch::kFloat64)
                  .to(device)
                  .to(s.params[0].dtype())
                  .view({n, 1, 1});
        bc2 = torch::tensor(c2, torch::kFloat64)
                  .to(device)
                  .to(s.params[0].dtype())
                  .view({n, 1, 1});
      }
      for (size_t i = 0; i < s.params.size(); ++i) {
        torch::Tensor& w = s.params[i];
        torch::Tensor g = w.grad();
        const torch::Tensor& lr = s.is_qk[i] ? lq : lo;
        if (adam) {
          // torch.optim.AdamW, per trial.
          w.mul_(1 - lr * opt.weight_decay);
          s.buf1[i].mul_(opt.adam_beta1).add_(g, 1 - opt.adam_beta1);
          s.buf2[i].mul_(opt.adam_beta2).addcmul_(g, g, 1 - opt.adam_beta2);
          auto denom = (s.buf2[i].sqrt() / bc2.sqrt()).add_(opt.adam_eps);
          w.sub_(lr / bc1 * s.buf1[i] / denom);
        } else {
          // torch.optim.SGD, per trial.
          torch::Tensor d =
              opt.weight_decay != 0 ? g + opt.weight_decay * w : g;
          if (s.buf1[i].defined()) {
            s.buf1[i].mul_(opt.momentum).add_(d);
            d = s.buf1[i];
          }
          w.sub_(lr * d);
        }
      }
    }

    torch::NoGradGuard no_grad;
    auto l64 = loss.detach().to(torch::kFloat64);
    auto correct = logits.argmax(2).eq(labels).to(torch::kFloat64).mean(1);
    auto distinct =
        DistinctTokenAttention(attention.detach(), flat, first.task.num_common)
            .view({n, b})
            .mean(1)
            .to(torch::kFloat64);
    // Loss windows and report sums of the live trials, in two batched ops.
    {
      std::vector<int64_t> rows_live, cols_live;
      for (int64_t t = 0; t < n; ++t) {
        if (states[t].done) continue;
        rows_live.push_back(t);
        cols_live.push_back(states[t].step % states[t].o->loss_window);
      }
      auto r_idx = torch::tensor(rows_live, torch::kInt64).to(device);
      auto c_idx = torch::tensor(cols_live, torch::kInt64).to(device);
      s.window.index_put_({r_idx, c_idx}, l64.index_select(0, r_idx));
      s.sums.add_(torch::stack({l64, correct, distinct}, 1) *
                  active_t.view({n, 1}));
    }
    for (int64_t t = 0; t < n; ++t) {
      TrialState& st = states[t];
      if (st.done) continue;
      const TrialOptions& o = *st.o;
      ++st.since_report;
      ++st.step;
      const bool last = st.step == o.max_steps;
      if (st.step % o.report_every != 0 && !last) {
        continue;
      }
      const double mean_loss = s.sums[t][0].item<double>() / st.since_report;
      const int64_t filled = std::min<int64_t>(st.step, o.loss_window);
      const double window_loss =
          s.window[t].narrow(0, 0, filled).mean().item<double>();
      auto att_t = attention.view({n, b, len})[t];
      auto a_t = a[t];
      auto bc_t = bc[t];
      std::vector<MetricPoint> points = {
          {st.step, "train_loss", mean_loss},
          {st.step, "train_accuracy",
           s.sums[t][1].item<double>() / st.since_report},
          {st.step, "distinct_attention",
           s.sums[t][2].item<double>() / st.since_report},
          {st.step, "separability",
           Separability(att_t, tokens[t], o.task.num_common)},
          {st.step, "qk_norm", a_t.norm().item<double>()},
          {st.step, "ov_norm", bc_t.norm().item<double>()},
          {st.step, "lr_qk", lr_qk[t]},
          {st.step, "lr_ov", lr_ov[t]},
      };
      if (QkFactorized(p))
        points.push_back(
            {st.step, "qk_balancedness",
             Balancedness(Param(s, "w_q")[t].t(), Param(s, "w_k")[t])});
      if (OvFactorized(p))
        points.push_back(
            {st.step, "ov_balancedness",
             Balancedness(Param(s, "w_o")[t], Param(s, "w_v")[t])});
      s.sums[t].zero_();
      st.since_report = 0;
      const bool keep_going =
          st.observer == nullptr || st.observer->OnReport(st.step, points);
      if (!std::isfinite(mean_loss) || !std::isfinite(window_loss)) {
        st.outcome.end = TrialEnd::kDiverged;
      } else if (!keep_going) {
        st.outcome.end = TrialEnd::kStopped;
      } else if (filled == o.loss_window && window_loss < o.target_loss) {
        st.outcome.end = TrialEnd::kConverged;
      } else if (last) {
        st.outcome.end = TrialEnd::kMaxSteps;
      } else {
        continue;
      }
      Finish(s, st, t, device);
    }
  }
  std::vector<TrialOutcome> out;
  for (auto& st : states) out.push_back(std::move(st.outcome));
  return out;
}

}  // namespace

absl::Status CheckBatchable(const std::vector<TrialOptions>& options) {
  if (options.empty()) return absl::InvalidArgumentError("no trials");
  const TrialOptions& a = options[0];
  for (const TrialOptions& o : options) {
    if (absl::Status s = o.Validate(); !s.ok()) return s;
    const OptimizerOptions &x = a.optimizer, &y = o.optimizer;
    const bool same =
        o.parameterization == a.parameterization &&
        o.task.vocab_size == a.task.vocab_size &&
        o.task.num_common == a.task.num_common &&
        o.task.num_classes == a.task.num_classes &&
        o.task.distinct_per_class == a.task.distinct_per_class &&
        o.task.seq_len == a.task.seq_len && o.batch_size == a.batch_size &&
        x.kind == y.kind && x.momentum == y.momentum &&
        x.weight_decay == y.weight_decay && x.adam_beta1 == y.adam_beta1 &&
        x.adam_beta2 == y.adam_beta2 && x.adam_eps == y.adam_eps;
    if (!same) {
      return absl::InvalidArgumentError(
          "trials in one batch need the same parameterization, task sizes, "
          "batch size and optimizer settings");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TrialOutcome>> RunTrials(
    const std::vector<TrialOptions>& options,
    const std::vector<TrainingObserver*>& observers,
    const torch::Device& device, const std::vector<std::string>& resume_from) {
  if (absl::Status s = CheckBatchable(options); !s.ok()) return s;
  if (observers.size() != options.size() ||
      resume_from.size() != options.size()) {
    return absl::InvalidArgumentError(
        "one observer and one resume checkpoint (or \"\") per trial");
  }
  try {
    return RunTrialsImpl(options, observers, device, resume_from);
  } catch (const c10::Error& e) {
    return TorchErrorStatus(e);
  } catch (const std::bad_alloc& e) {
    return absl::ResourceExhaustedError(
        absl::StrCat("training: allocation failed (", e.what(), ")"));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("training: ", e.what()));
  }
}

absl::StatusOr<TrialOutcome> RunTrial(const TrialOptions& options,
                                      TrainingObserver* observer,
                                      const torch::Device& device,
                                      const std::string& resume_from) {
  absl::StatusOr<std::vector<TrialOutcome>> out =
      RunTrials({options}, {observer}, device, {resume_from});
  if (!out.ok()) return out.status();
  return std::move((*out)[0]);
}

}  // namespace qkov::training
