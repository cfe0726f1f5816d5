#include "worker/tasks/squad/squad_task_trainer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "worker/tasks/squad/answer_lm.h"
#include "worker/tasks/squad/glove.h"
#include "worker/tasks/squad/squad_options.h"
#include "worker/tasks/squad/squad_trainer.h"
#include "worker/training/seeding.h"

namespace qkov::training::squad {
namespace {

// The decoder's initialisation stream of the trial seed (MixSeed), as in
// the other tasks; the question order takes the seed itself.
constexpr uint64_t kInitStream = 2;

struct Examples {
  std::vector<SquadExample> examples;
  int64_t questions = 0;  // read from the file (in the article range)
  int64_t skipped = 0;    // whose prompt does not fit, left out
  int64_t unanswerable = 0;
  std::string sha256;
};

absl::StatusOr<Examples> BuildExamples(const SquadSource& source,
                                       const text::Gpt2BpeTokenizer& bpe,
                                       const PromptOptions& prompt,
                                       int64_t cap) {
  absl::StatusOr<SquadData> data = LoadSquad(source);
  if (!data.ok()) return data.status();
  Examples out;
  out.questions = static_cast<int64_t>(data->questions.size());
  out.unanswerable = data->unanswerable;
  out.sha256 = data->sha256;
  for (const SquadQuestion& q : data->questions) {
    if (cap > 0 && static_cast<int64_t>(out.examples.size()) >= cap) break;
    absl::StatusOr<SquadExample> ex = BuildExample(q, bpe, prompt);
    if (absl::IsNotFound(ex.status())) {
      ++out.skipped;
      continue;
    }
    if (!ex.ok()) return ex.status();
    out.examples.push_back(*std::move(ex));
  }
  if (out.examples.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source.path, ": no usable question in articles [",
                     source.article_begin, ", ",
                     source.article_end == 0 ? std::string("end")
                                             : absl::StrCat(source.article_end),
                     ") (", out.questions, " read, ", out.skipped,
                     " too long for the prompt)"));
  }
  return out;
}

// A trial's question sets, as prompts the tokenizer encoded.
struct QuestionSets {
  Examples train;
  Examples eval;        // the final evaluation's, at most eval.num_examples
  Examples validation;  // checkpoint selection's; empty when not selecting
  Examples curves;      // the evaluation during training's; empty when off
};

absl::StatusOr<QuestionSets> LoadQuestionSets(
    const TrialOptions& o, const text::Gpt2BpeTokenizer& bpe) {
  const SquadTaskOptions& q = o.TaskOptions<SquadTaskOptions>();
  QuestionSets sets;
  absl::StatusOr<Examples> train = BuildExamples(q.train, bpe, q.prompt, 0);
  if (!train.ok()) return train.status();
  sets.train = *std::move(train);
  absl::StatusOr<Examples> eval =
      BuildExamples(q.eval, bpe, q.prompt, o.eval.num_examples);
  if (!eval.ok()) return eval.status();
  sets.eval = *std::move(eval);
  if (q.validation_questions > 0) {
    absl::StatusOr<Examples> validation =
        BuildExamples(q.validation, bpe, q.prompt, q.validation_questions);
    if (!validation.ok()) return validation.status();
    sets.validation = *std::move(validation);
  }
  // Evaluation during training (docs/metrics.md, "Curves during training"):
  // the first eval_examples questions of the validation articles (of the
  // evaluation articles when the sweep names none).
  if (o.eval.eval_every > 0) {
    absl::StatusOr<Examples> curves =
        BuildExamples(q.validation_questions > 0 ? q.validation : q.eval, bpe,
                      q.prompt, o.eval.eval_examples);
    if (!curves.ok()) return curves.status();
    sets.curves = *std::move(curves);
  }
  return sets;
}

// The decoder as the sweep set it (SquadTaskOptions::model), over the
// tokenizer's vocabulary and its n_ctx positions.
text::TextModelOptions DecoderOptions(const SquadTaskOptions& q,
                                      const text::Gpt2BpeTokenizer& bpe) {
  text::TextModelOptions mo = q.model;
  mo.vocab_size = bpe.vocab_size();
  mo.max_len = mo.shape.n_ctx;
  return mo;
}

