#include "common/report/report.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/numbers.h"
#include "common/status_macros.h"
#include "common/text.h"

namespace qkov::report {
namespace {

namespace v1 = ::qkov::v1;

std::string Num(double v) { return FormatNumber(v); }

std::string ValueCi(const v1::MetricSummary& s) {
  if (s.n() == 0) return "-";
  if (s.n() < 2 || std::isnan(s.ci95())) return Num(s.mean());
  return ValueWithCi(s.mean(), s.ci95());
}

// A value as the report shows it: with its CI; a claim against the
// paper's numbers shows one digit more than the notebook prints.
std::string ValueOf(const Claim& k, const v1::MetricSummary& s) {
  if (!k.published.empty() && s.n() == 1)
    return absl::StrFormat("%.6g", s.mean());
  return ValueCi(s);
}

std::string ArmName(const Claim& c, const std::vector<std::string>& arm) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < arm.size(); ++i)
    parts.push_back(absl::StrCat(c.by[i], " ", arm[i]));
  return absl::StrJoin(parts, ", ");
}

// " (the sweep's arm `faster`)" for the arms of a sweep with arms whose
// trials one side holds; "" for a sweep without.
std::string SweepArms(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  return absl::StrCat(" (the sweep's arm", names.size() > 1 ? "s" : "", " `",
                      absl::StrJoin(names, "`, `"), "`)");
}

// A claim of two arms (not an ordered one, not against the paper).
bool Paired(const Claim& c) { return c.published.empty() && c.order.empty(); }

// The two sides a claim compares: its arms, or ours and the paper's numbers
// (an ordered claim: all its arms).
const char* FasterLabel(const Claim& c) {
  return !c.published.empty() ? "ours"
         : c.order.empty()    ? "faster"
                              : "the arms";
}

// "FACO > FAFO ~ CACO > CAFO".
std::string OrderText(const Claim& c) {
  std::string out;
  for (size_t i = 0; i < c.order.size(); ++i) {
    if (i > 0) {
      absl::StrAppend(
          &out, " ", std::string(1, RelationShown(c, c.relations[i - 1])), " ");
    }
    absl::StrAppend(&out, absl::StrJoin(c.order[i], ","));
  }
  return out;
}
const char* BaselineLabel(const Claim& c) {
  return c.published.empty() ? "baseline" : "paper";
}

// A claim judged on a sweep has evidence to show; one not run (no sweep, an
// arm or level the sweep lacks) has only its reason and command.
bool HasEvidence(const ClaimResult& c) {
  return !c.evidence.sweep.empty() && !c.table.groups().empty() &&
         c.judgement.verdict != Verdict::kNotRun;
}

// The arm's keys as `where` conditions, after the claim's own.
std::vector<std::string> ArmWhere(const Claim& c,
                                  const std::vector<std::string>& arm) {
  std::vector<std::string> where = c.where;
  for (size_t i = 0; i < arm.size(); ++i)
    where.push_back(absl::StrCat(c.by[i], "=", arm[i]));
  return where;
}

// Every trial of an arm, whatever its state, with the results the scale
// line reads.
absl::StatusOr<v1::QueryResultsResponse> ArmRows(
    const ReportSource& source, const Claim& c, const std::string& sweep,
    const std::vector<std::string>& where) {
  v1::QueryResultsRequest req;
  req.set_sweep_name(sweep);
  for (const char* m : {"steps", "epochs", "train_examples", "train_questions",
                        "test_examples", "eval_examples"})
    req.add_metrics(m);
  req.add_metrics(c.metric);
  for (const std::string& w : where) req.add_where(w);
  return source.query(req);
}

std::string StateName(v1::TrialState s) {
  std::string name = v1::TrialState_Name(s);
  for (char& ch : name) ch = static_cast<char>(std::tolower(ch));
  return name.empty() ? "unknown" : name;
}

// The arms' trials as rows: each arm's in `each` (ArmsOf's order), and for
// the evidence the faster arm's and the baseline's (an ordered claim: every
// arm's trials as "faster"; a claim against the paper's numbers: its
// levels' trials, all "faster").
struct ArmsRows {
  std::vector<std::vector<v1::ResultRow>> each;
  std::vector<v1::ResultRow> faster, baseline;
};

absl::StatusOr<ArmsRows> RowsOfArms(const ReportSource& source, const Claim& c,
                                    const std::string& sweep) {
  ArmsRows out;
  if (!c.published.empty()) {
    for (const Published& p : c.published) {
      std::vector<std::string> where = c.where;
      where.push_back(absl::StrCat(c.reference, "=", FormatNumber(p.level)));
      ASSIGN_OR_RETURN(v1::QueryResultsResponse r,
                       ArmRows(source, c, sweep, where));
      out.faster.insert(out.faster.end(), r.rows().begin(), r.rows().end());
    }
    out.each.push_back(out.faster);
    return out;
  }
  for (const std::vector<std::string>& arm : ArmsOf(c)) {
    ASSIGN_OR_RETURN(v1::QueryResultsResponse r,
                     ArmRows(source, c, sweep, ArmWhere(c, arm)));
    out.each.emplace_back(r.rows().begin(), r.rows().end());
  }
  if (c.order.empty()) {
    out.faster = out.each[0];
    out.baseline = out.each[1];
  } else {
    for (const auto& rows : out.each)
      out.faster.insert(out.faster.end(), rows.begin(), rows.end());
  }
  return out;
}

int Done(const std::vector<v1::ResultRow>& rows) {
  int n = 0;
  for (const v1::ResultRow& r : rows) n += r.state() == v1::DONE;
  return n;
}

