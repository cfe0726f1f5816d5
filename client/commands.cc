#include "client/commands.h"

#include <google/protobuf/util/time_util.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "client/matched_results.h"
#include "client/metric_defaults.h"
#include "client/table.h"
#include "common/aggregate.h"
#include "common/grpc_status.h"
#include "common/presets.h"
#include "common/sweep_file.h"
#include "common/text.h"

namespace qkov::client {
namespace {

namespace v1 = ::qkov::v1;

int64_t Count(const v1::Sweep& s, v1::TrialState state) {
  for (const auto& c : s.counts()) {
    if (c.state() == state) return c.count();
  }
  return 0;
}

// Trials that ended, in any of the end states.
int64_t Finished(const v1::Sweep& s) {
  return Count(s, v1::DONE) + Count(s, v1::DIVERGED) + Count(s, v1::FAILED) +
         Count(s, v1::CANCELLED) + Count(s, v1::STOPPED_EARLY);
}

std::string CountsLine(const v1::Sweep& s) {
  const int64_t stopped = Count(s, v1::STOPPED_EARLY);
  return absl::StrFormat(
      "%d/%d finished: %d done, %d diverged, %d failed, %d cancelled%s; %d "
      "running, %d queued",
      Finished(s), s.total_trials(), Count(s, v1::DONE), Count(s, v1::DIVERGED),
      Count(s, v1::FAILED), Count(s, v1::CANCELLED),
      stopped > 0 ? absl::StrFormat(", %d stopped early", stopped) : "",
      Count(s, v1::RUNNING), Count(s, v1::QUEUED) + Count(s, v1::PREEMPTED));
}

std::string Duration(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  return absl::StrFormat("%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60);
}

// Trials ended per hour over the last 10 minutes (or since the sweep's first
// start, when that is more recent), and the time left at that rate.
std::pair<std::string, std::string> Throughput(const v1::Sweep& s) {
  if (!s.has_first_started_at()) return {"-", "-"};
  const absl::Time first =
      absl::FromUnixSeconds(s.first_started_at().seconds());
  const double window_s = std::min(
      600.0, std::max(1.0, absl::ToDoubleSeconds(absl::Now() - first)));
  const double per_hour = s.ended_last_10min() * 3600.0 / window_s;
  const int64_t left =
      Count(s, v1::QUEUED) + Count(s, v1::PREEMPTED) + Count(s, v1::RUNNING);
  if (left == 0) return {FormatNumber(per_hour), "done"};
  if (per_hour <= 0) return {"0", "?"};
  return {FormatNumber(per_hour), Duration(left * 3600.0 / per_hour)};
}

// The terminal's width: TIOCGWINSZ on stdout, else $COLUMNS, else 80.
int TerminalColumns() {
  struct winsize w;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0)
    return w.ws_col;
  int n = 0;
  const char* columns = std::getenv("COLUMNS");
  if (columns != nullptr && absl::SimpleAtoi(columns, &n) && n > 0) return n;
  return 80;
}

// `s` cut to at most `columns` characters (UTF-8 sequences kept whole).
std::string FitColumns(const std::string& s, int columns) {
  int seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (seen == std::max(columns, 1)) return s.substr(0, i);
    ++seen;
  }
  return s;
}

}  // namespace

int ListPresets() {
  Table t({"preset", "what"});
  for (const Preset& p : Presets()) t.AddRow({p.name, p.summary});
  t.Print(std::cout);
  std::printf(
      "\nqkov submit --preset NAME [--quick] [--set key=value ...]; --quick: "
      "minutes on 2 cores; qkov presets NAME says what it shows\n");
  return kExitOk;
}

