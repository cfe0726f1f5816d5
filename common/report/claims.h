// The paper's claims as data (docs/report.md): what each needs (the task a
// sweep trains and the arms it must hold), the quantity compared and how (a
// matched comparison: the arms' values where a reference curve first reaches
// the same levels; or equal steps: the arms' final results after the same
// training budget), the paper's number in the same quantity, the smallest
// effect that counts, the paper's scale, and the verdict rule in numbers.
// `qkov report` judges each claim on the sweeps of a results database.
#ifndef QKOV_COMMON_REPORT_CLAIMS_H_
#define QKOV_COMMON_REPORT_CLAIMS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "qkov/v1/sweep.pb.h"

namespace qkov::report {

// A claim's verdict (docs/report.md, "The verdict rule").
// Each compared level is first read on its own (LevelReading), then the
// claim from the count of each reading.
enum class Verdict {
  kReproduced,     // the faster arm better by at least the effect and by
                   // more than both CIs at every compared level; closeness:
                   // the arms' difference, widened by both CIs, within the
                   // tolerance at every level
  kPartly,         // so at some levels, and never the other way
  kNotReproduced,  // measured: at every level the CIs exclude the effect
                   // (the arms closer than it), or the arms better both ways
  kInconclusive,   // no level against, none for, and some whose CIs are too
                   // wide to tell (Judgement::seeds_to_decide says how many
                   // seeds per arm the observed spread would need)
  kContradicted,   // the baseline better by at least the effect and both CIs
                   // at some level, and the faster arm never so; closeness:
                   // the arms apart by more than the tolerance and both CIs
                   // at some level, and within it at none
  kNotRun,         // no sweep in the database that holds the claim's arms,
                   // or none comparable yet
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

// How the matched levels are spaced between the first usable level and the
// lowest the arms share: on a log scale (a loss) or linearly (an accuracy).
enum class LevelScale { kLog, kLinear };

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
  std::vector<std::string> presets;  // the presets that run it, best first
  // The task a sweep must train to serve the claim (a qkov.v1.TaskKind
  // name): the report serves the claim from every sweep of this task that
  // holds both arms, whatever its name (SweepsFor).
  std::string task;
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
  // An ordered claim (a ranking, a trend): its arms in the claimed order,
  // best first, and between each two the relation, '>' (better by the
  // effect) or '~' (comparable: closer than the effect). Each two
  // neighbours are judged as a claim of their own (PairClaims); `faster` and
  // `baseline` are unused.
  std::vector<std::vector<std::string>> order = {};
  std::string relations = {};
  // How the verdict's reason names the two sides; empty: "the faster arm"
  // and "the baseline" (PairClaims names an ordered claim's arms).
  std::string faster_label = {}, baseline_label = {};
  std::string framing;  // "matched training loss", ...
  // The paper's number in the quantity we compare (or "the paper gives
  // none"), and where it is printed (shared/paper/NOTES.md's section, table
  // or notebook output).
  std::string paper;
  std::string paper_source;
  // The smallest advantage of the faster arm that counts, in the metric's
  // units, and how it was chosen (half the paper's own difference where the
  // paper gives one). A separation claim needs it; a closeness claim's
  // tolerance plays its part.
  double effect = 0;
  std::string effect_basis;
  // The scale the paper ran the claim at (steps or epochs, base rate,
  // examples, model, seeds), printed beside ours; `paper_steps` its budget in
  // optimizer steps (0: not comparable, as for the ODE), which marks a sweep
  // that ran fewer as below the paper's scale.
  std::string paper_scale;
  int64_t paper_steps = 0;
  int paper_seeds = 0;         // seeds per arm (0: not stated)
  int64_t paper_examples = 0;  // training examples (0: fresh batches)
  // A matched claim's levels: spaced on `scale` from the first level where an
  // arm's metric has left its starting value to the lowest level both arms
  // reach (ChooseLevels); where `paper_levels` is set, the paper's own
  // comparison points inside that span are added, or used alone where
  // `paper_levels_only`.
  LevelScale scale = LevelScale::kLog;
  std::vector<double> paper_levels = {};
  bool paper_levels_only = false;
  // A closeness claim's tolerance from the paper's own arms: their per-seed
  // values (the paper's difference plus both 95% CIs is the widest gap its
  // own data are consistent with). Empty: `tolerance` as given.
  std::vector<double> paper_faster = {}, paper_baseline = {};
  // Each arm is one trajectory that a rerun repeats exactly (the ODE): a
  // one-trial arm has no spread to allow for. Elsewhere an arm of one trial
  // has no CI, and its level cannot separate the arms.
  bool deterministic = false;
  Comparison comparison = Comparison::kMatched;
  // The claim favours the faster arm's lower value (a loss), not its higher.
  bool lower_is_better = false;
  // Where > 0, a claim of closeness ("at comparable accuracy"): the arms'
  // values differ by at most this much, whichever is higher; not that the
  // faster arm's is better. Claims() derives it from paper_faster and
  // paper_baseline where they are given (ClosenessTolerance).
  double tolerance = 0;
  std::string tolerance_basis;
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

// An ordered claim's neighbours as claims of two arms, in order: "ID: A > B"
// with the claim's effect, "ID: B ~ C" with the effect as its tolerance
// ("A < B" where lower is better).
std::vector<Claim> PairClaims(const Claim& claim);

// A relation as the report prints it: '>' becomes '<' where lower values
// are better (a loss).
char RelationShown(const Claim& claim, char relation);

// Every arm a claim compares: its order, or the faster arm and the baseline
// (only the faster for a claim against the paper's numbers).
std::vector<std::vector<std::string>> ArmsOf(const Claim& claim);

// |mean(faster) - mean(baseline)| + both 95% CIs (Student t) of the paper's
// per-seed values: the widest gap between the arms its own numbers allow.
double ClosenessTolerance(const std::vector<double>& faster,
                          const std::vector<double>& baseline);

// What one compared level shows.
enum class LevelReading {
  kFor,           // the faster arm better by >= the effect, beyond both CIs
                  // (closeness: within the tolerance, CIs included)
  kAgainst,       // the baseline so (closeness: apart beyond it and the CIs)
  kEqual,         // the difference and both CIs inside the effect: the arms
                  // measured closer than the claim needs
  kInconclusive,  // the CIs too wide to tell
};
std::string LevelReadingName(LevelReading r);

// The seeds per arm that would decide a level read as inconclusive, assuming
// the observed means and standard deviations hold: the smallest n whose
// t(0.975, n - 1) (s_f + s_b) / sqrt(n) is below the distance from the
// observed difference to the nearest threshold that decides it. 0 where it
// cannot be estimated (an arm without a spread); capped at 10,000.
int SeedsToDecide(double difference, double effect, double std_faster,
                  double std_baseline, bool closeness);

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
  // A claim against the paper's numbers: this level's tolerance (the
  // published number's digits).
  double level_tolerance = 0;
  LevelReading reading = LevelReading::kInconclusive;  // where compared
  int seeds_to_decide = 0;  // where inconclusive (SeedsToDecide)
};

struct PairJudgement;

struct Judgement {
  Verdict verdict = Verdict::kNotRun;
  std::vector<LevelComparison> levels;
  std::string why;  // one line: how many levels read which way
  // Where inconclusive: the seeds per arm that would decide every
  // inconclusive level (the largest SeedsToDecide; 0 where unknown).
  int seeds_to_decide = 0;
  // An ordered claim: each two neighbours' judgement, in order (`levels` is
  // then empty).
  std::vector<PairJudgement> pairs;
};

struct PairJudgement {
  Claim claim;  // the pair as a claim of two arms (PairClaims)
  Judgement judgement;
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