// The sweep's scale, from its arms' rows, against the paper's.
Scale ScaleOf(const Claim& c, const ArmsRows& arms) {
  Scale s;
  std::set<std::string> rates, decays;
  double train = 0, eval = 0;
  for (const auto* rows : {&arms.faster, &arms.baseline}) {
    for (const v1::ResultRow& r : *rows) {
      rates.insert(FormatNumber(r.config().eta_ov()));
      const v1::Training& t = r.config().training();
      decays.insert(FormatNumber(t.optimizer().weight_decay()));
      s.batch = t.batch_size();
      auto value = [&r](const char* name) {
        auto it = r.values().find(name);
        return it == r.values().end() ? 0.0 : it->second;
      };
      s.steps =
          std::max<int64_t>(s.steps, static_cast<int64_t>(value("steps")));
      s.epochs = std::max(s.epochs, value("epochs"));
      train =
          std::max({train, value("train_examples"), value("train_questions")});
      eval = std::max({eval, value("test_examples"), value("eval_examples")});
      if (t.has_text() && t.text().d_model() > 0) {
        s.model = absl::StrCat(t.text().layers(), " layer",
                               t.text().layers() == 1 ? "" : "s", ", d_model ",
                               t.text().d_model());
      } else if (t.has_squad() && t.squad().d_model() > 0) {
        s.model = absl::StrCat(t.squad().layers(), " layers, d_model ",
                               t.squad().d_model());
      }
    }
  }
  s.base_rates.assign(rates.begin(), rates.end());
  s.weight_decays.assign(decays.begin(), decays.end());
  s.train_examples = static_cast<int64_t>(train);
  s.eval_examples = static_cast<int64_t>(eval);
  s.faster_seeds = static_cast<int>(arms.faster.size());
  s.baseline_seeds = static_cast<int>(arms.baseline.size());
  if (!c.order.empty()) {
    // An ordered claim: the fewest trials of any arm, on both sides.
    size_t fewest = arms.each.empty() ? 0 : arms.each[0].size();
    for (const auto& rows : arms.each) fewest = std::min(fewest, rows.size());
    s.faster_seeds = s.baseline_seeds = static_cast<int>(fewest);
  }
  // Within 1% of the paper's steps counts as its budget (a different epoch
  // size rounds differently).
  if (c.paper_steps > 0 && s.steps > 0 && s.steps < 0.99 * c.paper_steps)
    s.below.push_back(absl::StrCat(s.steps, " steps against ", c.paper_steps));
  const int seeds = c.published.empty()
                        ? std::min(s.faster_seeds, s.baseline_seeds)
                        : s.faster_seeds;
  if (c.paper_seeds > 0 && seeds < c.paper_seeds && c.published.empty())
    s.below.push_back(
        absl::StrCat(seeds, " seeds per arm against ", c.paper_seeds));
  if (c.paper_examples > 0 && s.train_examples > 0 &&
      s.train_examples < c.paper_examples)
    s.below.push_back(absl::StrCat(
        s.train_examples, " training examples against ", c.paper_examples));
  return s;
}

// The curves ChooseLevels reads, for each finished (done) trial of one arm.
absl::StatusOr<std::vector<MatchedTrial>> ArmCurves(
    const ReportSource& source, const Claim& c,
    const std::vector<v1::ResultRow>& rows) {
  std::vector<MatchedTrial> out;
  for (const v1::ResultRow& r : rows) {
    if (r.state() != v1::DONE) continue;
    v1::GetTrialMetricsRequest req;
    req.set_trial_id(r.trial_id());
    req.add_names(c.reference);
    req.add_names(c.metric);
    ASSIGN_OR_RETURN(v1::GetTrialMetricsResponse resp, source.curves(req));
    MatchedTrial t;
    for (const v1::MetricSeries& series : resp.series()) {
      std::vector<CurvePoint>& points = t.curves[series.name()];
      for (int i = 0; i < series.steps_size() && i < series.values_size(); ++i)
        points.push_back({series.steps(i), series.values(i)});
    }
    out.push_back(std::move(t));
  }
  return out;
}

// The claim's comparison on `sweep`: the server's matched table at the
// levels ChooseLevels picks from the claim's arms, or the equal-steps table of
// the sweep's final results.
absl::StatusOr<v1::MatchedResponse> ComparisonTable(const ReportSource& source,
                                                    const Claim& c,
                                                    const std::string& sweep,
                                                    const ArmsRows& arms,
                                                    LevelChoice* levels) {
  if (c.comparison == Comparison::kEqualSteps) {
    v1::QueryResultsRequest req;
    req.set_sweep_name(sweep);
    req.add_metrics(c.metric);
    ASSIGN_OR_RETURN(v1::QueryResultsResponse rows, source.query(req));
    return EqualStepsTable(c, rows.rows());
  }
  // The span and the plateau from the finished trials: a diverged trial's
  // curve ends early and would pull every level back towards the start; it
  // still counts in the table, as a trial that did not reach a level.
  std::vector<std::vector<MatchedTrial>> curves;
  for (const auto& rows : arms.each) {
    ASSIGN_OR_RETURN(std::vector<MatchedTrial> arm, ArmCurves(source, c, rows));
    curves.push_back(std::move(arm));
  }
  *levels = ChooseLevels(c, curves);
  if (levels->levels.empty())
    return absl::FailedPreconditionError(levels->rule);
  v1::MatchSweepRequest req;
  req.set_sweep_name(sweep);
  req.set_curve(c.reference);
  req.set_window(c.window);
  req.add_metrics(c.metric);
  for (double l : levels->levels) req.add_levels(l);
  for (const std::string& b : c.by) req.add_by(b);
  for (const std::string& w : c.where) req.add_where(w);
  return source.match(req);
}

// The command that prints the claim's comparison: `qkov results --matched`
// at the chosen levels, or `--by` for an equal-steps claim.
std::string ComparisonCommand(const Claim& c, const std::string& sweep,
                              const LevelChoice& levels) {
  if (c.comparison == Comparison::kEqualSteps) {
    std::vector<std::string> by = c.by;
    if (!c.reference.empty()) by.push_back(c.reference);
    std::string cmd =
        absl::StrCat("qkov results ", sweep, " --by ", absl::StrJoin(by, ","),
                     " --metrics ", c.metric, " --where state=done");
    for (const std::string& w : c.where) absl::StrAppend(&cmd, " --where ", w);
    return cmd;
  }
  std::string spec = c.reference;
  if (!levels.levels.empty()) {
    absl::StrAppend(
        &spec, "=",
        absl::StrJoin(levels.levels, ",", [](std::string* out, double l) {
          absl::StrAppend(out, FormatNumber(l));
        }));
  }
  std::string cmd =
      absl::StrCat("qkov results ", sweep, " --matched ", spec, " --metrics ",
                   c.metric, " --by ", absl::StrJoin(c.by, ","));
  if (c.window != 1) absl::StrAppend(&cmd, " --window ", c.window);
  for (const std::string& w : c.where) absl::StrAppend(&cmd, " --where ", w);
  return cmd;
}

