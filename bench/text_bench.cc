// Training steps per second of the HateXplain model (docs/text-tasks.md) on
// the shipped training posts: the time between the report after --warmup
// steps and the one after --warmup + --steps, so data loading, tokenizing
// and evaluation are not counted. bench/compare_text.sh runs it beside the
// same model in PyTorch eager (docs/PERFORMANCE.md).
//
//   text_bench --data=../shared/data --steps=200 --threads=1
#include <chrono>
#include <cstdio>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "worker/tasks/text/text_options.h"
#include "worker/training/cpu_runtime.h"
#include "worker/training/trainer.h"

ABSL_FLAG(std::string, data, "../shared/data", "the shared data folder");
ABSL_FLAG(int64_t, steps, 200, "timed steps");
ABSL_FLAG(int64_t, warmup, 20, "untimed steps first");
ABSL_FLAG(int, threads, 1, "torch intra-op threads");
ABSL_FLAG(bool, flush_denormals, true,
          "flush subnormal floats to zero, as qkov-worker does by default");
ABSL_FLAG(std::string, parameterization, "FAFO", "FAFO, FACO, CAFO or CACO");
ABSL_FLAG(std::string, device, "cpu", "cpu or cuda[:N]");

namespace qkov::training {
namespace {

// Timestamps each report; stops the trial after the timed steps.
class Clock : public TrainingObserver {
 public:
  explicit Clock(int64_t last_step) : last_step_(last_step) {}
  bool OnReport(int64_t step, const std::vector<MetricPoint>&) override {
    times_.push_back(std::chrono::steady_clock::now());
    steps_.push_back(step);
    return step < last_step_;
  }
  double StepsPerSecond() const {
    if (steps_.size() < 2) return 0;
    const double s =
        std::chrono::duration<double>(times_.back() - times_.front()).count();
    return static_cast<double>(steps_.back() - steps_.front()) / s;
  }

 private:
  int64_t last_step_;
  std::vector<std::chrono::steady_clock::time_point> times_;
  std::vector<int64_t> steps_;
};

int Main() {
  SetTrainingThreads(absl::GetFlag(FLAGS_threads));
  SetFlushDenormal(absl::GetFlag(FLAGS_flush_denormals));
  const std::string data = absl::GetFlag(FLAGS_data);
  const int64_t warmup = absl::GetFlag(FLAGS_warmup);
  const int64_t steps = absl::GetFlag(FLAGS_steps);
  TrialOptions o;
  o.task = "text";
  auto p = ParseParameterization(absl::GetFlag(FLAGS_parameterization));
  if (!p.ok()) {
    std::fprintf(stderr, "text_bench: %s\n", p.status().ToString().c_str());
    return 2;
  }
  o.parameterization = *p;
  o.lr_ratio = 30;
  o.eta_ov = 5e-5;
  o.seed = 1234;
  o.batch_size = 32;
  o.report_every = warmup;  // the timed span is a whole number of reports
  o.max_steps = 1000000;
  o.optimizer.kind = OptimizerKind::kAdamW;
  o.optimizer.schedule = ScheduleKind::kCosineWarmup;
  o.eval.num_examples = 64;
  text::TextTaskOptions& t = o.MutableTaskOptions<text::TextTaskOptions>();
  t.train.format = text::TextFormat::kHateXplain;
  t.train.path = data + "/hatexplain/train-reconstructed.jsonl";
  t.tokenizer.vocab_path = data + "/tokenizers/bert-base-uncased/vocab.txt";
  t.epochs = 1 + (warmup + steps) / 480;
  t.weight_decay = {1e-4, 1e-4, 1e-4};
  const int64_t last = warmup + (steps + warmup - 1) / warmup * warmup;
  Clock clock(last);
  absl::StatusOr<TrialOutcome> r =
      RunTrial(o, &clock, torch::Device(absl::GetFlag(FLAGS_device)));
  if (!r.ok()) {
    std::fprintf(stderr, "text_bench: %s\n", r.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "qkov text %s: %.2f steps/s (batch 32, length 128, d_model 64, 4 heads, "
      "d_head 64, MLP 256, AdamW; %lld timed steps, %d thread, %s)\n",
      absl::GetFlag(FLAGS_parameterization).c_str(), clock.StepsPerSecond(),
      static_cast<long long>(last - warmup), absl::GetFlag(FLAGS_threads),
      absl::GetFlag(FLAGS_device).c_str());
  return 0;
}

}  // namespace
}  // namespace qkov::training

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return qkov::training::Main();
}
