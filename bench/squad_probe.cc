// Trains the SQuAD decoder (docs/squad.md) on the shipped dev set at two
// QK/OV ratios and prints, per arm, the training loss as it goes and then
// F1, EM and the answer-span attention of greedy answers: the experiment
// for finding the smallest budget at which the paper's direction shows.
// Training questions come from articles [0, --train_articles), evaluation
// questions from the rest. It asserts nothing; docs/squad.md records runs.
//
//   squad_probe --data=../shared/data --steps=800 --lr=3e-3 --ratio=20
#include <cstdio>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "worker/tasks/squad/glove.h"
#include "worker/tasks/squad/squad_trainer.h"
#include "worker/training/cpu_runtime.h"

ABSL_FLAG(std::string, data, "../shared/data", "the shared data folder");
ABSL_FLAG(int32_t, train_articles, 40,
          "articles [0, N) train, the rest evaluate");
ABSL_FLAG(int64_t, train_questions, 0, "> 0: the first N training questions");
ABSL_FLAG(int64_t, eval_questions, 100, "evaluation questions");
ABSL_FLAG(int64_t, steps, 800, "optimizer steps per arm");
ABSL_FLAG(int64_t, batch, 16, "questions per step");
ABSL_FLAG(double, lr, 1e-3, "base learning rate (AdamW)");
ABSL_FLAG(double, ratio, 20, "the faster arm's QK/OV ratio (the other: 1)");
ABSL_FLAG(bool, baseline, true, "also train the ratio-1 arm (first)");
ABSL_FLAG(bool, one_cycle, false,
          "OneCycleLR's schedule (else warm-up over a tenth, then cosine)");
ABSL_FLAG(int32_t, crop_chars, 200, "context kept either side of the answer");
ABSL_FLAG(int64_t, d_model, 64, "width (4 heads of d_model/4)");
ABSL_FLAG(int64_t, layers, 2, "decoder layers");
ABSL_FLAG(std::string, glove, "", "a GloVe file of d_model dimensions");
ABSL_FLAG(std::string, parameterization, "FAFO", "FAFO, FACO, CAFO or CACO");
ABSL_FLAG(int, threads, 2, "torch intra-op threads");
ABSL_FLAG(bool, flush_denormals, true,
          "flush subnormal floats to zero, as qkov-worker does by default");