absl::Status CollectEvidence(const ReportSource& source, const ArmsRows& arms,
                             ClaimResult* out) {
  const Claim& c = *out->claim;
  Evidence& e = out->evidence;
  ASSIGN_OR_RETURN(v1::Sweep sweep, source.get_sweep(e.sweep));
  e.trials = sweep.total_trials();
  e.preset = sweep.spec().preset();
  for (const auto& [rows, ids, states, named] :
       {std::make_tuple(&arms.faster, &e.faster_trials, &e.faster_states,
                        &e.faster_arms),
        std::make_tuple(&arms.baseline, &e.baseline_trials, &e.baseline_states,
                        &e.baseline_arms)}) {
    for (const v1::ResultRow& r : *rows) {
      if (r.config().has_arm() && std::find(named->begin(), named->end(),
                                            r.config().arm()) == named->end())
        named->push_back(r.config().arm());
      ids->push_back(r.trial_id());
      ++(*states)[StateName(r.state())];
      if (r.state() != v1::DONE)
        e.not_done.push_back(
            absl::StrCat(r.trial_id(), " (", StateName(r.state()), ")"));
    }
  }
  e.scale = ScaleOf(c, arms);
  std::set<std::string> versions, hashes;
  for (const auto* ids : {&e.faster_trials, &e.baseline_trials}) {
    for (const std::string& id : *ids) {
      ASSIGN_OR_RETURN(v1::Trial t, source.get_trial(id));
      hashes.insert(t.config_hash());
      for (const v1::Attempt& a : t.attempt_history()) {
        ++e.attempts;
        if (a.has_ended_at() && a.has_started_at()) {
          e.attempt_hours +=
              (static_cast<double>(a.ended_at().seconds() -
                                   a.started_at().seconds()) +
               (a.ended_at().nanos() - a.started_at().nanos()) * 1e-9) /
              3600.0;
        }
        const nlohmann::json p =
            nlohmann::json::parse(a.provenance_json(), nullptr, false);
        if (p.is_object() && p.contains("code_version") &&
            p["code_version"].is_string()) {
          versions.insert(p["code_version"].get<std::string>());
        }
      }
    }
  }
  e.code_versions.assign(versions.begin(), versions.end());
  e.config_hashes.assign(hashes.begin(), hashes.end());
  return absl::OkStatus();
}

// A verdict on fewer trials than the arms hold says so.
void NoteUnfinished(ClaimResult* r) {
  const Evidence& e = r->evidence;
  if (e.not_done.empty()) return;
  const int held =
      static_cast<int>(e.faster_trials.size() + e.baseline_trials.size());
  absl::StrAppend(
      &r->judgement.why, "; judged on ",
      held - static_cast<int>(e.not_done.size()), " finished of ", held,
      " trials in the arms (not done: ", absl::StrJoin(e.not_done, ", "), ")");
}

}  // namespace

std::string ValueWithCi(double mean, double ci95) {
  if (std::isnan(ci95) || !std::isfinite(mean) || ci95 <= 0)
    return FormatNumber(mean);
  // The CI to 2 significant digits, the mean to the same decimal place.
  const int decimals =
      std::max(0, 1 - static_cast<int>(std::floor(std::log10(ci95))));
  const double unit = std::pow(10.0, 1 - std::floor(std::log10(ci95)));
  if (decimals == 0) {
    // A CI of 10 or more: both rounded to its second significant digit.
    const double m = std::round(mean * unit) / unit;
    const double c = std::round(ci95 * unit) / unit;
    return absl::StrFormat("%.0f ± %.0f", m, c);
  }
  return absl::StrFormat("%.*f ± %.*f", decimals, mean, decimals, ci95);
}

namespace {

// SweepsFor's sweeps, best first, each with the arms' rows it read (the
// report judges on the first without reading them again).
struct Serving {
  std::string name;
  ArmsRows arms;
  int smaller_done = 0, held = 0;
  int64_t created = 0;
};

absl::StatusOr<std::vector<Serving>> ServingSweeps(
    const ReportSource& source, const Claim& claim,
    const v1::ListSweepsResponse& listed,
    std::vector<std::string>* considered) {
  using Candidate = Serving;
  std::vector<Candidate> serve;
  for (const v1::Sweep& sw : listed.sweeps()) {
    if (v1::TaskKind_Name(sw.spec().training().task()) != claim.task) continue;
    ASSIGN_OR_RETURN(ArmsRows arms, RowsOfArms(source, claim, sw.name()));
    int smallest = std::numeric_limits<int>::max();
    for (const auto& rows : arms.each)
      smallest = std::min(smallest, Done(rows));
    const int f = Done(arms.faster), b = Done(arms.baseline);
    const bool holds = smallest > 0;
    std::string line = absl::StrCat(sw.name(), ": ");
    if (!claim.order.empty()) {
      const std::vector<std::vector<std::string>> names = ArmsOf(claim);
      std::vector<std::string> parts;
      for (size_t i = 0; i < arms.each.size(); ++i) {
        parts.push_back(absl::StrCat(absl::StrJoin(names[i], ","), " ",
                                     arms.each[i].size(), " (",
                                     Done(arms.each[i]), " done)"));
      }
      absl::StrAppend(&line, "arms ", absl::StrJoin(parts, ", "));
    } else if (claim.published.empty()) {
      absl::StrAppend(&line, "faster arm ", arms.faster.size(), " trials (", f,
                      " done), baseline ", arms.baseline.size(), " (", b,
                      " done)");
    } else {
      absl::StrAppend(&line, arms.faster.size(), " trials at the paper's ",
                      claim.reference, " values (", f, " done)");
    }
    if (!holds) absl::StrAppend(&line, "; cannot serve");
    if (considered != nullptr) considered->push_back(line);
    if (!holds) continue;
    const int held =
        static_cast<int>(arms.faster.size() + arms.baseline.size());
    serve.push_back({sw.name(), std::move(arms), smallest, held,
                     sw.created_at().seconds()});
  }
  std::stable_sort(serve.begin(), serve.end(),
                   [](const Candidate& a, const Candidate& b) {
                     if (a.smaller_done != b.smaller_done)
                       return a.smaller_done > b.smaller_done;
                     if (a.held != b.held) return a.held > b.held;
                     return a.created > b.created;
                   });
  return serve;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SweepsFor(
    const ReportSource& source, const Claim& claim,
    const v1::ListSweepsResponse& listed,
    std::vector<std::string>* considered) {
  ASSIGN_OR_RETURN(std::vector<Serving> serve,
                   ServingSweeps(source, claim, listed, considered));
  std::vector<std::string> names;
  for (const Serving& c : serve) names.push_back(c.name);
  return names;
}

absl::StatusOr<Report> BuildReport(const ReportSource& source,
                                   const ReportArgs& args) {
  for (const auto& [claim, sweep] : args.sweeps) {
    bool known = false;
    for (const Claim& c : Claims()) known = known || c.id == claim;
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("--sweep: no claim named '", TerminalSafe(claim), "'"));
    }
  }
  ASSIGN_OR_RETURN(v1::ListSweepsResponse listed, source.list_sweeps());
  Report report;
  report.server = source.server;
  for (const Claim& c : Claims()) {
    ClaimResult r;
    r.claim = &c;
    ArmsRows arms;
    if (auto it = args.sweeps.find(c.id); it != args.sweeps.end()) {
      r.evidence.sweep = it->second;
      r.evidence.considered.push_back(
          absl::StrCat(it->second, ": named by --sweep"));
      ASSIGN_OR_RETURN(arms, RowsOfArms(source, c, r.evidence.sweep));
    } else {
      ASSIGN_OR_RETURN(
          std::vector<Serving> serve,
          ServingSweeps(source, c, listed, &r.evidence.considered));
      if (!serve.empty()) {
        r.evidence.sweep = serve[0].name;
        arms = std::move(serve[0].arms);
      }
    }
    if (r.evidence.sweep.empty()) {
      r.judgement.verdict = Verdict::kNotRun;
      r.note = absl::StrCat("no sweep of ", c.task, " holds both arms");
      r.command = absl::StrCat("qkov submit --preset ", c.presets[0],
                               c.presets.size() > 1 ? " [--quick]" : "");
      report.claims.push_back(std::move(r));
      continue;
    }
    absl::StatusOr<v1::MatchedResponse> table =
        ComparisonTable(source, c, r.evidence.sweep, arms, &r.levels);
    r.command = ComparisonCommand(c, r.evidence.sweep, r.levels);
    if (!table.ok()) {
      // ChooseLevels found no level (its rule says why): arms that share no
      // span cannot be compared (inconclusive); arms whose metric never
      // leaves its start show the claim's opposite of nothing moving (not
      // reproduced). Any other error: not run.
      if (r.levels.rule.empty()) {
        r.judgement.verdict = Verdict::kNotRun;
      } else if (std::isnan(r.levels.start)) {
        r.judgement.verdict = Verdict::kInconclusive;
      } else {
        r.judgement.verdict = Verdict::kNotReproduced;
      }
      r.note = absl::StrCat("sweep ", r.evidence.sweep,
                            " gives no comparison: ", table.status().message());
      RETURN_IF_ERROR(CollectEvidence(source, arms, &r));
      report.claims.push_back(std::move(r));
      continue;
    }
    r.table = *std::move(table);
    r.judgement = Judge(c, r.table);
    RETURN_IF_ERROR(CollectEvidence(source, arms, &r));
    NoteUnfinished(&r);
    report.claims.push_back(std::move(r));
  }
  return report;
}