int ShowPreset(const std::string& name, bool note, bool view) {
  absl::StatusOr<Preset> p = FindPreset(name);
  if (!p.ok()) return ReportError(p.status());
  if (view) {
    for (const auto& arg : p->quick_view) std::printf("%s\n", arg.c_str());
    return kExitOk;
  }
  std::string quick_name = p->name + "-quick";
  for (const auto& o : p->quick) {
    if (absl::StartsWith(o, "name=")) quick_name = o.substr(5);
  }
  const std::string shows =
      p->quick_note.empty()
          ? "its results table and figures (qkov results, qkov plot)"
          : p->quick_note;
  if (note) {
    std::printf("%s\n", shows.c_str());
    if (!p->quick_view.empty()) {
      std::printf("view: qkov results %s %s\n", quick_name.c_str(),
                  absl::StrJoin(p->quick_view, " ").c_str());
    }
    return kExitOk;
  }
  std::printf("%s: %s\n\n%s\n--quick sets: %s\n\nwhat --quick shows: %s\n",
              p->name.c_str(), p->summary.c_str(), p->yaml.c_str(),
              absl::StrJoin(p->quick, " ").c_str(), shows.c_str());
  if (!p->quick_view.empty()) {
    std::printf("view: qkov results %s %s\n", quick_name.c_str(),
                absl::StrJoin(p->quick_view, " ").c_str());
  }
  return kExitOk;
}

int Submit(Connection& conn, const SubmitArgs& args) {
  absl::StatusOr<v1::SweepSpec> spec;
  if (args.quick && args.preset.empty()) {
    spec = absl::InvalidArgumentError("--quick goes with --preset");
  } else if (!args.preset.empty()) {
    SweepFileSource source;
    source.preset = args.preset;
    source.quick = args.quick;
    source.overrides = args.overrides;
    spec = SpecFromSource(source);
  } else {
    spec = LoadSweepFile(args.file, args.overrides);
  }
  if (!spec.ok()) return ReportError(spec.status());
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = *spec;
  v1::SubmitSweepResponse resp;
  grpc::Status s = conn.stub()->SubmitSweep(conn.Context().get(), req, &resp);
  if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
  std::printf(
      "sweep %s: %lld trials (%lld new, %lld already present, %lld requeued)\n",
      resp.sweep().name().c_str(),
      static_cast<long long>(resp.sweep().total_trials()),
      static_cast<long long>(resp.trials_added()),
      static_cast<long long>(resp.trials_existing()),
      static_cast<long long>(resp.trials_requeued()));
  return kExitOk;
}

namespace {

// "leasing paused since 2026-12-07 08:30:00 UTC by alice: upgrade" ("" for
// leasing that runs, or a server that cannot say).
std::string LeasingLine(const v1::LeasingState& l) {
  if (!l.paused()) return "";
  std::string line = "leasing paused";
  if (l.has_since()) {
    absl::StrAppend(&line, " since ",
                    absl::FormatTime("%Y-%m-%d %H:%M:%S UTC",
                                     absl::FromUnixSeconds(l.since().seconds()),
                                     absl::UTCTimeZone()));
  }
  if (!l.actor().empty()) absl::StrAppend(&line, " by ", l.actor());
  if (!l.reason().empty()) absl::StrAppend(&line, ": ", l.reason());
  return TerminalSafe(line) +
         " (no trial is leased; running ones finish; qkov leasing resume)";
}

}  // namespace

int Leasing(Connection& conn, const std::string& action,
            const std::string& reason) {
  v1::LeasingRequest req;
  if (action == "pause" || action == "resume") {
    req.set_paused(action == "pause");
    req.set_reason(reason);
  } else if (!action.empty()) {
    return ReportError(absl::InvalidArgumentError(absl::StrCat(
        "leasing: '", TerminalSafe(action), "' is not pause or resume")));
  }
  v1::LeasingState resp;
  grpc::Status s = conn.stub()->Leasing(conn.Context().get(), req, &resp);
  if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
  const std::string line = LeasingLine(resp);
  std::printf("%s\n", line.empty() ? "leasing runs" : line.c_str());
  return kExitOk;
}

