// Adaptive sweeps (docs/adaptive.md): a sweep whose trials are chosen from
// its own results. A sweep spec with `search` set runs, for each
// combination of its other axes (parameterization x eta_ov x alpha), the
// ratio search of ratio_search.h: the server creates the probes, each a
// lr_ratio with every seed of the sweep, and adds the next as results come.
//
// GrowSearch is the store's follow-up for such a sweep
// (storage::SearchQueries::SetFollowUp): the store calls it in the
// transaction that submits the sweep and in each that ends one of its
// trials, with every trial of the sweep, and inserts the probes it names
// (by config hash, so a probe already there is left as it is) in that same
// transaction. What it names depends only on the spec and the stored
// results, so a server killed and restarted, or a sweep file submitted
// again, goes on from where the search stands, with no probe twice and none
// missing.
#ifndef QKOV_SERVER_CORE_ADAPTIVE_SWEEP_H_
#define QKOV_SERVER_CORE_ADAPTIVE_SWEEP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "qkov/v1/sweep.pb.h"
#include "server/core/ratio_search.h"
#include "server/core/sweep_expansion.h"
#include "storage/results_store.h"

namespace qkov::core {

// The search's defaults (axis lr_ratio, op >=, resolution 1.2, 5 coarse
// points, the seeds: the seeds axis, or 0..seeds_per_probe-1 (3) when it is
// empty). Nothing for a spec without a search.
void ApplySearchDefaults(qkov::v1::SweepSpec* spec);

// OK for a spec without a search. Otherwise INVALID_ARGUMENT naming the
// field: an axis other than lr_ratio, a lr_ratios axis given, a task with
// no QK circuit to speed up (fixed_attention), a metric the task does not
// store (common/task_info.h), an op other than >= or <=, a target
// outside the metric's range, and what ValidateRatioSearch refuses.
absl::Status ValidateSearch(const qkov::v1::SweepSpec& spec);

// Early stopping's defaults (mode min, min_peers 3, reduction 3); nothing
// for a spec without it.
void ApplyEarlyStoppingDefaults(qkov::v1::SweepSpec* spec);

// OK for a spec without early stopping. Otherwise INVALID_ARGUMENT naming
// the field under "spec.early_stopping.": a rule other than median or
// asha, a curve the task does not report, a mode other than min or max, a
// negative min_steps or min_peers < 1; for asha a reduction that is not an
// integer >= 2, and a first rung (min_steps) that is not a positive
// multiple of training.report_every or not below training.max_steps.
absl::Status ValidateEarlyStopping(const qkov::v1::SweepSpec& spec);

// Whether the rule judges a trial at `step` at all: median from min_steps
// on, asha at its rungs (below `max_steps`, the trial's budget). The caller
// reads the peers only for these steps.
bool JudgedAt(const qkov::v1::EarlyStopping& rule, int64_t max_steps,
              int64_t step);

// Whether a trial of a sweep with early stopping stops at `step`, having
// reported `value` there: `best_so_far` its best value of the curve up to
// and including `step`, `peers` the sweep's other trials' values at `step`
// (SearchQueries::PeerValuesAt), `max_steps` the trial's budget. Empty when
// it goes on; otherwise the reason, one line.
std::string EarlyStopReason(const qkov::v1::EarlyStopping& rule,
                            int64_t max_steps, int64_t step, double value,
                            double best_so_far,
                            const std::vector<double>& peers);

// The most probes a search can make per combination of the other axes: the
// coarse grid and the bisection steps down to the resolution.
int MaxProbesPerSearch(const qkov::v1::RatioSearch& search);

RatioSearchSpec SearchSpecOf(const qkov::v1::RatioSearch& search);

// The store's follow-up for a sweep with a search: for each combination,
// Decide on its probes (a probe's value is the metric of each seed that
// ended done or diverged with a finite value; a failed seed, or one without
// it, counts as failed), the probes to add, and each search's outcome.
absl::StatusOr<storage::FollowUp> GrowSearch(
    const storage::SweepRecord& sweep,
    const std::vector<storage::TrialRecord>& trials);

}  // namespace qkov::core

#endif  // QKOV_SERVER_CORE_ADAPTIVE_SWEEP_H_
