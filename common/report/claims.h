// The paper's claims as data (docs/report.md): what each needs (the preset
// whose sweep shows it), the quantity compared and how (a matched
// comparison: the arms' values where a reference curve first reaches the
// same levels), the paper's number, and the verdict rule in numbers.
// `qkov report` judges each claim on the sweeps of a results database.
#ifndef QKOV_COMMON_REPORT_CLAIMS_H_
#define QKOV_COMMON_REPORT_CLAIMS_H_

#include <string>
#include <vector>

#include "qkov/v1/sweep.pb.h"

namespace qkov::report {

enum class Verdict {
  kReproduced,     // the faster arm exceeds the baseline by more than both
                   // CIs at every compared level
  kPartly,         // at some levels, and the baseline never above it so
  kNotReproduced,  // at no level either way
  kContradicted,   // the baseline exceeds the faster arm by more than both
                   // CIs at some level, and the faster arm never so
  kNotRun,         // no sweep of the claim's preset in the database, or
                   // one without the claim's arms or not comparable yet
};
std::string VerdictName(Verdict v);

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
};

const std::vector<Claim>& Claims();

// One compared level: each arm's value there.
struct LevelComparison {
  double level = 0;
  int faster_trials = 0, faster_reached = 0;
  int baseline_trials = 0, baseline_reached = 0;
  qkov::v1::MetricSummary faster_value, baseline_value;
  qkov::v1::MetricSummary faster_step, baseline_step;
  // faster - baseline, and the sum of the two CI95 half widths (a
  // deterministic claim's one-trial arm counts 0; another one-trial arm
  // makes it infinite).
  double difference = 0, margin = 0;
  bool compared = false;  // both arms reached the level
};

struct Judgement {
  Verdict verdict = Verdict::kNotRun;
  std::vector<LevelComparison> levels;
  std::string why;  // one line: how many levels separated which way
};

// The claim's verdict on a matched table (MatchSweep's answer for the
// claim's request); "not run" where the table lacks one of the arms. Arm
// keys compare as numbers where both parse.
Judgement Judge(const Claim& claim, const qkov::v1::MatchedResponse& table);

}  // namespace qkov::report

#endif  // QKOV_COMMON_REPORT_CLAIMS_H_