namespace qkov::training::squad {
namespace {

std::vector<SquadExample> Examples(const text::Gpt2BpeTokenizer& bpe,
                                   const std::string& path, int32_t begin,
                                   int32_t end, int64_t max) {
  SquadSource s;
  s.path = path;
  s.article_begin = begin;
  s.article_end = end;
  s.max_questions = max;
  absl::StatusOr<SquadData> d = LoadSquad(s);
  std::vector<SquadExample> out;
  if (!d.ok()) {
    std::fprintf(stderr, "squad_probe: %s\n", d.status().ToString().c_str());
    return out;
  }
  for (const SquadQuestion& q : d->questions) {
    PromptOptions po;
    po.crop_chars = absl::GetFlag(FLAGS_crop_chars);
    absl::StatusOr<SquadExample> ex = BuildExample(q, bpe, po);
    if (ex.ok()) out.push_back(*std::move(ex));
  }
  return out;
}

int Main() {
  SetTrainingThreads(absl::GetFlag(FLAGS_threads));
  SetFlushDenormal(absl::GetFlag(FLAGS_flush_denormals));
  const std::string data = absl::GetFlag(FLAGS_data);
  text::Gpt2BpeOptions bo;
  bo.encoder_path = data + "/tokenizers/gpt2/encoder.json";
  bo.merges_path = data + "/tokenizers/gpt2/vocab.bpe";
  auto bpe = text::Gpt2BpeTokenizer::Load(bo);
  if (!bpe.ok()) {
    std::fprintf(stderr, "squad_probe: %s\n", bpe.status().ToString().c_str());
    return 1;
  }
  const std::string dev = data + "/squad/dev-v1.1-all.json";
  const int32_t split = absl::GetFlag(FLAGS_train_articles);
  const std::vector<SquadExample> train =
      Examples(**bpe, dev, 0, split, absl::GetFlag(FLAGS_train_questions));
  const std::vector<SquadExample> eval =
      Examples(**bpe, dev, split, 0, absl::GetFlag(FLAGS_eval_questions));
  if (train.empty() || eval.empty()) return 1;
  absl::StatusOr<Parameterization> p =
      ParseParameterization(absl::GetFlag(FLAGS_parameterization));
  if (!p.ok()) {
    std::fprintf(stderr, "squad_probe: %s\n", p.status().ToString().c_str());
    return 1;
  }
  text::TextModelOptions mo;
  mo.vocab_size = (*bpe)->vocab_size();
  mo.shape.n_ctx = mo.max_len = 256;
  mo.shape.d_model = absl::GetFlag(FLAGS_d_model);
  mo.shape.heads = 4;
  mo.shape.d_head = mo.shape.d_model / 4;
  mo.shape.d_mlp = 4 * mo.shape.d_model;
  mo.shape.layers = absl::GetFlag(FLAGS_layers);
  mo.layer_norm = mo.causal = mo.lm_head = true;
  mo.padding_mask = mo.gelu_tanh = false;
  mo.init_std = 0.02;
  mo.embed_init_std = 0.1;
  std::printf("%zu training questions, %zu evaluation questions\n",
              train.size(), eval.size());
  std::vector<double> ratios = {absl::GetFlag(FLAGS_ratio)};
  if (absl::GetFlag(FLAGS_baseline)) ratios.insert(ratios.begin(), 1.0);
  for (double ratio : ratios) {
    text::TextModel model(mo, *p, 1234);
    if (!absl::GetFlag(FLAGS_glove).empty()) {
      auto m = InitEmbeddingFromGlove(absl::GetFlag(FLAGS_glove), **bpe,
                                      model->named_parameters()["w_e"]);
      if (!m.ok()) {
        std::fprintf(stderr, "squad_probe: %s\n",
                     m.status().ToString().c_str());
        return 1;
      }
      std::printf("GloVe: %lld of %lld tokens matched\n",
                  static_cast<long long>(m->matched),
                  static_cast<long long>((*bpe)->vocab_size()));
    }
    SquadTrainOptions o;
    o.base_lr = absl::GetFlag(FLAGS_lr);
    o.lr_ratio = ratio;
    o.batch = absl::GetFlag(FLAGS_batch);
    o.accumulation = 1;
    o.epochs = 1000;
    o.max_steps = absl::GetFlag(FLAGS_steps);
    o.warmup_steps = o.max_steps / 10;
    o.one_cycle = absl::GetFlag(FLAGS_one_cycle);
    SquadTrainHooks hooks;
    hooks.report_every = 100;
    hooks.report = [&](const SquadTrainReport& r) {
      std::printf("ratio %g step %lld loss %.4f\n", ratio,
                  static_cast<long long>(r.step), r.loss);
      std::fflush(stdout);
      return true;
    };
    auto steps =
        TrainSquadModel(model, train, (*bpe)->end_of_text_id(), o, hooks);
    if (!steps.ok()) {
      std::fprintf(stderr, "squad_probe: %s\n",
                   steps.status().ToString().c_str());
      return 1;
    }
    const AnswerEvaluation ev =
        EvaluateAnswers(model, eval, **bpe, AnswerAttentionOptions());
    const auto& s = ev.scalars;
    std::printf(
        "ratio %g: f1 %.3f em %.3f answer_mass_rollout %.4f layer_mean %.4f "
        "layer_max %.4f ac %.3f acmc %.3f gold_probability %.4f\n",
        ratio, s.at("f1"), s.at("em"), s.at("answer_mass_rollout"),
        s.at("answer_mass_layer_mean"), s.at("answer_mass_layer_max"),
        s.at("ac"), s.at("acmc"), s.at("gold_probability"));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace qkov::training::squad

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return qkov::training::squad::Main();
}