namespace {

// Where a claim's metric is read, after "METRIC": "where train_loss first
// reaches each level", or "after the same number of steps, at each alpha".
std::string ComparedWhere(const Claim& k) {
  if (k.comparison == Comparison::kEqualSteps) {
    return absl::StrCat(
        " (each finished trial's final result) after the same number of steps",
        k.reference.empty() ? "" : absl::StrCat(", at each ", k.reference),
        !k.published.empty()
            ? (k.tolerance_basis.empty()
                   ? "; the claim: within the paper's number to the digits it "
                     "gives"
                   : absl::StrCat("; the claim: ", k.tolerance_basis))
        : k.tolerance > 0
            ? absl::StrCat("; the claim: within ", FormatNumber(k.tolerance))
            : (k.lower_is_better ? "; lower is better" : ""));
  }
  return absl::StrCat(" where ", k.reference,
                      k.window == 1 ? ""
                                    : absl::StrCat(" (trailing mean of ",
                                                   k.window, " reports)"),
                      " first reaches each level");
}

}  // namespace

namespace {

// The effect a claim needs, in words: "effect 0.051", "tolerance 0.043",
// "the paper's digits".
std::string EffectText(const Claim& k) {
  if (!k.published.empty())
    return k.tolerance_basis.empty() ? "the paper's last digit"
                                     : k.tolerance_basis;
  if (k.tolerance > 0)
    return absl::StrCat("within ", FormatNumber(k.tolerance));
  return FormatNumber(k.effect);
}

std::string EffectBasis(const Claim& k) {
  if (!k.published.empty())
    return k.effect_basis.empty()
               ? "half a unit in the last digit the paper prints"
               : k.effect_basis;
  if (k.tolerance > 0)
    return k.tolerance_basis.empty() ? "ours" : k.tolerance_basis;
  return k.effect_basis;
}

// "30000 steps, base rate 0.1, batch 32, 3 + 3 seeds": ours, in one line.
std::string OursScale(const Claim& k, const Scale& s) {
  std::vector<std::string> parts;
  if (s.steps > 0) parts.push_back(absl::StrCat(s.steps, " steps"));
  if (s.epochs > 0)
    parts.push_back(absl::StrCat(FormatNumber(s.epochs), " epochs"));
  if (!s.base_rates.empty())
    parts.push_back(
        absl::StrCat("base rate ", absl::StrJoin(s.base_rates, " / ")));
  if (!s.weight_decays.empty() &&
      s.weight_decays != std::vector<std::string>{"0"})
    parts.push_back(
        absl::StrCat("weight decay ", absl::StrJoin(s.weight_decays, " / ")));
  if (s.batch > 0) parts.push_back(absl::StrCat("batch ", s.batch));
  if (s.train_examples > 0)
    parts.push_back(absl::StrCat(s.train_examples, " training examples"));
  if (s.eval_examples > 0)
    parts.push_back(absl::StrCat(s.eval_examples, " test examples"));
  if (!s.model.empty()) parts.push_back(s.model);
  parts.push_back(
      Paired(k) ? absl::StrCat(s.faster_seeds, " + ", s.baseline_seeds,
                               " trials (faster + baseline)")
      : k.order.empty()
          ? absl::StrCat(s.faster_seeds, " trials")
          : absl::StrCat(s.faster_seeds, " trials in the smallest arm"));
  return absl::StrJoin(parts, ", ");
}

std::string Below(const Scale& s) {
  return s.below.empty() ? ""
                         : absl::StrCat("below the paper's scale: ",
                                        absl::StrJoin(s.below, "; "));
}

std::string StatesText(const std::map<std::string, int>& states) {
  std::vector<std::string> parts;
  int total = 0;
  for (const auto& [state, n] : states) {
    parts.push_back(absl::StrCat(n, " ", state));
    total += n;
  }
  return absl::StrCat(total, " (", absl::StrJoin(parts, ", "), ")");
}

// The verdict as the summary shows it: with the seeds that would decide an
// inconclusive one.
std::string VerdictText(const ClaimResult& c) {
  std::string v = VerdictName(c.judgement.verdict);
  if (c.judgement.verdict == Verdict::kInconclusive &&
      c.judgement.seeds_to_decide > 0)
    absl::StrAppend(&v, " (about ", c.judgement.seeds_to_decide,
                    c.judgement.seeds_to_decide >= 10000 ? " or more" : "",
                    " seeds per arm would decide)");
  return v;
}

// The last compared level: the one nearest the end of training, where the
// paper reads its numbers.
const LevelComparison* LastCompared(const ClaimResult& c) {
  const LevelComparison* last = nullptr;
  for (const LevelComparison& l : c.judgement.levels)
    if (l.compared) last = &l;
  return last;
}

// An ordered claim's arms at the last level its first two compared: "FACO
// 0.035 > FAFO 0 ~ CACO 0.01 > CAFO 0.002 at train_loss 0.015".
std::string OrderSummary(const ClaimResult& c) {
  const Judgement& j = c.judgement;
  if (j.pairs.empty()) return "-";
  const LevelComparison* last = nullptr;
  for (const LevelComparison& l : j.pairs[0].judgement.levels)
    if (l.compared) last = &l;
  if (last == nullptr) return "-";
  const Claim& k = *c.claim;
  std::string out;
  for (size_t i = 0; i < j.pairs.size(); ++i) {
    const PairJudgement& p = j.pairs[i];
    const LevelComparison* at = nullptr;
    for (const LevelComparison& l : p.judgement.levels)
      if (l.compared && l.level == last->level) at = &l;
    if (i == 0)
      absl::StrAppend(&out, ArmName(k, p.claim.faster), ": ",
                      at ? ValueOf(k, at->faster_value) : "-");
    absl::StrAppend(&out, " ", std::string(1, RelationShown(k, k.relations[i])),
                    " ", ArmName(k, p.claim.baseline), ": ",
                    at ? ValueOf(k, at->baseline_value) : "-");
  }
  if (k.comparison == Comparison::kMatched || !k.reference.empty()) {
    absl::StrAppend(&out, " at ", k.reference, " ", LevelText(k, last->level));
  } else {
    absl::StrAppend(&out, " at the end");
  }
  return out;
}

std::string OursSummary(const ClaimResult& c) {
  if (!c.claim->order.empty()) return OrderSummary(c);
  const LevelComparison* l = LastCompared(c);
  if (l == nullptr) return "-";
  int compared = 0;
  for (const LevelComparison& x : c.judgement.levels) compared += x.compared;
  const Claim& k = *c.claim;
  std::string at =
      k.comparison == Comparison::kMatched
          ? absl::StrCat(" at ", k.reference, " ", LevelText(k, l->level))
      : k.reference.empty()
          ? " at the end"
          : absl::StrCat(" at ", k.reference, " ", LevelText(k, l->level));
  return absl::StrCat(
      ValueOf(k, l->faster_value), " vs ", ValueOf(k, l->baseline_value), at,
      compared > 1 ? absl::StrCat(" (last of ", compared, " levels)") : "");
}

// What a level reads, with the seeds that would decide an inconclusive one.
std::string ReadsText(const LevelComparison& l) {
  if (!l.compared) return "-";
  std::string reads = LevelReadingName(l.reading);
  if (l.reading == LevelReading::kInconclusive && l.seeds_to_decide > 0)
    absl::StrAppend(&reads, " (~", l.seeds_to_decide, " seeds per arm)");
  return reads;
}

// A claim's (or a pair's) level table, as Markdown; `a` and `b` name its
// two sides.
std::string LevelsMd(const Claim& k, const Judgement& j, const std::string& a,
                     const std::string& b) {
  std::string md =
      absl::StrCat("\n| ", LevelName(k), " | ", a, ": reached | step | ",
                   k.metric, " | ", b, ": reached | step | ", k.metric,
                   " | difference | CI sum | reads |\n"
                   "|---|---|---|---|---|---|---|---|---|---|\n");
  for (const LevelComparison& l : j.levels) {
    absl::StrAppend(&md, "| ", LevelText(k, l.level), " | ", l.faster_reached,
                    "/", l.faster_trials, " | ", ValueCi(l.faster_step), " | ",
                    ValueOf(k, l.faster_value), " | ", l.baseline_reached, "/",
                    l.baseline_trials, " | ", ValueCi(l.baseline_step), " | ",
                    ValueOf(k, l.baseline_value), " | ",
                    l.compared ? Num(l.difference) : "-", " | ",
                    l.compared ? Num(l.margin) : "-", " | ", ReadsText(l),
                    " |\n");
  }
  return md;
}

std::string Cell(const std::string& s) {
  return absl::StrReplaceAll(s, {{"|", "\\|"}, {"\n", " "}});
}

}  // namespace

