// The qkov commands. Each returns the process exit code (connection.h) and
// prints at most one error line.
#ifndef QKOV_CLIENT_COMMANDS_H_
#define QKOV_CLIENT_COMMANDS_H_

#include <string>
#include <vector>

#include "client/connection.h"

namespace qkov::client {

struct SubmitArgs {
  std::string file;    // or
  std::string preset;  // a preset name (presets.h)
  bool quick = false;  // the preset's smallest faithful budget
  std::vector<std::string> overrides;
};
int ListPresets();
// One preset: its sweep file, the --quick overrides, what a quick run shows
// and its view (`note`, `view`: that part alone). Exit 2 for an unknown name.
int ShowPreset(const std::string& name, bool note, bool view);
int Submit(Connection& conn, const SubmitArgs& args);

int Status(Connection& conn, const std::string& sweep);  // "" = all sweeps
int Watch(Connection& conn, const std::string& sweep, bool force_tty);

struct ResultsArgs {
  std::string sweep;
  std::vector<std::string> metrics;  // empty: the default set
  std::vector<std::string> by;     // group and aggregate over the rest (seeds)
  std::vector<std::string> where;  // key=value filters
  std::string format = "table";    // table | csv
  std::string matched;  // CURVE=LEVEL[,LEVEL...]: the matched comparison
  int window = 1;       // with matched: the reference's trailing mean
};
int Results(Connection& conn, const ResultsArgs& args);
// An adaptive sweep's searches (docs/adaptive.md): per combination of the
// other axes, the state, the bracket and the metric at its ends.
int Searches(Connection& conn, const std::string& sweep,
             const std::string& format);

struct ExportArgs {
  std::string sweep;
  std::string format = "csv";  // csv | json
  std::string per = "trial";   // trial | point
  std::string out;             // file; empty: stdout
};
int Export(Connection& conn, const ExportArgs& args);

int Sql(Connection& conn, const std::string& sql, const std::string& format);

struct PlotArgs {
  std::string sweep;
  std::string out_dir = ".";
  std::string kind = "all";  // all | ratio | dtap | curves | theory | matched
  std::vector<std::string> metrics;  // default per kind
  std::string overlay;          // theory: a trained sweep to overlay as points
  std::string matched;          // matched: CURVE=LEVEL[,LEVEL...]
  int window = 1;               // matched: the reference's trailing mean
  std::vector<std::string> by;  // matched: the arms (default: varying axes)
};
int Plot(Connection& conn, const PlotArgs& args);

int Trials(Connection& conn, const std::string& sweep,
           const std::string& state);
int ShowTrial(Connection& conn, const std::string& trial_id);
int Cancel(Connection& conn, const std::string& sweep);
// Deletes an ended sweep with everything stored under it (DeleteSweep);
// without `yes`, says what would go and exits 2.
int Delete(Connection& conn, const std::string& sweep, bool yes);
int Pause(Connection& conn, const std::string& sweep, bool paused);
// `qkov leasing [pause|resume] [--reason TEXT]`: the server-wide switch
// (an admin's); no action: print its state.
int Leasing(Connection& conn, const std::string& action,
            const std::string& reason);
int Retry(Connection& conn, const std::string& sweep);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_COMMANDS_H_
