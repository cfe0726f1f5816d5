// The text trainer on a tiny model and real files: a step moves each
// parameter group by its own rate; a trial handed back mid-epoch and resumed
// from its checkpoint ends with exactly the results of an uninterrupted run;
// the token embedding keeps the rows of the data's word pieces, and
// checkpoints of other rows or of the whole vocabulary are handled; a bad
// data path is the trial's error, not a crash.
#include "worker/tasks/text/text_trainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "tests/data_available.h"
#include "tests/unit/training/result_names_check.h"
#include "worker/tasks/text/datasets.h"
#include "worker/tasks/text/encoding.h"
#include "worker/tasks/text/wordpiece.h"
#include "worker/training/trainer.h"

namespace qkov::training {
namespace {

const std::string kShared = QKOV_SHARED_DATA_DIR;

TrialOptions Tiny() {
  TrialOptions o;
  o.task = "text";
  o.parameterization = Parameterization::kFafo;
  o.lr_ratio = 10;
  o.eta_ov = 1e-3;
  o.batch_size = 8;
  o.report_every = 2;
  o.optimizer.kind = OptimizerKind::kAdamW;
  o.optimizer.schedule = ScheduleKind::kCosineWarmup;
  o.eval.dtap_attention_edges = {0, 0.33, 0.66, 1.1};
  o.eval.dtap_probability_edges = {0, 0.33, 0.66, 1.1};
  text::TextTaskOptions& t = o.MutableTaskOptions<text::TextTaskOptions>();
  t.train.format = text::TextFormat::kHateXplain;
  t.train.path = kShared + "/hatexplain/validation.jsonl";
  t.train.max_examples = 36;  // 5 steps per epoch, the last one short
  t.test = t.train;
  t.test.path = kShared + "/hatexplain/test.jsonl";
  t.test.max_examples = 20;
  t.tokenizer.vocab_path = kShared + "/tokenizers/bert-base-uncased/vocab.txt";
  t.epochs = 3;
  t.model.max_len = 16;
  t.model.shape.n_ctx = 16;
  t.model.shape.d_model = 8;
  t.model.shape.heads = 2;
  t.model.shape.d_head = 4;
  t.model.shape.d_mlp = 8;
  return o;
}

class HandBackAt : public TrainingObserver {
 public:
  explicit HandBackAt(int64_t polls) : left_(polls) {}
  bool OnReport(int64_t step, const std::vector<MetricPoint>&) override {
    if (first_report < 0) first_report = step;
    return true;
  }
  int64_t first_report = -1;
  StopRequest PollStop() override {
    return --left_ < 0 ? StopRequest::kHandBack : StopRequest::kNone;
  }

