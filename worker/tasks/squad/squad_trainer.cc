#include "worker/tasks/squad/squad_trainer.h"

#include <ATen/Context.h>

#include <array>
#include <cmath>
#include <memory>
#include <mutex>
#include <random>

#include "absl/strings/str_cat.h"
#include "worker/training/checkpoint.h"
#include "worker/training/optimizer.h"
#include "worker/training/seeding.h"
#include "worker/training/torch_status.h"

namespace qkov::training::squad {
namespace {

// The loop's state besides model and optimizer: what a checkpoint holds.
struct LoopState {
  int64_t step = 0;
  int64_t micro = 0;  // micro-batches done
  std::mt19937_64 rng;
  std::vector<int64_t> order;
  double sum_loss = 0;
  int64_t summed = 0;
  // Checkpoint selection: epochs validated, and the best score, its step
  // and a copy of its weights (in parameters() order; none before the
  // first validation).
  int64_t validated_epochs = 0;
  double best_score = -1;
  int64_t best_step = -1;
  std::vector<torch::Tensor> best;
};

// Format 2 added the selection state; format 1 (without it) still loads.
constexpr int64_t kSquadCheckpointFormat = 2;
// The dropout masks' generator is the device's default one, seeded from the
// trial seed on this stream and saved in checkpoints.
constexpr uint64_t kDropoutStream = 3;

at::Generator DropoutGenerator(const torch::Device& device) {
  return at::globalContext().defaultGenerator(device);
}

std::string SaveCheckpoint(text::TextModel& model,
                           torch::optim::Optimizer& optimizer, int64_t total,
                           const LoopState& st, const torch::Device& device) {
  CheckpointWriter w(kSquadCheckpointFormat);
  {
    at::Generator gen = DropoutGenerator(device);
    std::lock_guard<std::mutex> lock(gen.mutex());
    w.Tensor("dropout_rng", gen.get_state());
  }
  torch::serialize::OutputArchive m, a;
  model->save(m);
  optimizer.save(a);
  w.Archive("model", m);
  w.Archive("optimizer", a);
  w.Int("total", total);
  w.Int("step", st.step);
  w.Int("micro", st.micro);
  w.Rng("rng", st.rng);
  w.Ids("order", st.order);
  w.Double("sum_loss", st.sum_loss);
  w.Int("summed", st.summed);
  w.Int("validated_epochs", st.validated_epochs);
  w.Double("best_score", st.best_score);
  w.Int("best_step", st.best_step);
  for (size_t i = 0; i < st.best.size(); ++i)
    w.Tensor(absl::StrCat("best/", i), st.best[i]);
  return w.Bytes();
}

absl::Status LoadCheckpoint(const std::string& bytes, text::TextModel& model,
                            torch::optim::Optimizer& optimizer, int64_t total,
                            int64_t questions, const torch::Device& device,
                            LoopState* st) {
  absl::StatusOr<std::unique_ptr<CheckpointReader>> opened =
      CheckpointReader::Open(bytes, {1, kSquadCheckpointFormat});
  if (!opened.ok()) return opened.status();
  CheckpointReader& r = **opened;
  if (const int64_t of = r.Int("total"); of != total) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint is of a run of ", of,
                     " steps; these options give ", total));
  }
  torch::serialize::InputArchive m, a;
  r.Archive("model", m);
  r.Archive("optimizer", a);
  model->load(m);
  optimizer.load(a);
  st->step = r.Int("step");
  st->micro = r.Int("micro");
  r.Rng("rng", &st->rng);
  st->order = r.Ids("order");
  st->sum_loss = r.Double("sum_loss");
  st->summed = r.Int("summed");
  if (r.format() >= 2) {
    st->validated_epochs = r.Int("validated_epochs");
    st->best_score = r.Double("best_score");
    st->best_step = r.Int("best_step");
    st->best.clear();
    if (st->best_step >= 0) {
      const size_t count = model->parameters().size();
      for (size_t i = 0; i < count; ++i)
        st->best.push_back(r.Tensor(absl::StrCat("best/", i)).to(device));
    }
  }
  const torch::Tensor dropout_rng = r.Tensor("dropout_rng");
  {
    at::Generator gen = DropoutGenerator(device);
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(dropout_rng);
  }
  if (st->step < 0 || st->step > total ||
      (st->micro > 0 && static_cast<int64_t>(st->order.size()) != questions))
    return absl::InvalidArgumentError(
        "checkpoint does not belong to this trial's options");
  return absl::OkStatus();
}

// AdamW over the three rate groups (0 QK, 1 token embedding, 2 the rest),
// each group present only if it holds parameters.
struct RateGroups {
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::vector<int> group_of;           // the rate group of each param group
  std::vector<torch::Tensor> trained;  // every parameter, for clipping
};