int Status(Connection& conn, const std::string& sweep) {
  {
    // A server-wide pause first: it explains every queued trial below. A
    // server without the call (UNIMPLEMENTED) has no such switch.
    v1::LeasingState leasing;
    grpc::Status s = conn.stub()->Leasing(conn.Context().get(),
                                          v1::LeasingRequest(), &leasing);
    if (s.ok() && leasing.paused())
      std::printf("%s\n\n", LeasingLine(leasing).c_str());
  }
  std::vector<v1::Sweep> sweeps;
  if (sweep.empty()) {
    v1::ListSweepsResponse resp;
    grpc::Status s = conn.stub()->ListSweeps(conn.Context().get(),
                                             v1::ListSweepsRequest(), &resp);
    if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
    sweeps.assign(resp.sweeps().begin(), resp.sweeps().end());
  } else {
    v1::GetSweepRequest req;
    req.set_name(sweep);
    v1::Sweep resp;
    grpc::Status s = conn.stub()->GetSweep(conn.Context().get(), req, &resp);
    if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
    sweeps.push_back(resp);
  }
  Table t({"sweep", "owner", "trials", "queued", "running", "done", "diverged",
           "failed", "cancelled", "stopped", "per hour", "eta", "priority",
           "flags"});
  for (const auto& s : sweeps) {
    t.AddRow({s.name(), s.owner().empty() ? "-" : s.owner(),
              absl::StrCat(s.total_trials()),
              absl::StrCat(Count(s, v1::QUEUED) + Count(s, v1::PREEMPTED)),
              absl::StrCat(Count(s, v1::RUNNING)),
              absl::StrCat(Count(s, v1::DONE)),
              absl::StrCat(Count(s, v1::DIVERGED)),
              absl::StrCat(Count(s, v1::FAILED)),
              absl::StrCat(Count(s, v1::CANCELLED)),
              absl::StrCat(Count(s, v1::STOPPED_EARLY)), Throughput(s).first,
              Throughput(s).second, absl::StrCat(s.priority()),
              s.cancelled() ? "cancelled" : (s.paused() ? "paused" : "")});
  }
  t.Print(std::cout);
  // One sweep with arms: what each arm sets (docs/sweep-files.md, "Arms").
  if (sweeps.size() == 1 && !sweeps[0].spec().axes().arms().empty()) {
    Table a({"arm", "lr_ratio", "eta_ov", "settings"});
    for (const v1::Arm& arm : sweeps[0].spec().axes().arms()) {
      a.AddRow({TerminalSafe(arm.name()),
                arm.has_lr_ratio() ? FormatNumber(arm.lr_ratio()) : "(axis)",
                arm.has_eta_ov() ? FormatNumber(arm.eta_ov()) : "(axis)",
                TerminalSafe(ArmSettingsText(arm))});
    }
    std::cout << "\n";
    a.Print(std::cout);
  }
  return kExitOk;
}

int Watch(Connection& conn, const std::string& sweep, bool force_tty) {
  const bool tty = force_tty || isatty(STDOUT_FILENO);
  v1::WatchSweepRequest req;
  req.set_name(sweep);
  std::unique_ptr<grpc::ClientContext> ctx_owner = conn.Context();
  ctx_owner->set_deadline(
      std::chrono::system_clock::time_point::max());  // lasts as long as the
                                                      // sweep
  grpc::ClientContext& ctx = *ctx_owner;
  auto reader = conn.stub()->WatchSweep(&ctx, req);
  v1::SweepProgress p;
  const absl::Time start = absl::Now();
  int64_t first_finished = -1;
  std::string last_line, latest;
  while (reader->Read(&p)) {
    const v1::Sweep& s = p.sweep();
    const int64_t finished = Finished(s);
    if (first_finished < 0) first_finished = finished;
    const double elapsed = absl::ToDoubleSeconds(absl::Now() - start);
    std::string eta = "?";
    if (finished > first_finished && elapsed > 0) {
      const double rate =
          static_cast<double>(finished - first_finished) / elapsed;
      eta = Duration(static_cast<double>(s.total_trials() - finished) / rate);
    }
    const std::string line = CountsLine(s);
    // The latest metrics of the most recently reporting trial.
    for (const v1::Trial& t : p.updated()) {
      if (t.latest().empty()) continue;
      std::string m =
          absl::StrFormat("%s r=%s step %d:",
                          ParameterizationLabel(t.config().parameterization()),
                          FormatNumber(t.config().lr_ratio()), t.last_step());
      for (const std::string& name :
           MetricDefaultsFor(t.config().training().task()).latest) {
        auto it = t.latest().find(name);
        if (it != t.latest().end())
          absl::StrAppend(&m, " ", name, "=", FormatNumber(it->second));
      }
      latest = m;
    }
    if (tty) {
      // One line that fits the terminal, so each update redraws it: the
      // bar gives way first (30 down to 10 cells), then the line is cut.
      const std::string text = absl::StrFormat(
          " %s  elapsed %s  eta %s%s%s", line, Duration(elapsed), eta,
          latest.empty() ? "" : "  | ", latest);
      const int columns = TerminalColumns() - 1;
      const int width =
          std::clamp(columns - 2 - static_cast<int>(text.size()), 10, 30);
      const int filled =
          s.total_trials() > 0
              ? static_cast<int>(width * finished / s.total_trials())
              : 0;
      const std::string shown =
          absl::StrCat("[", std::string(filled, '#'),
                       std::string(width - filled, '.'), "]", text);
      std::printf("\r\033[K%s", FitColumns(shown, columns).c_str());
      std::fflush(stdout);
    } else if (line != last_line) {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    }
    last_line = line;
    if (p.finished()) break;
  }
  if (tty) std::printf("\n");
  if (!p.finished()) {
    grpc::Status s = reader->Finish();
    if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
  } else {
    ctx.TryCancel();
    reader->Finish();
  }
  return kExitOk;
}

