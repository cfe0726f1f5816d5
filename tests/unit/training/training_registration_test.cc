// A trainer registered beside the worker's table (task_registry.h,
// docs/adding-a-task.md): given the next TaskKind, reached by RunTrial like
// the table's, and refused, naming it, when it would be ambiguous, empty or
// late. A binary of its own: its probe is in no other suite's lists.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/task_info.h"
#include "worker/training/task_registry.h"
#include "worker/training/trainer.h"

namespace qkov::training {
namespace {

// Returns its options' seed and lr_ratio as results, so a test sees that
// RunTrial reached it with the trial's options.
class ProbeTrainer : public InTurnTrainer {
 protected:
  absl::StatusOr<TrialOutcome> TrainOne(
      const TrialOptions& options, TrainingObserver* observer,
      const torch::Device& device,
      const std::string& resume_from) const override {
    TrialOutcome out;
    out.results["seed"] = static_cast<double>(options.seed);
    out.results["lr_ratio"] = options.lr_ratio;
    return out;
  }
};

absl::Status CheckProbe(const TrialOptions& o) {
  if (o.lr_ratio > 100) return absl::InvalidArgumentError("lr_ratio: > 100");
  return absl::OkStatus();
}

TaskInfo ProbeInfo() {
  TaskInfo t;
  t.name = "trainer_probe";
  t.kind = kFirstRegisteredTaskKind + 11;
  t.settings = "synthetic";
  return t;
}

const ProbeTrainer kProbeTrainer;
const TaskRegistration kProbeInfo(ProbeInfo());
const TrainingTaskRegistration kProbe(
    {"trainer_probe", {"trainer_probe"}, &kProbeTrainer, &CheckProbe});

TEST(TrainingRegistrationTest,
     ARegisteredTrainerComesAfterTheBuiltInsAndTrains) {
  const TrainingTask* t = TrainingTaskNamed("trainer_probe");
  ASSERT_NE(t, nullptr);
  // Its kind is above config.proto's, so it sorts after the five packages'
  // trainers.
  ASSERT_EQ(TrainingTasks().size(), 6u);
  EXPECT_EQ(&TrainingTasks().back(), t);
  EXPECT_NE(TrainedTaskNames().find("trainer_probe"), std::string::npos);

  TrialOptions o;
  o.task = "trainer_probe";
  o.seed = 77;
  o.lr_ratio = 3;
  absl::StatusOr<TrialOutcome> out = RunTrial(o, nullptr);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->results.at("seed"), 77);
  EXPECT_EQ(out->results.at("lr_ratio"), 3);
  // Its own checks run before it trains.
  o.lr_ratio = 1000;
  out = RunTrial(o, nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("lr_ratio: > 100"), std::string::npos)
      << out.status();
}

TEST(TrainingRegistrationDeathTest, BadOrLateRegistrationsDieNamingIt) {
  EXPECT_DEATH(RegisterTrainingTask(
                   {"again", {"synthetic"}, &kProbeTrainer, &CheckProbe}),
               "cannot register trainer \"again\": synthetic is trained by "
               "synthetic");
  EXPECT_DEATH(RegisterTrainingTask({"empty", {"x"}, nullptr, &CheckProbe}),
               "cannot register trainer \"empty\": no name, trainer or check");
  EXPECT_DEATH(RegisterTrainingTask({"none", {}, &kProbeTrainer, &CheckProbe}),
               "cannot register trainer \"none\": trains no task");
  (void)TrainingTasks();  // a lookup: the list is read without a lock now
  EXPECT_DEATH(
      RegisterTrainingTask({"late", {"late"}, &kProbeTrainer, &CheckProbe}),
      "cannot register trainer \"late\": registered after the first "
      "lookup");
}

}  // namespace
}  // namespace qkov::training
