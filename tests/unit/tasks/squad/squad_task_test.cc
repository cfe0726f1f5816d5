// The SQuAD task trainer on a tiny decoder and the
// shipped dev set: a trial trains and scores greedy answers into eval_
// results and the 4x4 DTAP heatmap with the checksums of what it read; a
// trial handed back mid-epoch (with dropout on) and resumed ends with
// exactly the results of an uninterrupted run; bad files, a checkpoint of
// other options and settings outside the rules are the trial's error.
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>

#include "tests/data_available.h"
#include "tests/unit/training/result_names_check.h"
#include "tests/unit/training/shared_data.h"
#include "worker/tasks/squad/squad_task_trainer.h"
#include "worker/tasks/text/text_defaults.h"
#include "worker/training/optimizer.h"
#include "worker/training/trainer.h"

namespace qkov::training {
namespace {

const std::string kShared = QKOV_SHARED_DATA_DIR;

TrialOptions Tiny() {
  TrialOptions o;
  o.task = "squad";
  o.parameterization = Parameterization::kCafo;
  o.lr_ratio = 20;
  o.eta_ov = 1e-3;
  o.seed = 7;
  o.batch_size = 4;
  o.report_every = 2;
  o.max_steps = 1000;
  o.optimizer.kind = OptimizerKind::kAdamW;
  o.optimizer.schedule = ScheduleKind::kCosineWarmup;
  o.optimizer.weight_decay = 0.05;
  o.optimizer.warmup_steps = 2;
  o.eval.num_examples = 3;
  o.eval.tau_attention = 0.1;
  o.eval.tau_probability = 0.5;
  o.eval.dtap_attention_edges = {0, 0.05, 0.1, 0.5, 1.001};
  o.eval.dtap_probability_edges = {0, 0.05, 0.1, 0.5, 1.001};
  squad::SquadTaskOptions& q = o.MutableTaskOptions<squad::SquadTaskOptions>();
  q.train.path = kShared + "/squad/dev-v1.1-first5.json";
  q.train.article_end = 1;
  q.train.max_questions = 20;  // 5 micro-batches per epoch
  q.eval.path = q.train.path;
  q.eval.article_begin = 1;
  q.eval.article_end = 2;
  q.tokenizer = testing::SharedGpt2Options();
  q.model.shape.n_ctx = 256;
  q.model.shape.d_model = 8;
  q.model.shape.heads = 2;
  q.model.shape.d_head = 4;
  q.model.shape.d_mlp = 16;
  q.model.shape.layers = 2;
  q.model.dropout = 0.1;
  q.epochs = 3;
  q.accumulation = 2;
  q.max_new_tokens = 3;
  return o;
}

class HandBackAt : public TrainingObserver {
 public:
  explicit HandBackAt(int64_t polls) : left_(polls) {}
  bool OnReport(int64_t step, const std::vector<MetricPoint>& points) override {
    if (first_report < 0) first_report = step;
    for (const MetricPoint& p : points) {
      if (p.name == "train_loss") losses.push_back(p.value);
      if (p.name == "lr_qk") lr_qk.push_back(p.value);
    }
    return true;
  }
  StopRequest PollStop() override {
    return --left_ < 0 ? StopRequest::kHandBack : StopRequest::kNone;
  }
  int64_t first_report = -1;
  std::vector<double> losses, lr_qk;

