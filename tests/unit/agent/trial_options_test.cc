// The worker's conversion of a lease's settings (worker/agent/trial_options):
// every enum field through its table, a value the worker does not know
// refused with the field and the values it takes, and a text task's settings
// checked before conversion.
#include "worker/agent/trial_options.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>

#include "absl/strings/match.h"
#include "common/task_info.h"
#include "common/trial_defaults.h"
#include "tests/unit/agent/synthetic_config.h"
#include "worker/agent/settings_reader.h"
#include "worker/tasks/text/text_defaults.h"
#include "worker/tasks/text/text_options.h"
#include "worker/tasks/theory/theory_options.h"

namespace qkov::agent {
namespace {

namespace v1 = ::qkov::v1;

TEST(TrialOptionsTest, ConvertsEveryEnumOfASyntheticTrial) {
  v1::TrialConfig c = testing::SyntheticConfig(1, 100);
  c.set_parameterization(v1::CAFO);
  c.mutable_training()->mutable_optimizer()->set_kind(v1::ADAMW);
  c.mutable_training()->mutable_optimizer()->set_schedule(v1::QK_RAMP);
  c.mutable_training()->mutable_init()->set_ov(v1::INIT_DEFAULT_LINEAR);
  absl::StatusOr<training::TrialOptions> o = ToTrialOptions(c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->task, "synthetic");
  EXPECT_EQ(o->parameterization, training::Parameterization::kCafo);
  EXPECT_EQ(o->optimizer.kind, training::OptimizerKind::kAdamW);
  EXPECT_EQ(o->optimizer.schedule, training::ScheduleKind::kQkRamp);
  EXPECT_EQ(o->init.qk, training::InitKind::kIdentity);
  EXPECT_EQ(o->init.ov, training::InitKind::kDefaultLinear);
  EXPECT_EQ(o->seed, 1u);
  EXPECT_EQ(o->max_steps, 100);
}

TEST(TrialOptionsTest, UnknownEnumValuesAreRefusedByField) {
  struct Case {
    std::function<void(v1::TrialConfig*)> set;
    const char* message;
  };
  const Case cases[] = {
      {[](v1::TrialConfig* c) {
         c->set_parameterization(v1::PARAMETERIZATION_UNSPECIFIED);
       },
       "parameterization: unknown value 0 (expected FAFO, FACO, CAFO or "
       "CACO)"},
      {[](v1::TrialConfig* c) {
         c->mutable_training()->set_task(static_cast<v1::TaskKind>(99));
       },
       "training.task: unknown value 99 (expected synthetic, "
       "theory, fixed_attention, text, hatexplain, sva or squad)"},
      {[](v1::TrialConfig* c) {
         c->mutable_training()->mutable_optimizer()->set_kind(
             v1::OPTIMIZER_KIND_UNSPECIFIED);
       },
       "training.optimizer.kind: unknown value 0 (expected SGD or ADAMW)"},
      {[](v1::TrialConfig* c) {
         c->mutable_training()->mutable_optimizer()->set_schedule(
             static_cast<v1::ScheduleKind>(40));
       },
       "training.optimizer.schedule: unknown value 40 (expected CONSTANT, "
       "COSINE_WARMUP, QK_RAMP or ONE_CYCLE)"},
      {[](v1::TrialConfig* c) {
         c->mutable_training()->mutable_init()->set_ov(
             static_cast<v1::InitKind>(0));
       },
       "training.init.ov: unknown value 0 (expected INIT_IDENTITY or "
       "INIT_DEFAULT_LINEAR)"},
  };
  for (const Case& k : cases) {
    v1::TrialConfig c = testing::SyntheticConfig(1, 100);
    k.set(&c);
    absl::StatusOr<training::TrialOptions> o = ToTrialOptions(c);
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(o.status().message(), k.message);
  }
}

// A HateXplain trial's text settings at the task's defaults.
v1::TrialConfig HateXplainConfig() {
  const defaults::TextDefaults& d = defaults::kHateXplainText;
  v1::TrialConfig c = testing::SyntheticConfig(1, 100);
  c.mutable_training()->set_task(v1::TASK_HATEXPLAIN);
  v1::TextTask* x = c.mutable_training()->mutable_text();
  for (v1::TextData* data :
       {x->mutable_train(), x->mutable_validation(), x->mutable_test()}) {
    data->set_format("hatexplain");
  }
  x->mutable_train()->set_path("train.jsonl");
  x->set_vocab_path("vocab.txt");
  x->set_max_len(d.max_len);
  x->set_n_ctx(d.n_ctx);
  x->set_d_model(d.d_model);
  x->set_heads(d.heads);
  x->set_d_head(d.d_head);
  x->set_d_mlp(d.d_mlp);
  x->set_layers(d.layers);
  x->set_init_std(d.init_std);
  x->set_epochs(d.epochs);
  x->set_k_percent(d.k_percent);
  x->set_readout(v1::READOUT_LAST_TOKEN);
  x->set_embed_group(v1::PARAM_GROUP_QK);
  x->set_pos_group(v1::PARAM_GROUP_OV);
  return c;
}

TEST(TrialOptionsTest, TextEnumsAreRefusedByField) {
  v1::TrialConfig c = HateXplainConfig();
  ASSERT_TRUE(ToTrialOptions(c).ok()) << ToTrialOptions(c).status();
  v1::TextTask* x = c.mutable_training()->mutable_text();
  x->set_pos_group(static_cast<v1::ParamGroupKind>(5));
  absl::StatusOr<training::TrialOptions> o = ToTrialOptions(c);
  EXPECT_EQ(o.status().message(),
            "training.text.pos_group: unknown value 5 (expected "
            "PARAM_GROUP_QK or PARAM_GROUP_OV)");
  x->set_pos_group(v1::PARAM_GROUP_OV);
  x->clear_readout();
  o = ToTrialOptions(c);
  EXPECT_EQ(o.status().message(),
            "training.text.readout: unknown value 0 (expected "
            "READOUT_LAST_TOKEN or READOUT_FIRST_PAD)");
}

// A trial's shipped data paths (../shared/data/...) are the files this
// worker finds in its data folders ($QKOV_DATA here), whatever its working
// directory; other paths are read as written.
TEST(TrialOptionsTest, ShippedDataPathsAreThisWorkersFiles) {
  char tmpl[] = "/tmp/qkov-worker-data-XXXXXX";
  const std::string data = mkdtemp(tmpl);
  mkdir((data + "/hatexplain").c_str(), 0755);
  mkdir((data + "/tokenizers").c_str(), 0755);
  std::ofstream(data + "/hatexplain/train.jsonl") << "{}\n";
  std::ofstream(data + "/tokenizers/vocab.txt") << "[PAD]\n";
  const char* old = getenv("QKOV_DATA");
  const std::string saved = old != nullptr ? old : "";
  setenv("QKOV_DATA", data.c_str(), 1);
  v1::TrialConfig c = HateXplainConfig();
  v1::TextTask* x = c.mutable_training()->mutable_text();
  x->mutable_train()->set_path("../shared/data/hatexplain/train.jsonl");
  x->set_vocab_path("../shared/data/tokenizers/vocab.txt");
  x->mutable_test()->set_path("/elsewhere/test.jsonl");
  absl::StatusOr<training::TrialOptions> o = ToTrialOptions(c);
  if (old != nullptr) {
    setenv("QKOV_DATA", saved.c_str(), 1);
  } else {
    unsetenv("QKOV_DATA");
  }
  std::system(("rm -rf " + data).c_str());
  ASSERT_TRUE(o.ok()) << o.status();
  const auto& t = o->TaskOptions<training::text::TextTaskOptions>();
  EXPECT_EQ(t.train.path, data + "/hatexplain/train.jsonl");
  EXPECT_EQ(t.tokenizer.vocab_path, data + "/tokenizers/vocab.txt");
  EXPECT_EQ(t.test.path, "/elsewhere/test.jsonl");
}

// The text settings are checked on the proto, by the server's own checks
// (the text entry of common/task_settings.h), before any conversion.
TEST(TrialOptionsTest, TextSettingsAreCheckedBeforeConversion) {
  v1::TrialConfig c = HateXplainConfig();
  c.mutable_training()->mutable_text()->set_heads(0);
  c.mutable_training()->mutable_text()->set_pos_group(
      static_cast<v1::ParamGroupKind>(5));
  absl::StatusOr<training::TrialOptions> o = ToTrialOptions(c);
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(o.status().message(), "text.heads: must be in [1, 64] (got 0)");
}

// Each settings message is read by its folder's reader into the options
// its trainer uses; the synthetic tasks carry no task options.
TEST(SettingsReaderTest, EveryTaskReadsAMessageThisWorkerCanRead) {
  for (const TaskInfo& task : Tasks())
    EXPECT_NE(FindSettingsReader(task.settings), nullptr)
        << task.name << " reads training." << task.settings;
  v1::TrialConfig c = testing::SyntheticConfig(1, 100);
  c.mutable_training()->mutable_synthetic()->set_seq_len(17);
  absl::StatusOr<training::TrialOptions> o = ToTrialOptions(c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->synthetic.seq_len, 17);
  EXPECT_FALSE(o->task_options.has_value());
  c.set_parameterization(v1::PARAMETERIZATION_UNSPECIFIED);
  c.mutable_training()->set_task(v1::TASK_THEORY);
  c.mutable_training()->mutable_theory()->set_m(7);
  c.mutable_training()->mutable_theory()->set_n(50);
  c.mutable_training()->mutable_theory()->set_b(50);
  c.mutable_training()->mutable_theory()->set_num_classes(20);
  c.mutable_training()->mutable_theory()->set_dtau(10);
  c.mutable_training()->mutable_theory()->set_max_tau(1e3);
  c.mutable_training()->mutable_theory()->set_target_loss(1e-4);
  c.mutable_training()->mutable_theory()->set_num_thresholds(5);
  c.mutable_training()->mutable_theory()->set_num_samples(10);
  o = ToTrialOptions(c);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->TaskOptions<training::TheoryOptions>().m, 7);
  EXPECT_EQ(o->TaskOptions<training::TheoryOptions>().num_samples, 10);
}

TEST(SettingsReaderDeathTest, TakenOrLateRegistrationsDie) {
  const SettingsReader text = *FindSettingsReader("text");
  EXPECT_DEATH(RegisterSettingsReader(text),
               "cannot register settings reader \"text\": the name is taken");
  EXPECT_DEATH(RegisterSettingsReader({"unread", nullptr}),
               "cannot register settings reader \"unread\": no read");
  EXPECT_DEATH(RegisterSettingsReader({"late", text.read}),
               "cannot register settings reader \"late\": registered "
               "after the first lookup");
}

}  // namespace
}  // namespace qkov::agent
