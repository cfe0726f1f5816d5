#include "worker/training/squad/squad_task_trainer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "worker/training/seeding.h"
#include "worker/training/squad/answer_lm.h"
#include "worker/training/squad/glove.h"
#include "worker/training/squad/squad_trainer.h"

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

absl::StatusOr<TrialOutcome> TrainSquadTrial(const TrialOptions& o,
                                             TrainingObserver* observer,
                                             const torch::Device& device,
                                             const std::string& resume_from) {
  const SquadTaskOptions& q = o.squad;
  absl::StatusOr<std::unique_ptr<text::Gpt2BpeTokenizer>> loaded =
      text::Gpt2BpeTokenizer::Load(q.tokenizer);
  if (!loaded.ok()) return loaded.status();
  const text::Gpt2BpeTokenizer& bpe = **loaded;
  absl::StatusOr<Examples> train = BuildExamples(q.train, bpe, q.prompt, 0);
  if (!train.ok()) return train.status();
  absl::StatusOr<Examples> eval =
      BuildExamples(q.eval, bpe, q.prompt, o.eval.num_examples);
  if (!eval.ok()) return eval.status();
  absl::StatusOr<Examples> validation = Examples{};
  if (q.validation_questions > 0) {
    validation =
        BuildExamples(q.validation, bpe, q.prompt, q.validation_questions);
    if (!validation.ok()) return validation.status();
  }

  text::TextModelOptions mo;
  mo.vocab_size = bpe.vocab_size();
  mo.n_ctx = mo.max_len = q.model.n_ctx;
  mo.d_model = q.model.d_model;
  mo.heads = q.model.heads;
  mo.d_head = q.model.d_head;
  mo.d_mlp = q.model.d_mlp;
  mo.layers = q.model.layers;
  mo.residual = mo.layer_norm = mo.causal = mo.lm_head = true;
  mo.padding_mask = mo.gelu_tanh = false;
  mo.init_std = q.model.init_std;
  mo.embed_init_std = q.model.embed_init_std;
  mo.dropout = q.model.dropout;
  text::TextModel model(mo, o.parameterization, MixSeed(o.seed, kInitStream));

  TrialOutcome outcome;
  outcome.input_sha256["squad.train"] = train->sha256;
  outcome.input_sha256["squad.eval"] = eval->sha256;
  if (q.validation_questions > 0)
    outcome.input_sha256["squad.validation"] = validation->sha256;
  outcome.input_sha256["squad.encoder_path"] = bpe.encoder_sha256();
  outcome.input_sha256["squad.merges_path"] = bpe.merges_sha256();
  if (!q.glove_path.empty()) {
    absl::StatusOr<GloveMapping> glove = InitEmbeddingFromGlove(
        q.glove_path, bpe, model->named_parameters()["w_e"]);
    if (!glove.ok()) return glove.status();
    outcome.input_sha256["squad.glove_path"] = glove->sha256;
    outcome.results["glove_matched"] = static_cast<double>(glove->matched);
  }
  model->to(device);

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
  SquadTrainHooks hooks;
  hooks.report_every = o.report_every;
  hooks.resume_from = resume_from;
  bool observer_stopped = false;
  // Evaluation during training (docs/metrics.md, "Curves during training"):
  // greedy answers to the first eval_examples questions of the validation
  // articles (of the evaluation articles when the sweep names none), at
  // each report step that is a multiple of eval_every, and at the last.
  absl::StatusOr<Examples> curve_set = Examples{};
  if (o.eval.eval_every > 0) {
    curve_set =
        BuildExamples(q.validation_questions > 0 ? q.validation : q.eval, bpe,
                      q.prompt, o.eval.eval_examples);
    if (!curve_set.ok()) return curve_set.status();
  }
  AnswerAttentionOptions curve_options;
  curve_options.rollout_alpha = q.rollout_alpha;
  curve_options.max_new_tokens = static_cast<int32_t>(q.max_new_tokens);
  curve_options.tau_attention = o.eval.tau_attention;
  curve_options.tau_probability = o.eval.tau_probability;
  curve_options.k_percent = 0;  // no faithfulness forwards
  const int64_t last_step =
      SquadTotalSteps(so, static_cast<int64_t>(train->examples.size()));
  if (observer != nullptr) {
    hooks.poll_stop = [observer] { return observer->PollStop(); };
    hooks.report = [&](const SquadTrainReport& r) {
      std::vector<MetricPoint> points = {
          {r.step, "train_loss", r.loss},
          {r.step, "lr_qk", r.lr_qk},
          {r.step, "lr_ov", r.lr_base},
          {r.step, "epoch", r.epoch},
      };
      if (o.eval.eval_every > 0 &&
          (r.step % o.eval.eval_every == 0 || r.step >= last_step)) {
        const AnswerEvaluation ev =
            EvaluateAnswers(model, curve_set->examples, bpe, curve_options);
        for (const char* name :
             {"f1", "em", "answer_mass_rollout", "answer_mass_layer_mean",
              "answer_mass_layer_max", "ac", "gold_probability"}) {
          auto it = ev.scalars.find(name);
          if (it != ev.scalars.end())
            points.push_back({r.step, absl::StrCat("val_", name), it->second});
        }
      }
      observer_stopped = !observer->OnReport(r.step, points);
      return !observer_stopped;
    };
  }
  if (q.validation_questions > 0) {
    hooks.validate = [&](int64_t step) {
      const double f1 = GreedyAnswerF1(model, validation->examples, bpe,
                                       static_cast<int32_t>(q.max_new_tokens));
      if (observer != nullptr) {
        // A stop it asks for is taken at the next report.
        observer->OnReport(step, {{step, "selection_f1", f1}});
      }
      return f1;
    };
  }
  absl::StatusOr<SquadTrainRun> run =
      TrainSquadModel(model, train->examples, bpe.end_of_text_id(), so, hooks);
  if (!run.ok()) return run.status();
  outcome.steps = run->steps;
  if (run->stopped) {
    outcome.end = TrialEnd::kStopped;
    outcome.checkpoint = std::move(run->checkpoint);
    return outcome;
  }
  outcome.end = run->diverged ? TrialEnd::kDiverged : TrialEnd::kMaxSteps;

  AnswerAttentionOptions ao;
  ao.rollout_alpha = q.rollout_alpha;
  ao.max_new_tokens = static_cast<int32_t>(q.max_new_tokens);
  ao.tau_attention = o.eval.tau_attention;
  ao.tau_probability = o.eval.tau_probability;
  ao.dtap_attention_edges = o.eval.dtap_attention_edges;
  ao.dtap_probability_edges = o.eval.dtap_probability_edges;
  ao.k_percent = q.k_percent;
  if (!run->diverged) {
    AnswerEvaluation ev = EvaluateAnswers(model, eval->examples, bpe, ao);
    for (const auto& [name, value] : ev.scalars)
      outcome.results[absl::StrCat("eval_", name)] = value;
    outcome.heatmaps.push_back(std::move(ev.dtap));
    if (q.train_f1_questions > 0) {
      const size_t n = std::min(train->examples.size(),
                                static_cast<size_t>(q.train_f1_questions));
      outcome.results["train_f1"] =
          GreedyAnswerF1(model, absl::MakeConstSpan(train->examples).first(n),
                         bpe, static_cast<int32_t>(q.max_new_tokens));
    }
  }
  const double micro_per_epoch =
      static_cast<double>((train->examples.size() + so.batch - 1) / so.batch);
  outcome.results["steps"] = static_cast<double>(run->steps);
  outcome.results["selected_step"] = static_cast<double>(run->selected_step);
  if (q.validation_questions > 0 && run->selected_score >= 0)
    outcome.results["selected_val_f1"] = run->selected_score;
  outcome.results["epochs"] =
      static_cast<double>(run->steps * so.accumulation) / micro_per_epoch;
  outcome.results["train_questions"] =
      static_cast<double>(train->examples.size());
  outcome.results["train_skipped"] = static_cast<double>(train->skipped);
  outcome.results["train_unanswerable"] =
      static_cast<double>(train->unanswerable);
  outcome.results["eval_skipped"] = static_cast<double>(eval->skipped);
  outcome.results["converged"] = 0;
  return outcome;
}

}  // namespace

absl::StatusOr<TrialOutcome> SquadTaskTrainer::TrainOne(
    const TrialOptions& options, TrainingObserver* observer,
    const torch::Device& device, const std::string& resume_from) const {
  return TrainSquadTrial(options, observer, device, resume_from);
}

}  // namespace qkov::training::squad