namespace {

// One claim's section of the Markdown report.
std::string ClaimSectionMd(const ClaimResult& c) {
  std::string md;
  const Claim& k = *c.claim;
  const Evidence& e = c.evidence;
  absl::StrAppend(&md, "\n## ", k.id, "\n\n", k.statement, " (", k.figure,
                  ").\n\n", "- verdict: **", VerdictName(c.judgement.verdict),
                  "**", c.judgement.why.empty() ? "" : ": ", c.judgement.why,
                  "\n");
  if (!c.note.empty()) absl::StrAppend(&md, "- ", c.note, "\n");
  absl::StrAppend(&md, "- the paper: ", k.paper, " (", k.paper_source,
                  ")\n- effect: ", EffectText(k), " (", EffectBasis(k), ")\n");
  if (!e.sweep.empty()) {
    absl::StrAppend(
        &md, "- scale, ours: ", OursScale(k, e.scale),
        e.scale.below.empty() ? "" : absl::StrCat("; **", Below(e.scale), "**"),
        "\n");
  }
  absl::StrAppend(&md, "- scale, the paper's: ", k.paper_scale, "\n");
  if (!c.levels.rule.empty())
    absl::StrAppend(&md, "- levels: ", c.levels.rule, "\n");
  absl::StrAppend(&md, "- ",
                  e.sweep.empty() ? "to run it: " : "to reproduce it: ", "`",
                  c.command, "`\n");
  if (!e.considered.empty()) {
    absl::StrAppend(&md, "- sweeps of ", k.task,
                    " considered: ", absl::StrJoin(e.considered, "; "), "\n");
  }
  if (e.sweep.empty()) return md;
  absl::StrAppend(
      &md, "- sweep `", e.sweep, "` (",
      e.preset.empty() ? "its preset not recorded"
                       : absl::StrCat("preset ", e.preset),
      "): ", e.trials, " trials; ", k.metric, ComparedWhere(k),
      Paired(k)
          ? absl::StrCat("; faster arm ", ArmName(k, k.faster),
                         SweepArms(e.faster_arms), ", baseline ",
                         ArmName(k, k.baseline), SweepArms(e.baseline_arms))
      : k.order.empty()
          ? "; ours against the paper's numbers"
          : absl::StrCat("; the arms in the claimed order: ", OrderText(k)),
      k.where.empty() ? ""
                      : absl::StrCat(" (", absl::StrJoin(k.where, ", "), ")"),
      "\n- trials: ", Paired(k) ? "faster arm " : FasterLabel(k),
      Paired(k) ? "" : " ", StatesText(e.faster_states),
      Paired(k) ? absl::StrCat(", baseline ", StatesText(e.baseline_states))
                : "",
      e.not_done.empty()
          ? ""
          : absl::StrCat("; not done: ", absl::StrJoin(e.not_done, ", ")),
      "\n- ", e.attempts, " attempts (",
      absl::StrFormat("%.2f", e.attempt_hours),
      " hours of worker time); code version",
      e.code_versions.size() == 1 ? " " : "s ",
      absl::StrJoin(e.code_versions, ", "),
      e.code_versions.size() > 1 ? " (**the sweep mixes code versions**)" : "",
      "; ", e.config_hashes.size(), " config hashes\n", "- ",
      Paired(k)         ? "faster arm's"
      : k.order.empty() ? "our"
                        : "the arms'",
      " trials: ", absl::StrJoin(e.faster_trials, ", "),
      Paired(k) ? absl::StrCat("\n- baseline's trials: ",
                               absl::StrJoin(e.baseline_trials, ", "))
                : "",
      "\n");
  if (!HasEvidence(c)) return md;
  if (c.judgement.pairs.empty()) {
    md += LevelsMd(k, c.judgement, FasterLabel(k), BaselineLabel(k));
  }
  for (const PairJudgement& p : c.judgement.pairs) {
    absl::StrAppend(
        &md, "\n### ", p.claim.id, "\n\n- verdict: **",
        VerdictName(p.judgement.verdict), "**: ", p.judgement.why, "\n",
        LevelsMd(p.claim, p.judgement, ArmName(p.claim, p.claim.faster),
                 ArmName(p.claim, p.claim.baseline)));
  }
  return md;
}

}  // namespace

