// A checkpoint as the worker reads it back from a lease (RunTrial's
// resume_from): the input's first byte picks the trial (the synthetic task
// in each parameterization, with SGD, SGD with momentum or AdamW: the
// trainers that hand back checkpoints without data files), the rest is the
// checkpoint's bytes. Property: no crash, no leak, no hang; a checkpoint
// that does not parse, or parses but holds entries of the wrong kind or
// size, is refused (INVALID_ARGUMENT or INTERNAL with a message), never read
// past; a resumed run never passes max_steps. Seeds are real hand-back
// checkpoints of those trials: QKOV_FUZZ_WRITE_SEEDS=DIR checkpoint_fuzzer
// writes them and exits.
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "tests/fuzz/fuzz_support.h"
#include "tests/unit/tasks/synthetic/small_trial.h"
#include "worker/training/trainer.h"

namespace training = qkov::training;

namespace {

constexpr int kTrials = 6;

training::TrialOptions Trial(int which) {
  const training::Parameterization p[] = {
      training::Parameterization::kFafo, training::Parameterization::kFaco,
      training::Parameterization::kCafo, training::Parameterization::kCaco};
  training::TrialOptions o =
      qkov::training::testing::SmallSyntheticTrial(p[which % 4]);
  if (which == 4) o.optimizer.momentum = 0.9;
  if (which == 5) o.optimizer.kind = training::OptimizerKind::kAdamW;
  return o;
}

// Hands the trial back before step `at`.
class HandBack : public training::TrainingObserver {
 public:
  explicit HandBack(int at) : at_(at) {}
  bool OnReport(int64_t, const std::vector<training::MetricPoint>&) override {
    return true;
  }
  training::StopRequest PollStop() override {
    return polls_++ == at_ ? training::StopRequest::kHandBack
                           : training::StopRequest::kNone;
  }

 private:
  int at_;
  int polls_ = 0;
};

void WriteSeeds(const std::string& dir) {
  for (int which = 0; which < kTrials; ++which) {
    HandBack observer(6);
    auto out = training::RunTrial(Trial(which), &observer);
    if (!out.ok() || out->checkpoint.empty()) {
      std::fprintf(stderr, "trial %d: no checkpoint (%s)\n", which,
                   out.status().ToString().c_str());
      std::exit(1);
    }
    std::ofstream(dir + "/trial" + std::to_string(which), std::ios::binary)
        << static_cast<char>(which) << out->checkpoint;
  }
  std::exit(0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // One thread: the trials are tiny, and pools only add noise to timing.
  torch::set_num_threads(1);
  if (const char* dir = std::getenv("QKOV_FUZZ_WRITE_SEEDS")) WriteSeeds(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const training::TrialOptions options = Trial(data[0] % kTrials);
  const std::string checkpoint(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  absl::StatusOr<training::TrialOutcome> out =
      training::RunTrial(options, nullptr, torch::kCPU, checkpoint);
  if (!out.ok()) {
    const absl::StatusCode code = out.status().code();
    QKOV_FUZZ_CHECK(code == absl::StatusCode::kInvalidArgument ||
                        code == absl::StatusCode::kInternal,
                    out.status().ToString());
    QKOV_FUZZ_CHECK(!out.status().message().empty(), "empty refusal");
    return 0;
  }
  QKOV_FUZZ_CHECK(out->steps <= options.max_steps,
                  "resumed past max_steps: " + std::to_string(out->steps));
  return 0;
}
