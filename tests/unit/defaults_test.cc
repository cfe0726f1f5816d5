// One table of defaults (common/trial_defaults.h): the server's completed
// spec, the worker's option structs and the example in docs/sweep-files.md
// say the same thing. One set of rules (common/trial_rules.h): the server
// and the worker refuse the same values in the same words.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/sweep_file.h"
#include "server/core/sweep_spec.h"
#include "tests/data_available.h"
#include "worker/agent/trial_options.h"
#include "worker/tasks/squad/squad_options.h"
#include "worker/tasks/text/text_defaults.h"
#include "worker/tasks/text/text_options.h"
#include "worker/tasks/theory/theory_options.h"
#include "worker/training/config.h"
#include "worker/training/trainer.h"

namespace qkov {
namespace {

namespace v1 = ::qkov::v1;

TEST(DefaultsTest, TheWorkersOptionsAreTheServersDefaults) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "sva", "tokenizers");
  v1::TrialConfig config;
  config.set_parameterization(v1::FAFO);
  config.set_lr_ratio(1);
  config.set_eta_ov(0.01);
  core::ApplyTrainingDefaults(config.mutable_training());
  absl::StatusOr<training::TrialOptions> from_server =
      agent::ToTrialOptions(config);
  ASSERT_TRUE(from_server.ok()) << from_server.status();
  const training::TrialOptions plain;  // the struct's own defaults
  const training::TrialOptions& s = *from_server;
  EXPECT_EQ(s.synthetic.vocab_size, plain.synthetic.vocab_size);
  EXPECT_EQ(s.synthetic.num_common, plain.synthetic.num_common);
  EXPECT_EQ(s.synthetic.num_classes, plain.synthetic.num_classes);
  EXPECT_EQ(s.synthetic.distinct_per_class, plain.synthetic.distinct_per_class);
  EXPECT_EQ(s.synthetic.seq_len, plain.synthetic.seq_len);
  EXPECT_EQ(s.optimizer.kind, plain.optimizer.kind);
  EXPECT_EQ(s.optimizer.momentum, plain.optimizer.momentum);
  EXPECT_EQ(s.optimizer.weight_decay, plain.optimizer.weight_decay);
  EXPECT_EQ(s.optimizer.adam_beta1, plain.optimizer.adam_beta1);
  EXPECT_EQ(s.optimizer.adam_beta2, plain.optimizer.adam_beta2);
  EXPECT_EQ(s.optimizer.adam_eps, plain.optimizer.adam_eps);
  EXPECT_EQ(s.optimizer.schedule, plain.optimizer.schedule);
  EXPECT_EQ(s.optimizer.warmup_steps, plain.optimizer.warmup_steps);
  EXPECT_EQ(s.init.qk, plain.init.qk);
  EXPECT_EQ(s.init.ov, plain.init.ov);
  EXPECT_EQ(s.init.identity_scale, plain.init.identity_scale);
  EXPECT_EQ(s.max_steps, plain.max_steps);
  EXPECT_EQ(s.batch_size, plain.batch_size);
  EXPECT_EQ(s.report_every, plain.report_every);
  EXPECT_EQ(s.target_loss, plain.target_loss);
  EXPECT_EQ(s.loss_window, plain.loss_window);
  EXPECT_EQ(s.eval.num_examples, plain.eval.num_examples);
  EXPECT_EQ(s.eval.eval_seed, plain.eval.eval_seed);
  EXPECT_EQ(s.eval.tau_attention, plain.eval.tau_attention);
  EXPECT_EQ(s.eval.tau_probability, plain.eval.tau_probability);
  EXPECT_EQ(s.eval.dtap_attention_edges, plain.eval.dtap_attention_edges);
  EXPECT_EQ(s.eval.dtap_probability_edges, plain.eval.dtap_probability_edges);
}

