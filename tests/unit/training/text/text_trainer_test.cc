// The text trainer on a tiny model and real files: a trial handed back
// mid-epoch and resumed from its checkpoint ends with exactly the results of
// an uninterrupted run; a bad data path is the trial's error, not a crash.
#include "worker/training/text/text_trainer.h"

#include <gtest/gtest.h>

#include "tests/unit/training/result_names_check.h"
#include "worker/training/trainer.h"

namespace qkov::training {
namespace {

const std::string kShared = QKOV_SHARED_DATA_DIR;

TrialOptions Tiny() {
  TrialOptions o;
  o.kind = TaskKind::kText;
  o.parameterization = Parameterization::kFafo;
  o.lr_ratio = 10;
  o.eta_ov = 1e-3;
  o.batch_size = 8;
  o.report_every = 2;
  o.optimizer.kind = OptimizerKind::kAdamW;
  o.optimizer.schedule = ScheduleKind::kCosineWarmup;
  o.eval.dtap_attention_edges = {0, 0.33, 0.66, 1.1};
  o.eval.dtap_probability_edges = {0, 0.33, 0.66, 1.1};
  text::TextTaskOptions& t = o.text;
  t.train.format = text::TextFormat::kHateXplain;
  t.train.path = kShared + "/hatexplain/validation.jsonl";
  t.train.max_examples = 36;  // 5 steps per epoch, the last one short
  t.test = t.train;
  t.test.path = kShared + "/hatexplain/test.jsonl";
  t.test.max_examples = 20;
  t.tokenizer.vocab_path = kShared + "/tokenizers/bert-base-uncased/vocab.txt";
  t.epochs = 3;
  t.model.max_len = 16;
  t.model.n_ctx = 16;
  t.model.d_model = 8;
  t.model.heads = 2;
  t.model.d_head = 4;
  t.model.d_mlp = 8;
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

TEST(TextTrainerTest, HandBackAndResumeIsBitIdentical) {
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

TEST(TextTrainerTest, AMissingDataFileIsTheTrialsError) {
  TrialOptions o = Tiny();
  o.text.test.path = kShared + "/hatexplain/no-such-file.jsonl";
  auto r = RunTrial(o, nullptr);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("no-such-file.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace qkov::training
