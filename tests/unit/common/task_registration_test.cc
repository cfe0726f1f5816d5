// Tasks registered outside the task table's own list (common/task_info.h,
// docs/adding-a-task.md): found by name and by their TaskKind number like
// config.proto's tasks, and refused, naming the task, when they would be
// ambiguous or come too late; and so for settings messages
// (common/task_settings.h). A binary of its own: its probe task and probe
// settings join the lists here only.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/task_info.h"
#include "common/task_kind.h"
#include "common/task_settings.h"
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

// A settings entry of a task of its own, and that task: its defaults set
// the batch, its check refuses one batch size, naming the field.
void ProbeDefaults(v1::SweepSpec* spec) {
  if (spec->training().batch_size() == 0)
    spec->mutable_training()->set_batch_size(3);
}
absl::Status ProbeCheck(const v1::Training& t, absl::string_view prefix) {
  if (t.batch_size() == 7)
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, "batch_size: the probe refuses 7"));
  return absl::OkStatus();
}
int64_t ProbeBytes(const v1::Training& t) { return 1000 * t.batch_size(); }

TaskSettings ProbeSettings(const std::string& name) {
  TaskSettings s;
  s.name = name;
  s.apply_defaults = &ProbeDefaults;
  s.check = &ProbeCheck;
  s.memory_bytes = &ProbeBytes;
  return s;
}

TaskInfo ProbeWithSettings() {
  TaskInfo t = Probe("settings_probe", kProbeKind + 20);
  t.settings = "probe_settings";
  return t;
}

const TaskSettingsRegistration kProbeSettings(ProbeSettings("probe_settings"));
const TaskRegistration kProbeWithSettings(ProbeWithSettings());
const TaskRegistration kProbe(Probe("registry_probe", kProbeKind));

TEST(TaskRegistrationTest, ARegisteredTaskIsFoundByNameAndNumber) {
  const auto kind = static_cast<v1::TaskKind>(kProbeKind);
  const TaskInfo* t = FindTask(kind);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->name, "registry_probe");
  EXPECT_EQ(FindTask("registry_probe"), t);
  EXPECT_EQ(TaskName(kind), "registry_probe");
  EXPECT_EQ(t->kind, kProbeKind);
  // After config.proto's tasks, which keep its numbers: the list is in the
  // order of the kinds, whatever the order of registration.
  EXPECT_LT(FindTask("squad"), t);
  for (size_t i = 1; i < Tasks().size(); ++i)
    EXPECT_LT(Tasks()[i - 1].kind, Tasks()[i].kind);
  EXPECT_EQ(FindTask("squad")->kind, v1::TASK_SQUAD);
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
  EXPECT_DEATH(RegisterTask(Probe("low", 0)),
               "cannot register task \"low\": kind 0 is below 1");
  EXPECT_DEATH(RegisterTask(Probe("twin", 3)),
               "cannot register task \"twin\": kind 3 is the task "
               "fixed_attention's");
  EXPECT_DEATH(RegisterTask(Probe("", kProbeKind + 1)),
               "cannot register task \"\": no name");
  (void)Tasks();  // a lookup: the list is read without a lock from now on
  EXPECT_DEATH(RegisterTask(Probe("late", kProbeKind + 1)),
               "cannot register task \"late\": registered after the first "
               "lookup");
}

TEST(TaskSettingsRegistrationTest, ATasksOwnSettingsAreLookedUpByItsTask) {
  v1::SweepSpec spec;
  spec.mutable_training()->set_task(static_cast<v1::TaskKind>(kProbeKind + 20));
  const TaskSettings& s = TaskSettingsOf(spec.training());
  EXPECT_EQ(s.name, "probe_settings");
  EXPECT_EQ(FindTaskSettings("probe_settings"), &s);
  s.apply_defaults(&spec);
  EXPECT_EQ(spec.training().batch_size(), 3);
  EXPECT_TRUE(s.check(spec.training(), "spec.training.").ok());
  EXPECT_EQ(s.memory_bytes(spec.training()), 3000);
  spec.mutable_training()->set_batch_size(7);
  EXPECT_EQ(s.check(spec.training(), "spec.training.").message(),
            "spec.training.batch_size: the probe refuses 7");
  // The table's own messages, each by the tasks that read it; an unknown
  // or unspecified task gets the synthetic task's.
  v1::Training t;
  for (auto [kind, name] :
       {std::pair{v1::TASK_SVA, "text"}, std::pair{v1::TASK_SQUAD, "squad"},
        std::pair{v1::TASK_THEORY, "theory"},
        std::pair{v1::TASK_FIXED_ATTENTION, "synthetic"},
        std::pair{v1::TASK_KIND_UNSPECIFIED, "synthetic"},
        std::pair{static_cast<v1::TaskKind>(kProbeKind + 1), "synthetic"}}) {
    t.set_task(kind);
    EXPECT_EQ(TaskSettingsOf(t).name, name) << kind;
  }
}

TEST(TaskSettingsRegistrationTest, EveryTaskReadsAMessageWithAnEntry) {
  for (const TaskInfo& task : Tasks())
    EXPECT_NE(FindTaskSettings(task.settings), nullptr)
        << task.name << " reads training." << task.settings;
}

TEST(TaskSettingsRegistrationDeathTest, TakenOrLateRegistrationsDie) {
  EXPECT_DEATH(RegisterTaskSettings(ProbeSettings("text")),
               "cannot register task settings \"text\": the name is taken");
  TaskSettings no_check = ProbeSettings("unchecked");
  no_check.check = nullptr;
  EXPECT_DEATH(RegisterTaskSettings(no_check),
               "cannot register task settings \"unchecked\": no check");
  (void)FindTaskSettings("text");
  EXPECT_DEATH(RegisterTaskSettings(ProbeSettings("late")),
               "cannot register task settings \"late\": registered after "
               "the first lookup");
}

}  // namespace
}  // namespace qkov
