#include "server/core/ratio_search.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/aggregate.h"

namespace qkov::core {
namespace {

absl::Status Invalid(absl::string_view prefix, absl::string_view field,
                     absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat(prefix, field, ": ", reason));
}

bool Reaches(const RatioSearchSpec& spec, double mean) {
  return spec.op == TargetOp::kAtLeast ? mean >= spec.target
                                       : mean <= spec.target;
}

}  // namespace

absl::Status ValidateRatioSearch(const RatioSearchSpec& s,
                                 absl::string_view prefix) {
  for (auto [field, v] : {std::pair{"lo", s.lo}, std::pair{"hi", s.hi}}) {
    if (!std::isfinite(v) || v <= 0)
      return Invalid(prefix, field,
                     absl::StrCat("must be finite and > 0 (got ", v, ")"));
  }
  if (!(s.lo < s.hi))
    return Invalid(prefix, "hi",
                   absl::StrCat("must be > lo = ", s.lo, " (got ", s.hi,
                                "): the range is empty or inverted"));
  if (!std::isfinite(s.resolution) || s.resolution <= 1)
    return Invalid(
        prefix, "resolution",
        absl::StrCat("must be a finite factor > 1 (got ", s.resolution, ")"));
  if (s.coarse_points < 2 || s.coarse_points > 1000)
    return Invalid(
        prefix, "coarse_points",
        absl::StrCat("must be in [2, 1000] (got ", s.coarse_points, ")"));
  if (s.seeds_per_probe < 1 || s.seeds_per_probe > 1000)
    return Invalid(
        prefix, "seeds_per_probe",
        absl::StrCat("must be in [1, 1000] (got ", s.seeds_per_probe, ")"));
  if (s.metric.empty()) return Invalid(prefix, "metric", "is required");
  if (!std::isfinite(s.target))
    return Invalid(prefix, "target",
                   absl::StrCat("must be finite (got ", s.target, ")"));
  return absl::OkStatus();
}

std::vector<double> CoarseRatios(const RatioSearchSpec& s) {
  std::vector<double> out;
  const double a = std::log(s.lo), b = std::log(s.hi);
  for (int i = 0; i < s.coarse_points; ++i) {
    if (i == 0) {
      out.push_back(s.lo);
    } else if (i + 1 == s.coarse_points) {
      out.push_back(s.hi);
    } else {
      out.push_back(std::exp(a + (b - a) * i / (s.coarse_points - 1)));
    }
  }
  return out;
}

const char* SearchStateName(SearchState state) {
  switch (state) {
    case SearchState::kRunning:
      return "running";
    case SearchState::kFound:
      return "found";
    case SearchState::kReachedAtLo:
      return "reached_at_lo";
    case SearchState::kNeverReached:
      return "never_reached";
    case SearchState::kProbeFailed:
      return "probe_failed";
  }
  return "?";
}

SearchDecision Decide(const RatioSearchSpec& spec,
                      const std::vector<ProbeResult>& probes) {
  SearchDecision d;
  if (probes.empty()) {
    d.next_ratios = CoarseRatios(spec);
    return d;
  }
  std::vector<const ProbeResult*> sorted;
  for (const ProbeResult& p : probes) sorted.push_back(&p);
  std::sort(sorted.begin(), sorted.end(),
            [](const ProbeResult* a, const ProbeResult* b) {
              return a->ratio < b->ratio;
            });
  bool waiting = false;
  for (const ProbeResult* p : sorted) {
    ProbeSummary s;
    s.ratio = p->ratio;
    const Summary sum = Summarize(p->values);
    s.n = sum.n;
    s.mean = sum.mean;
    s.ci95 = sum.ci95;
    s.failed = sum.n == 0;
    s.reached = !s.failed && Reaches(spec, sum.mean);
    d.probes.push_back(s);
    waiting |= !p->complete;
  }
  // The smallest probe that reaches, and the largest usable one below it.
  const ProbeSummary* above = nullptr;
  for (const ProbeSummary& s : d.probes) {
    if (s.reached) {
      above = &s;
      break;
    }
  }
  const ProbeSummary* below = nullptr;
  const ProbeSummary* failed_between = nullptr;
  for (const ProbeSummary& s : d.probes) {
    if (above != nullptr && s.ratio >= above->ratio) break;
    if (s.failed) {
      failed_between = &s;
    } else {
      below = &s;
      failed_between = nullptr;
    }
  }
  if (above != nullptr) {
    for (const ProbeSummary& s : d.probes) {
      if (s.ratio > above->ratio && !s.failed && !s.reached)
        d.non_monotone.push_back(s.ratio);
    }
  }
  d.above = above != nullptr ? above->ratio : spec.hi;
  d.below = below != nullptr ? below->ratio : 0;
  if (waiting) return d;  // decide on complete probes only

  if (above == nullptr) {
    d.state = SearchState::kNeverReached;
    return d;
  }
  if (below == nullptr) {
    // Nothing usable below the first reaching probe: at the range's lower
    // end it is the answer; otherwise the probes below it all failed.
    d.state =
        above->ratio == d.probes.front().ratio || failed_between == nullptr
            ? SearchState::kReachedAtLo
            : SearchState::kProbeFailed;
    return d;
  }
  if (failed_between != nullptr) {
    // The midpoint probed last failed on every seed: the bracket cannot
    // narrow further without it.
    d.state = SearchState::kProbeFailed;
    return d;
  }
  if (above->ratio / below->ratio <= spec.resolution) {
    d.state = SearchState::kFound;
    return d;
  }
  d.next_ratios.push_back(std::sqrt(below->ratio * above->ratio));
  return d;
}

}  // namespace qkov::core
