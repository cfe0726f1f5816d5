#include "worker/tasks/text/text_trainer.h"

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "worker/tasks/text/encoding.h"
#include "worker/tasks/text/text_metrics.h"
#include "worker/tasks/text/text_model.h"
#include "worker/tasks/text/text_options.h"
#include "worker/tasks/text/wordpiece.h"
#include "worker/training/checkpoint.h"
#include "worker/training/optimizer.h"
#include "worker/training/seeding.h"
#include "worker/training/torch_status.h"

namespace qkov::training::text {
namespace {

// Streams derived from the trial seed (MixSeed), as in the synthetic task.
constexpr uint64_t kOrderStream = 1;
constexpr uint64_t kInitStream = 2;

struct Splits {
  TextData train;
  std::vector<TextExample> validation, test;
  std::map<std::string, std::string> sha256;  // "text.train" -> the file's
};

absl::StatusOr<Splits> LoadSplits(const TextTaskOptions& t, int64_t eval_cap) {
  Splits s;
  absl::StatusOr<TextData> train = LoadTextData(t.train);
  if (!train.ok()) return train.status();
  s.train = *std::move(train);
  s.sha256["text.train"] = s.train.sha256;
  if (t.train_fraction > 0) {
    std::vector<TextExample> kept, rest;
    SplitByFraction(s.train.examples, t.train_fraction, t.split_seed, &kept,
                    &rest);
    s.train.examples = std::move(kept);
    s.test = std::move(rest);
    if (t.validation_fraction > 0) {
      // Of the rest, validation_fraction / (1 - train_fraction) is
      // validation: that share of all examples, drawn on its own stream.
      std::vector<TextExample> validation, test;
      SplitByFraction(s.test, t.validation_fraction / (1 - t.train_fraction),
                      t.split_seed + 1, &validation, &test);
      s.validation = std::move(validation);
      s.test = std::move(test);
    }
  }
  for (auto [name, source, out] :
       {std::tuple{"text.validation", &t.validation, &s.validation},
        std::tuple{"text.test", &t.test, &s.test}}) {
    if (source->path.empty()) continue;
    absl::StatusOr<TextData> d = LoadTextData(*source);
    if (!d.ok()) return d.status();
    s.sha256[name] = d->sha256;
    if (d->label_names.size() > s.train.label_names.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          source->path, ": labels up to ", d->label_names.size() - 1,
          "; the training data has ", s.train.label_names.size(), " classes"));
    }
    *out = std::move(d->examples);
  }
  for (auto* split : {&s.validation, &s.test}) {
    if (static_cast<int64_t>(split->size()) > eval_cap) split->resize(eval_cap);
  }
  return s;
}

void AddEvaluation(const std::string& split, const TextEvaluation& ev,
                   const std::string& x_label, TrialOutcome* outcome) {
  for (const auto& [name, value] : ev.scalars)
    outcome->results[absl::StrCat(split, "_", name)] = value;
  Heatmap h = ev.dtap;
  h.name = split == "test" ? "dtap" : absl::StrCat("dtap_", split);
  h.x_label = x_label;
  outcome->heatmaps.push_back(std::move(h));
}

// The first n examples of `data`.
EncodedText Head(const EncodedText& data, int64_t n) {
  EncodedText out = data;
  out.ids = data.ids.narrow(0, 0, n);
  out.lengths = data.lengths.narrow(0, 0, n);
  out.rationale = data.rationale.narrow(0, 0, n);
  out.has_rationale = data.has_rationale.narrow(0, 0, n);
  out.labels = data.labels.narrow(0, 0, n);
  return out;
}

// The curves of an evaluation during training (docs/metrics.md, "Curves
// during training"): val_<name> at `step`.
void AddCurvePoints(int64_t step, const TextEvaluation& ev,
                    std::vector<MetricPoint>* points) {
  for (const char* name :
       {"loss", "accuracy", "gold_probability", "rationale_mass_head0",
        "rationale_mass", "rationale_mass_rollout", "ac"}) {
    auto it = ev.scalars.find(name);
    if (it != ev.scalars.end())
      points->push_back({step, absl::StrCat("val_", name), it->second});
  }
}

