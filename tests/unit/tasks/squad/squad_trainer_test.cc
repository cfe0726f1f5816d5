// Checkpoint selection in TrainSquadModel, with a validation score scripted
// per call: it is asked after each epoch and after the last step, the run
// ends holding the weights of the first best call, and a run handed back
// between validations and resumed ends exactly as the uninterrupted one.
#include "worker/tasks/squad/squad_trainer.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/data_available.h"
#include "tests/unit/training/shared_data.h"
#include "worker/tasks/squad/squad_data.h"
#include "worker/tasks/text/text_model.h"

namespace qkov::training::squad {
namespace {

std::vector<SquadExample> Questions(int64_t n) {
  SquadSource source;
  source.path = testing::SharedData() + "/squad/dev-v1.1-first5.json";
  source.article_end = 1;
  absl::StatusOr<SquadData> data = LoadSquad(source);
  EXPECT_TRUE(data.ok()) << data.status();
  std::vector<SquadExample> out;
  if (!data.ok()) return out;
  for (const SquadQuestion& q : data->questions) {
    if (static_cast<int64_t>(out.size()) == n) break;
    absl::StatusOr<SquadExample> ex =
        BuildExample(q, testing::SharedGpt2(), PromptOptions());
    if (ex.ok()) out.push_back(*std::move(ex));
  }
  return out;
}

text::TextModel TinyDecoder() {
  text::TextModelOptions mo;
  mo.vocab_size = testing::SharedGpt2().vocab_size();
  mo.shape.n_ctx = mo.max_len = 256;
  mo.shape.d_model = 8;
  mo.shape.heads = 2;
  mo.shape.d_head = 4;
  mo.shape.d_mlp = 16;
  mo.shape.layers = 1;
  mo.residual = mo.layer_norm = mo.causal = mo.lm_head = true;
  mo.padding_mask = mo.gelu_tanh = false;
  mo.dropout = 0.1;  // so a resumed run must restore the dropout stream
  return text::TextModel(mo, Parameterization::kFafo, 11);
}

SquadTrainOptions FourEpochs() {
  SquadTrainOptions o;
  o.base_lr = 1e-2;
  o.lr_ratio = 5;
  o.batch = 4;  // 12 questions: 3 micro-batches, so 3 steps, an epoch
  o.accumulation = 1;
  o.epochs = 4;
  o.one_cycle = false;
  o.warmup_steps = 2;
  return o;
}

// Scores 0.2, 0.7, 0.7, 0.1 in turn, and keeps a copy of the weights and
// the step of each call.
struct Script {
  std::vector<double> scores = {0.2, 0.7, 0.7, 0.1};
  size_t calls = 0;
  std::vector<int64_t> steps;
  std::vector<std::vector<torch::Tensor>> weights;

  std::function<double(int64_t)> Hook(text::TextModel& model) {
    return [this, &model](int64_t step) {
      steps.push_back(step);
      std::vector<torch::Tensor> w;
      for (const torch::Tensor& p : model->parameters())
        w.push_back(p.detach().clone());
      weights.push_back(std::move(w));
      return scores[calls++];
    };
  }
};

void ExpectWeights(text::TextModel& model,
                   const std::vector<torch::Tensor>& want) {
  const std::vector<torch::Tensor> got = model->parameters();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(torch::equal(got[i], want[i])) << "parameter " << i;
}

// Twelve training questions and the end-of-text id that pads them.
class SquadTrainerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(train_.size(), 12u); }

  // Trains `model` for FourEpochs with `hooks`, the script validating.
  absl::StatusOr<SquadTrainRun> Train(text::TextModel& model, Script& script,
                                      SquadTrainHooks hooks = {}) {
    hooks.validate = script.Hook(model);
    return TrainSquadModel(model, train_, pad_, FourEpochs(), hooks);
  }

  const std::vector<SquadExample> train_ = Questions(12);
  const int64_t pad_ = testing::SharedGpt2().end_of_text_id();
};

TEST_F(SquadTrainerTest, EndsWithTheWeightsOfTheFirstBestValidation) {
  QKOV_SKIP_WITHOUT_DATA("squad", "tokenizers");
  text::TextModel model = TinyDecoder();
  Script script;
  auto run = Train(model, script);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->steps, 12);
  EXPECT_EQ(script.steps, (std::vector<int64_t>{3, 6, 9, 12}));
  EXPECT_EQ(run->selected_step, 6);  // the first 0.7
  EXPECT_EQ(run->selected_score, 0.7);
  ExpectWeights(model, script.weights[1]);
  // Training moved them after step 6, so this compares something.
  EXPECT_FALSE(torch::equal(script.weights[1][0], script.weights[3][0]));

  // Without a hook: the last weights, and no score.
  text::TextModel last = TinyDecoder();
  auto plain = TrainSquadModel(last, train_, pad_, FourEpochs(), {});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->selected_step, 12);
  EXPECT_EQ(plain->selected_score, -1);
  ExpectWeights(last, script.weights[3]);
}

TEST_F(SquadTrainerTest, HandBackBetweenValidationsResumesToTheSameSelection) {
  QKOV_SKIP_WITHOUT_DATA("squad", "tokenizers");
  text::TextModel whole = TinyDecoder();
  Script whole_script;
  ASSERT_TRUE(Train(whole, whole_script).ok());

  // Handed back before step 8 (the best was at 6), then resumed in a fresh
  // model: the selection lives in the checkpoint.
  for (int64_t stop_at : {7, 0}) {
    text::TextModel first = TinyDecoder();
    Script script;
    SquadTrainHooks stop;
    int64_t polls = 0;
    stop.poll_stop = [&] {
      return polls++ == stop_at ? StopRequest::kHandBack : StopRequest::kNone;
    };
    auto part = Train(first, script, stop);
    ASSERT_TRUE(part.ok()) << part.status();
    ASSERT_TRUE(part->stopped);
    EXPECT_EQ(part->steps, stop_at);
    text::TextModel second = TinyDecoder();
    SquadTrainHooks resume;
    resume.resume_from = part->checkpoint;
    auto rest = Train(second, script, resume);
    ASSERT_TRUE(rest.ok()) << rest.status();
    EXPECT_EQ(script.steps, (std::vector<int64_t>{3, 6, 9, 12})) << stop_at;
    EXPECT_EQ(rest->selected_step, 6) << stop_at;
    ExpectWeights(second, whole_script.weights[1]);
    // Only the script's counter continues across the two runs.
    EXPECT_EQ(script.calls, 4u);
  }
}

}  // namespace
}  // namespace qkov::training::squad