// The checksums of every input file, and GloVe's rows copied into the token
// embedding when the sweep names a GloVe file.
absl::Status RecordInputs(const TrialOptions& o, const QuestionSets& sets,
                          const text::Gpt2BpeTokenizer& bpe,
                          text::TextModel& model, TrialOutcome* outcome) {
  const SquadTaskOptions& q = o.TaskOptions<SquadTaskOptions>();
  outcome->input_sha256["squad.train"] = sets.train.sha256;
  outcome->input_sha256["squad.eval"] = sets.eval.sha256;
  if (q.validation_questions > 0)
    outcome->input_sha256["squad.validation"] = sets.validation.sha256;
  outcome->input_sha256["squad.encoder_path"] = bpe.encoder_sha256();
  outcome->input_sha256["squad.merges_path"] = bpe.merges_sha256();
  if (q.glove_path.empty()) return absl::OkStatus();
  absl::StatusOr<GloveMapping> glove = InitEmbeddingFromGlove(
      q.glove_path, bpe, model->named_parameters()["w_e"]);
  if (!glove.ok()) return glove.status();
  outcome->input_sha256["squad.glove_path"] = glove->sha256;
  outcome->results["glove_matched"] = static_cast<double>(glove->matched);
  return absl::OkStatus();
}

SquadTrainOptions TrainOptions(const TrialOptions& o) {
  const SquadTaskOptions& q = o.TaskOptions<SquadTaskOptions>();
  SquadTrainOptions so;
  so.seed = o.seed;
  so.base_lr = o.eta_ov;
  so.lr_ratio = o.lr_ratio;
  so.embed_lr_multiplier = q.embed_lr_multiplier;
  so.weight_decay = o.optimizer.weight_decay;
  so.adam_beta1 = o.optimizer.adam_beta1;
  so.adam_beta2 = o.optimizer.adam_beta2;
  so.adam_eps = o.optimizer.adam_eps;
  so.label_smoothing = q.label_smoothing;
  so.batch = o.batch_size;
  so.accumulation = q.accumulation;
  so.grad_clip = q.grad_clip;
  so.epochs = q.epochs;
  so.max_steps = o.max_steps;
  so.warmup_steps = o.optimizer.warmup_steps;
  so.one_cycle = o.optimizer.schedule == ScheduleKind::kOneCycle;
  return so;
}

// The answer evaluation's settings; `final` adds the heatmap edges and the
// faithfulness forwards, which the curves during training leave out.
AnswerAttentionOptions AnswerOptions(const TrialOptions& o, bool final) {
  AnswerAttentionOptions ao;
  ao.rollout_alpha = o.TaskOptions<SquadTaskOptions>().rollout_alpha;
  ao.max_new_tokens =
      static_cast<int32_t>(o.TaskOptions<SquadTaskOptions>().max_new_tokens);
  ao.tau_attention = o.eval.tau_attention;
  ao.tau_probability = o.eval.tau_probability;
  if (final) {
    ao.dtap_attention_edges = o.eval.dtap_attention_edges;
    ao.dtap_probability_edges = o.eval.dtap_probability_edges;
    ao.k_percent = o.TaskOptions<SquadTaskOptions>().k_percent;
  } else {
    ao.k_percent = 0;  // no faithfulness forwards
  }
  return ao;
}

// The loop's hooks: the reports to `observer` (with the curves at each
// report step that is a multiple of eval_every, and at the last), its stop
// requests, and the validation F1 of checkpoint selection.
SquadTrainHooks TrainHooks(const TrialOptions& o, const SquadTrainOptions& so,
                           const QuestionSets& sets,
                           const text::Gpt2BpeTokenizer& bpe,
                           text::TextModel& model, TrainingObserver* observer,
                           const std::string& resume_from) {
  SquadTrainHooks hooks;
  hooks.report_every = o.report_every;
  hooks.resume_from = resume_from;
  if (observer != nullptr) {
    const int64_t last_step =
        SquadTotalSteps(so, static_cast<int64_t>(sets.train.examples.size()));
    hooks.poll_stop = [observer] { return observer->PollStop(); };
    hooks.report = [&o, &sets, &bpe, &model, observer,
                    last_step](const SquadTrainReport& r) {
      std::vector<MetricPoint> points = {
          {r.step, "train_loss", r.loss},
          {r.step, "lr_qk", r.lr_qk},
          {r.step, "lr_ov", r.lr_base},
          {r.step, "epoch", r.epoch},
      };
      if (o.eval.eval_every > 0 &&
          (r.step % o.eval.eval_every == 0 || r.step >= last_step)) {
        const AnswerEvaluation ev = EvaluateAnswers(
            model, sets.curves.examples, bpe, AnswerOptions(o, false));
        for (const char* name :
             {"f1", "em", "answer_mass_rollout", "answer_mass_layer_mean",
              "answer_mass_layer_max", "ac", "gold_probability"}) {
          auto it = ev.scalars.find(name);
          if (it != ev.scalars.end())
            points.push_back({r.step, absl::StrCat("val_", name), it->second});
        }
      }
      return observer->OnReport(r.step, points);
    };
  }
  if (o.TaskOptions<SquadTaskOptions>().validation_questions > 0) {
    hooks.validate = [&o, &sets, &bpe, &model, observer](int64_t step) {
      const double f1 =
          GreedyAnswerF1(model, sets.validation.examples, bpe,
                         static_cast<int32_t>(
                             o.TaskOptions<SquadTaskOptions>().max_new_tokens));
      if (observer != nullptr) {
        // A stop it asks for is taken at the next report.
        observer->OnReport(step, {{step, "selection_f1", f1}});
      }
      return f1;
    };
  }
  return hooks;
}