// A theory sweep with no settings reaches the worker with the ODE's options
// as the struct starts them: both read defaults::kTheory.
TEST(DefaultsTest, TheWorkersTheoryOptionsAreTheServersDefaults) {
  v1::SweepSpec spec;
  spec.mutable_training()->set_task(v1::TASK_THEORY);
  core::ApplySpecDefaults(&spec);
  ASSERT_EQ(spec.axes().seeds_size(), 1);  // no randomness: one seed, 0
  EXPECT_EQ(spec.axes().seeds(0), 0u);
  v1::TrialConfig config;
  *config.mutable_training() = spec.training();
  config.set_lr_ratio(1);
  config.set_eta_ov(1);
  absl::StatusOr<training::TrialOptions> from_server =
      agent::ToTrialOptions(config);
  ASSERT_TRUE(from_server.ok()) << from_server.status();
  const training::TheoryOptions plain;
  const training::TheoryOptions& s =
      from_server->TaskOptions<training::TheoryOptions>();
  EXPECT_EQ(s.m, plain.m);
  EXPECT_EQ(s.n, plain.n);
  EXPECT_EQ(s.b, plain.b);
  EXPECT_EQ(s.M, plain.M);
  EXPECT_EQ(s.dtau, plain.dtau);
  EXPECT_EQ(s.relative_step, plain.relative_step);
  EXPECT_EQ(s.max_tau, plain.max_tau);
  EXPECT_EQ(s.target_loss, plain.target_loss);
  EXPECT_EQ(s.num_thresholds, plain.num_thresholds);
  EXPECT_EQ(s.num_samples, plain.num_samples);
  // The authors' settings (docs/paper.md §4).
  EXPECT_EQ(s.m, 5);
  EXPECT_EQ(s.max_tau, 5e7);
}

// The first ```yaml block of docs/sweep-files.md.
std::string DocsExample() {
  std::ifstream in(std::string(QKOV_SOURCE_DIR) + "/docs/sweep-files.md");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  const size_t start = text.find("```yaml\n");
  if (start == std::string::npos) return "";
  const size_t end = text.find("```", start + 8);
  return text.substr(start + 8, end - start - 8);
}

TEST(DefaultsTest, TheDocsExampleShowsTheDefaults) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "sva", "tokenizers");
  const std::string yaml = DocsExample();
  ASSERT_FALSE(yaml.empty()) << "no ```yaml block in docs/sweep-files.md";
  absl::StatusOr<v1::SweepSpec> documented =
      ParseSweepText(yaml, "docs/sweep-files.md");
  ASSERT_TRUE(documented.ok()) << documented.status();
  v1::Training defaults;
  core::ApplyTrainingDefaults(&defaults);
  std::string diff;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differ.Compare(defaults, documented->training()))
      << "docs/sweep-files.md and common/trial_defaults.h disagree:\n"
      << diff;
  EXPECT_EQ(documented->max_attempts(), defaults::kMaxAttempts);
}

