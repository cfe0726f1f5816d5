#include "client/presets.h"

#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/data_dirs.h"

namespace qkov::client {

const std::vector<Preset>& Presets() {
  static const auto* presets = new std::vector<Preset>{
      {"paper-four-param",
       "the four parameterizations at equal rates (docs/paper.md §3, Fig. 2): "
       "SGD "
       "0.01, 5 seeds, <= 625k steps",
       R"(name: paper-four-param
description: four parameterizations, eta_QK = eta_OV = 0.01 (docs/paper.md §3 Row-1 runs)
axes:
  parameterization: [FAFO, FACO, CAFO, CACO]
  lr_ratio: [1]
  eta_ov: [0.01]
  seed: [1234, 1235, 1236, 1237, 1238]
training:
  max_steps: 625000
  report_every: 2500
  target_loss: 1.0e-3
  optimizer: {kind: sgd}
  init: {qk: identity, ov: identity, identity_scale: 1.0e-6}
)",
       {"axes.eta_ov=[0.1]", "training.max_steps=30000",
        "training.report_every=500", "axes.seed=[1234, 1235]",
        "name=paper-four-param-quick"},
       "the four parameterizations at 10x the paper's rate, 2 seeds. "
       "Compare distinct_attention at the same training loss (the matched "
       "view below): the paper's Fig. 4 says the arm whose QK circuit "
       "learns faster (factorized QK: FAFO, FACO) attends more sharply at a "
       "given loss. docs/results.md, \"Synthetic task\", has what it gave.",
       {"--matched", "train_loss", "--window", "5", "--metrics",
        "distinct_attention"}},
      {"paper-ratio",
       "FAFO over eta_QK/eta_OV in {1, 2, 5, 10, 20} with 5 seeds (the fast-QK "
       "runs): SGD eta_OV 0.01",
       R"(name: paper-ratio
description: FAFO, eta_QK/eta_OV sweep, 5 seeds (docs/paper.md §3 fast-QK runs)
axes:
  parameterization: [FAFO]
  lr_ratio: [1, 2, 5, 10, 20]
  eta_ov: [0.01]
  seed: [1234, 1235, 1236, 1237, 1238]
training:
  max_steps: 100000
  report_every: 1000
  target_loss: 1.0e-3
  optimizer: {kind: sgd}
  init: {qk: identity, ov: identity, identity_scale: 1.0e-6}
)",
       {"axes.eta_ov=[0.1]", "training.max_steps=30000",
        "training.report_every=500", "axes.seed=[1234, 1235, 1236]",
        "name=paper-ratio-quick"},
       "",
       {}},
      {"paper-ratio-search",
       "adaptive: the smallest eta_QK/eta_OV in [1, 100] at which FAFO's "
       "distinct-token attention reaches 0.6, to a factor 1.2, 5 seeds a "
       "probe (docs/adaptive.md)",
       R"(name: paper-ratio-search
description: FAFO, where distinct-token attention crosses 0.6 (docs/adaptive.md worked example)
axes:
  parameterization: [FAFO]
  eta_ov: [0.01]
  seed: [1234, 1235, 1236, 1237, 1238]
search:
  metric: distinct_attention
  op: ">="
  target: 0.6
  lo: 1
  hi: 100
  resolution: 1.2
  coarse_points: 5
training:
  max_steps: 100000
  report_every: 1000
  target_loss: 1.0e-3
  optimizer: {kind: sgd}
  init: {qk: identity, ov: identity, identity_scale: 1.0e-6}
)",
       {"axes.eta_ov=[0.1]", "training.max_steps=30000",
        "training.report_every=500", "axes.seed=[1234, 1235, 1236]",
        "name=paper-ratio-search-quick"},
       "",
       {}},
      {"paper-qk-ramp",
       "the QK ramp runs: eta_QK rises linearly from eta_OV to R x eta_OV "
       "(FAFO R=40, CACO R=10 in the paper)",
       R"(name: paper-qk-ramp
description: QK learning-rate ramp (docs/paper.md §3 ramp runs)
axes:
  parameterization: [FAFO, CACO]
  lr_ratio: [10, 40]
  eta_ov: [0.01]
  seed: [1234, 1235, 1236, 1237, 1238]
training:
  max_steps: 200000
  report_every: 2000
  target_loss: 1.0e-3
  optimizer: {kind: sgd, schedule: qk_ramp}
  init: {qk: identity, ov: identity, identity_scale: 1.0e-6}
)",
       {"axes.eta_ov=[0.1]", "training.max_steps=30000",
        "training.report_every=500", "axes.seed=[1234, 1235]",
        "name=paper-qk-ramp-quick"},
       "",
       {}},
      {"paper-theory",
       "the reduced gradient flow over r = eta_QK/eta_OV in {0.01, 0.1, 1, 10, "
       "100} (docs/paper.md §4, Fig. 4)",
       R"(name: paper-theory
description: reduced gradient flow of docs/paper.md §4, RK4 with the authors' settings
axes:
  lr_ratio: [0.01, 0.1, 1, 10, 100]
  eta_ov: [1]
training:
  task: theory
  theory: {m: 5, n: 50, b: 50, num_classes: 20, dtau: 10, max_tau: 5.0e7, target_loss: 1.0e-4,
           num_thresholds: 50, num_samples: 200}
)",
       {"name=paper-theory-quick"},
       "",
       {}},
      {"paper-fixed-attention",
       "attention fixed at alpha in {0.2, ..., 1}, only OV trained, collapsed "
       "vs factorized (docs/paper.md §3, Fig. 3)",
       R"(name: paper-fixed-attention
description: "fixed-attention experiment (docs/paper.md §3 Fig-3): CACO = collapsed OV, FAFO = factorized OV"
axes:
  parameterization: [CACO, FAFO]
  alpha: [0.2, 0.4, 0.6, 0.8, 1.0]
  eta_ov: [0.01]
  seed: [1234]
training:
  task: fixed_attention
  max_steps: 125000
  batch_size: 128
  report_every: 2500
  target_loss: -1
)",
       {"training.max_steps=10000", "training.report_every=500",
        "axes.eta_ov=[0.1]", "name=paper-fixed-attention-quick"},
       "",
       {}},
      {"paper-hatexplain",
       "HateXplain, the 1-layer GPT-2-style block, eta_QK/eta_OV in {1, 30} "
       "(the token embedding in the QK group), AdamW 5e-5, 30 epochs, 5 seeds "
       "(docs/text-tasks.md); data paths from the repository root",
       R"(name: paper-hatexplain
description: HateXplain baseline vs faster QK (docs/text-tasks.md; docs/paper.md §6)
axes:
  parameterization: [FAFO]
  lr_ratio: [1, 30]
  eta_ov: [5.0e-5]
  seed: [1234, 1235, 1236, 1237, 1238]
training:
  task: hatexplain
  batch_size: 32
  report_every: 100
  optimizer: {kind: adamw, weight_decay: 1.0e-3}
  text:
    train: {path: ../shared/data/hatexplain/train-reconstructed.jsonl}
    validation: {path: ../shared/data/hatexplain/validation.jsonl}
    test: {path: ../shared/data/hatexplain/test.jsonl}
    vocab_path: ../shared/data/tokenizers/bert-base-uncased/vocab.txt
    epochs: 30
)",
       {"training.text.epochs=3", "training.text.validation.max_examples=500",
        "training.text.test.max_examples=1000", "axes.seed=[1234]",
        "training.evaluation.eval_every=250", "name=paper-hatexplain-quick"},
       "3 of the 30 epochs, one seed, validation curves every 250 steps. "
       "Test accuracy after 3 epochs is not the paper's (it needs the full "
       "budget); the view below compares the arms where their validation "
       "loss is the same: the paper says the faster-QK arm (lr_ratio 30) "
       "puts more attention on the annotators' rationale at comparable "
       "loss. An arm already past a level at its first evaluation is "
       "matched there, so read the steps too. docs/results.md, "
       "\"HateXplain\".",
       {"--matched", "val_loss", "--metrics",
        "val_rationale_mass_head0,val_rationale_mass_rollout,val_accuracy"}},
      {"paper-sva",
       "subject-verb agreement, the attention-only block, eta_QK/eta_OV in "
       "{1, 100} (token and position embeddings in the QK group), SGD "
       "momentum 0.99 at 5e-4, 15 epochs, 5 seeds, on the shipped "
       "subj_agr_filtered file split 10/90 (docs/text-tasks.md); data paths "
       "from the repository root",
       R"(name: paper-sva
description: SVA baseline vs faster QK (docs/text-tasks.md; docs/paper.md §6)
axes:
  parameterization: [FAFO]
  lr_ratio: [1, 100]
  eta_ov: [5.0e-4]
  seed: [1234, 1235, 1236, 1237, 1238]
training:
  task: sva
  batch_size: 32
  report_every: 100
  text:
    train: {format: sva_filtered, path: ../shared/data/sva/subj_agr_filtered.text}
    vocab_path: ../shared/data/tokenizers/bert-base-uncased/vocab.txt
)",
       {"axes.seed=[1234]", "training.text.epochs=350",
        "training.text.train_fraction=0.9",
        "training.text.validation_fraction=0.05",
        "training.text.embed_group=ov", "training.evaluation.eval_every=2000",
        "name=paper-sva-quick"},
       "the settings of the SVA direction test, 5 to 12 minutes on 2 cores: "
       "350 epochs of 90% of the shipped file (5% validation, 5% test), one "
       "seed, with the token embedding at the base rate in both arms (an "
       "ablation: with the authors' faster arm, embedding at 100x too, both "
       "arms fit this small file from the averaged tokens and attention "
       "barely moves; docs/results.md, \"Subject-verb agreement\"). The "
       "view below compares attention on the verb where the arms' "
       "validation accuracy is the same; the paper says the 100x arm "
       "attends more at comparable accuracy. Shorter runs leave both arms "
       "at the majority class (test accuracy about 0.635). The authors' "
       "own arms need Linzen's full agreement file (the shipped subset has "
       "7,485 sentences): qkov submit --preset paper-sva --set "
       "training.text.train.format=linzen_tsv --set "
       "training.text.train.path=agr_50_mostcommon_10K.tsv, with GPU "
       "workers.",
       {"--matched", "val_accuracy", "--metrics",
        "val_rationale_mass,val_rationale_mass_head0,val_ac,val_loss"}},
      {"paper-squad",
       "SQuAD, the authors' 6-layer decoder, eta_QK/eta_OV in {1, 20} at both "
       "of their base rates (5e-5 faster-QK, 5e-4 baseline), AdamW, 100 "
       "epochs, 5 seeds, the weights of the best validation F1 (300 "
       "questions, after each epoch), training F1 on 1,000 questions, on the "
       "shipped dev set split into "
       "training articles [0, 36), validation articles [36, 40) and "
       "evaluation articles [40, 48) (docs/squad.md); meant for "
       "GPU workers; data paths from the repository root",
       R"(name: paper-squad
description: SQuAD baseline vs faster QK (docs/squad.md; docs/paper.md §6)
axes:
  parameterization: [FAFO]
  lr_ratio: [1, 20]
  eta_ov: [5.0e-5, 5.0e-4]
  seed: [1234, 1235, 1236, 1237, 1238]
training:
  task: squad
  max_steps: 1000000
  batch_size: 32
  report_every: 100
  evaluation: {num_examples: 5000}
  squad:
    train: {path: ../shared/data/squad/dev-v1.1-all.json, article_end: 36}
    validation: {path: ../shared/data/squad/dev-v1.1-all.json, article_begin: 36, article_end: 40}
    validation_questions: 300
    train_f1_questions: 1000
    eval: {path: ../shared/data/squad/dev-v1.1-all.json, article_begin: 40}
    encoder_path: ../shared/data/tokenizers/gpt2/encoder.json
    merges_path: ../shared/data/tokenizers/gpt2/vocab.bpe
    epochs: 100
)",
       {"axes.eta_ov=[3.0e-3]", "axes.seed=[1234]", "training.max_steps=400",
        "training.batch_size=16", "training.optimizer.warmup_steps=40",
        "training.evaluation.num_examples=60", "training.squad.accumulation=1",
        "training.squad.d_model=64", "training.squad.heads=4",
        "training.squad.d_head=16", "training.squad.d_mlp=256",
        "training.squad.layers=2", "training.squad.dropout=0",
        "training.squad.init_std=0.02",
        "training.squad.validation_questions=20",
        "training.squad.train_f1_questions=20",
        "training.evaluation.eval_every=100",
        "training.evaluation.eval_examples=20", "name=paper-squad-quick"},
       "400 steps of a 2-layer, 64-wide decoder, one seed, at one base "
       "rate: both arms answer nothing yet (F1 0), so this run checks the "
       "pipeline and shows only where the arms' attention on the answer "
       "span stands at the same training loss (the view below). Answers "
       "need more: docs/experiments/squad-matched.yaml (20,000 steps, "
       "about 30 minutes per arm on one core each) reaches F1 0.06-0.08 "
       "and compares the arms at matched loss and F1 (docs/results.md, "
       "\"SQuAD\": there the 20x arm attends less, against the paper). "
       "The authors' size (6 layers, 100 epochs) needs a GPU: qkov submit "
       "--preset paper-squad with CUDA workers.",
       {"--matched", "train_loss", "--metrics",
        "val_answer_mass_rollout,val_ac,val_f1"}},
  };
  return *presets;
}