 private:
  int64_t left_;
};

// The model's weights in a hand-back checkpoint, by parameter name.
std::map<std::string, torch::Tensor> WeightsIn(const std::string& checkpoint) {
  torch::serialize::InputArchive archive, model;
  std::istringstream in(checkpoint);
  archive.load_from(in);
  archive.read("model", model);
  std::map<std::string, torch::Tensor> w;
  for (const std::string& key : model.keys()) {
    torch::Tensor x;
    if (model.try_read(key, x)) w[key] = x;
  }
  return w;
}

// The weights before (hand-back at step 0) and after one step.
std::pair<std::map<std::string, torch::Tensor>,
          std::map<std::string, torch::Tensor>>
OneStep(const TrialOptions& o) {
  HandBackAt at0(0), at1(1);
  auto before = RunTrial(o, &at0);
  auto after = RunTrial(o, &at1);
  EXPECT_TRUE(before.ok()) << before.status();
  EXPECT_TRUE(after.ok()) << after.status();
  if (!before.ok() || !after.ok()) return {};  // the caller's size check fails
  EXPECT_EQ(after->steps, 1);
  return {WeightsIn(before->checkpoint), WeightsIn(after->checkpoint)};
}

// Plain SGD at a constant rate, one step from the same weights and batch:
// the QK group (W_Q, W_K, their biases, the token embedding) moves
// lr_ratio x eta_ov times its gradient, the OV group (W_V, W_O, biases,
// position embedding, classifier) eta_ov times, the MLP mlp_lr_multiplier
// x eta_ov times, and a frozen MLP not at all.
TEST(TextTrainerTest, OneSgdStepMovesEachGroupByItsOwnRate) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "tokenizers");
  TrialOptions o = Tiny();
  o.optimizer.kind = OptimizerKind::kSgd;
  o.optimizer.schedule = ScheduleKind::kConstant;
  o.MutableTaskOptions<text::TextTaskOptions>().grad_clip = 0;
  // Weights and rates large enough that every step is far above float
  // rounding of the weights.
  o.MutableTaskOptions<text::TextTaskOptions>().model.init_std = 0.5;
  o.eta_ov = 0.05;
  o.lr_ratio = 1;
  o.MutableTaskOptions<text::TextTaskOptions>().mlp_lr_multiplier = 1;
  const auto [w0, equal_rates] = OneStep(o);
  o.lr_ratio = 4;
  o.MutableTaskOptions<text::TextTaskOptions>().mlp_lr_multiplier = 0.5;
  const auto [w0_again, faster_qk] = OneStep(o);
  o.MutableTaskOptions<text::TextTaskOptions>().mlp_lr_multiplier = 0;
  const auto [w0_frozen, frozen] = OneStep(o);
  ASSERT_EQ(w0.size(), 16u);
  ASSERT_EQ(w0_again.size(), 16u);
  ASSERT_EQ(frozen.size(), 16u);
  const std::map<std::string, double> factor = {
      {"w_e", 4},          {"layer0_w_q", 4},   {"layer0_w_k", 4},
      {"layer0_b_q", 4},   {"layer0_b_k", 4},   {"w_pos", 1},
      {"layer0_w_v", 1},   {"layer0_b_v", 1},   {"layer0_w_o", 1},
      {"layer0_b_o", 1},   {"w_cls", 1},        {"b_cls", 1},
      {"layer0_w_in", .5}, {"layer0_b_in", .5}, {"layer0_w_out", .5},
      {"layer0_b_out", .5}};
  for (const auto& [name, f] : factor) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(w0.count(name));
    EXPECT_TRUE(torch::equal(w0.at(name), w0_again.at(name)));
    const torch::Tensor base = equal_rates.at(name) - w0.at(name);
    const torch::Tensor moved = faster_qk.at(name) - w0.at(name);
    // b_K shifts every key's score alike: no gradient under softmax.
    if (name != "layer0_b_k") {
      EXPECT_GT(base.abs().max().item<double>(), 1e-3);
    }
    EXPECT_TRUE(torch::allclose(moved, base * f, 1e-3, 1e-6))
        << (moved / base).nan_to_num(0).abs().max().item<double>();
    const bool mlp = f == .5;
    EXPECT_EQ(torch::equal(frozen.at(name), w0.at(name)), mlp);
  }
}

TEST(TextTrainerTest, HandBackAndResumeIsBitIdentical) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "tokenizers");
  const TrialOptions o = Tiny();
  auto whole = RunTrial(o, nullptr);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->steps, 15);
  // Every result is one a ratio search may name (common/result_names.h),
  // within its range, and the trial stores every listed name but those of
  // the validation split, which this data does not have.
  ExpectResultsListed(whole->results, "text");
  for (const ResultName& n : FinalResultNames("text")) {
    if (n.name.rfind("validation_", 0) == 0) continue;
    EXPECT_TRUE(whole->results.count(n.name)) << n.name;
  }
  HandBackAt stop_mid_epoch(7);  // step 7 of 15: inside the second epoch
  auto first = RunTrial(o, &stop_mid_epoch);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->end, TrialEnd::kStopped);
  ASSERT_FALSE(first->checkpoint.empty());
  HandBackAt never(1 << 30);
  auto resumed = RunTrial(o, &never, torch::kCPU, first->checkpoint);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(never.first_report, 8);  // it went on from step 7
  EXPECT_EQ(resumed->steps, 15);
  for (const char* name : {"test_loss", "test_accuracy", "test_rationale_mass",
                           "test_comprehensiveness", "train_accuracy"}) {
    EXPECT_EQ(resumed->results.at(name), whole->results.at(name)) << name;
  }
  auto garbage = RunTrial(o, nullptr, torch::kCPU, "not a checkpoint");
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument);
}

// Records every point reported.
class Recorder : public TrainingObserver {
 public:
  explicit Recorder(int64_t hand_back_after = 1 << 30)
      : left_(hand_back_after) {}
  bool OnReport(int64_t, const std::vector<MetricPoint>& points) override {
    for (const MetricPoint& p : points) curve[p.name][p.step] = p.value;
    return true;
  }
  StopRequest PollStop() override {
    return --left_ < 0 ? StopRequest::kHandBack : StopRequest::kNone;
  }
  std::map<std::string, std::map<int64_t, double>> curve;

