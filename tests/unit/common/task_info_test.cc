// The task table (common/task_info.h): one entry for every task the proto
// names, each view drawn from what the task stores or reports.
#include "common/task_info.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "common/task_kind.h"
#include "qkov/v1/config.pb.h"

namespace qkov {
namespace {

// Each package registers its tasks from its own folder with config.proto's
// number; each number must be the value config.proto names after the task.
TEST(TaskInfoTest, EveryProtoTaskKindHasOneEntryUnderItsName) {
  std::set<std::string> names;
  for (const TaskInfo& t : Tasks()) {
    EXPECT_TRUE(names.insert(t.name).second) << "twice: " << t.name;
  }
  int kinds = 0;
  for (int k = 0; k <= v1::TaskKind_MAX; ++k) {
    if (!v1::TaskKind_IsValid(k) || k == v1::TASK_KIND_UNSPECIFIED) continue;
    ++kinds;
    const auto kind = static_cast<v1::TaskKind>(k);
    const TaskInfo* t = FindTask(kind);
    ASSERT_NE(t, nullptr) << v1::TaskKind_Name(kind);
    EXPECT_EQ("TASK_" + absl::AsciiStrToUpper(t->name),
              v1::TaskKind_Name(kind));
    EXPECT_EQ(t->kind, k);
    EXPECT_EQ(FindTask(t->name), t);
  }
  EXPECT_EQ(kinds, static_cast<int>(Tasks().size()));
  EXPECT_EQ(FindTask(v1::TASK_KIND_UNSPECIFIED), nullptr);
  EXPECT_EQ(FindTask(static_cast<v1::TaskKind>(99)), nullptr);
  EXPECT_EQ(FindTask("no_such_task"), nullptr);
  EXPECT_EQ(TaskOrDefault(static_cast<v1::TaskKind>(99)).name, "synthetic");
  EXPECT_EQ(&DefaultTask(), FindTask(v1::TASK_SYNTHETIC));
  for (size_t i = 1; i < Tasks().size(); ++i)
    EXPECT_LT(Tasks()[i - 1].kind, Tasks()[i].kind) << Tasks()[i].name;
  EXPECT_EQ(FindTask(v1::TASK_FIXED_ATTENTION)->name, "fixed_attention");
}

TEST(TaskInfoTest, TheAxesEachTaskTakes) {
  EXPECT_FALSE(FindTask(v1::TASK_THEORY)->parameterized);
  EXPECT_TRUE(FindTask(v1::TASK_FIXED_ATTENTION)->takes_alphas);
  EXPECT_FALSE(FindTask(v1::TASK_FIXED_ATTENTION)->searchable);
  EXPECT_TRUE(FindTask(v1::TASK_SYNTHETIC)->stacks);
  EXPECT_TRUE(FindTask(v1::TASK_SQUAD)->allows_one_cycle);
  for (const TaskInfo& t : Tasks()) {
    if (t.name == "theory" || t.name == "fixed_attention") continue;
    EXPECT_TRUE(t.parameterized && t.searchable && !t.takes_alphas) << t.name;
    EXPECT_EQ(t.stacks, t.name == "synthetic") << t.name;
    EXPECT_EQ(t.allows_one_cycle, t.name == "squad") << t.name;
  }
}

// A default view names only what the task stores (results, summaries,
// ratio figures) or reports (curves, the latest report).
TEST(TaskInfoTest, ViewsNameTheTasksOwnResultsAndCurves) {
  for (const TaskInfo& t : Tasks()) {
    std::set<std::string> results, curves(t.curves.begin(), t.curves.end());
    for (const ResultName& r : t.results) {
      EXPECT_TRUE(results.insert(r.name).second) << t.name << ": " << r.name;
      EXPECT_LE(r.lo, r.hi) << t.name << ": " << r.name;
    }
    for (const auto* view :
         {&t.views.results, &t.views.summary, &t.views.ratio}) {
      for (const std::string& m : *view)
        EXPECT_TRUE(results.count(m)) << t.name << ": result " << m;
    }
    for (const auto* view : {&t.views.curves, &t.views.latest}) {
      for (const std::string& m : *view) {
        // The ODE's series over time (theory_*) are not step reports.
        if (t.name == "theory") {
          EXPECT_EQ(m.rfind("theory_", 0), 0u) << m;
          continue;
        }
        EXPECT_TRUE(curves.count(m)) << t.name << ": curve " << m;
      }
    }
    EXPECT_FALSE(t.views.figures.empty()) << t.name;
    EXPECT_EQ(FinalResultNames(t.name).size(), t.results.size());
    EXPECT_EQ(ReportedCurveNames(t.name), t.curves);
  }
  EXPECT_TRUE(FinalResultNames("no_such_task").empty());
}

}  // namespace
}  // namespace qkov
