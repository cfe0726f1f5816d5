#include "worker/tasks/synthetic/synthetic_trainer.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "worker/tasks/synthetic/analytic_gradients.h"
#include "worker/tasks/synthetic/metrics.h"
#include "worker/tasks/synthetic/model.h"
#include "worker/tasks/synthetic/mt19937.h"
#include "worker/tasks/synthetic/synthetic_task.h"
#include "worker/training/checkpoint_bounds.h"
#include "worker/training/optimizer.h"
#include "worker/training/torch_status.h"

namespace qkov::training {
namespace {

// Streams derived from the trial seed (MixSeed); the eval stream comes from
// eval_seed so every trial of a sweep sees the same held-out set.
constexpr uint64_t kDataStream = 1;
constexpr uint64_t kInitStream = 2;
constexpr uint64_t kEvalStream = 3;

constexpr int64_t kCheckpointFormat = 2;

// One trial's place in a batch: everything that is not a stacked tensor.
struct TrialState {
  const TrialOptions* o = nullptr;
  TrainingObserver* observer = nullptr;
  int64_t step = 0;
  int64_t since_report = 0;
  Mt19937_64 data_rng;  // the numbers of std::mt19937_64, drawn faster
  bool done = false;
  TrialOutcome outcome;
};

// The stacked state of T trials of one shape: parameters [T, V, V] under the
// AttentionModel names, each in its rate group, their optimizer, loss windows
// [T, W] and report sums [T, 3] (loss, correct, distinct).
struct Stack {
  std::vector<std::string> names;     // e.g. w_q, w_k, w_v, w_o
  std::vector<ParamGroup> groups;     // kQk or kOv
  std::vector<torch::Tensor> params;  // [T, V, V], requires grad
  std::unique_ptr<StackedOptimizer> optimizer;
  torch::Tensor window, sums;

