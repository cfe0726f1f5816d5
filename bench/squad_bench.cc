// Training speed of the SQuAD decoder (docs/PERFORMANCE.md): training
// tokens per second of TrainSquadModel (squad/squad_trainer.h) at the
// authors' size (6 layers, d_model 300, 6 heads of 50, MLP 1200, dropout
// 0.2, 256 positions, tied output, GPT-2 vocabulary) on the shipped dev
// set's questions, AdamW in three groups, clipping 0.5, answer-only loss
// with label smoothing 0.1. A token is one prompt or answer token of a
// question (padding not counted); a step is one micro-batch of --batch
// questions. --warmup untimed steps run first on other questions.
// --dump writes the timed questions in the order the trainer takes them
// (one JSON line each: prompt and answer ids), so the PyTorch peer
// (bench/squad_eager_bench.py) trains on the same batches.
//
//   squad_bench --data=../shared/data --steps=10 --threads=1 [--dump=F]
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "common/trial_defaults.h"
#include "worker/tasks/squad/squad_defaults.h"
#include "worker/tasks/squad/squad_trainer.h"
#include "worker/tasks/synthetic/synthetic_task.h"
#include "worker/training/cpu_runtime.h"

ABSL_FLAG(std::string, data, "../shared/data", "the shared data folder");
ABSL_FLAG(int64_t, steps, 10, "timed steps (micro-batches)");
ABSL_FLAG(int64_t, warmup, 2, "untimed steps first");
ABSL_FLAG(int64_t, batch, 32, "questions per step");
ABSL_FLAG(int, threads, 1, "torch intra-op threads");
ABSL_FLAG(bool, flush_denormals, true,
          "flush subnormal floats to zero, as qkov-worker does by default");
ABSL_FLAG(std::string, device, "cpu", "cpu or cuda");
ABSL_FLAG(std::string, parameterization, "FAFO", "FAFO, FACO, CAFO or CACO");
ABSL_FLAG(std::string, dump, "", "write the timed questions' ids here");

namespace qkov::training::squad {
namespace {

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "squad_bench: %s\n", s.ToString().c_str());
  return 1;
}

int Main() {
  SetTrainingThreads(absl::GetFlag(FLAGS_threads));
  SetFlushDenormal(absl::GetFlag(FLAGS_flush_denormals));
  const std::string data = absl::GetFlag(FLAGS_data);
  text::Gpt2BpeOptions bo;
  bo.encoder_path = data + "/tokenizers/gpt2/encoder.json";
  bo.merges_path = data + "/tokenizers/gpt2/vocab.bpe";
  auto bpe = text::Gpt2BpeTokenizer::Load(bo);
  if (!bpe.ok()) return Fail(bpe.status());
  const int64_t batch = absl::GetFlag(FLAGS_batch);
  const int64_t warm_n = absl::GetFlag(FLAGS_warmup) * batch;
  const int64_t timed_n = absl::GetFlag(FLAGS_steps) * batch;
  SquadSource source;
  source.path = data + "/squad/dev-v1.1-all.json";
  source.article_end = 40;
  absl::StatusOr<SquadData> squad = LoadSquad(source);
  if (!squad.ok()) return Fail(squad.status());
  std::vector<SquadExample> warm, timed;
  for (const SquadQuestion& q : squad->questions) {
    if (static_cast<int64_t>(warm.size() + timed.size()) >= warm_n + timed_n)
      break;
    absl::StatusOr<SquadExample> ex = BuildExample(q, **bpe, PromptOptions());
    if (!ex.ok()) continue;
    (static_cast<int64_t>(warm.size()) < warm_n ? warm : timed)
        .push_back(*std::move(ex));
  }
  if (static_cast<int64_t>(timed.size()) < timed_n || timed.empty())
    return Fail(absl::InvalidArgumentError("not enough questions"));
  absl::StatusOr<Parameterization> p =
      ParseParameterization(absl::GetFlag(FLAGS_parameterization));
  if (!p.ok()) return Fail(p.status());
  const torch::Device device(absl::GetFlag(FLAGS_device));

  text::TextModelOptions mo;
  mo.vocab_size = (*bpe)->vocab_size();
  mo.shape = defaults::kSquad.shape();  // the authors' decoder
  mo.max_len = mo.shape.n_ctx;
  mo.residual = mo.layer_norm = mo.causal = mo.lm_head = true;
  mo.padding_mask = mo.gelu_tanh = false;
  mo.init_std = 0.041;
  mo.embed_init_std = 0.1;
  mo.dropout = 0.2;
  text::TextModel model(mo, *p, 1234);
  model->to(device);
  SquadTrainOptions o;
  o.base_lr = 5e-5;
  o.lr_ratio = 20;
  o.batch = batch;
  o.accumulation = 1;
  o.epochs = 1;
  o.warmup_steps = 1;

  int64_t tokens = 0;
  for (const SquadExample& ex : timed)
    tokens += static_cast<int64_t>(ex.prompt.size() + ex.answer.size());
  if (!absl::GetFlag(FLAGS_dump).empty()) {
    // The trainer's order: its one permutation of epoch 1 from the seed.
    std::mt19937_64 rng(o.seed);
    const std::vector<int64_t> order =
        Permutation(static_cast<int64_t>(timed.size()), rng);
    std::ofstream out(absl::GetFlag(FLAGS_dump));
    auto ids = [](const std::vector<int32_t>& v) {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i)
        s += (i ? "," : "") + std::to_string(v[i]);
      return s + "]";
    };
    for (int64_t i : order)
      out << "{\"prompt\":" << ids(timed[i].prompt)
          << ",\"answer\":" << ids(timed[i].answer) << "}\n";
  }
  const int64_t eot = (*bpe)->end_of_text_id();
  if (!warm.empty()) {
    absl::StatusOr<SquadTrainRun> w =
        TrainSquadModel(model, warm, eot, o, SquadTrainHooks());
    if (!w.ok()) return Fail(w.status());
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<SquadTrainRun> run =
      TrainSquadModel(model, timed, eot, o, SquadTrainHooks());
  if (!run.ok()) return Fail(run.status());
  if (device.is_cuda()) torch::cuda::synchronize();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "qkov squad %s: %.1f tokens/s (%.3f steps/s; batch %lld, 6 layers, "
      "d_model 300, 6 heads of 50, MLP 1200, dropout 0.2, AdamW; %lld timed "
      "steps, %lld tokens, %d threads, %s)\n",
      ParameterizationName(*p), static_cast<double>(tokens) / seconds,
      static_cast<double>(run->steps) / seconds, static_cast<long long>(batch),
      static_cast<long long>(run->steps), static_cast<long long>(tokens),
      absl::GetFlag(FLAGS_threads), device.str().c_str());
  return 0;
}

}  // namespace
}  // namespace qkov::training::squad

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return qkov::training::squad::Main();
}