RateGroups MakeRateGroups(text::TextModel& model, const SquadTrainOptions& o) {
  std::array<std::vector<torch::Tensor>, 3> by_group;
  auto named = model->named_parameters();
  for (const auto& [name, group] :
       model->ParamGroups(ParamGroup::kOv, ParamGroup::kOv)) {
    const int g = name == "w_e" ? 1 : group == ParamGroup::kQk ? 0 : 2;
    by_group[g].push_back(named[name]);
  }
  RateGroups out;
  std::vector<torch::optim::OptimizerParamGroup> groups;
  for (int g = 0; g < 3; ++g) {
    if (by_group[g].empty()) continue;
    auto opts = std::make_unique<torch::optim::AdamWOptions>(o.base_lr);
    opts->betas({o.adam_beta1, o.adam_beta2})
        .eps(o.adam_eps)
        .weight_decay(g == 1 ? 0.0 : o.weight_decay);
    groups.emplace_back(by_group[g], std::move(opts));
    out.group_of.push_back(g);
    out.trained.insert(out.trained.end(), by_group[g].begin(),
                       by_group[g].end());
  }
  out.optimizer = std::make_unique<torch::optim::AdamW>(
      std::move(groups), torch::optim::AdamWOptions(o.base_lr));
  return out;
}

// Sets each group's rate (and, with OneCycleLR, beta1) for `step` of
// `total`; returns the schedule's factor.
double ScheduleRates(const SquadTrainOptions& o, int64_t step, int64_t total,
                     RateGroups& rg) {
  const double multiplier[3] = {o.lr_ratio, o.embed_lr_multiplier, 1.0};
  double beta1 = o.adam_beta1;
  const double scale = o.one_cycle
                           ? OneCycleFactor(step, total, o.warmup_steps, &beta1)
                           : CosineWarmupFactor(step, total, o.warmup_steps);
  for (size_t g = 0; g < rg.group_of.size(); ++g) {
    auto& group = static_cast<torch::optim::AdamWOptions&>(
        rg.optimizer->param_groups()[g].options());
    group.lr(o.base_lr * scale * multiplier[rg.group_of[g]]);
    group.betas({beta1, o.adam_beta2});
  }
  return scale;
}

// The gradients of one optimizer step: `accumulation` micro-batches in the
// epoch's seeded order, each loss added to the report's sum. False when a
// loss was NaN or infinite.
bool AccumulateGradients(text::TextModel& model,
                         const std::vector<SquadExample>& train, int64_t pad_id,
                         const SquadTrainOptions& o,
                         const torch::Device& device, LoopState& st) {
  const int64_t n = static_cast<int64_t>(train.size());
  const int64_t micro_per_epoch = (n + o.batch - 1) / o.batch;
  bool finite = true;
  for (int64_t a = 0; a < o.accumulation; ++a, ++st.micro) {
    const int64_t in_epoch = st.micro % micro_per_epoch;
    if (in_epoch == 0) st.order = Permutation(n, st.rng);
    std::vector<const SquadExample*> batch;
    for (int64_t i = in_epoch * o.batch;
         i < std::min(n, (in_epoch + 1) * o.batch); ++i)
      batch.push_back(&train[st.order[i]]);
    const LmBatch b = MakeLmBatch(batch, pad_id);
    const torch::Tensor loss =
        AnswerLoss(model, model->forward(b.ids.to(device), pad_id).hidden, b,
                   o.label_smoothing);
    (loss / static_cast<double>(o.accumulation)).backward();
    const double l = loss.item<double>();
    if (!std::isfinite(l)) finite = false;
    st.sum_loss += l;
    ++st.summed;
  }
  return finite;
}

// Checkpoint selection after the step that completes an epoch and after the
// last: validates, and keeps a copy of the weights with the best score.
void SelectCheckpoint(text::TextModel& model, const SquadTrainHooks& hooks,
                      int64_t micro_per_epoch, int64_t total, LoopState& st) {
  const int64_t epochs_done = st.micro / micro_per_epoch;
  if (!hooks.validate ||
      (epochs_done <= st.validated_epochs && st.step + 1 != total))
    return;
  st.validated_epochs = epochs_done;
  const double score = hooks.validate(st.step + 1);
  if (score <= st.best_score) return;
  torch::NoGradGuard no_grad;
  st.best_score = score;
  st.best_step = st.step + 1;
  st.best.clear();
  for (const torch::Tensor& w : model->parameters())
    st.best.push_back(w.detach().clone());
}