int Cancel(Connection& conn, const std::string& sweep) {
  v1::CancelSweepRequest req;
  req.set_name(sweep);
  v1::CancelSweepResponse resp;
  grpc::Status s = conn.stub()->CancelSweep(conn.Context().get(), req, &resp);
  if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
  std::printf("sweep %s cancelled: %lld trials stopped\n", sweep.c_str(),
              static_cast<long long>(resp.trials_cancelled()));
  return kExitOk;
}

int Delete(Connection& conn, const std::string& sweep, bool yes) {
  if (!yes) {
    // What would go, and how to say so: nothing is deleted without --yes.
    v1::GetSweepRequest get;
    get.set_name(sweep);
    v1::Sweep s;
    grpc::Status st = conn.stub()->GetSweep(conn.Context().get(), get, &s);
    if (!st.ok()) return ReportError(FromGrpcStatus(st), conn.address());
    std::fprintf(stderr,
                 "qkov: delete removes sweep %s and its %lld trials with "
                 "every curve and result; add --yes to delete it\n",
                 sweep.c_str(), static_cast<long long>(s.total_trials()));
    return kExitInvalid;
  }
  v1::DeleteSweepRequest req;
  req.set_name(sweep);
  v1::DeleteSweepResponse resp;
  // The server deletes in writes of 50,000 points (about a second per
  // million on 2 cores); a large sweep takes longer than one call's usual
  // wait. Cut short, it goes on server-side, and the same command again
  // finishes it.
  grpc::Status s = conn.stub()->DeleteSweep(
      conn.Context(absl::Minutes(10)).get(), req, &resp);
  if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
  std::printf(
      "sweep %s deleted: %lld trials, %lld curve points; %.1f MB free in the "
      "database file for new rows (VACUUM returns it to the disk, "
      "docs/cluster.md)\n",
      sweep.c_str(), static_cast<long long>(resp.trials_deleted()),
      static_cast<long long>(resp.metric_points_deleted()),
      resp.bytes_freed() / 1e6);
  return kExitOk;
}

int Pause(Connection& conn, const std::string& sweep, bool paused) {
  v1::PauseSweepRequest req;
  req.set_name(sweep);
  req.set_paused(paused);
  v1::Sweep resp;
  grpc::Status s = conn.stub()->PauseSweep(conn.Context().get(), req, &resp);
  if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
  std::printf("sweep %s %s\n", sweep.c_str(),
              paused ? "paused (running trials finish)" : "resumed");
  return kExitOk;
}

int Retry(Connection& conn, const std::string& sweep) {
  v1::RetrySweepRequest req;
  req.set_name(sweep);
  v1::RetrySweepResponse resp;
  grpc::Status s = conn.stub()->RetrySweep(conn.Context().get(), req, &resp);
  if (!s.ok()) return ReportError(FromGrpcStatus(s), conn.address());
  std::printf("sweep %s: %lld failed trials queued again\n", sweep.c_str(),
              static_cast<long long>(resp.trials_requeued()));
  return kExitOk;
}

}  // namespace qkov::client
