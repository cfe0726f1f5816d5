// Tasks registered outside the task table's own list (common/task_info.h,
// docs/adding-a-task.md): found by name and by their TaskKind number like
// config.proto's tasks, and refused, naming the task, when they would be
// ambiguous or come too late. A binary of its own: its probe task joins
// Tasks() here only.
#include <gtest/gtest.h>

#include <string>

#include "common/task_info.h"
#include "common/task_kind.h"
#include "qkov/v1/config.pb.h"

namespace qkov {
namespace {

constexpr int kProbeKind = kFirstRegisteredTaskKind + 7;

TaskInfo Probe(const std::string& name, int kind) {
  TaskInfo t;
  t.name = name;
  t.kind = kind;
  t.settings = "synthetic";
  t.results = {{"accuracy", 0, 1}};
  t.curves = {"train_loss"};
  return t;
}

const TaskRegistration kProbe(Probe("registry_probe", kProbeKind));

TEST(TaskRegistrationTest, ARegisteredTaskIsFoundByNameAndNumber) {
  const auto kind = static_cast<v1::TaskKind>(kProbeKind);
  const TaskInfo* t = FindTask(kind);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->name, "registry_probe");
  EXPECT_EQ(FindTask("registry_probe"), t);
  EXPECT_EQ(TaskName(kind), "registry_probe");
  EXPECT_EQ(TaskKindNumber(*t), kProbeKind);
  // After the table's own tasks, which keep config.proto's numbers.
  EXPECT_EQ(&Tasks().back(), t);
  EXPECT_EQ(TaskKindNumber(*FindTask("squad")), v1::TASK_SQUAD);
  EXPECT_EQ(FindTask(v1::TASK_SQUAD)->name, "squad");
  EXPECT_EQ(FinalResultNames("registry_probe").size(), 1u);
  EXPECT_NE(TaskNameList().find("registry_probe"), std::string::npos);
  // Numbers nobody registered stay unknown.
  EXPECT_EQ(FindTask(static_cast<v1::TaskKind>(kProbeKind + 1)), nullptr);
  EXPECT_EQ(TaskName(static_cast<v1::TaskKind>(kProbeKind + 1)), "");
}

TEST(TaskRegistrationDeathTest, AmbiguousOrLateRegistrationsDieNamingTheTask) {
  EXPECT_DEATH(RegisterTask(Probe("synthetic", kProbeKind + 1)),
               "cannot register task \"synthetic\": the name is taken");
  EXPECT_DEATH(RegisterTask(Probe("other", kProbeKind)),
               "cannot register task \"other\": kind 1007 is the task "
               "registry_probe's");
  EXPECT_DEATH(RegisterTask(Probe("low", 3)),
               "cannot register task \"low\": kind 3 is below 1000");
  EXPECT_DEATH(RegisterTask(Probe("", kProbeKind + 1)),
               "cannot register task \"\": no name");
  (void)Tasks();  // a lookup: the list is read without a lock from now on
  EXPECT_DEATH(RegisterTask(Probe("late", kProbeKind + 1)),
               "cannot register task \"late\": registered after the first "
               "lookup");
}

}  // namespace
}  // namespace qkov
