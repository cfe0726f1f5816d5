// The figures `qkov plot` draws, as a table of kinds: each kind's name,
// what it needs, and how it draws. The kinds here draw any task's sweep;
// after them come the kinds of the tasks' own figures, which their
// packages describe in the task table (TaskInfo::curve_figures, drawn by
// client/curve_figures.h). `--kind all` draws the kinds the sweep's task
// lists in its defaults (MetricDefaults::figures).
#ifndef QKOV_CLIENT_FIGURES_H_
#define QKOV_CLIENT_FIGURES_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "client/commands.h"
#include "client/connection.h"
#include "client/metric_defaults.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov::client {

// What a figure is drawn from. `rows` is empty for a kind that does not
// need them.
struct FigureInputs {
  Connection& conn;
  const PlotArgs& args;
  const std::vector<v1::ResultRow>& rows;
  const MetricDefaults& defaults;
  bool all;               // drawn as part of --kind all
  std::string_view kind;  // the kind being drawn
};

struct FigureKind {
  std::string_view name;
  std::string_view needs;  // what it reads, for the manual and errors
  bool needs_rows;         // the sweep's result rows (one paged read)
  // Writes BASE.png, BASE.svg and BASE.dat for each figure, appending each
  // BASE to `written`.
  absl::Status (*draw)(const FigureInputs& in,
                       std::vector<std::string>* written);
};

// Every kind, in the order `all` draws them.
const std::vector<FigureKind>& FigureKinds();

// "all" and every kind's name, for the CLI's check of --kind.
std::vector<std::string> FigureKindNames();

// The kind named `name`, or nullptr.
const FigureKind* FindFigureKind(std::string_view name);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_FIGURES_H_