 private:
  int64_t left_;
};

TEST(SquadTaskTest, TrainsAndScoresGreedyAnswers) {
  QKOV_SKIP_WITHOUT_DATA("glove", "squad", "tokenizers");
  TrialOptions o = Tiny();
  o.optimizer.schedule = ScheduleKind::kOneCycle;
  ASSERT_TRUE(o.Validate().ok()) << o.Validate();
  HandBackAt never(1 << 30);
  auto r = RunTrial(o, &never);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->end, TrialEnd::kMaxSteps);
  // 3 epochs x 5 micro-batches / 2 per step.
  EXPECT_EQ(r->steps, 7);
  EXPECT_EQ(never.losses.size(), 4u);  // steps 2, 4, 6 and the last
  for (double l : never.losses) EXPECT_GT(l, 0);
  // The QK rate follows OneCycleLR's shape at 20 x eta_ov (reports after
  // steps 2, 4, 6, 7: the rate of step index 1, 3, 5, 6).
  ASSERT_EQ(never.lr_qk.size(), 4u);
  for (auto [i, step] : {std::pair{0, 1}, std::pair{1, 3}, std::pair{3, 6}}) {
    EXPECT_DOUBLE_EQ(never.lr_qk[i],
                     20 * 1e-3 * OneCycleFactor(step, 7, 2, nullptr))
        << step;
  }
  EXPECT_EQ(r->results.at("train_questions"), 20);
  EXPECT_EQ(r->results.at("eval_examples"), 3);
  for (const char* name :
       {"eval_f1", "eval_em", "eval_ac", "eval_acmc",
        "eval_answer_mass_rollout", "eval_answer_mass_layer_mean",
        "eval_answer_mass_layer_max", "eval_gold_probability"}) {
    ASSERT_TRUE(r->results.count(name)) << name;
    EXPECT_GE(r->results.at(name), 0) << name;
    EXPECT_LE(r->results.at(name), 1) << name;
  }
  EXPECT_TRUE(r->results.count("eval_comprehensiveness"));
  EXPECT_TRUE(r->results.count("eval_sufficiency"));
  // Every result is one a ratio search may name (common/result_names.h),
  // within its range; all of them but glove_matched (no GloVe file here),
  // selected_val_f1 (no checkpoint selection: the last step's weights) and
  // train_f1 (not asked for).
  ExpectResultsListed(r->results, "squad");
  EXPECT_EQ(r->results.size(), FinalResultNames("squad").size() - 3);
  EXPECT_EQ(r->results.at("selected_step"), 7);
  ASSERT_EQ(r->heatmaps.size(), 1u);
  const Heatmap& h = r->heatmaps[0];
  EXPECT_EQ(h.name, "dtap");
  EXPECT_EQ(h.x_edges.size(), 5u);
  EXPECT_EQ(h.y_edges.size(), 5u);
  EXPECT_NEAR(std::accumulate(h.values.begin(), h.values.end(), 0.0), 100,
              1e-9);
  for (const char* input : {"squad.train", "squad.eval", "squad.encoder_path",
                            "squad.merges_path"}) {
    ASSERT_TRUE(r->input_sha256.count(input)) << input;
    EXPECT_EQ(r->input_sha256.at(input).size(), 64u) << input;
  }
  EXPECT_EQ(r->input_sha256.at("squad.encoder_path"),
            defaults::kGpt2EncoderSha256);
}

TEST(SquadTaskTest, HandBackAndResumeIsBitIdentical) {
  QKOV_SKIP_WITHOUT_DATA("glove", "squad", "tokenizers");
  const TrialOptions o = Tiny();
  HandBackAt whole_observer(1 << 30);
  auto whole = RunTrial(o, &whole_observer);
  ASSERT_TRUE(whole.ok()) << whole.status();
  HandBackAt stop(3);  // before step 4 of 7: inside the second epoch
  auto first = RunTrial(o, &stop);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->end, TrialEnd::kStopped);
  EXPECT_EQ(first->steps, 3);
  ASSERT_FALSE(first->checkpoint.empty());
  HandBackAt rest(1 << 30);
  auto resumed = RunTrial(o, &rest, torch::kCPU, first->checkpoint);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(rest.first_report, 4);  // it went on from step 3
  EXPECT_EQ(resumed->steps, 7);
  // The losses after the hand-back (steps 4, 6, 7) and every result.
  std::vector<double> joined = stop.losses;
  joined.insert(joined.end(), rest.losses.begin(), rest.losses.end());
  EXPECT_EQ(joined, whole_observer.losses);
  EXPECT_EQ(resumed->results, whole->results);
  EXPECT_EQ(resumed->heatmaps[0].values, whole->heatmaps[0].values);

  // Handed back before its first step, it still resumes to the same end.
  HandBackAt at_once(0);
  auto none = RunTrial(o, &at_once);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->steps, 0);
  auto from_zero = RunTrial(o, nullptr, torch::kCPU, none->checkpoint);
  ASSERT_TRUE(from_zero.ok()) << from_zero.status();
  EXPECT_EQ(from_zero->results, whole->results);

  // A checkpoint of other options (another step count) is refused.
  TrialOptions other = o;
  other.MutableTaskOptions<squad::SquadTaskOptions>().epochs = 5;
  auto wrong = RunTrial(other, nullptr, torch::kCPU, first->checkpoint);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("these options give 12"),
            std::string::npos)
      << wrong.status();
  auto garbage = RunTrial(o, nullptr, torch::kCPU, "not a checkpoint");
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument);
}

class RecordValidation : public HandBackAt {
 public:
  RecordValidation() : HandBackAt(1 << 30) {}
  bool OnReport(int64_t step, const std::vector<MetricPoint>& points) override {
    for (const MetricPoint& p : points) {
      if (p.name == "selection_f1") val_f1.push_back({step, p.value});
    }
    return HandBackAt::OnReport(step, points);
  }
  std::vector<std::pair<int64_t, double>> val_f1;
};