 private:
  int64_t left_;
};

// Evaluation during training (evaluation.eval_every): val_* curves at every
// eval_every steps and the last, on the first eval_examples validation
// examples; the training and its results are the same to the bit as
// without it, and a trial handed back and resumed reports the same curves.
// A single file split three ways (SVA ships one): train_fraction for
// training, validation_fraction of all examples as validation, the rest for
// test; the validation split feeds the curves during training.
TEST(TextTrainerTest, ValidationFractionSplitsTheRestOfASingleFile) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "tokenizers");
  TrialOptions o = Tiny();
  o.MutableTaskOptions<text::TextTaskOptions>().train.max_examples = 40;
  o.MutableTaskOptions<text::TextTaskOptions>().test = {};
  o.MutableTaskOptions<text::TextTaskOptions>().train_fraction = 0.5;
  o.MutableTaskOptions<text::TextTaskOptions>().validation_fraction = 0.25;
  o.eval.eval_every = 4;
  o.eval.eval_examples = 8;
  Recorder r;
  auto out = RunTrial(o, &r);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->results.at("train_examples"), 20);
  EXPECT_EQ(out->results.at("validation_examples"), 10);
  EXPECT_EQ(out->results.at("test_examples"), 10);
  EXPECT_FALSE(r.curve["val_loss"].empty());
  // Without it the rest is all test, and there are no validation curves.
  o.MutableTaskOptions<text::TextTaskOptions>().validation_fraction = 0;
  Recorder plain;
  auto two = RunTrial(o, &plain);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->results.at("test_examples"), 20);
  EXPECT_EQ(two->results.count("validation_examples"), 0u);
  EXPECT_TRUE(plain.curve["val_loss"].empty());
  // The training split is the same either way.
  EXPECT_EQ(r.curve["train_loss"], plain.curve["train_loss"]);
}

TEST(TextTrainerTest, CurvesDuringTrainingChangeNothingAndResume) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "tokenizers");
  TrialOptions o = Tiny();
  o.MutableTaskOptions<text::TextTaskOptions>().validation =
      o.MutableTaskOptions<text::TextTaskOptions>().test;
  o.eval.eval_every = 4;
  o.eval.eval_examples = 8;
  TrialOptions quiet = o;
  quiet.eval.eval_every = 0;
  Recorder with, without;
  auto a = RunTrial(o, &with);
  auto b = RunTrial(quiet, &without);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->results, b->results);
  EXPECT_EQ(with.curve["train_loss"], without.curve["train_loss"]);
  for (const char* name : {"val_loss", "val_accuracy", "val_gold_probability",
                           "val_rationale_mass_head0", "val_rationale_mass",
                           "val_rationale_mass_rollout", "val_ac"}) {
    std::vector<int64_t> steps;
    for (const auto& [step, value] : with.curve[name]) {
      steps.push_back(step);
      EXPECT_TRUE(std::isfinite(value)) << name << " " << step;
    }
    EXPECT_EQ(steps, (std::vector<int64_t>{4, 8, 12, 15})) << name;
    EXPECT_TRUE(without.curve[name].empty()) << name;
  }
  // The curve's last point is the evaluation of the final weights on the
  // same examples as the final validation results' first 8.
  Recorder first(7);
  auto stopped = RunTrial(o, &first);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  ASSERT_EQ(stopped->end, TrialEnd::kStopped);
  Recorder rest;
  auto resumed = RunTrial(o, &rest, torch::kCPU, stopped->checkpoint);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  for (const auto& [name, points] : with.curve) {
    if (name.rfind("val_", 0) != 0) continue;
    for (const auto& [step, value] : points) {
      const auto& part = step <= 7 ? first.curve[name] : rest.curve[name];
      ASSERT_TRUE(part.count(step)) << name << " " << step;
      EXPECT_EQ(part.at(step), value) << name << " " << step;
    }
  }
}