// Each bad value as the server's validation and the worker's conversion see
// it: both refuse it, with one message (the server's field paths carry a
// prefix, here "").
TEST(RulesTest, TheWorkerRefusesWhatTheServerRefusesInTheSameWords) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "sva", "tokenizers");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  using Mutation = std::function<void(v1::Training*)>;
  const std::vector<std::pair<const char*, Mutation>> cases = {
      {"vocab_size",
       [](v1::Training* t) { t->mutable_synthetic()->set_vocab_size(1); }},
      {"num_common",
       [](v1::Training* t) { t->mutable_synthetic()->set_num_common(3); }},
      {"vocab too small",
       [](v1::Training* t) { t->mutable_synthetic()->set_vocab_size(20); }},
      {"seq_len",
       [](v1::Training* t) { t->mutable_synthetic()->set_seq_len(2); }},
      {"momentum",
       [](v1::Training* t) { t->mutable_optimizer()->set_momentum(1); }},
      {"weight_decay",
       [nan](v1::Training* t) {
         t->mutable_optimizer()->set_weight_decay(nan);
       }},
      {"adam_eps",
       [](v1::Training* t) { t->mutable_optimizer()->set_adam_eps(-1); }},
      {"warmup_steps",
       [](v1::Training* t) {
         t->mutable_optimizer()->set_warmup_steps(200000);
       }},
      {"one_cycle outside squad",
       [](v1::Training* t) {
         t->mutable_optimizer()->set_schedule(v1::ONE_CYCLE);
       }},
      {"identity_scale",
       [](v1::Training* t) { t->mutable_init()->set_identity_scale(-1); }},
      {"max_steps", [](v1::Training* t) { t->set_max_steps(-5); }},
      {"batch_size", [](v1::Training* t) { t->set_batch_size(100000); }},
      {"report_every", [](v1::Training* t) { t->set_report_every(-1); }},
      {"loss_window", [](v1::Training* t) { t->set_loss_window(-1); }},
      {"target_loss", [nan](v1::Training* t) { t->set_target_loss(nan); }},
      {"num_examples",
       [](v1::Training* t) { t->mutable_evaluation()->set_num_examples(-1); }},
      {"tau_attention",
       [](v1::Training* t) { t->mutable_evaluation()->set_tau_attention(2); }},
      {"dtap edges",
       [](v1::Training* t) {
         t->mutable_evaluation()->set_dtap_attention_edges(1, 0);
       }},
      {"theory.m",
       [](v1::Training* t) {
         t->set_task(v1::TASK_THEORY);
         t->mutable_theory()->set_m(-1);
       }},
      {"theory.max_tau",
       [](v1::Training* t) {
         t->set_task(v1::TASK_THEORY);
         t->mutable_theory()->set_max_tau(1e14);
       }},
      {"theory.num_samples",
       [](v1::Training* t) {
         t->set_task(v1::TASK_THEORY);
         t->mutable_theory()->set_num_samples(1);
       }},
  };
  for (const auto& [name, mutate] : cases) {
    v1::SweepSpec spec;
    spec.mutable_training()->set_task(v1::TASK_SYNTHETIC);
    core::ApplySpecDefaults(&spec);
    mutate(spec.mutable_training());
    v1::TrialConfig config;
    config.set_parameterization(v1::FAFO);
    config.set_lr_ratio(1);
    config.set_eta_ov(0.01);
    *config.mutable_training() = spec.training();
    const absl::Status server = core::ValidateTraining(spec.training(), "");
    const absl::Status worker = agent::ToTrialOptions(config).status();
    EXPECT_TRUE(absl::IsInvalidArgument(server)) << name << ": " << server;
    EXPECT_EQ(server.message(), worker.message()) << name;
  }
}

// The axis values: the server names the axis entry, the worker the trial's
// field; the reason is the same.
TEST(RulesTest, AxisValuesAreRefusedForTheSameReason) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "sva", "tokenizers");
  for (auto [lr_ratio, eta_ov] :
       {std::pair{-3.0, 0.01}, std::pair{2e6, 0.01},
        std::pair{1.0, std::nan("")}, std::pair{1.0, 5e3}}) {
    v1::SweepSpec spec;
    spec.set_name("rules");
    spec.mutable_axes()->add_parameterizations(v1::FAFO);
    spec.mutable_axes()->add_lr_ratios(lr_ratio);
    spec.mutable_axes()->add_eta_ovs(eta_ov);
    spec.mutable_axes()->add_seeds(1);
    core::ApplySpecDefaults(&spec);
    const absl::Status server =
        core::ValidateSweepSpec(spec, core::SpecLimits());
    v1::TrialConfig config;
    config.set_parameterization(v1::FAFO);
    config.set_lr_ratio(lr_ratio);
    config.set_eta_ov(eta_ov);
    *config.mutable_training() = spec.training();
    const absl::Status worker = agent::ToTrialOptions(config).status();
    ASSERT_TRUE(absl::IsInvalidArgument(server)) << server;
    ASSERT_TRUE(absl::IsInvalidArgument(worker)) << worker;
    const std::string s(server.message()), w(worker.message());
    EXPECT_EQ(s.substr(s.find(": ")), w.substr(w.find(": ")))
        << s << " | " << w;
  }
}