  torch::Tensor Param(const std::string& name) const {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return params[i];
    }
    return torch::Tensor();
  }
  torch::Tensor QkCircuit(Parameterization p) const {
    return QkFactorized(p)
               ? torch::bmm(Param("w_q").transpose(1, 2), Param("w_k"))
               : Param("w_qk");
  }
  torch::Tensor OvCircuit(Parameterization p) const {
    return OvFactorized(p) ? torch::bmm(Param("w_o"), Param("w_v"))
                           : Param("w_o");
  }
};

// An AttentionModel holding trial t's slice (for evaluation and reporting).
AttentionModel SliceModel(const Stack& s, const TrialOptions& o, int64_t t,
                          const torch::Device& device) {
  AttentionModel m(o.parameterization, o.synthetic.vocab_size, o.init, 0);
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
  for (size_t i = 0; i < s.names.size(); ++i)
    archive.write("param/" + s.names[i], s.params[i][t].detach().cpu());
  s.optimizer->Save(t, s.names, archive);
  archive.write("step", c10::IValue(st.step));
  archive.write("since_report", c10::IValue(st.since_report));
  std::ostringstream rng;
  rng << st.data_rng;
  archive.write("data_rng", c10::IValue(rng.str()));
  archive.write("window", s.window[t].cpu());
  archive.write("sums", s.sums[t].cpu());
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

absl::Status LoadCheckpoint(const std::string& bytes, Stack& s, TrialState& st,
                            int64_t t, const torch::Device& device) {
  const TrialOptions& o = *st.o;
  const absl::Status wrong = absl::InvalidArgumentError(
      "checkpoint does not belong to this trial's options");
  if (absl::Status s = CheckCheckpointBounds(bytes); !s.ok()) return s;
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
    if (!x.sizes().equals(s.params[i][t].sizes())) return wrong;
    s.params[i][t].copy_(x);
  }
  s.optimizer->Load(t, s.names, archive);
  archive.read("step", v);
  st.step = v.toInt();
  archive.read("since_report", v);
  st.since_report = v.toInt();
  archive.read("data_rng", v);
  std::istringstream rng(v.toStringRef());
  rng >> st.data_rng;
  torch::Tensor window, sums;
  archive.read("window", window);
  archive.read("sums", sums);
  if (window.numel() != o.loss_window || sums.numel() != 3 || st.step < 0 ||
      st.step > o.max_steps) {
    return wrong;
  }
  s.window[t].copy_(window);
  s.sums[t].copy_(sums);
  return absl::OkStatus();
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
  SyntheticTask task(o.synthetic);
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

// The report of trial t at its step: the window's means and the state of
// its circuits (docs/metrics.md).
std::vector<MetricPoint> ReportPoints(const Stack& s, const TrialState& st,
                                      int64_t t, const torch::Tensor& a,
                                      const torch::Tensor& bc,
                                      const torch::Tensor& attention,
                                      const torch::Tensor& tokens,
                                      const GroupRates& rates) {
  const TrialOptions& o = *st.o;
  const Parameterization p = o.parameterization;
  const double n = static_cast<double>(st.since_report);
  std::vector<MetricPoint> points = {
      {st.step, "train_loss", s.sums[t][0].item<double>() / n},
      {st.step, "train_accuracy", s.sums[t][1].item<double>() / n},
      {st.step, "distinct_attention", s.sums[t][2].item<double>() / n},
      {st.step, "separability",
       Separability(attention[t], tokens[t], o.synthetic.num_common)},
      {st.step, "qk_norm", a[t].norm().item<double>()},
      {st.step, "ov_norm", bc[t].norm().item<double>()},
      {st.step, "lr_qk", rates[static_cast<int>(ParamGroup::kQk)][t]},
      {st.step, "lr_ov", rates[static_cast<int>(ParamGroup::kOv)][t]},
  };
  if (QkFactorized(p))
    points.push_back({st.step, "qk_balancedness",
                      Balancedness(s.Param("w_q")[t].t(), s.Param("w_k")[t])});
  if (OvFactorized(p))
    points.push_back({st.step, "ov_balancedness",
                      Balancedness(s.Param("w_o")[t], s.Param("w_v")[t])});
  return points;
}

// torch.argmax over x[0..n) on the CPU: the first of equal maxima, and the
// first NaN if there is one (NaN counts as the largest). The maximum comes
// from four independent running maxima, then one scan finds its index.
int64_t ArgMax(const float* x, int64_t n) {
  float m[4] = {x[0], x[0], x[0], x[0]};
  bool nan = false;
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    for (int k = 0; k < 4; ++k) {
      m[k] = std::max(m[k], x[j + k]);
      nan |= x[j + k] != x[j + k];
    }
  }
  for (; j < n; ++j) {
    m[0] = std::max(m[0], x[j]);
    nan |= x[j] != x[j];
  }
  const float top = std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
  for (j = 0; j < n; ++j) {
    if (nan ? x[j] != x[j] : x[j] == top) return j;
  }
  return 0;
}

// Each live trial's step into its loss window (at step % window) and its
// report sums (loss, accuracy, distinct-token attention). One loop over the
// step's logits and attention for float tensors on the CPU; tensor ops
// otherwise (CUDA).
void AddStepStatistics(const torch::Tensor& loss, const torch::Tensor& logits,
                       const torch::Tensor& labels,
                       const torch::Tensor& attention,
                       const torch::Tensor& tokens, int num_common,
                       const std::vector<TrialState>& states, Stack& s) {
  const int64_t n = tokens.size(0), b = tokens.size(1), len = tokens.size(2);
  const int64_t v = logits.size(2);
  const bool loops = logits.is_cpu() && logits.scalar_type() == torch::kFloat &&
                     attention.scalar_type() == torch::kFloat &&
                     logits.is_contiguous() && attention.is_contiguous() &&
                     loss.is_contiguous() && labels.is_contiguous() &&
                     tokens.is_contiguous();
  if (!loops) {
    auto l64 = loss.to(torch::kFloat64);
    auto correct = logits.argmax(2).eq(labels).to(torch::kFloat64).mean(1);
    auto distinct =
        DistinctTokenAttention(attention.view({n * b, len}),
                               tokens.view({n * b, len}), num_common)
            .view({n, b})
            .mean(1)
            .to(torch::kFloat64);
    std::vector<int64_t> rows_live, cols_live;
    std::vector<double> active(n, 0.0);
    for (int64_t t = 0; t < n; ++t) {
      if (states[t].done) continue;
      rows_live.push_back(t);
      cols_live.push_back(states[t].step % states[t].o->loss_window);
      active[t] = 1.0;
    }
    const torch::Device device = s.window.device();
    auto r_idx = torch::tensor(rows_live, torch::kInt64).to(device);
    auto c_idx = torch::tensor(cols_live, torch::kInt64).to(device);
    s.window.index_put_({r_idx, c_idx}, l64.index_select(0, r_idx));
    s.sums.add_(torch::stack({l64, correct, distinct}, 1) *
                torch::tensor(active, torch::kFloat64).to(device).view({n, 1}));
    return;
  }
  const float* z = logits.data_ptr<float>();
  const float* a = attention.data_ptr<float>();
  const float* l = loss.data_ptr<float>();
  const int64_t* y = labels.data_ptr<int64_t>();
  const int64_t* x = tokens.data_ptr<int64_t>();
  double* window = s.window.data_ptr<double>();
  double* sums = s.sums.data_ptr<double>();
  const int64_t window_size = s.window.size(1);
  std::vector<float> is_distinct(v, 0.0f);
  for (int64_t j = num_common; j < v; ++j) is_distinct[j] = 1.0f;
  for (int64_t t = 0; t < n; ++t) {
    if (states[t].done) continue;
    float correct = 0, distinct = 0;
    for (int64_t e = 0; e < b; ++e) {
      const int64_t row = t * b + e;
      const float* zr = z + row * v;
      correct += static_cast<float>(ArgMax(zr, v) == y[row]);
      const float* ar = a + row * len;
      const int64_t* xr = x + row * len;
      // a_i times the 0/1 of its token's class (a table lookup: neither a
      // branch on the random token nor an int-to-float conversion), as the
      // tensor form multiplies, in four independent partial sums.
      float part[4] = {0, 0, 0, 0};
      int64_t i = 0;
      for (; i + 4 <= len; i += 4) {
        for (int k = 0; k < 4; ++k) {
          part[k] += ar[i + k] * is_distinct[xr[i + k]];
        }
      }
      for (; i < len; ++i) part[0] += ar[i] * is_distinct[xr[i]];
      const float mass = (part[0] + part[1]) + (part[2] + part[3]);
      distinct += mass;
    }
    const double step_loss = static_cast<double>(l[t]);
    window[t * window_size + states[t].step % states[t].o->loss_window] =
        step_loss;
    sums[t * 3 + 0] += step_loss;
    sums[t * 3 + 1] += static_cast<double>(correct) / static_cast<double>(b);
    sums[t * 3 + 2] += static_cast<double>(distinct) / static_cast<double>(b);
  }
}

// The stack of `options` (one shape) on `device`: each trial's initial
// weights as AttentionModel draws them from its seed, the optimizer, and
// zeroed loss windows and report sums.
Stack MakeStack(const std::vector<TrialOptions>& options,
                const torch::Device& device, bool autograd) {
  const int64_t n = static_cast<int64_t>(options.size());
  const TrialOptions& first = options[0];
  const Parameterization p = first.parameterization;
  Stack s;
  s.names = StackedParamNames(p);
  for (const std::string& name : s.names) {
    s.groups.push_back(name == "w_q" || name == "w_k" || name == "w_qk"
                           ? ParamGroup::kQk
                           : ParamGroup::kOv);
    std::vector<torch::Tensor> slices;
    for (int64_t t = 0; t < n; ++t) {
      AttentionModel init(p, first.synthetic.vocab_size, options[t].init,
                          MixSeed(options[t].seed, kInitStream));
      slices.push_back(init->named_parameters()[name].detach());
    }
    s.params.push_back(
        torch::stack(slices).to(device).set_requires_grad(autograd));
  }
  s.optimizer =
      std::make_unique<StackedOptimizer>(first.optimizer, s.params, s.groups);
  s.window = torch::zeros(
      {n, first.loss_window},
      torch::TensorOptions().dtype(torch::kFloat64).device(device));
  s.sums = torch::zeros({n, 3}, s.window.options());
  return s;
}

// Each trial's state: its data stream, and where its checkpoint resumes
// it (a trial already at max_steps finishes at once).
absl::StatusOr<std::vector<TrialState>> StartTrials(
    const std::vector<TrialOptions>& options,
    const std::vector<TrainingObserver*>& observers,
    const std::vector<std::string>& resume_from, Stack& s,
    const torch::Device& device) {
  const int64_t n = static_cast<int64_t>(options.size());
  std::vector<TrialState> states(n);
  for (int64_t t = 0; t < n; ++t) {
    states[t].o = &options[t];
    states[t].observer = observers[t];
    states[t].data_rng.seed(MixSeed(options[t].seed, kDataStream));
    if (!resume_from[t].empty()) {
      absl::Status loaded = CatchTorchErrors(
          [&] {
            return LoadCheckpoint(resume_from[t], s, states[t], t, device);
          },
          "checkpoint does not parse");
      if (!loaded.ok()) return loaded;
    }
    if (states[t].step >= options[t].max_steps) {
      states[t].outcome.end = TrialEnd::kMaxSteps;
      Finish(s, states[t], t, device);
    }
  }
  return states;
}

// The inputs of one step of the stack: stop requests answered (a hand-back
// checkpointed), each trial's learning rates (0 for finished trials, whose
// slices stay as they ended until the batch ends) and its batch drawn.
// The number of trials still training.
struct StepInputs {
  torch::Tensor tokens_host, labels_host;  // [T, B, L], [T, B]
  GroupRates rates;
  std::vector<bool> live;
  std::vector<double> active;
};

int64_t PrepareStep(const SyntheticTask& task, Stack& s,
                    std::vector<TrialState>& states,
                    const torch::Device& device, StepInputs& in) {
  const int64_t b = in.labels_host.size(1), len = in.tokens_host.size(2);
  int64_t num_live = 0;
  for (size_t t = 0; t < states.size(); ++t) {
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
    in.live[t] = !st.done;
    in.active[t] = st.done ? 0.0 : 1.0;
    const LearningRates lr =
        st.done ? LearningRates{0, 0} : ScheduledLearningRates(*st.o, st.step);
    in.rates[static_cast<int>(ParamGroup::kQk)][t] = lr.qk;
    in.rates[static_cast<int>(ParamGroup::kOv)][t] = lr.ov;
    if (st.done) continue;
    ++num_live;
    task.SampleInto(static_cast<int>(b), st.data_rng,
                    in.tokens_host.data_ptr<int64_t>() + t * b * len,
                    in.labels_host.data_ptr<int64_t>() + t * b);
  }
  return num_live;
}

// The outputs of one forward and backward pass of the stack.
struct StepOutputs {
  torch::Tensor loss, logits, attention;  // [T], [T, B, V], [T, B, L]
  const std::vector<torch::Tensor>* grads = nullptr;  // analytic engine's
};

StepOutputs ForwardBackward(Stack& s, Parameterization p, int v,
                            const torch::Tensor& tokens,
                            const torch::Tensor& labels,
                            const torch::Tensor& active,
                            AnalyticGradients* analytic) {
  StepOutputs out;
  if (analytic != nullptr) {
    const StackedGradients& g =
        analytic->Compute(s.params, tokens, labels, active);
    out.loss = g.loss;
    out.logits = g.logits;
    out.attention = g.attention;
    out.grads = &g.grads;
    return out;
  }
  const int64_t n = tokens.size(0), b = tokens.size(1);
  for (auto& param : s.params) param.mutable_grad() = torch::Tensor();
  ModelOutput m =
      StackedAttentionForward(s.QkCircuit(p), s.OvCircuit(p), tokens);
  auto per_example = torch::nn::functional::cross_entropy(
      m.logits.reshape({n * b, v}), labels.view(-1),
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  torch::Tensor loss = per_example.view({n, b}).mean(1);
  (loss * active.to(loss.dtype())).sum().backward();
  out.loss = loss.detach();
  out.logits = m.logits.detach();
  out.attention = m.attention.detach();
  return out;
}

// After a step's update: each live trial's step counted, and on its report
// steps its points reported and its end decided (diverged, stopped,
// converged on its loss window, or at max_steps).
void ReportAfterStep(Stack& s, Parameterization p,
                     std::vector<TrialState>& states, const StepOutputs& out,
                     const torch::Tensor& tokens, const GroupRates& rates,
                     const torch::Device& device) {
  torch::NoGradGuard no_grad;
  torch::Tensor a, bc;  // [T, V, V]
  for (size_t t = 0; t < states.size(); ++t) {
    TrialState& st = states[t];
    if (st.done) continue;
    const TrialOptions& o = *st.o;
    ++st.since_report;
    ++st.step;
    const bool last = st.step == o.max_steps;
    if (st.step % o.report_every != 0 && !last) continue;
    if (!a.defined()) {
      // The circuits after this step's update, formed on report steps.
      a = s.QkCircuit(p);
      bc = s.OvCircuit(p);
    }
    const std::vector<MetricPoint> points =
        ReportPoints(s, st, t, a, bc, out.attention, tokens, rates);
    const double mean_loss = points[0].value;
    const int64_t filled = std::min<int64_t>(st.step, o.loss_window);
    const double window_loss =
        s.window[t].narrow(0, 0, filled).mean().item<double>();
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

}  // namespace

absl::StatusOr<std::vector<TrialOutcome>> TrainSynthetic(
    const std::vector<TrialOptions>& options,
    const std::vector<TrainingObserver*>& observers,
    const torch::Device& device, const std::vector<std::string>& resume_from,
    SyntheticEngine engine) {
  const bool autograd = engine == SyntheticEngine::kAutograd;
  const int64_t n = static_cast<int64_t>(options.size());
  const TrialOptions& first = options[0];
  const Parameterization p = first.parameterization;
  const int64_t b = first.batch_size;
  SyntheticTask task(first.synthetic);

  Stack s = MakeStack(options, device, autograd);
  absl::StatusOr<std::vector<TrialState>> started =
      StartTrials(options, observers, resume_from, s, device);
  if (!started.ok()) return started.status();
  std::vector<TrialState>& states = *started;

  StepInputs in;
  in.tokens_host =
      torch::empty({n, b, first.synthetic.seq_len - 1}, torch::kInt64);
  in.labels_host = torch::empty({n, b}, torch::kInt64);
  for (auto& r : in.rates) r.assign(n, 0.0);
  in.live.resize(n);
  in.active.resize(n);
  AnalyticGradients analytic(p);
  while (PrepareStep(task, s, states, device, in) > 0) {
    const torch::Tensor tokens = in.tokens_host.to(device);
    const torch::Tensor labels = in.labels_host.to(device);
    const torch::Tensor active =
        torch::tensor(in.active, torch::TensorOptions().dtype(torch::kFloat64))
            .to(device);
    const StepOutputs out =
        ForwardBackward(s, p, first.synthetic.vocab_size, tokens, labels,
                        active, autograd ? nullptr : &analytic);
    // The statistics before the update, while the step's outputs are still
    // in cache (the update streams every parameter, gradient and buffer).
    {
      torch::NoGradGuard no_grad;
      AddStepStatistics(out.loss, out.logits, labels, out.attention, tokens,
                        first.synthetic.num_common, states, s);
    }
    if (autograd) {
      s.optimizer->Step(in.rates, in.live);
    } else {
      s.optimizer->Step(in.rates, in.live, *out.grads);
    }
    ReportAfterStep(s, p, states, out, tokens, in.rates, device);
  }
  std::vector<TrialOutcome> result;
  for (auto& st : states) result.push_back(std::move(st.outcome));
  return result;
}

absl::Status SyntheticTrainer::CheckBatchable(
    const std::vector<TrialOptions>& options) const {
  const TrialOptions& a = options[0];
  for (const TrialOptions& o : options) {
    const OptimizerOptions &x = a.optimizer, &y = o.optimizer;
    const SyntheticTaskOptions &s = a.synthetic, &u = o.synthetic;
    const bool same =
        o.parameterization == a.parameterization &&
        u.vocab_size == s.vocab_size && u.num_common == s.num_common &&
        u.num_classes == s.num_classes &&
        u.distinct_per_class == s.distinct_per_class &&
        u.seq_len == s.seq_len && o.batch_size == a.batch_size &&
        o.loss_window == a.loss_window && x.kind == y.kind &&
        x.momentum == y.momentum && x.weight_decay == y.weight_decay &&
        x.adam_beta1 == y.adam_beta1 && x.adam_beta2 == y.adam_beta2 &&
        x.adam_eps == y.adam_eps;
    if (!same) {
      return absl::InvalidArgumentError(
          "trials in one batch need the same parameterization, task sizes, "
          "batch size, loss window and optimizer settings");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TrialOutcome>> SyntheticTrainer::Train(
    const std::vector<TrialOptions>& options,
    const std::vector<TrainingObserver*>& observers,
    const torch::Device& device,
    const std::vector<std::string>& resume_from) const {
  return TrainSynthetic(options, observers, device, resume_from,
                        SyntheticEngine::kAnalytic);
}

TrainingTask SyntheticTrainingTask() {
  static const SyntheticTrainer trainer;
  return {"synthetic", {"synthetic"}, &trainer, [](const TrialOptions& o) {
            if (absl::Status s = CheckLrRatio(o); !s.ok()) return s;
            return o.synthetic.Validate();
          }};
}

namespace {

const TrainingTaskRegistration kSyntheticTrainer(SyntheticTrainingTask());

}  // namespace

}  // namespace qkov::training
