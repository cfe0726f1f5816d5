// What every part of qkov-sweep knows about a task without training it:
// its name as sweep files spell it, which axes it takes, the final results
// it stores (with their ranges) and the curves it reports (docs/metrics.md),
// the metrics and figures the CLI shows when the user names none, and the
// presets that reproduce the paper's experiments with it. One entry per
// task in Tasks(), each added by a TaskRegistration in its package's folder
// (this repository's under worker/tasks/, a lab's own anywhere;
// docs/adding-a-task.md): this file knows the interface, never a task.
// The coordinator, the CLI and the dashboard look a task up here instead of
// testing its kind. common/task_kind.h maps the proto's TaskKind to these
// entries.
#ifndef QKOV_COMMON_TASK_INFO_H_
#define QKOV_COMMON_TASK_INFO_H_

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/trial_defaults.h"

namespace qkov {

struct ResultName {
  std::string name;
  double lo;  // the closed range of its values (+-infinity: unbounded)
  double hi;
};

// The metrics and figures shown when the user names none.
struct MetricDefaults {
  std::vector<std::string> results;  // qkov results: one column each
  std::vector<std::string> summary;  // qkov results --by: mean, std, ci95
  std::vector<std::string> ratio;    // qkov plot: one ratio figure each
  std::vector<std::string> curves;   // qkov plot: learning curves
  std::vector<std::string> latest;   // qkov watch: the latest report
  std::vector<std::string> figures;  // qkov plot --kind all (client/figures.h)
};

// One panel of a CurveFigure: the curve on its y axis.
struct CurvePanel {
  std::string y;      // a curve the task reports
  std::string label;  // the y axis's label
  bool log_y = false;
};

// A figure of a task's own curves, described as data so that `qkov plot`
// (client/curve_figures.h) and the dashboard (server/dashboard/figures.js)
// draw it without knowing the task. Each finished trial is one line in
// each panel, labelled by its lr_ratio ("r = 10"), through the points
// where it reported both the x curve and the panel's y curve at the same
// step; the panels stand `columns` to a row, in one image.
struct CurveFigure {
  // The `qkov plot --kind` that draws it ("theory"); a task's figures of
  // one kind are drawn together, in their order.
  std::string kind;
  std::string name;   // the file base (`qkov plot`) and the dashboard's panel
  std::string title;  // above the panels
  std::string x;      // the curve on the x axis, a curve the task reports
  std::string x_label;
  bool x_log10_1p = false;  // x drawn as log10(1 + x)
  bool log_x = false;
  bool reverse_x = false;  // x decreasing to the right (a falling loss)
  int columns = 1;
  std::vector<CurvePanel> panels;
  // With `qkov plot --overlay SWEEP` (on the dashboard, the panel's list of
  // trained sweeps), the figure's first panel also shows the trained
  // sweep's arms: each parameterization x ratio's distinct-token attention
  // where its training loss, the trailing mean of 5 reports, first reaches
  // each of 5 chosen levels, mean over seeds (`qkov results SWEEP --matched
  // train_loss --window 5`). For a figure of an attention mass against a
  // loss.
  bool overlay_matched = false;
};

// The bound of a result whose values have no limit that way.
inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// A sweep that reproduces one of the paper's experiments with the task:
// `qkov presets` lists them, `qkov submit --preset NAME [--quick]` submits
// one (common/presets.h).
struct Preset {
  std::string name;
  std::string summary;
  std::string yaml;                // the paper's settings
  std::vector<std::string> quick;  // --set overrides for --quick
  // What a --quick run shows and how to read it, or why it cannot show the
  // task on 2 cores and what budget and device do; the launcher prints it
  // at the end (`qkov presets NAME --note`).
  std::string quick_note;
  // `qkov results SWEEP` arguments of the view that shows it (a matched
  // comparison), one per element; empty: the results table says it.
  std::vector<std::string> quick_view;
};

// The first TaskKind number of a task config.proto does not name; the
// numbers below it are config.proto's.
inline constexpr int kFirstRegisteredTaskKind = 1000;

struct TaskInfo {
  std::string name;  // as sweep files spell it: "fixed_attention"
  // Its qkov.v1.TaskKind number, unique: config.proto's TASK_<NAME> for a
  // task config.proto names (task_info_test holds each to it), else
  // >= kFirstRegisteredTaskKind, which configs carry as it is (proto3 enums
  // keep numbers they do not name; JSON prints it as an integer).
  int kind = 0;
  // The qkov.v1.Training field that holds the task's own settings:
  // synthetic (the synthetic and fixed-attention tasks), theory, text or
  // squad.
  std::string settings;
  // The parameterization axis (FAFO, FACO, CAFO, CACO); the ODE has none.
  bool parameterized = true;
  // The alpha axis (the fixed attention mass); only fixed attention.
  bool takes_alphas = false;
  // A QK circuit whose rate a ratio search can speed up.
  bool searchable = true;
  // Trials of one shape train together in one stack (one worker call).
  bool stacks = false;
  // OneCycleLR's schedule (the authors' SQuAD recipe) is allowed.
  bool allows_one_cycle = false;
  std::vector<ResultName> results;  // final results, each trial stores them
  // Curves reported every report_every steps; none for the ODE, whose
  // points are not training steps.
  std::vector<std::string> curves;
  MetricDefaults views;
  // Its own figures, drawn from their description (a `qkov plot --kind`
  // each kind, part of `--kind all` when views.figures names it).
  std::vector<CurveFigure> curve_figures;
  std::vector<Preset> presets;  // in the order `qkov presets` lists them
};

// Appends a final result to `task`'s, with the closed range of its values:
// fractions and probabilities in [0, 1], differences of probabilities in
// [-1, 1], counts, norms and losses in [0, kUnbounded].
inline void AddResult(TaskInfo* task, std::string name, double lo, double hi) {
  task->results.push_back({std::move(name), lo, hi});
}

// Every task, in the order `qkov` lists them: by kind, so config.proto's
// in its order (the first, TASK_SYNTHETIC, is the default task), then the
// others in the order of their numbers.
const std::vector<TaskInfo>& Tasks();

// The task a sweep runs when it names none: the first of Tasks().
const TaskInfo& DefaultTask();

// Adds `task` to Tasks(). Called before main() by a TaskRegistration (the
// task list is read-only once the program looks a task up, so lookups need
// no lock). Dies, naming the task, on an empty or taken name, a kind below
// 1 or taken, or when called after the first lookup.
void RegisterTask(TaskInfo task);

// Registers a task at static initialization, from its package's folder:
//   const qkov::TaskRegistration kNeedle(NeedleTaskInfo());
//   const qkov::TaskRegistration kSva(6, SvaTaskInfo());  // TASK_SVA
// Link the file whole (worker/tasks/CMakeLists.txt's qkov_task_package, or
// an object library: a static archive drops members nothing refers to;
// docs/adding-a-task.md).
class TaskRegistration {
 public:
  explicit TaskRegistration(TaskInfo task) { RegisterTask(std::move(task)); }
  TaskRegistration(int kind, TaskInfo task) {
    task.kind = kind;
    RegisterTask(std::move(task));
  }
};

// The task named `name`, or nullptr.
const TaskInfo* FindTask(absl::string_view name);

// "synthetic, theory, ..., or squad": the names, for refusals.
std::string TaskNameList();

// A task's final results and reported curves by its name; empty for an
// unknown name.
std::vector<ResultName> FinalResultNames(absl::string_view task);
std::vector<std::string> ReportedCurveNames(absl::string_view task);

}  // namespace qkov

#endif  // QKOV_COMMON_TASK_INFO_H_