// A text sweep file, completed and validated by the server, reaches the
// worker as complete options with the task's defaults, and trains.
TEST(TextTaskTest, ASweepFileOfEachTextTaskReachesTheWorkerComplete) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "sva", "tokenizers");
  const std::string shared = QKOV_SHARED_DATA_DIR;
  const std::string vocab = shared + "/tokenizers/bert-base-uncased/vocab.txt";
  const std::string hx = shared + "/hatexplain/";
  auto spec = ParseSweepText(
      "name: hx\naxes: {parameterization: [FAFO], lr_ratio: [30], eta_ov: "
      "[1.0e-3], seed: [1]}\ntraining:\n  task: hatexplain\n  batch_size: 16\n"
      "  text:\n    train: {path: " +
          hx +
          "validation.jsonl, max_examples: 64}\n"
          "    test: {path: " +
          hx +
          "test.jsonl, max_examples: 48}\n"
          "    vocab_path: " +
          vocab + "\n    epochs: 2\n    max_len: 64\n",
      "hx.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  core::ApplySpecDefaults(&*spec);
  const absl::Status valid = core::ValidateSweepSpec(*spec, core::SpecLimits());
  ASSERT_TRUE(valid.ok()) << valid;
  v1::TrialConfig config = core::ExpandSweep(*spec)[0].config;
  *config.mutable_training() = spec->training();
  absl::StatusOr<training::TrialOptions> o = agent::ToTrialOptions(config);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->task, "hatexplain");
  EXPECT_EQ(
      o->TaskOptions<training::text::TextTaskOptions>().model.shape.d_model,
      64);
  EXPECT_EQ(o->TaskOptions<training::text::TextTaskOptions>().model.shape.heads,
            4);
  EXPECT_TRUE(o->TaskOptions<training::text::TextTaskOptions>().model.causal);
  EXPECT_EQ(o->TaskOptions<training::text::TextTaskOptions>().model.readout,
            training::text::Readout::kFirstPad);
  EXPECT_EQ(o->optimizer.kind, training::OptimizerKind::kAdamW);
  EXPECT_EQ(o->optimizer.schedule, training::ScheduleKind::kCosineWarmup);
  EXPECT_EQ(o->eval.dtap_attention_edges,
            (std::vector<double>{0, 0.33, 0.66, 1.1}));
  absl::StatusOr<training::TrialOutcome> r = training::RunTrial(*o, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->steps, 8);  // 2 epochs of 64 / 16
  EXPECT_EQ(r->results.at("test_examples"), 48);
  EXPECT_GE(r->results.at("test_rationale_mass"), 0);
  ASSERT_FALSE(r->heatmaps.empty());
  EXPECT_EQ(r->heatmaps[0].name, "dtap");

  // SVA's defaults differ where the authors' setup does.
  v1::SweepSpec sva = *spec;
  sva.mutable_training()->Clear();
  sva.mutable_training()->set_task(v1::TASK_SVA);
  sva.mutable_training()->mutable_text()->mutable_train()->set_path(
      shared + "/sva/subj_agr_filtered.text");
  sva.mutable_training()->mutable_text()->set_vocab_path(vocab);
  core::ApplySpecDefaults(&sva);
  ASSERT_TRUE(core::ValidateSweepSpec(sva, core::SpecLimits()).ok());
  *config.mutable_training() = sva.training();
  o = agent::ToTrialOptions(config);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(
      o->TaskOptions<training::text::TextTaskOptions>().model.residual);
  EXPECT_EQ(o->TaskOptions<training::text::TextTaskOptions>().model.shape.d_mlp,
            0);
  EXPECT_TRUE(
      o->TaskOptions<training::text::TextTaskOptions>().model.padding_mask);
  EXPECT_EQ(o->TaskOptions<training::text::TextTaskOptions>().model.readout,
            training::text::Readout::kLastToken);
  EXPECT_EQ(o->TaskOptions<training::text::TextTaskOptions>().pos_group,
            training::ParamGroup::kQk);
  EXPECT_EQ(o->optimizer.kind, training::OptimizerKind::kSgd);
  EXPECT_DOUBLE_EQ(o->optimizer.momentum, 0.99);
  EXPECT_DOUBLE_EQ(
      o->TaskOptions<training::text::TextTaskOptions>().train_fraction, 0.1);

  // A validation share of the single file reaches the worker; one that
  // leaves no test split, or a second validation source, is refused.
  sva.mutable_training()->mutable_text()->set_validation_fraction(0.05);
  ASSERT_TRUE(core::ValidateSweepSpec(sva, core::SpecLimits()).ok());
  *config.mutable_training() = sva.training();
  o = agent::ToTrialOptions(config);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_DOUBLE_EQ(
      o->TaskOptions<training::text::TextTaskOptions>().validation_fraction,
      0.05);
  sva.mutable_training()->mutable_text()->set_validation_fraction(0.9);
  EXPECT_EQ(core::ValidateSweepSpec(sva, core::SpecLimits()).message(),
            "spec.training.text.validation_fraction: needs "
            "text.train_fraction > 0 and the two below 1 (got 0.1 + 0.9)");
  sva.mutable_training()->mutable_text()->set_validation_fraction(0.05);
  sva.mutable_training()->mutable_text()->mutable_validation()->set_path(
      shared + "/sva/subj_agr_filtered.text");
  EXPECT_EQ(core::ValidateSweepSpec(sva, core::SpecLimits()).message(),
            "spec.training.text.validation_fraction: cannot go with "
            "text.validation.path (both name the validation split)");
  sva.mutable_training()->mutable_text()->clear_validation();
  sva.mutable_training()->mutable_text()->set_validation_fraction(0);

  // Without data the server refuses, naming the field.
  sva.mutable_training()->mutable_text()->mutable_train()->clear_path();
  EXPECT_EQ(core::ValidateSweepSpec(sva, core::SpecLimits()).message(),
            "spec.training.text.train.path: is required");
}