// The loop's state besides model and optimizer, for checkpoints.
struct LoopState {
  int64_t step = 0;
  std::mt19937_64 order_rng;
  std::vector<int64_t> order;
  double sum_loss = 0, sum_correct = 0;
  int64_t seen = 0;
};

// 3: with "vocab_rows", the token embedding's rows (KeepVocabularyRows);
// 2: the whole vocabulary's; 1 (refused): torch::optim's optimizer state.
constexpr int64_t kTextCheckpointFormat = 3;
constexpr int64_t kWholeVocabularyFormat = 2;

// The token ids `sets` hold and the padding id, ascending: the rows of the
// token embedding that training reads, and the only ones whose weights
// reach an output or receive a gradient.
torch::Tensor HeldTokens(const std::vector<const EncodedText*>& sets,
                         int64_t pad_id, int64_t vocab_size) {
  std::vector<bool> held(vocab_size, false);
  held[pad_id] = true;
  for (const EncodedText* e : sets) {
    const torch::Tensor ids = e->ids.contiguous();
    const int64_t* d = ids.data_ptr<int64_t>();
    for (int64_t i = 0; i < ids.numel(); ++i) held[d[i]] = true;
  }
  std::vector<int64_t> rows;
  for (int64_t id = 0; id < vocab_size; ++id) {
    if (held[id]) rows.push_back(id);
  }
  return torch::tensor(rows, torch::kInt64);
}

std::string SaveCheckpoint(TextModel& model, const StackedOptimizer& opt,
                           const std::vector<std::string>& names,
                           const torch::Tensor& vocab_rows,
                           const LoopState& st) {
  CheckpointWriter w(kTextCheckpointFormat);
  w.Tensor("vocab_rows", vocab_rows);
  torch::serialize::OutputArchive m, a;
  model->save(m);
  opt.Save(0, names, a);
  w.Archive("model", m);
  w.Archive("optimizer", a);
  w.Int("step", st.step);
  w.Rng("order_rng", st.order_rng);
  w.Ids("order", st.order);
  w.Doubles("sums", {st.sum_loss, st.sum_correct});
  w.Int("seen", st.seen);
  return w.Bytes();
}

// `make_optimizer` is called once the model's weights are loaded (loading
// gives the parameters new storage, which the optimizer's views must see).
absl::Status LoadCheckpoint(
    const std::string& bytes, TextModel& model,
    const std::function<StackedOptimizer&()>& make_optimizer,
    const std::vector<std::string>& names, const torch::Tensor& vocab_rows,
    int64_t total, LoopState* st) {
  absl::StatusOr<std::unique_ptr<CheckpointReader>> opened =
      CheckpointReader::Open(bytes,
                             {kWholeVocabularyFormat, kTextCheckpointFormat});
  if (!opened.ok()) return opened.status();
  CheckpointReader& r = **opened;
  if (r.format() == kTextCheckpointFormat &&
      !torch::equal(r.Tensor("vocab_rows"), vocab_rows)) {
    return absl::InvalidArgumentError(
        "checkpoint's token embedding rows are not those of this trial's "
        "data");
  }
  torch::serialize::InputArchive m, a;
  r.Archive("model", m);
  r.Archive("optimizer", a);
  model->load(m);
  make_optimizer().Load(0, names, a);
  st->step = r.Int("step");
  r.Rng("order_rng", &st->order_rng);
  st->order = r.Ids("order");
  const std::vector<double> sums = r.Doubles("sums");
  st->sum_loss = sums.at(0);
  st->sum_correct = sums.at(1);
  st->seen = r.Int("seen");
  if (st->step < 0 || st->step > total)
    return absl::InvalidArgumentError(
        "checkpoint does not belong to this trial's options");
  return absl::OkStatus();
}

// A trial's data, tokenized, with the ids renumbered into the token
// embedding's rows.
struct PreparedText {
  Splits splits;
  EncodedText train, validation, test;
  // The token embedding keeps the rows of the tokens the three splits hold
  // (about half of bert-base-uncased's 30,522 on HateXplain or SVA): the
  // same training, with the per-step passes over the embedding, its
  // gradient and its optimizer state cut to those rows. A checkpoint of
  // format 2 (the whole vocabulary) resumes with the whole vocabulary.
  torch::Tensor vocab_rows;
  int64_t pad_id = 0;  // renumbered
  int64_t vocab_size = 0;
  std::string vocab_sha256;
};

