#include "common/report/report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
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
  return absl::StrCat(Num(s.mean()), " ± ", Num(s.ci95()));
}

std::string ArmName(const Claim& c, const std::vector<std::string>& arm) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < arm.size(); ++i)
    parts.push_back(absl::StrCat(c.by[i], " ", arm[i]));
  return absl::StrJoin(parts, ", ");
}

// The two sides a claim compares: its arms, or ours and the paper's numbers.
const char* FasterLabel(const Claim& c) {
  return c.published.empty() ? "faster" : "ours";
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

// The command that prints the claim's comparison: `qkov results --matched`,
// or `--by` for an equal-steps claim.
std::string ComparisonCommand(const Claim& c, const std::string& sweep) {
  if (c.comparison == Comparison::kEqualSteps) {
    std::vector<std::string> by = c.by;
    if (!c.reference.empty()) by.push_back(c.reference);
    std::string cmd =
        absl::StrCat("qkov results ", sweep, " --by ", absl::StrJoin(by, ","),
                     " --metrics ", c.metric, " --where state=done");
    for (const std::string& w : c.where) absl::StrAppend(&cmd, " --where ", w);
    return cmd;
  }
  std::string cmd =
      absl::StrCat("qkov results ", sweep, " --matched ", c.reference,
                   " --metrics ", c.metric, " --by ", absl::StrJoin(c.by, ","));
  if (c.window != 1) absl::StrAppend(&cmd, " --window ", c.window);
  for (const std::string& w : c.where) absl::StrAppend(&cmd, " --where ", w);
  return cmd;
}

absl::StatusOr<std::vector<std::string>> ArmTrials(
    const ReportSource& source, const Claim& c, const std::string& sweep,
    const std::vector<std::string>& arm) {
  v1::QueryResultsRequest req;
  req.set_sweep_name(sweep);
  req.add_metrics(c.metric);
  for (const std::string& w : c.where) req.add_where(w);
  for (size_t i = 0; i < arm.size(); ++i)
    req.add_where(absl::StrCat(c.by[i], "=", arm[i]));
  ASSIGN_OR_RETURN(v1::QueryResultsResponse resp, source.query(req));
  std::vector<std::string> ids;
  for (const v1::ResultRow& r : resp.rows()) ids.push_back(r.trial_id());
  return ids;
}

// The claim's comparison on `sweep`: the server's matched table, or the
// equal-steps table of the sweep's final results.
absl::StatusOr<v1::MatchedResponse> ComparisonTable(const ReportSource& source,
                                                    const Claim& c,
                                                    const std::string& sweep) {
  if (c.comparison == Comparison::kEqualSteps) {
    v1::QueryResultsRequest req;
    req.set_sweep_name(sweep);
    req.add_metrics(c.metric);
    ASSIGN_OR_RETURN(v1::QueryResultsResponse rows, source.query(req));
    return EqualStepsTable(c, rows.rows());
  }
  v1::MatchSweepRequest req;
  req.set_sweep_name(sweep);
  req.set_curve(c.reference);
  req.set_window(c.window);
  req.add_metrics(c.metric);
  for (const std::string& b : c.by) req.add_by(b);
  for (const std::string& w : c.where) req.add_where(w);
  return source.match(req);
}

absl::Status CollectEvidence(const ReportSource& source, ClaimResult* out) {
  const Claim& c = *out->claim;
  Evidence& e = out->evidence;
  ASSIGN_OR_RETURN(v1::Sweep sweep, source.get_sweep(e.sweep));
  e.trials = sweep.total_trials();
  ASSIGN_OR_RETURN(e.faster_trials, ArmTrials(source, c, e.sweep, c.faster));
  if (c.published.empty()) {
    ASSIGN_OR_RETURN(e.baseline_trials,
                     ArmTrials(source, c, e.sweep, c.baseline));
  }
  std::set<std::string> versions, hashes;
  for (const auto* ids : {&e.faster_trials, &e.baseline_trials}) {
    for (const std::string& id : *ids) {
      ASSIGN_OR_RETURN(v1::Trial t, source.get_trial(id));
      hashes.insert(t.config_hash());
      for (const v1::Attempt& a : t.attempt_history()) {
        ++e.attempts;
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

}  // namespace

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
  std::set<std::string> names;
  for (const v1::Sweep& sw : listed.sweeps()) names.insert(sw.name());
  Report report;
  report.server = source.server;
  for (const Claim& c : Claims()) {
    ClaimResult r;
    r.claim = &c;
    if (auto it = args.sweeps.find(c.id); it != args.sweeps.end()) {
      r.evidence.sweep = it->second;
    } else {
      for (const std::string& p : c.presets) {
        if (names.count(p)) {
          r.evidence.sweep = p;
          break;
        }
      }
    }
    if (r.evidence.sweep.empty()) {
      r.judgement.verdict = Verdict::kNotRun;
      r.note =
          absl::StrCat("no sweep named ", absl::StrJoin(c.presets, " or "));
      r.command = absl::StrCat("qkov submit --preset ", c.presets[0],
                               c.presets.size() > 1 ? " [--quick]" : "");
      report.claims.push_back(std::move(r));
      continue;
    }
    r.command = ComparisonCommand(c, r.evidence.sweep);
    absl::StatusOr<v1::MatchedResponse> table =
        ComparisonTable(source, c, r.evidence.sweep);
    if (!table.ok()) {
      r.judgement.verdict = Verdict::kNotRun;
      r.note =
          absl::StrCat("sweep ", r.evidence.sweep,
                       " cannot be compared yet: ", table.status().message());
      report.claims.push_back(std::move(r));
      continue;
    }
    r.table = *std::move(table);
    r.judgement = Judge(c, r.table);
    RETURN_IF_ERROR(CollectEvidence(source, &r));
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
            ? "; the claim: within the paper's number to the digits it gives"
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

std::string ReportMarkdown(const Report& r) {
  std::string md = absl::StrCat(
      "# Reproduction report\n\n"
      "Each claim of the paper (common/report/claims.cc), judged on the "
      "sweeps of the results database of qkov-server at ",
      r.server,
      " by `qkov report`. A claim compares a faster-QK arm with its "
      "baseline where a reference curve first reaches the same levels "
      "(docs/metrics.md, \"Matched values\"), or after the same number of "
      "steps (its final results, at each value of an axis), or its final "
      "results with the numbers the paper prints; its verdict "
      "follows the rule in docs/report.md: reproduced where the faster arm "
      "is better than the baseline by more than the two 95% CIs at every "
      "level both reach, or, for a claim of comparable accuracy, where the "
      "arms' difference widened by the two CIs is within its tolerance at "
      "every level, or, against the paper's numbers, where ours are within "
      "the digits it prints.\n\n"
      "| claim | framing | ours: faster vs baseline (or the paper's number) "
      "at each level | paper | "
      "verdict |\n|---|---|---|---|---|\n");
  for (const ClaimResult& c : r.claims) {
    std::vector<std::string> ours;
    for (const LevelComparison& l : c.judgement.levels) {
      if (!l.compared) continue;
      ours.push_back(absl::StrCat(ValueCi(l.faster_value), " vs ",
                                  ValueCi(l.baseline_value), " at ",
                                  LevelText(*c.claim, l.level)));
    }
    absl::StrAppend(
        &md, "| [", c.claim->id, "](#", c.claim->id, ") | ", c.claim->framing,
        " | ", ours.empty() ? "-" : absl::StrJoin(ours, "; "), " | ",
        c.claim->paper, " | ", VerdictName(c.judgement.verdict), " |\n");
  }
  for (const ClaimResult& c : r.claims) {
    const Claim& k = *c.claim;
    const Evidence& e = c.evidence;
    absl::StrAppend(&md, "\n## ", k.id, "\n\n", k.statement, " (", k.figure,
                    ").\n\n", "- verdict: **", VerdictName(c.judgement.verdict),
                    "**", c.judgement.why.empty() ? "" : ": ", c.judgement.why,
                    "\n");
    if (!c.note.empty()) absl::StrAppend(&md, "- ", c.note, "\n");
    absl::StrAppend(&md, "- ",
                    e.sweep.empty() ? "to run it: " : "to reproduce it: ", "`",
                    c.command, "`\n");
    if (!HasEvidence(c)) continue;
    absl::StrAppend(
        &md, "- sweep `", e.sweep, "`: ", e.trials, " trials; ", k.metric,
        ComparedWhere(k),
        k.published.empty()
            ? absl::StrCat("; faster arm ", ArmName(k, k.faster), ", baseline ",
                           ArmName(k, k.baseline))
            : "; ours against the paper's numbers",
        k.where.empty() ? ""
                        : absl::StrCat(" (", absl::StrJoin(k.where, ", "), ")"),
        "\n- ", e.attempts, " attempts; code version",
        e.code_versions.size() == 1 ? " " : "s ",
        absl::StrJoin(e.code_versions, ", "),
        e.code_versions.size() > 1 ? " (**the sweep mixes code versions**)"
                                   : "",
        "; ", e.config_hashes.size(), " config hashes\n", "- ", FasterLabel(k),
        k.published.empty() ? " arm" : "",
        "'s trials: ", absl::StrJoin(e.faster_trials, ", "),
        k.published.empty()
            ? absl::StrCat("\n- baseline's trials: ",
                           absl::StrJoin(e.baseline_trials, ", "))
            : "",
        "\n\n| ", LevelName(k), " | ", FasterLabel(k), ": reached | step | ",
        k.metric, " | ", BaselineLabel(k), ": reached | step | ", k.metric,
        " | difference | CI sum |\n|---|---|---|---|---|---|---|---|---|\n");
    for (const LevelComparison& l : c.judgement.levels) {
      absl::StrAppend(&md, "| ", LevelText(k, l.level), " | ", l.faster_reached,
                      "/", l.faster_trials, " | ", ValueCi(l.faster_step),
                      " | ", ValueCi(l.faster_value), " | ", l.baseline_reached,
                      "/", l.baseline_trials, " | ", ValueCi(l.baseline_step),
                      " | ", ValueCi(l.baseline_value), " | ",
                      l.compared ? Num(l.difference) : "-", " | ",
                      l.compared ? Num(l.margin) : "-", " |\n");
    }
  }
  return md;
}

std::string ReportJson(const Report& r) {
  nlohmann::json out;
  out["server"] = r.server;
  out["claims"] = nlohmann::json::array();
  auto summary = [](const v1::MetricSummary& s) {
    nlohmann::json j;
    j["n"] = s.n();
    j["mean"] = s.n() == 0 ? nlohmann::json() : nlohmann::json(s.mean());
    j["ci95"] =
        std::isnan(s.ci95()) ? nlohmann::json() : nlohmann::json(s.ci95());
    return j;
  };
  for (const ClaimResult& c : r.claims) {
    nlohmann::json j;
    j["id"] = c.claim->id;
    j["comparison"] = !c.claim->published.empty() ? "against the paper"
                      : c.claim->comparison == Comparison::kEqualSteps
                          ? "equal steps"
                          : "matched";
    j["lower_is_better"] = c.claim->lower_is_better;
    j["tolerance"] = c.claim->tolerance;
    j["published"] = nlohmann::json::array();
    for (const Published& p : c.claim->published) {
      j["published"].push_back(
          {{"level", p.level}, {"value", p.value}, {"tolerance", p.tolerance}});
    }
    j["verdict"] = VerdictName(c.judgement.verdict);
    j["why"] = c.judgement.why;
    j["note"] = c.note;
    j["command"] = c.command;
    j["sweep"] = c.evidence.sweep;
    j["faster_trials"] = c.evidence.faster_trials;
    j["baseline_trials"] = c.evidence.baseline_trials;
    j["code_versions"] = c.evidence.code_versions;
    j["config_hashes"] = c.evidence.config_hashes;
    j["levels"] = nlohmann::json::array();
    for (const LevelComparison& l : c.judgement.levels) {
      nlohmann::json lj;
      lj["level"] = l.level;
      lj["compared"] = l.compared;
      lj["faster"] = summary(l.faster_value);
      lj["baseline"] = summary(l.baseline_value);
      lj["faster_reached"] = l.faster_reached;
      lj["baseline_reached"] = l.baseline_reached;
      j["levels"].push_back(lj);
    }
    out["claims"].push_back(j);
  }
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
std::string Figure(const ClaimResult& c) {
  std::vector<const LevelComparison*> ls;
  for (const LevelComparison& l : c.judgement.levels)
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
           (w - left - 10) *
               (ls.size() == 1 ? 0.5 : double(i) / double(ls.size() - 1));
  };
  auto y = [&](double v) {
    return top + (h - top - bottom) * (hi - v) / (hi - lo);
  };
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" "
      "role=\"img\" aria-label=\"%s by level\">",
      w, h, Html(c.claim->metric));
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
                          x(i), h - 12, LevelText(*c.claim, ls[i]->level));
  }
  const Claim& k = *c.claim;
  absl::StrAppendFormat(&svg,
                        "<text x=\"%g\" y=\"%g\" font-size=\"10\" "
                        "text-anchor=\"middle\">%s</text></svg>",
                        (w + left) / 2, h - 1,
                        Html(k.comparison == Comparison::kMatched
                                 ? absl::StrCat(k.reference, " level")
                                 : LevelName(k)));
  return svg;
}

}  // namespace

std::string ReportHtml(const Report& r) {
  std::string html =
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>qkov reproduction report</title><style>"
      "body{font-family:sans-serif;max-width:70em;margin:1em auto;"
      "padding:0 1em}table{border-collapse:collapse}td,th{border:1px solid "
      "#bbb;padding:2px 6px;font-size:90%}.reproduced{color:#176c2f}"
      ".contradicted{color:#a00}code{font-size:90%}</style></head><body>"
      "<h1>Reproduction report</h1>";
  absl::StrAppend(&html,
                  "<p>Each claim of the paper judged on the sweeps of "
                  "qkov-server at <code>",
                  Html(r.server),
                  "</code>; the faster arm (or ours) in blue, the baseline "
                  "(or the paper's number) in red, with their 95% "
                  "CIs.</p><table id=\"summary\"><tr><th>claim"
                  "</th><th>framing</th><th>paper</th><th>verdict</th></tr>");
  for (const ClaimResult& c : r.claims) {
    const std::string v = VerdictName(c.judgement.verdict);
    absl::StrAppend(&html, "<tr><td><a href=\"#", c.claim->id, "\">",
                    c.claim->id, "</a></td><td>", Html(c.claim->framing),
                    "</td><td>", Html(c.claim->paper), "</td><td class=\"",
                    v == "reproduced" || v == "contradicted" ? v : "",
                    "\" data-verdict=\"", v, "\">", v, "</td></tr>");
  }
  html += "</table>";
  for (const ClaimResult& c : r.claims) {
    const Claim& k = *c.claim;
    absl::StrAppend(&html, "<h2 id=\"", k.id, "\">", k.id, "</h2><p>",
                    Html(k.statement), " (", Html(k.figure), ").</p><p>",
                    "verdict: <b>", VerdictName(c.judgement.verdict), "</b>",
                    c.judgement.why.empty() ? "" : ": ", Html(c.judgement.why),
                    "</p>");
    if (!c.note.empty()) absl::StrAppend(&html, "<p>", Html(c.note), "</p>");
    absl::StrAppend(&html, "<p><code>", Html(c.command), "</code></p>");
    if (!HasEvidence(c)) continue;
    absl::StrAppend(&html, Figure(c), "<table class=\"levels\"><tr><th>",
                    Html(LevelName(k)), "</th><th>", FasterLabel(k),
                    "</th><th>", BaselineLabel(k),
                    "</th><th>difference</th><th>CI sum</th></tr>");
    for (const LevelComparison& l : c.judgement.levels) {
      absl::StrAppend(&html, "<tr><td>", LevelText(k, l.level), "</td><td>",
                      Html(ValueCi(l.faster_value)), "</td><td>",
                      Html(ValueCi(l.baseline_value)), "</td><td>",
                      l.compared ? Num(l.difference) : "-", "</td><td>",
                      l.compared ? Num(l.margin) : "-", "</td></tr>");
    }
    absl::StrAppend(
        &html, "</table><p>sweep <code>", Html(c.evidence.sweep), "</code>, ",
        c.evidence.attempts, " attempts, code version(s) ",
        Html(absl::StrJoin(c.evidence.code_versions, ", ")),
        c.evidence.code_versions.size() > 1 ? " <b>(mixed)</b>" : "", ", ",
        c.evidence.config_hashes.size(), " config hashes; ", FasterLabel(k),
        ": ", Html(absl::StrJoin(c.evidence.faster_trials, ", ")),
        k.published.empty() ? "; baseline: " : "",
        Html(absl::StrJoin(c.evidence.baseline_trials, ", ")), "</p>");
  }
  html += "</body></html>\n";
  return html;
}

}  // namespace qkov::report