// A text trial's settings are checked on the proto by common/task_settings.h,
// by the server on submit and by the worker on each lease: the same values
// are refused in the same words, before any conversion.
TEST(TextTaskTest, TheWorkerRefusesBadTextSettingsAsTheServerDoes) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "sva", "tokenizers");
  v1::SweepSpec spec;
  spec.mutable_training()->set_task(v1::TASK_HATEXPLAIN);
  spec.mutable_training()->mutable_text()->mutable_train()->set_path(
      "train.jsonl");
  spec.mutable_training()->mutable_text()->set_vocab_path("vocab.txt");
  core::ApplySpecDefaults(&spec);
  ASSERT_TRUE(core::ValidateTraining(spec.training(), "").ok());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  using Mutation = std::function<void(v1::TextTask*)>;
  const std::vector<std::pair<const char*, Mutation>> cases = {
      {"text.n_ctx", [](v1::TextTask* x) { x->set_n_ctx(x->max_len() - 1); }},
      {"text.heads", [](v1::TextTask* x) { x->set_heads(0); }},
      {"text.grad_clip", [nan](v1::TextTask* x) { x->set_grad_clip(nan); }},
      {"text.k_percent", [](v1::TextTask* x) { x->set_k_percent(150); }},
      {"text.qk_weight_decay",
       [](v1::TextTask* x) { x->set_qk_weight_decay(-1); }},
      {"text.validation_fraction",
       [](v1::TextTask* x) { x->set_validation_fraction(0.5); }},
      {"text.vocab_path", [](v1::TextTask* x) { x->clear_vocab_path(); }},
      {"text.train.format",
       [](v1::TextTask* x) { x->mutable_train()->set_format("xml"); }},
      {"text.test.max_examples",
       [](v1::TextTask* x) { x->mutable_test()->set_max_examples(-1); }},
  };
  for (const auto& [name, mutate] : cases) {
    v1::TrialConfig config;
    config.set_parameterization(v1::FAFO);
    config.set_lr_ratio(1);
    config.set_eta_ov(0.01);
    *config.mutable_training() = spec.training();
    mutate(config.mutable_training()->mutable_text());
    const absl::Status server = core::ValidateTraining(config.training(), "");
    const absl::Status worker = agent::ToTrialOptions(config).status();
    EXPECT_TRUE(absl::IsInvalidArgument(server)) << name << ": " << server;
    EXPECT_EQ(server.message(), worker.message()) << name;
    EXPECT_EQ(server.message().rfind(absl::StrCat(name, ": "), 0), 0u)
        << name << ": " << server;
  }
}