// The evaluation after training (unless it diverged) and the run's counts.
void AddFinalResults(const TrialOptions& o, const SquadTrainOptions& so,
                     const QuestionSets& sets,
                     const text::Gpt2BpeTokenizer& bpe, text::TextModel& model,
                     const SquadTrainRun& run, TrialOutcome* outcome) {
  const SquadTaskOptions& q = o.TaskOptions<SquadTaskOptions>();
  if (!run.diverged) {
    AnswerEvaluation ev =
        EvaluateAnswers(model, sets.eval.examples, bpe, AnswerOptions(o, true));
    for (const auto& [name, value] : ev.scalars)
      outcome->results[absl::StrCat("eval_", name)] = value;
    outcome->heatmaps.push_back(std::move(ev.dtap));
    if (q.train_f1_questions > 0) {
      const size_t n = std::min(sets.train.examples.size(),
                                static_cast<size_t>(q.train_f1_questions));
      outcome->results["train_f1"] = GreedyAnswerF1(
          model, absl::MakeConstSpan(sets.train.examples).first(n), bpe,
          static_cast<int32_t>(q.max_new_tokens));
    }
  }
  const double micro_per_epoch = static_cast<double>(
      (sets.train.examples.size() + so.batch - 1) / so.batch);
  auto& results = outcome->results;
  results["steps"] = static_cast<double>(run.steps);
  results["selected_step"] = static_cast<double>(run.selected_step);
  if (q.validation_questions > 0 && run.selected_score >= 0)
    results["selected_val_f1"] = run.selected_score;
  results["epochs"] =
      static_cast<double>(run.steps * so.accumulation) / micro_per_epoch;
  results["train_questions"] = static_cast<double>(sets.train.examples.size());
  results["train_skipped"] = static_cast<double>(sets.train.skipped);
  results["train_unanswerable"] = static_cast<double>(sets.train.unanswerable);
  results["eval_skipped"] = static_cast<double>(sets.eval.skipped);
  results["converged"] = 0;
}

// One trial: the data, the decoder, training in its loop (stopped runs hand
// back a checkpoint), and the final evaluation.
absl::StatusOr<TrialOutcome> TrainSquadTrial(const TrialOptions& o,
                                             TrainingObserver* observer,
                                             const torch::Device& device,
                                             const std::string& resume_from) {
  absl::StatusOr<std::unique_ptr<text::Gpt2BpeTokenizer>> loaded =
      text::Gpt2BpeTokenizer::Load(o.TaskOptions<SquadTaskOptions>().tokenizer);
  if (!loaded.ok()) return loaded.status();
  const text::Gpt2BpeTokenizer& bpe = **loaded;
  absl::StatusOr<QuestionSets> sets = LoadQuestionSets(o, bpe);
  if (!sets.ok()) return sets.status();

  text::TextModel model(DecoderOptions(o.TaskOptions<SquadTaskOptions>(), bpe),
                        o.parameterization, MixSeed(o.seed, kInitStream));
  TrialOutcome outcome;
  if (absl::Status s = RecordInputs(o, *sets, bpe, model, &outcome); !s.ok())
    return s;
  model->to(device);

  const SquadTrainOptions so = TrainOptions(o);
  const SquadTrainHooks hooks =
      TrainHooks(o, so, *sets, bpe, model, observer, resume_from);
  absl::StatusOr<SquadTrainRun> run = TrainSquadModel(
      model, sets->train.examples, bpe.end_of_text_id(), so, hooks);
  if (!run.ok()) return run.status();
  outcome.steps = run->steps;
  if (run->stopped) {
    outcome.end = TrialEnd::kStopped;
    outcome.checkpoint = std::move(run->checkpoint);
    return outcome;
  }
  outcome.end = run->diverged ? TrialEnd::kDiverged : TrialEnd::kMaxSteps;
  AddFinalResults(o, so, *sets, bpe, model, *run, &outcome);
  return outcome;
}

}  // namespace

absl::StatusOr<TrialOutcome> SquadTaskTrainer::TrainOne(
    const TrialOptions& options, TrainingObserver* observer,
    const torch::Device& device, const std::string& resume_from) const {
  return TrainSquadTrial(options, observer, device, resume_from);
}

TrainingTask SquadTrainingTask() {
  static const SquadTaskTrainer trainer;
  return {"squad", {"squad"}, &trainer, &CheckLrRatio};
}

namespace {

const TrainingTaskRegistration kSquadTrainer(SquadTrainingTask());

}  // namespace

}  // namespace qkov::training::squad