// `checkpoint` (format 3) as a format-2 checkpoint, which holds the whole
// vocabulary's embedding rows and optimizer state: the rows the trial did
// not keep as zeros (they reach no output).
std::string AsWholeVocabularyCheckpoint(const std::string& checkpoint,
                                        int64_t vocab_size) {
  torch::serialize::InputArchive in, model, opt;
  std::istringstream bytes(checkpoint);
  in.load_from(bytes);
  torch::Tensor rows;
  in.read("vocab_rows", rows);
  auto whole = [&](const torch::Tensor& kept) {
    return torch::zeros({vocab_size, kept.size(1)}, kept.options())
        .index_copy_(0, rows, kept);
  };
  torch::serialize::OutputArchive out, model_out, opt_out;
  out.write("format", c10::IValue(int64_t{2}));
  in.read("model", model);
  for (const std::string& key : model.keys()) {
    torch::Tensor x;
    model.read(key, x);
    model_out.write(key, key == "w_e" ? whole(x) : x);
  }
  in.read("optimizer", opt);
  for (const std::string& key : opt.keys()) {
    if (key == "adam_steps") {
      c10::IValue v;
      opt.read(key, v);
      opt_out.write(key, v);
      continue;
    }
    torch::Tensor x;
    opt.read(key, x);
    const bool embedding =
        key.size() > 4 && key.substr(key.size() - 4) == "/w_e";
    opt_out.write(key, embedding ? whole(x) : x);
  }
  out.write("model", model_out);
  out.write("optimizer", opt_out);
  for (const char* key : {"step", "order_rng", "seen"}) {
    c10::IValue v;
    in.read(key, v);
    out.write(key, v);
  }
  for (const char* key : {"order", "sums"}) {
    torch::Tensor x;
    in.read(key, x);
    out.write(key, x);
  }
  std::ostringstream written;
  out.save_to(written);
  return written.str();
}

// The token embedding keeps the rows of the word pieces the trial's examples
// hold; its checkpoints name those rows, a checkpoint of other rows is
// refused, and one of the whole vocabulary (format 2) resumes with the
// whole vocabulary to the same results.
TEST(TextTrainerTest, TheEmbeddingKeepsTheRowsOfTheDatasPieces) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "tokenizers");
  const TrialOptions o = Tiny();
  const text::TextTaskOptions& x = o.TaskOptions<text::TextTaskOptions>();
  auto whole = RunTrial(o, nullptr);
  ASSERT_TRUE(whole.ok()) << whole.status();
  auto tokenizer = text::WordPieceTokenizer::Load(x.tokenizer);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  std::set<int64_t> pieces = {(*tokenizer)->pad_id()};
  for (const text::TextSource* source : {&x.train, &x.test}) {
    auto data = text::LoadTextData(*source);
    ASSERT_TRUE(data.ok()) << data.status();
    const torch::Tensor ids =
        text::EncodeExamples(**tokenizer, data->examples, x.model.max_len).ids;
    for (int64_t i = 0; i < ids.numel(); ++i)
      pieces.insert(ids.view(-1)[i].item<int64_t>());
  }
  EXPECT_EQ(whole->results.at("vocab_rows"), pieces.size());
  EXPECT_LT(pieces.size(), 1000u);  // of 30,522

  HandBackAt stop(7);
  auto first = RunTrial(o, &stop);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_FALSE(first->checkpoint.empty());

  TrialOptions other = o;
  other.MutableTaskOptions<text::TextTaskOptions>().test.max_examples =
      30;  // more test posts, more pieces
  auto refused = RunTrial(other, nullptr, torch::kCPU, first->checkpoint);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("token embedding rows"),
            std::string::npos)
      << refused.status();

  const std::string format2 = AsWholeVocabularyCheckpoint(
      first->checkpoint, (*tokenizer)->vocab_size());
  auto resumed = RunTrial(o, nullptr, torch::kCPU, format2);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->results.at("vocab_rows"), (*tokenizer)->vocab_size());
  for (const char* name : {"test_loss", "test_accuracy", "test_rationale_mass",
                           "test_comprehensiveness", "train_accuracy"}) {
    EXPECT_NEAR(resumed->results.at(name), whole->results.at(name),
                1e-5 * std::max(1.0, std::fabs(whole->results.at(name))))
        << name;
  }
}

TEST(TextTrainerTest, AMissingDataFileIsTheTrialsError) {
  QKOV_SKIP_WITHOUT_DATA("hatexplain", "tokenizers");
  TrialOptions o = Tiny();
  o.MutableTaskOptions<text::TextTaskOptions>().test.path =
      kShared + "/hatexplain/no-such-file.jsonl";
  auto r = RunTrial(o, nullptr);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("no-such-file.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace qkov::training