absl::StatusOr<PreparedText> PrepareText(const TrialOptions& o,
                                         const std::string& resume_from) {
  const TextTaskOptions& t = o.TaskOptions<TextTaskOptions>();
  absl::StatusOr<std::unique_ptr<WordPieceTokenizer>> tokenizer =
      WordPieceTokenizer::Load(t.tokenizer);
  if (!tokenizer.ok()) return tokenizer.status();
  const WordPieceTokenizer& tok = **tokenizer;
  absl::StatusOr<Splits> splits = LoadSplits(t, o.eval.num_examples);
  if (!splits.ok()) return splits.status();
  PreparedText p;
  p.splits = *std::move(splits);
  const int64_t len = t.model.max_len;
  p.train = EncodeExamples(tok, p.splits.train.examples, len);
  p.validation = EncodeExamples(tok, p.splits.validation, len);
  p.test = EncodeExamples(tok, p.splits.test, len);
  p.vocab_size = tok.vocab_size();
  p.vocab_sha256 = tok.vocab_sha256();

  int64_t resume_format = kTextCheckpointFormat;
  if (!resume_from.empty()) {
    absl::Status read = CatchTorchErrors(
        [&] {
          absl::StatusOr<std::unique_ptr<CheckpointReader>> r =
              CheckpointReader::Open(
                  resume_from, {kWholeVocabularyFormat, kTextCheckpointFormat});
          if (!r.ok()) return r.status();
          resume_format = (*r)->format();
          return absl::OkStatus();
        },
        "checkpoint does not parse");
    if (!read.ok()) return read;
  }
  p.vocab_rows = resume_format == kWholeVocabularyFormat
                     ? torch::arange(tok.vocab_size(), torch::kInt64)
                     : HeldTokens({&p.train, &p.validation, &p.test},
                                  tok.pad_id(), tok.vocab_size());
  torch::Tensor renumber = torch::full({tok.vocab_size()}, -1, torch::kInt64);
  renumber.index_put_({p.vocab_rows},
                      torch::arange(p.vocab_rows.size(0), torch::kInt64));
  for (EncodedText* e : {&p.train, &p.validation, &p.test})
    e->ids = renumber.index_select(0, e->ids.reshape(-1)).view_as(e->ids);
  p.pad_id = renumber[tok.pad_id()].item<int64_t>();
  return p;
}

// The parameters a trial trains, by group (QK, OV, and MLP unless it is
// frozen), and their optimizer: one fused pass a step (StackedOptimizer,
// one trial: torch.optim's SGD and AdamW with per-group weight decay), not
// torch::optim's dozen passes over the token embedding.
struct Trainable {
  std::vector<torch::Tensor> params;
  std::vector<std::string> names;
  std::vector<ParamGroup> groups;
  std::unique_ptr<StackedOptimizer> optimizer;

  // (Re)makes the optimizer over the parameters' current storage: again
  // after a checkpoint's weights are loaded into them.
  StackedOptimizer& MakeOptimizer(const TrialOptions& o) {
    std::vector<torch::Tensor> stacked;  // [1, ...] views of `params`
    for (const torch::Tensor& p : params) stacked.push_back(p.unsqueeze(0));
    optimizer =
        std::make_unique<StackedOptimizer>(o.optimizer, stacked, groups);
    optimizer->set_weight_decay(o.TaskOptions<TextTaskOptions>().weight_decay);
    return *optimizer;
  }
};

Trainable TrainableOf(TextModel& model, const TrialOptions& o) {
  const TextTaskOptions& t = o.TaskOptions<TextTaskOptions>();
  Trainable tr;
  auto named = model->named_parameters();
  for (const auto& [name, group] :
       model->ParamGroups(t.embed_group, t.pos_group)) {
    torch::Tensor p = named[name];
    if (group == ParamGroup::kMlp && t.mlp_lr_multiplier == 0) {
      p.set_requires_grad(false);
      continue;
    }
    tr.params.push_back(p);
    tr.names.push_back(name);
    tr.groups.push_back(group);
  }
  tr.MakeOptimizer(o);
  return tr;
}

