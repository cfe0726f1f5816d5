#include "server/core/adaptive_sweep.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "common/task_info.h"
#include "common/task_kind.h"
#include "common/text.h"
#include "common/trial_rules.h"
#include "server/core/convert.h"
#include "server/core/early_stopping.h"

namespace qkov::core {
namespace {

namespace v1 = ::qkov::v1;

constexpr char kPrefix[] = "spec.search.";
constexpr int kDefaultSeeds = 3;

absl::Status Invalid(const std::string& field, const std::string& reason) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", reason));
}

// A string from the request, fit to quote in a message: at most 64 bytes,
// terminal-safe.
std::string Quoted(const std::string& s) {
  return TerminalSafe(absl::string_view(s).substr(0, 64));
}

// One combination of the axes other than lr_ratio and seed.
using GroupKey =
    std::tuple<int, double, double>;  // parameterization, eta, alpha

bool Terminal(const std::string& state) {
  return state == storage::kDone || state == storage::kDiverged ||
         state == storage::kFailed;
}

}  // namespace

void ApplySearchDefaults(v1::SweepSpec* spec) {
  if (!spec->has_search()) return;
  v1::RatioSearch* s = spec->mutable_search();
  if (s->axis().empty()) s->set_axis("lr_ratio");
  if (s->op().empty()) s->set_op(">=");
  if (s->resolution() == 0) s->set_resolution(1.2);
  if (s->coarse_points() == 0) s->set_coarse_points(5);
  v1::SweepAxes* axes = spec->mutable_axes();
  if (s->seeds_per_probe() == 0) {
    s->set_seeds_per_probe(axes->seeds().empty() ? kDefaultSeeds
                                                 : axes->seeds_size());
  }
  if (axes->seeds().empty()) {
    for (int i = 0; i < s->seeds_per_probe() && i <= 1000; ++i)
      axes->add_seeds(static_cast<uint64_t>(i));
  }
}

void ApplyEarlyStoppingDefaults(v1::SweepSpec* spec) {
  if (!spec->has_early_stopping()) return;
  v1::EarlyStopping* e = spec->mutable_early_stopping();
  if (e->mode().empty()) e->set_mode("min");
  if (e->min_peers() == 0) e->set_min_peers(3);
  if (e->rule() == "asha" && e->reduction() == 0) e->set_reduction(3);
}

absl::Status ValidateEarlyStopping(const v1::SweepSpec& spec) {
  if (!spec.has_early_stopping()) return absl::OkStatus();
  const v1::EarlyStopping& e = spec.early_stopping();
  const std::string prefix = "spec.early_stopping.";
  if (e.rule() != "median" && e.rule() != "asha") {
    return Invalid(
        prefix + "rule",
        absl::StrCat("must be median or asha (got '", Quoted(e.rule()), "')"));
  }
  const v1::TaskKind task = spec.training().task();
  const std::vector<std::string> curves = ReportedCurveNames(TaskName(task));
  if (curves.empty()) {
    return Invalid("spec.early_stopping",
                   absl::StrCat("the ", TaskName(task),
                                " task reports no training curves to judge"));
  }
  if (std::find(curves.begin(), curves.end(), e.metric()) == curves.end()) {
    return Invalid(
        prefix + "metric",
        absl::StrCat(e.metric().empty()
                         ? "is required"
                         : absl::StrCat("unknown curve '", Quoted(e.metric()),
                                        "' for task ", TaskName(task)),
                     " (reported: ", absl::StrJoin(curves, ", "), ")"));
  }
  if (e.mode() != "min" && e.mode() != "max") {
    return Invalid(prefix + "mode", absl::StrCat("must be min or max (got '",
                                                 Quoted(e.mode()), "')"));
  }
  if (e.min_steps() < 0) {
    return Invalid(prefix + "min_steps",
                   absl::StrCat("must be >= 0 (got ", e.min_steps(), ")"));
  }
  if (e.min_peers() < 1 || e.min_peers() > 100000) {
    return Invalid(
        prefix + "min_peers",
        absl::StrCat("must be in [1, 100000] (got ", e.min_peers(), ")"));
  }
  if (e.rule() == "asha") {
    if (!std::isfinite(e.reduction()) || e.reduction() < 2 ||
        e.reduction() > 1000 || e.reduction() != std::floor(e.reduction())) {
      return Invalid(prefix + "reduction",
                     absl::StrFormat("must be an integer in [2, 1000] (got %g)",
                                     e.reduction()));
    }
    const int64_t every = spec.training().report_every();
    if (e.min_steps() < 1 || every < 1 || e.min_steps() % every != 0) {
      return Invalid(
          prefix + "min_steps",
          absl::StrCat("asha's first rung must be a positive multiple of "
                       "training.report_every (",
                       every, ") so that every rung is a report step (got ",
                       e.min_steps(), ")"));
    }
    if (e.min_steps() >= spec.training().max_steps()) {
      return Invalid(prefix + "min_steps",
                     absl::StrCat("must be below training.max_steps (",
                                  spec.training().max_steps(), "; got ",
                                  e.min_steps(), ")"));
    }
  }
  return absl::OkStatus();
}

