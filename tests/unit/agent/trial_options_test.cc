// The worker's conversion of a lease's settings (worker/agent/trial_options):
// every enum field through its table, and a value the worker does not know
// refused with the field and the values it takes.
#include "worker/agent/trial_options.h"

#include <gtest/gtest.h>

#include <functional>

#include "absl/strings/match.h"
#include "tests/unit/agent/synthetic_config.h"

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
  EXPECT_EQ(o->kind, training::TaskKind::kSynthetic);
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
       "training.task: unknown value 99 (expected TASK_SYNTHETIC, "
       "TASK_FIXED_ATTENTION, TASK_THEORY, TASK_TEXT, TASK_HATEXPLAIN, "
       "TASK_SVA or TASK_SQUAD)"},
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

TEST(TrialOptionsTest, TextEnumsAreRefusedByField) {
  v1::TrialConfig c = testing::SyntheticConfig(1, 100);
  c.mutable_training()->set_task(v1::TASK_HATEXPLAIN);
  v1::TextTask* x = c.mutable_training()->mutable_text();
  x->set_readout(v1::READOUT_LAST_TOKEN);
  x->set_embed_group(v1::PARAM_GROUP_QK);
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

}  // namespace
}  // namespace qkov::agent