std::string ReportMarkdown(const Report& r) {
  std::string md = absl::StrCat(
      "# Reproduction report\n\n"
      "Each claim of the paper (common/report/claims.cc), judged on the "
      "sweeps of the results database of qkov-server at ",
      r.server,
      " by `qkov report`. A claim compares a faster-QK arm with its "
      "baseline where a reference curve first reaches the same levels, "
      "chosen from the two arms' own curves where either arm's metric has "
      "left its starting value (docs/report.md, \"Levels\"), or after the "
      "same number of steps, or compares our final results with the numbers "
      "the paper prints. A level counts for the claim where the faster arm "
      "is better by at least the claim's effect and by more than both 95% "
      "CIs; the verdict rule is in docs/report.md. Each claim serves from "
      "the sweep of its task that holds the most finished trials of both "
      "arms, whatever its name.\n\n"
      "| claim | compared | ours: faster vs baseline (or vs the paper) | "
      "paper, same quantity | effect | scale | verdict |\n"
      "|---|---|---|---|---|---|---|\n");
  for (const ClaimResult& c : r.claims) {
    const Claim& k = *c.claim;
    std::string scale = "-";
    if (!c.evidence.sweep.empty()) {
      scale = c.evidence.scale.below.empty() ? "at the paper's scale"
                                             : Below(c.evidence.scale);
    }
    absl::StrAppend(&md, "| [", k.id, "](#", k.id, ") | ", Cell(k.metric), ", ",
                    Cell(k.framing), " | ", Cell(OursSummary(c)), " | ",
                    Cell(k.paper), " | ", Cell(EffectText(k)), " | ",
                    Cell(scale), " | ", Cell(VerdictText(c)), " |\n");
  }
  for (const ClaimResult& c : r.claims) md += ClaimSectionMd(c);
  return md;
}