namespace {

AshaRule AshaRuleOf(const v1::EarlyStopping& rule, int64_t max_steps,
                    Direction direction) {
  AshaRule a;
  a.min_steps = rule.min_steps();
  a.max_steps = max_steps;
  a.reduction = rule.reduction();
  a.direction = direction;
  return a;
}

}  // namespace

bool JudgedAt(const v1::EarlyStopping& rule, int64_t max_steps, int64_t step) {
  if (step < rule.min_steps()) return false;
  if (rule.rule() == "median") return true;
  const std::vector<int64_t> rungs =
      AshaRungs(AshaRuleOf(rule, max_steps, Direction::kLowerIsBetter));
  return std::find(rungs.begin(), rungs.end(), step) != rungs.end();
}

std::string EarlyStopReason(const v1::EarlyStopping& rule, int64_t max_steps,
                            int64_t step, double value, double best_so_far,
                            const std::vector<double>& peers) {
  if (!JudgedAt(rule, max_steps, step)) return "";
  const Direction direction = rule.mode() == "max" ? Direction::kHigherIsBetter
                                                   : Direction::kLowerIsBetter;
  if (rule.rule() == "median") {
    MedianRule m;
    m.min_steps = rule.min_steps();
    m.min_peers = rule.min_peers();
    m.direction = direction;
    if (!MedianStops(m, step, best_so_far, peers)) return "";
    return absl::StrFormat(
        "early stopping (median): best %s %g by step %d is worse than the "
        "median of %d other trials at that step",
        rule.metric(), best_so_far, step, static_cast<int>(peers.size()));
  }
  if (!AshaStops(AshaRuleOf(rule, max_steps, direction), value, peers))
    return "";
  return absl::StrFormat(
      "early stopping (asha): %s %g at rung %d is outside the best 1/%g of "
      "the %d trials there before it",
      rule.metric(), value, step, rule.reduction(),
      static_cast<int>(peers.size()));
}

RatioSearchSpec SearchSpecOf(const v1::RatioSearch& s) {
  RatioSearchSpec out;
  out.lo = s.lo();
  out.hi = s.hi();
  out.resolution = s.resolution();
  out.coarse_points = s.coarse_points();
  out.seeds_per_probe = s.seeds_per_probe();
  out.metric = s.metric();
  out.op = s.op() == "<=" ? TargetOp::kAtMost : TargetOp::kAtLeast;
  out.target = s.target();
  return out;
}

absl::Status ValidateSearch(const v1::SweepSpec& spec) {
  if (!spec.has_search()) return absl::OkStatus();
  const v1::RatioSearch& s = spec.search();
  if (s.axis() != "lr_ratio") {
    return Invalid(absl::StrCat(kPrefix, "axis"),
                   absl::StrCat("only lr_ratio can be searched (got '",
                                Quoted(s.axis()), "')"));
  }
  const v1::TaskKind task = spec.training().task();
  if (const TaskInfo* info = FindTask(task);
      info != nullptr && !info->searchable) {
    return Invalid("spec.search", absl::StrCat("the ", info->name,
                                               " task has no QK circuit to "
                                               "speed up"));
  }
  if (!spec.axes().lr_ratios().empty()) {
    return Invalid("spec.axes.lr_ratios",
                   "a ratio search chooses the ratios; leave this axis out");
  }
  if (s.metric().empty()) {
    return Invalid(absl::StrCat(kPrefix, "metric"),
                   "is required (a final result, e.g. distinct_attention)");
  }
  const std::vector<ResultName> names = FinalResultNames(TaskName(task));
  auto known =
      std::find_if(names.begin(), names.end(),
                   [&](const ResultName& r) { return r.name == s.metric(); });
  if (known == names.end()) {
    std::vector<std::string> list;
    for (const ResultName& r : names) list.push_back(r.name);
    return Invalid(absl::StrCat(kPrefix, "metric"),
                   absl::StrCat("unknown result '", Quoted(s.metric()),
                                "' for task ", TaskName(task),
                                " (known: ", absl::StrJoin(list, ", "), ")"));
  }
  if (s.op() != ">=" && s.op() != "<=") {
    return Invalid(
        absl::StrCat(kPrefix, "op"),
        absl::StrCat("must be >= or <= (got '", Quoted(s.op()), "')"));
  }
  if (!std::isfinite(s.target()) || s.target() < known->lo ||
      s.target() > known->hi) {
    return Invalid(
        absl::StrCat(kPrefix, "target"),
        absl::StrFormat("must be in [%g, %g] for %s (got %g)", known->lo,
                        known->hi, s.metric(), s.target()));
  }
  RETURN_IF_ERROR(ValidateRatioSearch(SearchSpecOf(s), kPrefix));
  for (auto [field, v] : {std::pair{"lo", s.lo()}, std::pair{"hi", s.hi()}}) {
    const std::string path = absl::StrCat(kPrefix, field);
    rules::RealRule rule = rules::kLrRatio;
    rule.field = path.c_str();
    RETURN_IF_ERROR(rules::Check("", rule, v));
  }
  if (s.seeds_per_probe() != spec.axes().seeds_size()) {
    return Invalid(
        absl::StrCat(kPrefix, "seeds_per_probe"),
        absl::StrCat(s.seeds_per_probe(), " but axes.seed has ",
                     spec.axes().seeds_size(), " seeds; give one of the two"));
  }
  return absl::OkStatus();
}