// One step on the examples `idx` of the training split: the batch's mean
// loss and the examples it classified right.
std::pair<double, double> TrainStep(TextModel& model, const EncodedText& train,
                                    const torch::Tensor& idx, int64_t pad_id,
                                    const LearningRates& lr,
                                    const TextTaskOptions& t,
                                    const torch::Device& device,
                                    Trainable& tr) {
  static const std::vector<bool> kLive = {true};
  const torch::Tensor ids = train.ids.index_select(0, idx).to(device);
  const torch::Tensor labels = train.labels.index_select(0, idx).to(device);
  GroupRates rates;
  rates[static_cast<int>(ParamGroup::kQk)] = {lr.qk};
  rates[static_cast<int>(ParamGroup::kOv)] = {lr.ov};
  rates[static_cast<int>(ParamGroup::kMlp)] = {lr.ov * t.mlp_lr_multiplier};
  for (torch::Tensor& p : tr.params) {
    if (p.grad().defined()) p.mutable_grad().zero_();
  }
  const torch::Tensor logits = model->Logits(ids, pad_id);
  const torch::Tensor loss = torch::cross_entropy_loss(logits, labels);
  loss.backward();
  if (t.grad_clip > 0)
    torch::nn::utils::clip_grad_norm_(tr.params, t.grad_clip);
  std::vector<torch::Tensor> grads;
  for (const torch::Tensor& p : tr.params) {
    grads.push_back(p.grad().defined() ? p.grad().unsqueeze(0)
                                       : torch::Tensor());
  }
  tr.optimizer->Step(rates, kLive, grads);
  return {loss.item<double>(),
          logits.argmax(1).eq(labels).sum().item<double>()};
}

// The evaluation after training (both splits with every metric, the
// training accuracy as the authors report it) and the trial's counts.
void AddFinalResults(const TrialOptions& o, TextModel& model,
                     const PreparedText& p, int64_t steps, int64_t per_epoch,
                     const torch::Device& device, TrialOutcome* outcome) {
  const TextTaskOptions& t = o.TaskOptions<TextTaskOptions>();
  TextEvalOptions eo;
  eo.tau_attention = o.eval.tau_attention;
  eo.tau_probability = o.eval.tau_probability;
  eo.dtap_attention_edges = o.eval.dtap_attention_edges;
  eo.dtap_probability_edges = o.eval.dtap_probability_edges;
  eo.rollout_alpha = t.rollout_alpha;
  eo.k_percent = t.k_percent;
  const std::string x_label = "rationale attention (layer 0, head 0)";
  for (auto [name, data] :
       {std::pair{"validation", &p.validation}, std::pair{"test", &p.test}}) {
    const int64_t examples = data->ids.size(0);
    if (examples == 0) continue;
    AddEvaluation(name, EvaluateText(model, *data, p.pad_id, eo), x_label,
                  outcome);
    outcome->results[absl::StrCat(name, "_examples")] =
        static_cast<double>(examples);
  }
  // Training accuracy on (at most evaluation.num_examples of) the training
  // set.
  const int64_t n = p.train.ids.size(0);
  {
    torch::NoGradGuard no_grad;
    model->eval();
    const int64_t m = std::min<int64_t>(n, o.eval.num_examples);
    double correct = 0;
    for (int64_t s = 0; s < m; s += 256) {
      const int64_t b = std::min<int64_t>(256, m - s);
      const torch::Tensor logits =
          model->Logits(p.train.ids.narrow(0, s, b).to(device), p.pad_id);
      correct += logits.argmax(1)
                     .eq(p.train.labels.narrow(0, s, b).to(device))
                     .sum()
                     .item<double>();
    }
    outcome->results["train_accuracy"] = correct / m;
  }
  outcome->results["steps"] = static_cast<double>(steps);
  outcome->results["epochs"] = static_cast<double>(steps) / per_epoch;
  outcome->results["train_examples"] = static_cast<double>(n);
  outcome->results["vocab_rows"] = static_cast<double>(p.vocab_rows.size(0));
  outcome->results["train_truncated_fraction"] =
      static_cast<double>(p.train.truncated) / std::max<int64_t>(n, 1);
  outcome->results["dropped_examples"] =
      static_cast<double>(p.splits.train.dropped);
  outcome->results["converged"] = 0;
}

