// The paper's claims as data (docs/report.md): what each needs (the preset
// whose sweep shows it), the quantity compared and how (a matched
// comparison: the arms' values where a reference curve first reaches the
// same levels; or equal steps: the arms' final results after the same
// training budget), the paper's number, and the verdict rule in numbers.
// `qkov report` judges each claim on the sweeps of a results database.
#ifndef QKOV_COMMON_REPORT_CLAIMS_H_
#define QKOV_COMMON_REPORT_CLAIMS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov::report {

// A claim's verdict (docs/report.md, "The verdict rule").
enum class Verdict {
  kReproduced,     // the faster arm better by more than both CIs at every
                   // compared level; closeness: the arms' difference, widened
                   // by both CIs, within the tolerance at every level
  kPartly,         // so at some levels, and never the other way
  kNotReproduced,  // at no level either way, or both ways
  kContradicted,   // the baseline better by more than both CIs at some level,
                   // and the faster arm never so; closeness: the arms apart
                   // by more than the tolerance and both CIs at some level,
                   // and within it at none
  kNotRun,         // no sweep of the claim's preset in the database, or
                   // one without the claim's arms or not comparable yet
};
std::string VerdictName(Verdict v);

// How a claim's two arms are compared.
enum class Comparison {
  // Where `reference`, a curve, first reaches the same levels (MatchSweep).
  kMatched,
  // After the same training budget: each finished trial's final result
  // `metric`, at each value of the axis `reference` (its levels), or at the
  // end alone when `reference` is empty.
  kEqualSteps,
};

// A number the paper gives for one level of a claim's reference axis, and how
// far ours may be from it: half a unit in its last digit ("to the digits it
// gives").
struct Published {
  double level = 0;
  double value = 0;
  double tolerance = 0;
};

struct Claim {
  std::string id;                    // short, stable: the report's anchor
  std::string statement;             // the paper's claim, in words
  std::string figure;                // where the paper shows it
  std::vector<std::string> presets;  // sweeps named so show it, in order
  // The matched comparison (MatchSweepRequest): `metric` where `reference`
  // (smoothed over `window` reports) first reaches each of `num_levels`
  // levels the server chooses, per arm of `by`, among trials matching
  // `where`.
  std::string reference;
  std::string metric;
  int window = 1;
  std::vector<std::string> by;
  std::vector<std::string> where;
  std::vector<std::string> faster;    // the faster-QK arm's keys
  std::vector<std::string> baseline;  // the baseline arm's keys
  std::string framing;                // "matched training loss", ...
  std::string paper;                  // the paper's number, in its words
  // Each arm is one trajectory that a rerun repeats exactly (the ODE): a
  // one-trial arm has no spread to allow for. Elsewhere an arm of one trial
  // has no CI, and its level cannot separate the arms.
  bool deterministic = false;
  Comparison comparison = Comparison::kMatched;
  // The claim favours the faster arm's lower value (a loss), not its higher.
  bool lower_is_better = false;
  // Where > 0, a claim of closeness ("at comparable accuracy"): the arms'
  // values differ by at most this much, whichever is higher; not that the
  // faster arm's is better.
  double tolerance = 0;
  // Where not empty, a claim against the paper's own numbers: the faster
  // arm's final results (equal steps) at each of these levels of
  // `reference`, each within its published number's tolerance. `baseline`
  // is unused.
  std::vector<Published> published = {};
};

// What a claim's levels are, for tables and figures: "level" (of the
// reference curve), the axis of an equal-steps claim ("alpha"), or "end".
std::string LevelName(const Claim& claim);
// One level as tables print it: "0.5", or "end" for an equal-steps claim
// without an axis.
std::string LevelText(const Claim& claim, double level);

const std::vector<Claim>& Claims();

// One compared level: each arm's value there.
struct LevelComparison {
  double level = 0;
  int faster_trials = 0, faster_reached = 0;
  int baseline_trials = 0, baseline_reached = 0;
  qkov::v1::MetricSummary faster_value, baseline_value;
  qkov::v1::MetricSummary faster_step, baseline_step;
  // The faster arm's advantage (faster - baseline, or baseline - faster
  // where lower is better; a closeness claim reads its absolute value), and
  // the sum of the two CI95 half widths (a deterministic claim's one-trial arm
  // counts 0; another one-trial arm makes it infinite).
  double difference = 0, margin = 0;
  bool compared = false;  // both arms reached the level
};

struct Judgement {
  Verdict verdict = Verdict::kNotRun;
  std::vector<LevelComparison> levels;
  std::string why;  // one line: how many levels separated which way
};

// The claim's verdict on a matched table (MatchSweep's answer for the
// claim's request, or EqualStepsTable's); "not run" where the table lacks
// one of the arms. Arm keys compare as numbers where both parse.
Judgement Judge(const Claim& claim, const qkov::v1::MatchedResponse& table);

// An equal-steps claim's table, in MatchSweep's shape, from the rows of its
// sweep (`qkov results SWEEP --by BY,REFERENCE --metrics METRIC --where
// state=done`): one group per arm and level, its `trials` and `reached` the
// arm's finished trials there with a finite result, its metric their final
// results' summary (no step: every trial ran the budget). INVALID_ARGUMENT for
// an unknown key.
absl::StatusOr<qkov::v1::MatchedResponse> EqualStepsTable(
    const Claim& claim,
    const google::protobuf::RepeatedPtrField<qkov::v1::ResultRow>& rows);

}  // namespace qkov::report

#endif  // QKOV_COMMON_REPORT_CLAIMS_H_