int MaxProbesPerSearch(const v1::RatioSearch& s) {
  if (!(s.lo() > 0) || !(s.hi() > s.lo()) || !(s.resolution() > 1) ||
      s.coarse_points() < 2)
    return std::max(0, s.coarse_points());
  const double cell = std::log(s.hi() / s.lo()) / (s.coarse_points() - 1) /
                      std::log(s.resolution());
  const int halvings =
      cell > 1 ? static_cast<int>(std::ceil(std::log2(cell))) : 0;
  return s.coarse_points() + halvings;
}

namespace {

// Each trial's probe: group -> ratio -> the trials there, by seed.
struct Probe {
  std::map<uint64_t, const storage::TrialRecord*> seeds;
};
using ProbesByGroup = std::map<GroupKey, std::map<double, Probe>>;

// The sweep's trials by probe, and every config hash it holds.
absl::Status IndexProbes(const std::vector<storage::TrialRecord>& trials,
                         ProbesByGroup* probes, std::set<std::string>* hashes) {
  for (const storage::TrialRecord& t : trials) {
    hashes->insert(t.config_hash);
    v1::TrialConfig c;
    if (!t.axes_pb.empty()) {
      if (!c.ParseFromString(t.axes_pb))
        return absl::DataLossError(
            absl::StrCat("trial ", t.trial_id, ": stored axes do not parse"));
    } else {
      RETURN_IF_ERROR(ParseJson(t.config_json, &c));
    }
    (*probes)[{c.parameterization(), c.eta_ov(), c.alpha()}][c.lr_ratio()]
        .seeds[c.seed()] = &t;
  }
  return absl::OkStatus();
}

// Each probe of a group with the searched metric of its ended seeds; a
// probe is complete when every seed of the sweep has ended.
std::vector<ProbeResult> ProbeResults(const std::map<double, Probe>& group,
                                      const v1::SweepAxes& axes,
                                      const std::string& metric) {
  std::vector<ProbeResult> results;
  for (const auto& [ratio, probe] : group) {
    ProbeResult r;
    r.ratio = ratio;
    r.complete = true;
    for (uint64_t seed : axes.seeds()) {
      auto it = probe.seeds.find(seed);
      if (it == probe.seeds.end() || !Terminal(it->second->state)) {
        r.complete = false;
        continue;
      }
      const storage::TrialRecord& t = *it->second;
      auto v = t.results.find(metric);
      if (t.state != storage::kFailed && v != t.results.end() &&
          std::isfinite(v->second)) {
        r.values.push_back(v->second);
      } else {
        ++r.failed;
      }
    }
    results.push_back(std::move(r));
  }
  return results;
}

// Every seed of every probe the search names: the new ratios, and those
// already probed (a seed added to the sweep since); trials whose config
// hash the sweep holds are left out.
void AddProbeTrials(const v1::SweepSpec& spec, const GroupKey& key,
                    const std::map<double, Probe>& group,
                    const std::vector<ProbeResult>& results,
                    const SearchDecision& d, std::set<std::string>* hashes,
                    storage::FollowUp* out) {
  const auto& [p, eta, alpha] = key;
  v1::SweepSpec grid = spec;
  grid.clear_search();
  v1::SweepAxes* g = grid.mutable_axes();
  g->clear_parameterizations();
  if (p != v1::PARAMETERIZATION_UNSPECIFIED)
    g->add_parameterizations(static_cast<v1::Parameterization>(p));
  g->clear_eta_ovs();
  g->add_eta_ovs(eta);
  g->clear_alphas();
  if (!spec.axes().alphas().empty()) g->add_alphas(alpha);
  g->clear_lr_ratios();
  for (const ProbeResult& r : results) g->add_lr_ratios(r.ratio);
  for (double r : d.next_ratios) {
    if (group.count(r) == 0) g->add_lr_ratios(r);
  }
  for (ExpandedTrial& e : ExpandSweep(grid)) {
    if (hashes->count(e.config_hash) > 0) continue;
    hashes->insert(e.config_hash);
    out->trials.push_back(storage::NewTrial{
        std::move(e.config_json), e.config_hash,
        v1::Parameterization_Name(e.config.parameterization()),
        e.config.lr_ratio(), e.config.eta_ov(), e.config.seed(),
        std::move(e.axes_pb), std::move(e.training_pb)});
  }
}

// The group's search as stored: its state, bracket and every probe (those
// named now queued, without values), by ratio.
storage::SearchRecord SearchRecordOf(const GroupKey& key,
                                     const std::map<double, Probe>& group,
                                     const std::vector<ProbeResult>& results,
                                     const SearchDecision& d) {
  const auto& [p, eta, alpha] = key;
  v1::SearchOutcome o;
  o.set_parameterization(static_cast<v1::Parameterization>(p));
  o.set_eta_ov(eta);
  o.set_alpha(alpha);
  o.set_state(SearchStateName(d.state));
  o.set_below(d.below);
  o.set_above(d.above);
  for (double r : d.non_monotone) o.add_non_monotone(r);
  for (const ProbeSummary& s : d.probes) {
    v1::SearchProbe* sp = o.add_probes();
    sp->set_lr_ratio(s.ratio);
    sp->set_seeds(s.n);
    sp->set_mean(s.mean);
    sp->set_ci95(s.ci95);
    sp->set_reached(s.reached);
    for (const ProbeResult& r : results) {
      if (r.ratio == s.ratio) {
        sp->set_seeds_failed(r.failed);
        sp->set_complete(r.complete);
      }
    }
  }
  for (double r : d.next_ratios) {
    if (group.count(r) > 0) continue;
    v1::SearchProbe* sp = o.add_probes();
    sp->set_lr_ratio(r);
    sp->set_mean(std::nan(""));
    sp->set_ci95(std::nan(""));
  }
  std::sort(o.mutable_probes()->begin(), o.mutable_probes()->end(),
            [](const v1::SearchProbe& a, const v1::SearchProbe& b) {
              return a.lr_ratio() < b.lr_ratio();
            });
  storage::SearchRecord rec;
  rec.group = absl::StrFormat(
      "%s/eta_ov=%.17g/alpha=%.17g",
      v1::Parameterization_Name(static_cast<v1::Parameterization>(p)), eta,
      alpha);
  rec.state = o.state();
  rec.outcome_json = CanonicalJson(o);
  return rec;
}

}  // namespace