// `o` with the rates scheduled over the `total` steps this data gives (the
// cosine schedule's warm-up a fraction of them).
TrialOptions ScheduleOver(const TrialOptions& o, int64_t total) {
  TrialOptions schedule = o;
  schedule.max_steps = total;
  if (o.optimizer.schedule == ScheduleKind::kCosineWarmup) {
    schedule.optimizer.warmup_steps = static_cast<int64_t>(
        std::llround(o.TaskOptions<TextTaskOptions>().warmup_fraction *
                     static_cast<double>(total)));
  }
  return schedule;
}

// The evaluation during training: without the faithfulness forwards
// (docs/metrics.md), in forwards of a training batch's size: larger ones
// (the final evaluation's 256) between training steps leave glibc's
// allocator trimming and faulting pages in at every later step (measured:
// twice the trial's time at 256, nothing at 32).
TextEvalOptions CurveEvalOptions(const TrialOptions& o) {
  TextEvalOptions e;
  e.tau_attention = o.eval.tau_attention;
  e.rollout_alpha = o.TaskOptions<TextTaskOptions>().rollout_alpha;
  e.faithfulness = false;
  e.batch = o.batch_size;
  return e;
}

// The token embedding's gradient lives in a dense buffer zeroed each step,
// into which backward adds the batch's rows (sparse) alone.
void UseSparseEmbeddingGradient(TextModel& model, Trainable& tr) {
  for (size_t i = 0; i < tr.params.size(); ++i) {
    if (tr.names[i] != "w_e") continue;
    model->set_sparse_embedding_gradient(true);
    tr.params[i].mutable_grad() = torch::zeros_like(tr.params[i]);
  }
}

// The training curves' points at the step after st->step (means since the
// last report, whose sums this resets).
std::vector<MetricPoint> TakeTrainingPoints(const LearningRates& lr,
                                            int64_t per_epoch, LoopState* st) {
  const int64_t at = st->step + 1;
  std::vector<MetricPoint> points = {
      {at, "train_loss", st->sum_loss / st->seen},
      {at, "train_accuracy", st->sum_correct / st->seen},
      {at, "lr_qk", lr.qk},
      {at, "lr_ov", lr.ov},
      {at, "epoch", static_cast<double>(at) / per_epoch},
  };
  st->sum_loss = st->sum_correct = 0;
  st->seen = 0;
  return points;
}

// True when the observer asks the trial to stop before step st.step: the
// outcome is then stopped there, with a checkpoint when it is handed back.
bool StopAsked(TrainingObserver* observer, TextModel& model, Trainable& tr,
               const PreparedText& p, const LoopState& st,
               TrialOutcome* outcome) {
  if (observer == nullptr) return false;
  const StopRequest stop = observer->PollStop();
  if (stop == StopRequest::kNone) return false;
  outcome->end = TrialEnd::kStopped;
  outcome->steps = st.step;
  if (stop == StopRequest::kHandBack) {
    outcome->checkpoint =
        SaveCheckpoint(model, *tr.optimizer, tr.names, p.vocab_rows, st);
  }
  return true;
}

// Step st->step's batch of the n training examples: each epoch walks a
// fresh permutation from the order stream, `batch` at a time.
torch::Tensor NextBatch(int64_t n, int64_t batch, int64_t per_epoch,
                        LoopState* st) {
  const int64_t in_epoch = st->step % per_epoch;
  if (in_epoch == 0) st->order = Permutation(n, st->order_rng);
  const int64_t begin = in_epoch * batch;
  const int64_t b = std::min(batch, n - begin);
  return torch::tensor(std::vector<int64_t>(st->order.begin() + begin,
                                            st->order.begin() + begin + b),
                       torch::kInt64);
}

// Whether the curves during training are due after step st.step (every
// eval_every steps, and after the last).
bool EvaluationDue(const TrialOptions& o, int64_t after, bool last) {
  return o.eval.eval_every > 0 && (after % o.eval.eval_every == 0 || last);
}