// A SQuAD sweep file, completed by the server, reaches the worker with the
// authors' decoder and training settings; the server and the worker refuse
// bad SQuAD settings in the same words.
TEST(SquadTaskTest, ASweepFileReachesTheWorkerWithTheAuthorsSettings) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "squad", "sva", "tokenizers");
  const std::string shared = QKOV_SHARED_DATA_DIR;
  auto spec = ParseSweepText(
      "name: sq\naxes: {parameterization: [FAFO], lr_ratio: [20], eta_ov: "
      "[5.0e-5], seed: [1]}\ntraining:\n  task: squad\n  squad:\n"
      "    train: {path: " +
          shared +
          "/squad/dev-v1.1-all.json, article_end: 40}\n"
          "    eval: {path: " +
          shared +
          "/squad/dev-v1.1-all.json, article_begin: 40}\n"
          "    encoder_path: " +
          shared +
          "/tokenizers/gpt2/encoder.json\n"
          "    merges_path: " +
          shared + "/tokenizers/gpt2/vocab.bpe\n",
      "sq.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  core::ApplySpecDefaults(&*spec);
  const absl::Status valid = core::ValidateSweepSpec(*spec, core::SpecLimits());
  ASSERT_TRUE(valid.ok()) << valid;
  v1::TrialConfig config = core::ExpandSweep(*spec)[0].config;
  *config.mutable_training() = spec->training();
  absl::StatusOr<training::TrialOptions> o = agent::ToTrialOptions(config);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->task, "squad");
  const training::squad::SquadTaskOptions& q =
      o->TaskOptions<training::squad::SquadTaskOptions>();
  EXPECT_EQ(q.model.shape.layers, 6);
  EXPECT_EQ(q.model.shape.d_model, 300);
  EXPECT_EQ(q.model.shape.heads, 6);
  EXPECT_EQ(q.model.shape.d_head, 50);
  EXPECT_EQ(q.model.shape.d_mlp, 1200);
  EXPECT_EQ(q.model.shape.n_ctx, 256);
  EXPECT_DOUBLE_EQ(q.model.dropout, 0.2);
  EXPECT_EQ(q.prompt.crop_chars, 200);
  EXPECT_EQ(q.prompt.max_prompt_tokens, 204);
  EXPECT_EQ(q.prompt.max_answer_tokens, 50);
  EXPECT_EQ(q.train.article_end, 40);
  EXPECT_EQ(q.eval.article_begin, 40);
  EXPECT_EQ(q.tokenizer.merges_sha256, defaults::kGpt2MergesSha256);
  EXPECT_DOUBLE_EQ(q.label_smoothing, 0.1);
  EXPECT_DOUBLE_EQ(q.embed_lr_multiplier, 0.1);
  EXPECT_DOUBLE_EQ(q.grad_clip, 0.5);
  EXPECT_DOUBLE_EQ(q.rollout_alpha, 0.5);
  EXPECT_EQ(q.accumulation, 2);
  EXPECT_EQ(q.epochs, 100);
  EXPECT_EQ(o->batch_size, 32);
  EXPECT_EQ(o->optimizer.kind, training::OptimizerKind::kAdamW);
  EXPECT_EQ(o->optimizer.schedule, training::ScheduleKind::kOneCycle);
  EXPECT_EQ(o->optimizer.warmup_steps, 1000);
  EXPECT_DOUBLE_EQ(o->optimizer.weight_decay, 0.05);
  EXPECT_DOUBLE_EQ(o->eval.tau_attention, 0.1);
  EXPECT_EQ(o->eval.dtap_attention_edges,
            (std::vector<double>{0, 0.05, 0.1, 0.5, 1.001}));
  EXPECT_EQ(o->eval.num_examples, 5000);

  using Mutation = std::function<void(v1::Training*)>;
  const std::vector<std::pair<const char*, Mutation>> cases = {
      {"squad.n_ctx",
       [](v1::Training* t) { t->mutable_squad()->set_n_ctx(100); }},
      {"squad.heads",
       [](v1::Training* t) { t->mutable_squad()->set_heads(0); }},
      {"squad.dropout",
       [](v1::Training* t) { t->mutable_squad()->set_dropout(1.5); }},
      {"squad.label_smoothing",
       [](v1::Training* t) {
         t->mutable_squad()->set_label_smoothing(std::nan(""));
       }},
      {"squad.embed_lr_multiplier",
       [](v1::Training* t) {
         t->mutable_squad()->set_embed_lr_multiplier(-1);
       }},
      {"squad.eval.article_end",
       [](v1::Training* t) {
         t->mutable_squad()->mutable_eval()->set_article_end(10);
       }},
      {"squad.train.max_questions",
       [](v1::Training* t) {
         t->mutable_squad()->mutable_train()->set_max_questions(-1);
       }},
      {"squad.eval.path",
       [](v1::Training* t) {
         t->mutable_squad()->mutable_eval()->clear_path();
       }},
      {"squad.merges_path",
       [](v1::Training* t) { t->mutable_squad()->clear_merges_path(); }},
      {"squad.validation.path",
       [](v1::Training* t) {
         t->mutable_squad()->set_validation_questions(300);
       }},
      {"squad.validation_questions",
       [](v1::Training* t) {
         t->mutable_squad()->set_validation_questions(-1);
       }},
      {"squad.train_f1_questions",
       [](v1::Training* t) { t->mutable_squad()->set_train_f1_questions(-1); }},
      {"squad.validation.article_begin",
       [](v1::Training* t) {
         t->mutable_squad()->mutable_validation()->set_article_begin(-2);
       }},
      {"optimizer.kind",
       [](v1::Training* t) { t->mutable_optimizer()->set_kind(v1::SGD); }},
      {"optimizer.schedule",
       [](v1::Training* t) {
         t->mutable_optimizer()->set_schedule(v1::CONSTANT);
       }},
  };
  for (const auto& [name, mutate] : cases) {
    v1::Training t = spec->training();
    mutate(&t);
    config.clear_training();
    *config.mutable_training() = t;
    const absl::Status server = core::ValidateTraining(t, "");
    const absl::Status worker = agent::ToTrialOptions(config).status();
    EXPECT_TRUE(absl::IsInvalidArgument(server)) << name << ": " << server;
    EXPECT_EQ(server.message(), worker.message()) << name;
    EXPECT_EQ(server.message().rfind(absl::StrCat(name, ": "), 0), 0u)
        << name << ": " << server;
  }
}

}  // namespace
}  // namespace qkov