absl::StatusOr<storage::FollowUp> GrowSearch(
    const storage::SweepRecord& sweep,
    const std::vector<storage::TrialRecord>& trials) {
  v1::SweepSpec spec;
  RETURN_IF_ERROR(ParseJson(sweep.spec_json, &spec));
  storage::FollowUp out;
  if (!spec.has_search()) return out;
  const RatioSearchSpec search = SearchSpecOf(spec.search());
  const v1::SweepAxes& axes = spec.axes();
  ProbesByGroup probes;
  std::set<std::string> hashes;
  RETURN_IF_ERROR(IndexProbes(trials, &probes, &hashes));

  std::vector<int> params(axes.parameterizations().begin(),
                          axes.parameterizations().end());
  if (params.empty()) params.push_back(v1::PARAMETERIZATION_UNSPECIFIED);
  std::vector<double> alphas(axes.alphas().begin(), axes.alphas().end());
  if (alphas.empty()) alphas.push_back(0);
  out.training_pb = TrainingPb(spec);
  for (int p : params) {
    for (double eta : axes.eta_ovs()) {
      for (double alpha : alphas) {
        const GroupKey key{p, eta, alpha};
        const std::map<double, Probe>& group = probes[key];
        const std::vector<ProbeResult> results =
            ProbeResults(group, axes, search.metric);
        const SearchDecision d = Decide(search, results);
        AddProbeTrials(spec, key, group, results, d, &hashes, &out);
        out.searches.push_back(SearchRecordOf(key, group, results, d));
      }
    }
  }
  return out;
}

}  // namespace qkov::core