// With squad.validation_questions the trial validates after each epoch
// (steps 3 and 5 of 7: micro-batches 6 and 10 of 5 a epoch) and after its
// last step, reports each F1 as selection_f1, scores the weights of the best
// and says which; without it, the last weights (the test above).
TEST(SquadTaskTest, ValidationSelectsTheWeightsTheTrialIsScoredWith) {
  QKOV_SKIP_WITHOUT_DATA("glove", "squad", "tokenizers");
  TrialOptions o = Tiny();
  o.MutableTaskOptions<squad::SquadTaskOptions>().validation.path =
      o.MutableTaskOptions<squad::SquadTaskOptions>().train.path;
  o.MutableTaskOptions<squad::SquadTaskOptions>().validation.article_begin = 2;
  o.MutableTaskOptions<squad::SquadTaskOptions>().validation.article_end = 3;
  o.MutableTaskOptions<squad::SquadTaskOptions>().validation_questions = 3;
  o.MutableTaskOptions<squad::SquadTaskOptions>().train_f1_questions = 4;
  ASSERT_TRUE(o.Validate().ok()) << o.Validate();
  RecordValidation seen;
  auto r = RunTrial(o, &seen);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(seen.val_f1.size(), 3u);
  EXPECT_EQ(seen.val_f1[0].first, 3);
  EXPECT_EQ(seen.val_f1[1].first, 5);
  EXPECT_EQ(seen.val_f1[2].first, 7);
  // The first of the highest.
  size_t best = 0;
  for (size_t i = 1; i < seen.val_f1.size(); ++i) {
    if (seen.val_f1[i].second > seen.val_f1[best].second) best = i;
  }
  EXPECT_EQ(r->results.at("selected_step"), seen.val_f1[best].first);
  EXPECT_EQ(r->results.at("selected_val_f1"), seen.val_f1[best].second);
  EXPECT_EQ(r->steps, 7);
  ASSERT_TRUE(r->results.count("train_f1"));  // range: ExpectResultsListed
  ExpectResultsListed(r->results, "squad");
  EXPECT_EQ(r->results.size(), FinalResultNames("squad").size() - 1);
  ASSERT_TRUE(r->input_sha256.count("squad.validation"));
  EXPECT_EQ(r->input_sha256.at("squad.validation"),
            r->input_sha256.at("squad.train"));  // the same file
  // Validation changes no random stream: the training losses are those of
  // the same trial without it.
  HandBackAt plain(1 << 30);
  TrialOptions without = Tiny();
  ASSERT_TRUE(RunTrial(without, &plain).ok());
  EXPECT_EQ(seen.losses, plain.losses);
}

TEST(SquadTaskTest, BadFilesAreTheTrialsErrorNamingTheFile) {
  QKOV_SKIP_WITHOUT_DATA("glove", "squad", "tokenizers");
  const std::string dir = ::testing::TempDir();
  TrialOptions o = Tiny();
  o.MutableTaskOptions<squad::SquadTaskOptions>().train.path =
      dir + "/no-such-squad.json";
  auto missing = RunTrial(o, nullptr);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no-such-squad.json"),
            std::string::npos)
      << missing.status();

  // A truncated file: PATH:LINE.
  std::ifstream in(kShared + "/squad/dev-v1.1-first5.json");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const std::string cut = dir + "/cut-squad.json";
  std::ofstream(cut) << text.substr(0, 3000);
  o = Tiny();
  o.MutableTaskOptions<squad::SquadTaskOptions>().eval.path = cut;
  auto truncated = RunTrial(o, nullptr);
  EXPECT_EQ(truncated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(truncated.status().message().rfind(cut + ":", 0), 0u)
      << truncated.status();

  // An article range past the file's end.
  o = Tiny();
  o.MutableTaskOptions<squad::SquadTaskOptions>().eval.article_begin = 40;
  o.MutableTaskOptions<squad::SquadTaskOptions>().eval.article_end = 41;
  auto empty = RunTrial(o, nullptr);
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(empty.status().message().find("select none of its 5"),
            std::string::npos)
      << empty.status();

  // Every question too long for the prompt budget.
  o = Tiny();
  o.MutableTaskOptions<squad::SquadTaskOptions>().prompt.max_prompt_tokens = 8;
  auto too_long = RunTrial(o, nullptr);
  EXPECT_EQ(too_long.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(too_long.status().message().find("no usable question"),
            std::string::npos)
      << too_long.status();

  // A tokenizer file with another checksum than the published one.
  o = Tiny();
  o.MutableTaskOptions<squad::SquadTaskOptions>().tokenizer.merges_sha256 =
      std::string(64, '0');
  auto checksum = RunTrial(o, nullptr);
  EXPECT_EQ(checksum.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(checksum.status().message().find("vocab.bpe"), std::string::npos)
      << checksum.status();

  // A GloVe file of the wrong width (100d for d_model 8).
  o = Tiny();
  o.MutableTaskOptions<squad::SquadTaskOptions>().glove_path =
      kShared + "/glove/glove.6B.100d.squad-first5.txt";
  auto glove = RunTrial(o, nullptr);
  EXPECT_EQ(glove.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(glove.status().message().find("glove.6B.100d"), std::string::npos)
      << glove.status();
}

}  // namespace
}  // namespace qkov::training
