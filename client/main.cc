// qkov: the command-line client. Flags are parsed here (CLI11) and handed to
// the commands in commands.h. docs/cli.md lists commands and exit codes.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>

#include "client/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"qkov: submit, watch and query QK/OV learning-rate sweeps"};
  app.require_subcommand(1);
  const char* env = std::getenv("QKOV_SERVER");
  std::string server = env != nullptr ? env : "127.0.0.1:50051";
  double deadline_s = 30;
  app.add_option("--server", server, "qkov-server address host:port (default $QKOV_SERVER)");
  app.add_option("--deadline", deadline_s, "seconds to wait for each call")->check(CLI::PositiveNumber);
  qkov::ChannelSecurity security;
  app.add_option("--token_file", security.token_file, "file holding your bearer token (default $QKOV_TOKEN_FILE)");
  app.add_option("--tls_ca", security.tls_ca, "CA (PEM) to verify the server; enables TLS (default $QKOV_TLS_CA)");
  app.add_option("--tls_cert", security.tls_cert, "client certificate (PEM) (default $QKOV_TLS_CERT)");
  app.add_option("--tls_key", security.tls_key, "client key (PEM) (default $QKOV_TLS_KEY)");
  app.add_option("--tls_server_name", security.tls_server_name, "name to expect in the server certificate");

  qkov::client::SubmitArgs submit;
  auto* submit_cmd = app.add_subcommand("submit", "submit (or extend) a sweep from a YAML/JSON file");
  submit_cmd->add_option("file", submit.file, "sweep file")->required();
  submit_cmd->add_option("--set", submit.overrides, "override a field: key.path=YAML value (repeatable)");

  std::string sweep;
  auto* status_cmd = app.add_subcommand("status", "trial counts by state for one or all sweeps");
  status_cmd->add_option("sweep", sweep, "sweep name (default: all)");

  bool force_tty = false;
  auto* watch_cmd = app.add_subcommand("watch", "follow a sweep's progress until it finishes");
  watch_cmd->add_option("sweep", sweep, "sweep name")->required();
  watch_cmd->add_flag("--tty", force_tty, "draw the progress bar even when stdout is not a terminal");

  qkov::client::ResultsArgs results;
  auto* results_cmd = app.add_subcommand("results", "one row per trial with its final metrics");
  results_cmd->add_option("sweep", results.sweep, "sweep name")->required();
  results_cmd->add_option("--metrics", results.metrics, "metrics to show (default: a standard set)")->delimiter(',');
  results_cmd->add_option("--format", results.format, "table or csv")->check(CLI::IsMember({"table", "csv"}));

  std::string state;
  auto* trials_cmd = app.add_subcommand("trials", "list a sweep's trials and their states");
  trials_cmd->add_option("sweep", sweep, "sweep name")->required();
  trials_cmd->add_option("--state", state, "only trials in this state");

  std::string trial_id;
  auto* trial_cmd = app.add_subcommand("trial", "one trial: config, results, attempts, heatmap");
  trial_cmd->add_option("id", trial_id, "trial id")->required();

  auto* cancel_cmd = app.add_subcommand("cancel", "cancel a sweep (running trials stop within a heartbeat)");
  cancel_cmd->add_option("sweep", sweep, "sweep name")->required();

  auto* pause_cmd = app.add_subcommand("pause", "stop leasing a sweep's trials (running ones finish)");
  pause_cmd->add_option("sweep", sweep, "sweep name")->required();
  auto* resume_cmd = app.add_subcommand("resume", "resume a paused sweep");
  resume_cmd->add_option("sweep", sweep, "sweep name")->required();
  auto* retry_cmd = app.add_subcommand("retry", "queue a sweep's failed trials again with a fresh retry budget");
  retry_cmd->add_option("sweep", sweep, "sweep name")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "qkov: %s (see qkov --help)\n", e.what());
    return qkov::client::kExitInvalid;
  }

  qkov::SecurityFromEnvironment(&security);
  auto connection = qkov::client::Connection::Create(server, absl::Seconds(deadline_s), security);
  if (!connection.ok()) return qkov::client::ReportError(connection.status());
  qkov::client::Connection& conn = **connection;
  if (submit_cmd->parsed()) return qkov::client::Submit(conn, submit);
  if (status_cmd->parsed()) return qkov::client::Status(conn, sweep);
  if (watch_cmd->parsed()) return qkov::client::Watch(conn, sweep, force_tty);
  if (results_cmd->parsed()) return qkov::client::Results(conn, results);
  if (trials_cmd->parsed()) return qkov::client::Trials(conn, sweep, state);
  if (trial_cmd->parsed()) return qkov::client::ShowTrial(conn, trial_id);
  if (cancel_cmd->parsed()) return qkov::client::Cancel(conn, sweep);
  if (pause_cmd->parsed()) return qkov::client::Pause(conn, sweep, true);
  if (resume_cmd->parsed()) return qkov::client::Pause(conn, sweep, false);
  if (retry_cmd->parsed()) return qkov::client::Retry(conn, sweep);
  return qkov::client::kExitInvalid;
}
