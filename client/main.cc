// qkov: the command-line client. Flags are parsed here (CLI11) and handed to
// the commands in commands.h. docs/cli.md lists commands and exit codes.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>

#include "client/commands.h"
#include "client/figures.h"
#include "client/report_command.h"
#include "common/version.h"

int main(int argc, char** argv) {
  CLI::App app{"qkov: submit, watch and query QK/OV learning-rate sweeps"};
  app.require_subcommand(1);
  // The same string as the other programs' --version, the server's
  // qkov_build_info and the provenance stored with results.
  app.set_version_flag("--version", std::string("qkov ") + qkov::CodeVersion(),
                       "print the version and exit");
  const char* env = std::getenv("QKOV_SERVER");
  std::string server = env != nullptr ? env : "127.0.0.1:50051";
  double deadline_s = 30;
  app.add_option("--server", server,
                 "qkov-server address host:port (default $QKOV_SERVER)");
  app.add_option("--deadline", deadline_s, "seconds to wait for each call")
      ->check(CLI::PositiveNumber);
  qkov::ChannelSecurity security;
  app.add_option("--token_file", security.token_file,
                 "file holding your bearer token (default $QKOV_TOKEN_FILE)");
  app.add_option(
      "--tls_ca", security.tls_ca,
      "CA (PEM) to verify the server; enables TLS (default $QKOV_TLS_CA)");
  app.add_option("--tls_cert", security.tls_cert,
                 "client certificate (PEM) (default $QKOV_TLS_CERT)");
  app.add_option("--tls_key", security.tls_key,
                 "client key (PEM) (default $QKOV_TLS_KEY)");
  app.add_option("--tls_server_name", security.tls_server_name,
                 "name to expect in the server certificate (default "
                 "$QKOV_TLS_SERVER_NAME)");

  qkov::client::SubmitArgs submit;
  auto* submit_cmd = app.add_subcommand(
      "submit", "submit (or extend) a sweep from a YAML/JSON file or a preset");
  auto* file_opt = submit_cmd->add_option("file", submit.file, "sweep file");
  auto* preset_opt = submit_cmd->add_option("--preset", submit.preset,
                                            "a preset (qkov presets)");
  file_opt->excludes(preset_opt);
  submit_cmd->add_flag("--quick", submit.quick,
                       "with --preset: the smallest faithful budget");
  std::string preset_name;
  bool preset_note = false, preset_view = false;
  auto* presets_cmd =
      app.add_subcommand("presets", "list the paper's presets, or show one");
  presets_cmd->add_option("name", preset_name,
                          "a preset: its sweep file, what --quick changes, "
                          "what a quick run shows");
  presets_cmd->add_flag("--note", preset_note,
                        "with NAME: only what a quick run shows");
  presets_cmd->add_flag("--view", preset_view,
                        "with NAME: only the qkov results arguments of the "
                        "view that shows it, one per line");
  submit_cmd->add_option("--set", submit.overrides,
                         "override a field: key.path=YAML value (repeatable)");

  std::string sweep;
  auto* status_cmd = app.add_subcommand(
      "status", "trial counts by state for one or all sweeps");
  status_cmd->add_option("sweep", sweep, "sweep name (default: all)");

  bool force_tty = false;
  auto* watch_cmd = app.add_subcommand(
      "watch", "follow a sweep's progress until it finishes");
  watch_cmd->add_option("sweep", sweep, "sweep name")->required();
  watch_cmd->add_flag(
      "--tty", force_tty,
      "draw the progress bar even when stdout is not a terminal");

  qkov::client::ResultsArgs results;
  auto* results_cmd =
      app.add_subcommand("results", "one row per trial with its final metrics");
  results_cmd->add_option("sweep", results.sweep, "sweep name")->required();
  results_cmd
      ->add_option("--metrics", results.metrics,
                   "metrics to show (default: a standard set)")
      ->delimiter(',');
  results_cmd->add_option("--format", results.format, "table or csv")
      ->check(CLI::IsMember({"table", "csv"}));
  results_cmd
      ->add_option("--by", results.by,
                   "group by these keys and aggregate over the rest, e.g. "
                   "parameterization,lr_ratio")
      ->delimiter(',');
  results_cmd->add_option(
      "--where", results.where,
      "keep rows with key=value (repeatable), e.g. state=done");
  results_cmd->add_option(
      "--matched", results.matched,
      "compare at matched levels of a curve: CURVE=LEVEL[,LEVEL...], e.g. "
      "train_loss=0.5,0.3, or CURVE for 5 levels every trial reaches; the "
      "metrics (--metrics, default the task's curves) where each trial's "
      "CURVE first reaches each level, mean over seeds per arm "
      "(docs/metrics.md)");
  results_cmd->add_option(
      "--window", results.window,
      "with --matched: the trailing mean over this many reports smooths CURVE "
      "(default 1)");

  std::string search_sweep, search_format = "table";
  auto* search_cmd = app.add_subcommand(
      "search", "an adaptive sweep's ratio searches: state, bracket, CIs");
  search_cmd->add_option("sweep", search_sweep, "sweep name")->required();
  search_cmd->add_option("--format", search_format, "table or csv")
      ->check(CLI::IsMember({"table", "csv"}));

  qkov::client::ExportArgs export_args;
  auto* export_cmd =
      app.add_subcommand("export", "write a sweep's results as CSV or JSON");
  export_cmd->add_option("sweep", export_args.sweep, "sweep name")->required();
  export_cmd->add_option("--format", export_args.format, "csv or json")
      ->check(CLI::IsMember({"csv", "json"}));
  export_cmd
      ->add_option("--per", export_args.per,
                   "trial (final results) or point (every metric point)")
      ->check(CLI::IsMember({"trial", "point"}));
  export_cmd->add_option("-o,--out", export_args.out,
                         "output file (default stdout)");

  std::string sql, sql_format = "table";
  auto* sql_cmd = app.add_subcommand(
      "sql", "run a read-only SQL query against the results (docs/schema.md)");
  sql_cmd->add_option("query", sql, "one SELECT statement")->required();
  sql_cmd->add_option("--format", sql_format, "table or csv")
      ->check(CLI::IsMember({"table", "csv"}));

  std::vector<std::string> report_sweeps;
  std::string report_out = "report";
  auto* report_cmd = app.add_subcommand(
      "report",
      "judge each claim of the paper on this server's sweeps: Markdown, HTML "
      "and JSON with the evidence (docs/report.md)");
  report_cmd->add_option("--sweep", report_sweeps,
                         "CLAIM=SWEEP: judge the claim on this sweep "
                         "(default: the sweep named as its preset)");
  report_cmd->add_option("--out", report_out,
                         "folder for report.md, report.html, report.json "
                         "(default report)");

  qkov::client::PlotArgs plot;
  auto* plot_cmd = app.add_subcommand(
      "plot", "write PNG and SVG figures of a sweep (docs/cli.md)");
  plot_cmd->add_option("sweep", plot.sweep, "sweep name")->required();
  plot_cmd->add_option("--out", plot.out_dir, "output folder (default .)");
  plot_cmd
      ->add_option("--kind", plot.kind,
                   "all, ratio, dtap, curves, search (an adaptive sweep), "
                   "theory (Fig. 4), fixed (Fig. 3) or matched (with "
                   "--matched)")
      ->check(CLI::IsMember(qkov::client::FigureKindNames()));
  plot_cmd->add_option("--matched", plot.matched,
                       "kind matched: CURVE[=LEVEL,...], as in qkov "
                       "results --matched");
  plot_cmd->add_option("--window", plot.window,
                       "kind matched: the trailing mean over this many "
                       "reports smooths CURVE (default 1)");
  plot_cmd
      ->add_option("--by", plot.by,
                   "kind matched: one line per value of these keys (default: "
                   "the axes that vary, not seed)")
      ->delimiter(',');
  plot_cmd->add_option(
      "--overlay", plot.overlay,
      "theory: a trained sweep whose models to overlay as points");
  plot_cmd
      ->add_option("--metrics", plot.metrics, "metrics to plot (ratio, curves)")
      ->delimiter(',');

  std::string state;
  auto* trials_cmd =
      app.add_subcommand("trials", "list a sweep's trials and their states");
  trials_cmd->add_option("sweep", sweep, "sweep name")->required();
  trials_cmd->add_option("--state", state, "only trials in this state");

  std::string trial_id;
  auto* trial_cmd = app.add_subcommand(
      "trial", "one trial: config, results, attempts, heatmap");
  trial_cmd->add_option("id", trial_id, "trial id")->required();

  auto* cancel_cmd = app.add_subcommand(
      "cancel", "cancel a sweep (running trials stop within a heartbeat)");
  cancel_cmd->add_option("sweep", sweep, "sweep name")->required();

  bool delete_yes = false;
  auto* delete_cmd = app.add_subcommand(
      "delete",
      "delete an ended sweep with its trials, curves and results (cancel it "
      "first); the owner's or an admin's");
  delete_cmd->add_option("sweep", sweep, "sweep name")->required();
  delete_cmd->add_flag("--yes", delete_yes, "delete it (without: say what)");

  auto* pause_cmd = app.add_subcommand(
      "pause", "stop leasing a sweep's trials (running ones finish)");
  pause_cmd->add_option("sweep", sweep, "sweep name")->required();
  auto* resume_cmd = app.add_subcommand("resume", "resume a paused sweep");
  resume_cmd->add_option("sweep", sweep, "sweep name")->required();
  std::string leasing_action, leasing_reason;
  auto* leasing_cmd = app.add_subcommand(
      "leasing",
      "the server-wide switch for maintenance: pause (no trial of any sweep "
      "is leased; running ones finish) or resume; without one, its state");
  leasing_cmd->add_option("action", leasing_action, "pause or resume")
      ->check(CLI::IsMember({"pause", "resume"}));
  leasing_cmd->add_option("--reason", leasing_reason,
                          "why, shown with the state (at most 200 bytes)");
  auto* retry_cmd = app.add_subcommand(
      "retry", "queue a sweep's failed trials again with a fresh retry budget");
  retry_cmd->add_option("sweep", sweep, "sweep name")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "qkov: %s (see qkov --help)\n", e.what());
    return qkov::client::kExitInvalid;
  }

  qkov::SecurityFromEnvironment(&security);
  auto connection = qkov::client::Connection::Create(
      server, absl::Seconds(deadline_s), security);
  if (!connection.ok()) return qkov::client::ReportError(connection.status());
  qkov::client::Connection& conn = **connection;
  if (presets_cmd->parsed()) {
    if (preset_name.empty()) return qkov::client::ListPresets();
    return qkov::client::ShowPreset(preset_name, preset_note, preset_view);
  }
  if (submit_cmd->parsed()) {
    if (submit.file.empty() && submit.preset.empty()) {
      std::fprintf(stderr,
                   "qkov: submit needs a sweep file or --preset NAME (see qkov "
                   "presets)\n");
      return qkov::client::kExitInvalid;
    }
    return qkov::client::Submit(conn, submit);
  }
  if (export_cmd->parsed()) return qkov::client::Export(conn, export_args);
  if (sql_cmd->parsed()) return qkov::client::Sql(conn, sql, sql_format);
  if (plot_cmd->parsed()) return qkov::client::Plot(conn, plot);
  if (report_cmd->parsed())
    return qkov::client::Report(conn, report_sweeps, report_out);
  if (status_cmd->parsed()) return qkov::client::Status(conn, sweep);
  if (watch_cmd->parsed()) return qkov::client::Watch(conn, sweep, force_tty);
  if (results_cmd->parsed()) return qkov::client::Results(conn, results);
  if (search_cmd->parsed())
    return qkov::client::Searches(conn, search_sweep, search_format);
  if (trials_cmd->parsed()) return qkov::client::Trials(conn, sweep, state);
  if (trial_cmd->parsed()) return qkov::client::ShowTrial(conn, trial_id);
  if (cancel_cmd->parsed()) return qkov::client::Cancel(conn, sweep);
  if (delete_cmd->parsed())
    return qkov::client::Delete(conn, sweep, delete_yes);
  if (pause_cmd->parsed()) return qkov::client::Pause(conn, sweep, true);
  if (resume_cmd->parsed()) return qkov::client::Pause(conn, sweep, false);
  if (retry_cmd->parsed()) return qkov::client::Retry(conn, sweep);
  if (leasing_cmd->parsed())
    return qkov::client::Leasing(conn, leasing_action, leasing_reason);
  return qkov::client::kExitInvalid;
}
