// The qkov commands. Each returns the process exit code (connection.h) and
// prints at most one error line.
#ifndef QKOV_CLIENT_COMMANDS_H_
#define QKOV_CLIENT_COMMANDS_H_

#include <string>
#include <vector>

#include "client/connection.h"

namespace qkov::client {

struct SubmitArgs {
  std::string file;
  std::vector<std::string> overrides;
};
int Submit(Connection& conn, const SubmitArgs& args);

int Status(Connection& conn, const std::string& sweep);  // "" = all sweeps
int Watch(Connection& conn, const std::string& sweep, bool force_tty);

struct ResultsArgs {
  std::string sweep;
  std::vector<std::string> metrics;  // empty: the default set
  std::string format = "table";      // table | csv
};
int Results(Connection& conn, const ResultsArgs& args);

int Trials(Connection& conn, const std::string& sweep, const std::string& state);
int ShowTrial(Connection& conn, const std::string& trial_id);
int Cancel(Connection& conn, const std::string& sweep);
int Pause(Connection& conn, const std::string& sweep, bool paused);
int Retry(Connection& conn, const std::string& sweep);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_COMMANDS_H_
