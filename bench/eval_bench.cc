// The cost of evaluation during training (evaluation.eval_every), timed
// inside a real trial: the first trial of a preset or sweep file (defaults
// filled as the server fills them, options converted as the worker converts
// them) trains with a report every eval_every / 2 steps, so every other
// report interval ends in an evaluation. The difference between the mean
// intervals with and without one is one evaluation's time; interleaved, the
// VM's drift falls on both alike. One evaluation period is trained untimed
// first. Prints numbers; never fails on time (docs/PERFORMANCE.md).
//
//   eval_bench --preset=paper-hatexplain --steps=8000 --threads=1
//   eval_bench --sweep=docs/experiments/squad-matched.yaml --steps=4000
// Paths in the sweep are read from the working directory (the repository
// root, as for qkov-worker).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "common/presets.h"
#include "common/sweep_file.h"
#include "server/core/sweep_spec.h"
#include "worker/agent/trial_options.h"
#include "worker/training/cpu_runtime.h"
#include "worker/training/trainer.h"

ABSL_FLAG(std::string, preset, "", "a preset (qkov presets), with --quick");
ABSL_FLAG(bool, quick, false, "the preset's --quick settings");
ABSL_FLAG(std::string, sweep, "", "or a sweep file");
ABSL_FLAG(std::vector<std::string>, set, {},
          "key=value overrides, as qkov submit --set (comma-separated)");
ABSL_FLAG(int64_t, steps, 4000, "timed training steps (whole periods)");
ABSL_FLAG(int, threads, 1, "torch intra-op threads");

namespace qkov {
namespace {

using Clock = std::chrono::steady_clock;

// Timestamps each report; stops the trial after `last_step`.
class ReportClock : public training::TrainingObserver {
 public:
  explicit ReportClock(int64_t last_step) : last_step_(last_step) {}
  bool OnReport(int64_t step,
                const std::vector<training::MetricPoint>&) override {
    times_.push_back(Clock::now());
    steps_.push_back(step);
    return step < last_step_;
  }
  // The mean seconds of the report intervals after `from` that end at a
  // multiple of `every` (they hold an evaluation), and of the others.
  std::pair<double, double> WithAndWithout(int64_t every, int64_t from) const {
    double sum[2] = {0, 0};
    int n[2] = {0, 0};
    for (size_t i = 1; i < times_.size(); ++i) {
      if (steps_[i - 1] < from) continue;
      const int with = steps_[i] % every == 0 ? 1 : 0;
      sum[with] +=
          std::chrono::duration<double>(times_[i] - times_[i - 1]).count();
      ++n[with];
    }
    return {n[1] ? sum[1] / n[1] : 0, n[0] ? sum[0] / n[0] : 0};
  }

 private:
  int64_t last_step_;
  std::vector<Clock::time_point> times_;
  std::vector<int64_t> steps_;
};

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "eval_bench: %s\n", s.ToString().c_str());
  return 1;
}

int Main() {
  training::SetTrainingThreads(absl::GetFlag(FLAGS_threads));
  std::vector<std::string> overrides;
  absl::StatusOr<v1::SweepSpec> spec;
  if (!absl::GetFlag(FLAGS_preset).empty()) {
    absl::StatusOr<Preset> p = FindPreset(absl::GetFlag(FLAGS_preset));
    if (!p.ok()) return Fail(p.status());
    if (absl::GetFlag(FLAGS_quick)) overrides = p->quick;
    for (const auto& s : absl::GetFlag(FLAGS_set)) overrides.push_back(s);
    spec = ParseSweepText(p->yaml, p->name, overrides);
  } else {
    spec = LoadSweepFile(absl::GetFlag(FLAGS_sweep), absl::GetFlag(FLAGS_set));
  }
  if (!spec.ok()) return Fail(spec.status());
  core::ApplySpecDefaults(&*spec);
  if (absl::Status s = core::ValidateSweepSpec(*spec, core::SpecLimits());
      !s.ok())
    return Fail(s);
  // The first trial's config: its axes, then its arm's training part.
  const core::ExpandedTrial first = core::ExpandSweep(*spec).front();
  v1::TrialConfig config;
  if (!config.ParseFromString(first.axes_pb + (first.training_pb.empty()
                                                   ? core::TrainingPb(*spec)
                                                   : first.training_pb)))
    return Fail(absl::InternalError("the expanded config does not parse"));
  absl::StatusOr<training::TrialOptions> o = agent::ToTrialOptions(config);
  if (!o.ok()) return Fail(o.status());
  const int64_t every = o->eval.eval_every;
  if (every < 2 || every % 2 != 0) {
    return Fail(absl::InvalidArgumentError(
        "evaluation.eval_every must be even and >= 2 for this bench"));
  }
  o->report_every = every / 2;
  const int64_t periods =
      std::max<int64_t>(1, (absl::GetFlag(FLAGS_steps) + every - 1) / every);
  const int64_t last = every * (1 + periods);
  ReportClock clock(last);
  absl::StatusOr<training::TrialOutcome> r =
      training::RunTrial(*o, &clock, torch::kCPU);
  if (!r.ok()) return Fail(r.status());
  const auto [with, without] = clock.WithAndWithout(every, every);
  const double eval_s = with - without;
  std::printf(
      "%s: an evaluation of %lld examples every %lld steps takes "
      "%.3f s, %.1f%% of the %.2f s of training between two (intervals of "
      "%lld steps: %.3f s with one, %.3f s without; %lld periods timed, %d "
      "thread)\n",
      spec->name().c_str(), static_cast<long long>(o->eval.eval_examples),
      static_cast<long long>(every), eval_s, 100.0 * eval_s / (2 * without),
      2 * without, static_cast<long long>(every / 2), with, without,
      static_cast<long long>(periods), absl::GetFlag(FLAGS_threads));
  return 0;
}

}  // namespace
}  // namespace qkov

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return qkov::Main();
}