constexpr char kShipped[] = "../shared/data/";

bool StillReadsShippedData(const v1::SweepSpec& spec) {
  // A path that starts with it (DebugString quotes each string).
  return spec.DebugString().find(absl::StrCat("\"", kShipped)) !=
         std::string::npos;
}

PresetText WithDataPaths(const Preset& preset) {
  const std::string shipped = kShipped;
  std::vector<std::string> files;
  std::set<std::string> datasets;
  for (size_t at = preset.yaml.find(shipped); at != std::string::npos;
       at = preset.yaml.find(shipped, at + 1)) {
    const size_t begin = at + shipped.size();
    const size_t end = preset.yaml.find_first_of(" ,}\n", begin);
    files.push_back(preset.yaml.substr(begin, end - begin));
    datasets.insert(files.back().substr(0, files.back().find('/')));
  }
  if (files.empty()) return {preset.yaml, absl::OkStatus()};
  const std::optional<std::string> dir = FindDataDir(files);
  if (!dir.has_value()) {
    return {
        preset.yaml,
        absl::FailedPreconditionError(absl::StrCat(
            "preset ", preset.name, " reads data that is in no data folder (",
            absl::StrJoin(DataSearchPath(), ", "),
            "); fetch it: qkov-data fetch ", absl::StrJoin(datasets, " ")))};
  }
  return {absl::StrReplaceAll(preset.yaml, {{shipped, *dir + "/"}}),
          absl::OkStatus()};
}

absl::StatusOr<Preset> FindPreset(const std::string& name) {
  std::string known;
  for (const Preset& p : Presets()) {
    if (p.name == name) return p;
    absl::StrAppend(&known, known.empty() ? "" : ", ", p.name);
  }
  return absl::NotFoundError(
      absl::StrCat("no preset named '", name, "' (known: ", known, ")"));
}

}  // namespace qkov::client