absl::StatusOr<TrialOutcome> TrainTextTrial(const TrialOptions& o,
                                            TrainingObserver* observer,
                                            const torch::Device& device,
                                            const std::string& resume_from) {
  const TextTaskOptions& t = o.TaskOptions<TextTaskOptions>();
  absl::StatusOr<PreparedText> prepared = PrepareText(o, resume_from);
  if (!prepared.ok()) return prepared.status();
  const PreparedText& p = *prepared;
  const int64_t n = p.train.ids.size(0);

  TextModelOptions mo = t.model;
  mo.vocab_size = p.vocab_size;
  mo.num_classes = static_cast<int64_t>(p.splits.train.label_names.size());
  TextModel model(mo, o.parameterization, MixSeed(o.seed, kInitStream));
  model->KeepVocabularyRows(p.vocab_rows);
  model->to(device);
  Trainable tr = TrainableOf(model, o);

  const int64_t batch = o.batch_size;
  const int64_t per_epoch = (n + batch - 1) / batch;
  const int64_t total = std::min<int64_t>(t.epochs * per_epoch, o.max_steps);
  const TrialOptions schedule = ScheduleOver(o, total);

  TrialOutcome outcome;
  outcome.input_sha256 = p.splits.sha256;
  outcome.input_sha256["text.vocab_path"] = p.vocab_sha256;
  LoopState st;
  st.order_rng.seed(MixSeed(o.seed, kOrderStream));
  if (!resume_from.empty()) {
    absl::Status loaded = CatchTorchErrors(
        [&] {
          return LoadCheckpoint(
              resume_from, model,
              [&]() -> StackedOptimizer& { return tr.MakeOptimizer(o); },
              tr.names, p.vocab_rows, total, &st);
        },
        "checkpoint does not parse");
    if (!loaded.ok()) return loaded;
  }
  // Evaluation during training: the first eval_examples validation
  // examples.
  const EncodedText eval_subset =
      Head(p.validation,
           std::min<int64_t>(o.eval.eval_examples, p.validation.ids.size(0)));
  const TextEvalOptions curve_eval = CurveEvalOptions(o);
  UseSparseEmbeddingGradient(model, tr);
  model->train();
  for (; st.step < total; ++st.step) {
    if (StopAsked(observer, model, tr, p, st, &outcome)) return outcome;
    const torch::Tensor idx = NextBatch(n, batch, per_epoch, &st);
    const int64_t b = idx.size(0);
    const LearningRates lr = ScheduledLearningRates(schedule, st.step);
    const auto [l, correct] =
        TrainStep(model, p.train, idx, p.pad_id, lr, t, device, tr);
    st.sum_loss += l * b;
    st.sum_correct += correct;
    st.seen += b;
    if (!std::isfinite(l)) {
      outcome.end = TrialEnd::kDiverged;
      ++st.step;
      break;
    }
    const int64_t after = st.step + 1;
    const bool last = after == total;
    const bool report = after % o.report_every == 0 || last;
    const bool evaluate = EvaluationDue(o, after, last);
    if (!report && !evaluate) continue;
    std::vector<MetricPoint> points;
    if (report) points = TakeTrainingPoints(lr, per_epoch, &st);
    if (evaluate && eval_subset.ids.size(0) > 0) {
      AddCurvePoints(after,
                     EvaluateText(model, eval_subset, p.pad_id, curve_eval),
                     &points);
    }
    if (observer != nullptr && !observer->OnReport(after, points)) {
      outcome.end = TrialEnd::kStopped;
      outcome.steps = after;
      return outcome;
    }
  }
  if (outcome.end != TrialEnd::kDiverged) outcome.end = TrialEnd::kMaxSteps;
  outcome.steps = st.step;
  AddFinalResults(o, model, p, st.step, per_epoch, device, &outcome);
  return outcome;
}

}  // namespace

absl::StatusOr<TrialOutcome> TextTrainer::TrainOne(
    const TrialOptions& options, TrainingObserver* observer,
    const torch::Device& device, const std::string& resume_from) const {
  return TrainTextTrial(options, observer, device, resume_from);
}

TrainingTask TextTrainingTask() {
  static const TextTrainer trainer;
  return {"text", {"text", "hatexplain", "sva"}, &trainer, &CheckLrRatio};
}

namespace {

const TrainingTaskRegistration kTextTrainer(TextTrainingTask());

}  // namespace

}  // namespace qkov::training::text