namespace {

nlohmann::json SummaryJson(const v1::MetricSummary& s) {
  nlohmann::json j;
  j["n"] = s.n();
  j["mean"] = s.n() == 0 ? nlohmann::json() : nlohmann::json(s.mean());
  j["ci95"] =
      std::isnan(s.ci95()) ? nlohmann::json() : nlohmann::json(s.ci95());
  return j;
}

nlohmann::json NumberJson(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

nlohmann::json LevelsJson(const Judgement& judgement) {
  nlohmann::json levels = nlohmann::json::array();
  for (const LevelComparison& l : judgement.levels) {
    nlohmann::json lj;
    lj["level"] = l.level;
    lj["compared"] = l.compared;
    lj["faster"] = SummaryJson(l.faster_value);
    lj["baseline"] = SummaryJson(l.baseline_value);
    lj["faster_step"] = SummaryJson(l.faster_step);
    lj["baseline_step"] = SummaryJson(l.baseline_step);
    lj["faster_reached"] = l.faster_reached;
    lj["baseline_reached"] = l.baseline_reached;
    lj["difference"] = NumberJson(l.difference);
    lj["margin"] = NumberJson(l.margin);
    lj["reading"] =
        l.compared ? nlohmann::json(LevelReadingName(l.reading)) : nullptr;
    lj["seeds_to_decide"] = l.seeds_to_decide;
    levels.push_back(lj);
  }
  return levels;
}

// One claim, every number at full precision.
nlohmann::json ClaimJson(const ClaimResult& c) {
  const Claim& k = *c.claim;
  const Evidence& e = c.evidence;
  nlohmann::json j;
  j["id"] = k.id;
  j["statement"] = k.statement;
  j["task"] = k.task;
  j["metric"] = k.metric;
  j["comparison"] = !k.published.empty() ? "against the paper"
                    : k.comparison == Comparison::kEqualSteps ? "equal steps"
                                                              : "matched";
  j["lower_is_better"] = k.lower_is_better;
  j["effect"] = k.effect;
  j["effect_basis"] = EffectBasis(k);
  j["tolerance"] = k.tolerance;
  j["paper"] = k.paper;
  j["paper_source"] = k.paper_source;
  j["paper_scale"] = k.paper_scale;
  j["published"] = nlohmann::json::array();
  for (const Published& p : k.published) {
    j["published"].push_back(
        {{"level", p.level}, {"value", p.value}, {"tolerance", p.tolerance}});
  }
  j["verdict"] = VerdictName(c.judgement.verdict);
  j["why"] = c.judgement.why;
  j["seeds_to_decide"] = c.judgement.seeds_to_decide;
  j["note"] = c.note;
  j["command"] = c.command;
  j["sweep"] = e.sweep;
  j["preset"] = e.preset;
  j["sweeps_considered"] = e.considered;
  j["level_rule"] = c.levels.rule;
  nlohmann::json starts = nlohmann::json::array(), thresholds = starts;
  for (double v : c.levels.starts) starts.push_back(NumberJson(v));
  for (double v : c.levels.thresholds) thresholds.push_back(NumberJson(v));
  j["level_choice"] = {{"start", NumberJson(c.levels.start)},
                       {"end", NumberJson(c.levels.end)},
                       {"first_usable", NumberJson(c.levels.first_usable)},
                       {"arm_starts", starts},
                       {"arm_thresholds", thresholds}};
  j["scale"] = {{"steps", e.scale.steps},
                {"epochs", e.scale.epochs},
                {"base_rates", e.scale.base_rates},
                {"weight_decays", e.scale.weight_decays},
                {"batch", e.scale.batch},
                {"train_examples", e.scale.train_examples},
                {"test_examples", e.scale.eval_examples},
                {"model", e.scale.model},
                {"faster_trials", e.scale.faster_seeds},
                {"baseline_trials", e.scale.baseline_seeds},
                {"below_paper", e.scale.below}};
  j["faster_trials"] = e.faster_trials;
  j["baseline_trials"] = e.baseline_trials;
  j["attempt_hours"] = e.attempt_hours;
  j["faster_arms"] = e.faster_arms;
  j["baseline_arms"] = e.baseline_arms;
  j["faster_states"] = e.faster_states;
  j["baseline_states"] = e.baseline_states;
  j["not_done"] = e.not_done;
  j["code_versions"] = e.code_versions;
  j["config_hashes"] = e.config_hashes;
  j["levels"] = LevelsJson(c.judgement);
  j["pairs"] = nlohmann::json::array();
  for (const PairJudgement& p : c.judgement.pairs) {
    j["pairs"].push_back({{"id", p.claim.id},
                          {"better", p.claim.faster},
                          {"worse", p.claim.baseline},
                          {"tolerance", p.claim.tolerance},
                          {"verdict", VerdictName(p.judgement.verdict)},
                          {"why", p.judgement.why},
                          {"seeds_to_decide", p.judgement.seeds_to_decide},
                          {"levels", LevelsJson(p.judgement)}});
  }
  return j;
}

}  // namespace

std::string ReportJson(const Report& r) {
  nlohmann::json out;
  out["server"] = r.server;
  out["claims"] = nlohmann::json::array();
  for (const ClaimResult& c : r.claims) out["claims"].push_back(ClaimJson(c));
  return out.dump(1) + "\n";
}

namespace {

std::string Html(absl::string_view s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

// Each arm's value (mean, with its CI as a bar) at each compared level.
std::string Figure(const Claim& k, const Judgement& j) {
  std::vector<const LevelComparison*> ls;
  for (const LevelComparison& l : j.levels)
    if (l.compared) ls.push_back(&l);
  if (ls.empty()) return "";
  double lo = INFINITY, hi = -INFINITY;
  for (const LevelComparison* l : ls) {
    for (const v1::MetricSummary* s : {&l->faster_value, &l->baseline_value}) {
      const double ci = s->n() < 2 || std::isnan(s->ci95()) ? 0 : s->ci95();
      lo = std::min(lo, s->mean() - ci);
      hi = std::max(hi, s->mean() + ci);
    }
  }
  if (hi <= lo) hi = lo + 1;
  const double w = 360, h = 160, left = 50, top = 10, bottom = 30;
  auto x = [&](size_t i) {
    return left +
           (w - left - 24) *
               (ls.size() == 1 ? 0.5 : double(i) / double(ls.size() - 1));
  };
  auto y = [&](double v) {
    return top + (h - top - bottom) * (hi - v) / (hi - lo);
  };
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
      "role=\"img\" aria-label=\"%s by level\">",
      w, h, Html(k.metric));
  absl::StrAppendFormat(&svg,
                        "<text x=\"2\" y=\"%g\" font-size=\"10\">%s</text>"
                        "<text x=\"2\" y=\"%g\" font-size=\"10\">%s</text>",
                        y(hi) + 8, Num(hi), y(lo), Num(lo));
  const char* colors[] = {"#1b6ca8", "#c0392b"};
  for (int arm = 0; arm < 2; ++arm) {
    std::string points;
    for (size_t i = 0; i < ls.size(); ++i) {
      const v1::MetricSummary& s =
          arm == 0 ? ls[i]->faster_value : ls[i]->baseline_value;
      const double ci = s.n() < 2 || std::isnan(s.ci95()) ? 0 : s.ci95();
      absl::StrAppendFormat(&points, "%s%.1f,%.1f", i ? " " : "", x(i),
                            y(s.mean()));
      absl::StrAppendFormat(
          &svg,
          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
          "stroke=\"%s\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" "
          "fill=\"%s\" data-value=\"%.17g\"/>",
          x(i), y(s.mean() - ci), x(i), y(s.mean() + ci), colors[arm], x(i),
          y(s.mean()), colors[arm], s.mean());
    }
    absl::StrAppendFormat(&svg,
                          "<polyline points=\"%s\" fill=\"none\" "
                          "stroke=\"%s\"/>",
                          points, colors[arm]);
  }
  for (size_t i = 0; i < ls.size(); ++i) {
    absl::StrAppendFormat(&svg,
                          "<text x=\"%.1f\" y=\"%g\" font-size=\"10\" "
                          "text-anchor=\"middle\">%s</text>",
                          x(i), h - 12, LevelText(k, ls[i]->level));
  }
  absl::StrAppendFormat(&svg,
                        "<text x=\"%g\" y=\"%g\" font-size=\"10\" "
                        "text-anchor=\"middle\">%s</text></svg>",
                        (w + left) / 2, h - 1,
                        Html(k.comparison == Comparison::kMatched
                                 ? absl::StrCat(k.reference, " level")
                                 : LevelName(k)));
  return svg;
}

// A claim's (or a pair's) figure and level table, as HTML.
std::string LevelsHtml(const Claim& k, const Judgement& j, const char* a,
                       const char* b) {
  std::string html = absl::StrCat(
      Figure(k, j), "<div class=\"scroll\"><table class=\"levels\"><tr><th>",
      Html(LevelName(k)), "</th><th>", Html(a), "</th><th>", Html(b),
      "</th><th>difference</th><th>CI sum</th><th>reads</th></tr>");
  for (const LevelComparison& l : j.levels) {
    absl::StrAppend(
        &html, "<tr><td class=\"num\">", LevelText(k, l.level),
        "</td><td class=\"num\">", Html(ValueOf(k, l.faster_value)),
        "</td><td class=\"num\">", Html(ValueOf(k, l.baseline_value)),
        "</td><td class=\"num\">", l.compared ? Num(l.difference) : "-",
        "</td><td class=\"num\">", l.compared ? Num(l.margin) : "-",
        "</td><td>", Html(ReadsText(l)), "</td></tr>");
  }
  return html + "</table></div>";
}

}  // namespace

namespace {

// One claim's section of the HTML report.
std::string ClaimSectionHtml(const ClaimResult& c) {
  std::string html;
  const Claim& k = *c.claim;
  const Evidence& e = c.evidence;
  absl::StrAppend(&html, "<h2 id=\"", k.id, "\">", k.id, "</h2><p>",
                  Html(k.statement), " (", Html(k.figure), ").</p><ul><li>",
                  "verdict: <b>", VerdictName(c.judgement.verdict), "</b>",
                  c.judgement.why.empty() ? "" : ": ", Html(c.judgement.why),
                  "</li>");
  if (!c.note.empty()) absl::StrAppend(&html, "<li>", Html(c.note), "</li>");
  absl::StrAppend(
      &html, "<li>the paper: ", Html(k.paper),
      " <span "
      "class=\"muted\">(",
      Html(k.paper_source), ")</span></li><li>effect: ", Html(EffectText(k)),
      " <span class=\"muted\">(", Html(EffectBasis(k)), ")</span></li>");
  if (!e.sweep.empty()) {
    absl::StrAppend(&html, "<li>scale, ours: ", Html(OursScale(k, e.scale)),
                    e.scale.below.empty()
                        ? ""
                        : absl::StrCat("; <span class=\"below\">",
                                       Html(Below(e.scale)), "</span>"),
                    "</li>");
  }
  absl::StrAppend(&html, "<li>scale, the paper's: ", Html(k.paper_scale),
                  "</li>");
  if (!c.levels.rule.empty())
    absl::StrAppend(&html, "<li>levels: ", Html(c.levels.rule), "</li>");
  absl::StrAppend(&html, "<li><code>", Html(c.command), "</code></li>");
  if (!e.considered.empty()) {
    absl::StrAppend(&html, "<li class=\"muted\">sweeps considered: ",
                    Html(absl::StrJoin(e.considered, "; ")), "</li>");
  }
  absl::StrAppend(&html, "</ul>");
  if (!HasEvidence(c)) return html;
  if (c.judgement.pairs.empty()) {
    html += LevelsHtml(k, c.judgement, FasterLabel(k), BaselineLabel(k));
  }
  for (const PairJudgement& p : c.judgement.pairs) {
    absl::StrAppend(&html, "<h3>", Html(p.claim.id), "</h3><p>verdict: <b>",
                    VerdictName(p.judgement.verdict),
                    "</b>: ", Html(p.judgement.why), "</p>",
                    LevelsHtml(p.claim, p.judgement,
                               ArmName(p.claim, p.claim.faster).c_str(),
                               ArmName(p.claim, p.claim.baseline).c_str()));
  }
  absl::StrAppend(
      &html, "<p class=\"muted\">sweep <code>", Html(e.sweep), "</code>, ",
      e.attempts, " attempts, code version(s) ",
      Html(absl::StrJoin(e.code_versions, ", ")),
      e.code_versions.size() > 1 ? " <b>(mixed)</b>" : "", ", ",
      e.config_hashes.size(), " config hashes; trials: ", FasterLabel(k), " ",
      Html(StatesText(e.faster_states)),
      Paired(k)
          ? absl::StrCat(", baseline ", Html(StatesText(e.baseline_states)))
          : "",
      e.not_done.empty()
          ? ""
          : absl::StrCat("; not done: ", Html(absl::StrJoin(e.not_done, ", "))),
      "; ", FasterLabel(k), ": ", Html(absl::StrJoin(e.faster_trials, ", ")),
      Paired(k) ? "; baseline: " : "",
      Html(absl::StrJoin(e.baseline_trials, ", ")), "</p>");
  return html;
}

}  // namespace

std::string ReportHtml(const Report& r, bool in_dashboard) {
  // The dashboard's look (server/dashboard/style.css): its header, type and
  // table rules; inline, since the file `qkov report` writes stands alone
  // and the /report page's CSP allows inline styles only.
  std::string html =
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width\">"
      "<title>qkov reproduction report</title><style>"
      ":root{--fg:#1d2330;--muted:#6b7280;--line:#e5e7eb;--done:#16a34a;"
      "--failed:#dc2626}*{box-sizing:border-box}"
      "body{margin:0;font:14px/1.45 system-ui,sans-serif;color:var(--fg);"
      "background:#fafafa}header{display:flex;gap:16px;align-items:center;"
      "padding:10px 20px;background:#111827;color:#f9fafb}"
      "header a{color:#f9fafb;text-decoration:none}.brand{font-weight:700}"
      "main{padding:16px 20px;max-width:1400px}h1{font-size:20px;"
      "margin:4px 0 12px}h2{font-size:16px;margin:24px 0 8px}"
      "table{border-collapse:collapse;background:#fff;margin:8px 0}"
      "th,td{padding:4px 8px;border-bottom:1px solid var(--line);"
      "text-align:left;vertical-align:top}td.num{text-align:right;"
      "font-variant-numeric:tabular-nums;white-space:nowrap}"
      ".muted{color:var(--muted)}.reproduced{color:var(--done);"
      "font-weight:600}.contradicted{color:var(--failed);font-weight:600}"
      ".below{color:#b45309}ul{padding-left:20px}code{font-size:90%}"
      "#summary td{max-width:24em}#summary td.ours{min-width:16em;"
      "font-variant-numeric:tabular-nums}"
      ".scroll{overflow-x:auto}</style></head><body><header>";
  absl::StrAppend(&html,
                  in_dashboard ? "<a href=\"/\" class=\"brand\">qkov-sweep</a>"
                               : "<span class=\"brand\">qkov-sweep</span>",
                  "<span>reproduction report</span></header><main>"
                  "<h1>Reproduction report</h1>");
  absl::StrAppend(&html,
                  "<p class=\"muted\">Each claim of the paper judged on the "
                  "sweeps of qkov-server at <code>",
                  Html(r.server),
                  "</code>: a level counts for a claim where the faster arm "
                  "is better by at least the claim's effect and by more than "
                  "both 95% CIs (docs/report.md). In the figures the faster "
                  "arm (or ours) is blue, the baseline (or the paper's "
                  "number) red, each with its 95% CI.</p>"
                  "<div class=\"scroll\"><table id=\"summary\"><tr><th>claim"
                  "</th><th>compared</th><th>ours: faster vs baseline</th>"
                  "<th>paper, same quantity</th><th>effect</th><th>scale</th>"
                  "<th>verdict</th></tr>");
  for (const ClaimResult& c : r.claims) {
    const Claim& k = *c.claim;
    const std::string v = VerdictName(c.judgement.verdict);
    const std::string below = Below(c.evidence.scale);
    absl::StrAppend(
        &html, "<tr><td><a href=\"#", k.id, "\">", k.id, "</a></td><td>",
        Html(k.metric), ", ", Html(k.framing), "</td><td class=\"ours\">",
        Html(OursSummary(c)), "</td><td>", Html(k.paper), "</td><td>",
        Html(EffectText(k)), "</td><td",
        below.empty() ? ">" : " class=\"below\">",
        c.evidence.sweep.empty() ? "-"
        : below.empty()          ? "at the paper's scale"
                                 : Html(below),
        "</td><td class=\"", v == "reproduced" || v == "contradicted" ? v : "",
        "\" data-verdict=\"", v, "\">", Html(VerdictText(c)), "</td></tr>");
  }
  html += "</table></div>";
  for (const ClaimResult& c : r.claims) html += ClaimSectionHtml(c);
  html += "</main></body></html>\n";
  return html;
}

}  // namespace qkov::report