// The report of the steps since the last one; resets the loss sum.
SquadTrainReport TakeReport(const SquadTrainOptions& o, double scale,
                            int64_t micro_per_epoch, LoopState& st) {
  SquadTrainReport r;
  r.step = st.step + 1;
  r.loss = st.sum_loss / static_cast<double>(st.summed);
  r.lr_base = o.base_lr * scale;
  r.lr_qk = r.lr_base * o.lr_ratio;
  r.epoch = static_cast<double>(st.micro) / micro_per_epoch;
  st.sum_loss = 0;
  st.summed = 0;
  return r;
}

// Seeds the question order and the dropout generator from the trial seed,
// then continues from `hooks.resume_from` when it is set.
absl::Status StartLoop(text::TextModel& model, torch::optim::Optimizer& opt,
                       const SquadTrainOptions& o, const SquadTrainHooks& hooks,
                       int64_t total, int64_t questions,
                       const torch::Device& device, LoopState* st) {
  st->rng.seed(o.seed);
  {
    at::Generator gen = DropoutGenerator(device);
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_current_seed(MixSeed(o.seed, kDropoutStream));
  }
  if (hooks.resume_from.empty()) return absl::OkStatus();
  return CatchTorchErrors(
      [&] {
        return LoadCheckpoint(hooks.resume_from, model, opt, total, questions,
                              device, st);
      },
      "checkpoint does not parse");
}

}  // namespace

int64_t SquadTotalSteps(const SquadTrainOptions& o, int64_t questions) {
  const int64_t micro_per_epoch = (questions + o.batch - 1) / o.batch;
  int64_t total = std::max<int64_t>(
      1, o.epochs * micro_per_epoch / std::max<int64_t>(1, o.accumulation));
  if (o.max_steps > 0) total = std::min(total, o.max_steps);
  return total;
}

absl::StatusOr<SquadTrainRun> TrainSquadModel(
    text::TextModel& model, const std::vector<SquadExample>& train,
    int64_t pad_id, const SquadTrainOptions& o, const SquadTrainHooks& hooks) {
  if (train.empty()) return absl::InvalidArgumentError("no training questions");
  for (double rate : {o.base_lr, o.lr_ratio, o.embed_lr_multiplier}) {
    if (!std::isfinite(rate) || rate <= 0)
      return absl::InvalidArgumentError(absl::StrCat(
          "base_lr, lr_ratio and embed_lr_multiplier must be finite and "
          "positive, got ",
          rate));
  }
  RateGroups rg = MakeRateGroups(model, o);
  torch::optim::AdamW& optimizer = *rg.optimizer;
  const int64_t n = static_cast<int64_t>(train.size());
  const int64_t micro_per_epoch = (n + o.batch - 1) / o.batch;
  SquadTrainRun run;
  run.total = SquadTotalSteps(o, n);
  const torch::Device device = model->parameters().front().device();
  LoopState st;
  if (absl::Status s =
          StartLoop(model, optimizer, o, hooks, run.total, n, device, &st);
      !s.ok())
    return s;

  model->train();
  for (; st.step < run.total; ++st.step) {
    if (hooks.poll_stop) {
      const StopRequest stop = hooks.poll_stop();
      if (stop != StopRequest::kNone) {
        run.stopped = true;
        if (stop == StopRequest::kHandBack)
          run.checkpoint =
              SaveCheckpoint(model, optimizer, run.total, st, device);
        break;
      }
    }
    const double scale = ScheduleRates(o, st.step, run.total, rg);
    optimizer.zero_grad();
    if (!AccumulateGradients(model, train, pad_id, o, device, st)) {
      run.diverged = true;
      ++st.step;
      break;
    }
    if (o.grad_clip > 0)
      torch::nn::utils::clip_grad_norm_(rg.trained, o.grad_clip);
    optimizer.step();
    SelectCheckpoint(model, hooks, micro_per_epoch, run.total, st);
    if ((st.step + 1) % std::max<int64_t>(1, hooks.report_every) == 0 ||
        st.step + 1 == run.total) {
      const SquadTrainReport r = TakeReport(o, scale, micro_per_epoch, st);
      if (hooks.report && !hooks.report(r)) {
        ++st.step;
        run.stopped = true;
        break;
      }
    }
  }
  run.steps = st.step;
  run.selected_step = run.steps;
  if (hooks.validate && !run.stopped && !run.diverged && st.best_step >= 0) {
    torch::NoGradGuard no_grad;
    std::vector<torch::Tensor> params = model->parameters();
    for (size_t i = 0; i < params.size(); ++i) params[i].copy_(st.best[i]);
    run.selected_step = st.best_step;
    run.selected_score = st.best_score;
  }
  return run;
}

}  // namespace qkov::training::squad
