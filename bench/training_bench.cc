// Training throughput and a quick look at one trial, no coordinator.
//
//   training_bench --mode=speed --steps=2000        # steps/s per
//   parameterization training_bench --mode=trial --parameterization=FAFO
//   --lr_ratio=20 ...
//
// Prints numbers; never passes or fails on time (docs/PERFORMANCE.md).
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "worker/tasks/synthetic/synthetic_trainer.h"
#include "worker/training/cpu_runtime.h"
#include "worker/training/trainer.h"

ABSL_FLAG(std::string, mode, "speed", "speed | trial");
ABSL_FLAG(std::string, parameterization, "FAFO", "FAFO, FACO, CAFO or CACO");
ABSL_FLAG(double, lr_ratio, 1.0, "eta_QK / eta_OV");
ABSL_FLAG(double, eta_ov, 0.01, "base OV learning rate");
ABSL_FLAG(int64_t, steps, 2000, "max steps");
ABSL_FLAG(int, batch_size, 32, "batch size");
ABSL_FLAG(uint64_t, seed, 1234, "trial seed");
ABSL_FLAG(std::string, init, "identity", "identity | default (both circuits)");
ABSL_FLAG(double, identity_scale, 1e-6, "identity init scale");
ABSL_FLAG(double, target_loss, 1e-3, "stop below this windowed loss");
ABSL_FLAG(int, threads, 1, "torch intra-op threads");
ABSL_FLAG(bool, flush_denormals, true,
          "flush subnormal floats to zero, as qkov-worker does by default");
ABSL_FLAG(std::string, device, "cpu", "cpu or cuda[:N]");
ABSL_FLAG(std::string, engine, "analytic",
          "analytic (the trainer's) or autograd (the reference)");
ABSL_FLAG(std::string, stack, "1,2,4,8,16,32",
          "speed mode: trials trained together, comma-separated");
ABSL_FLAG(std::string, parameterizations, "FAFO,FACO,CAFO,CACO",
          "speed mode: the parameterizations to time, comma-separated");

using namespace qkov::training;

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  SetTrainingThreads(absl::GetFlag(FLAGS_threads));
  SetFlushDenormal(absl::GetFlag(FLAGS_flush_denormals));
  TrialOptions o;
  o.lr_ratio = absl::GetFlag(FLAGS_lr_ratio);
  o.eta_ov = absl::GetFlag(FLAGS_eta_ov);
  o.max_steps = absl::GetFlag(FLAGS_steps);
  o.batch_size = absl::GetFlag(FLAGS_batch_size);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.target_loss = absl::GetFlag(FLAGS_target_loss);
  o.report_every = 500;
  o.init.identity_scale = absl::GetFlag(FLAGS_identity_scale);
  const InitKind init = absl::GetFlag(FLAGS_init) == "default"
                            ? InitKind::kDefaultLinear
                            : InitKind::kIdentity;
  o.init.qk = init;
  o.init.ov = init;
  const std::string engine_name = absl::GetFlag(FLAGS_engine);
  if (engine_name != "analytic" && engine_name != "autograd") {
    std::fprintf(stderr, "--engine: %s is not analytic or autograd\n",
                 engine_name.c_str());
    return 2;
  }
  const SyntheticEngine engine = engine_name == "autograd"
                                     ? SyntheticEngine::kAutograd
                                     : SyntheticEngine::kAnalytic;
  if (absl::GetFlag(FLAGS_mode) == "speed") {
    // Trial-steps per second: T trials stacked, each taking max_steps steps.
    std::printf(
        "trial-steps per second (batch %d, seq %d, vocab %d, %d thread, %s, "
        "%s engine, subnormals %s), by trials stacked\n",
        o.batch_size, o.synthetic.seq_len, o.synthetic.vocab_size,
        absl::GetFlag(FLAGS_threads), absl::GetFlag(FLAGS_device).c_str(),
        absl::GetFlag(FLAGS_engine).c_str(),
        FlushDenormalActive() ? "flushed" : "kept");

    o.target_loss = -1;
    o.eval.num_examples = 64;
    std::vector<int> stacks;
    for (absl::string_view part :
         absl::StrSplit(absl::GetFlag(FLAGS_stack), ',')) {
      int k;
      if (absl::SimpleAtoi(part, &k) && k > 0) stacks.push_back(k);
    }
    std::printf("param");
    for (int k : stacks) std::printf(" T=%d", k);
    std::printf("\n");
    for (const std::string& name : std::vector<std::string>(
             absl::StrSplit(absl::GetFlag(FLAGS_parameterizations), ','))) {
      absl::StatusOr<Parameterization> p = ParseParameterization(name);
      if (!p.ok()) {
        std::fprintf(stderr, "%s\n", p.status().ToString().c_str());
        return 2;
      }
      o.parameterization = *p;
      std::printf("%s", name.c_str());
      for (int k : stacks) {
        std::vector<TrialOptions> batch;
        for (int i = 0; i < k; ++i) {
          TrialOptions t = o;
          t.seed = o.seed + i;
          t.lr_ratio = 1 + i;
          batch.push_back(t);
        }
        auto t0 = std::chrono::steady_clock::now();
        auto r =
            TrainSynthetic(batch, std::vector<TrainingObserver*>(k, nullptr),
                           torch::Device(absl::GetFlag(FLAGS_device)),
                           std::vector<std::string>(k), engine);
        auto t1 = std::chrono::steady_clock::now();
        if (!r.ok()) {
          std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
          return 1;
        }
        const double s = std::chrono::duration<double>(t1 - t0).count();
        std::printf(" %.0f", static_cast<double>(o.max_steps) * k / s);
        std::fflush(stdout);
      }
      std::printf("\n");
    }
    return 0;
  }
  auto p = ParseParameterization(absl::GetFlag(FLAGS_parameterization));
  if (!p.ok()) {
    std::fprintf(stderr, "%s\n", p.status().ToString().c_str());
    return 2;
  }
  o.parameterization = *p;
  if (absl::Status valid = o.Validate(); !valid.ok()) {
    std::fprintf(stderr, "%s\n", valid.ToString().c_str());
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto trained = TrainSynthetic(
      {o}, {nullptr}, torch::Device(absl::GetFlag(FLAGS_device)), {""}, engine);
  auto t1 = std::chrono::steady_clock::now();
  if (!trained.ok()) {
    std::fprintf(stderr, "%s\n", trained.status().ToString().c_str());
    return 1;
  }
  const TrialOutcome* r = &(*trained)[0];
  std::printf("%s ratio=%g eta_ov=%g end=%s steps=%lld wall=%.1fs\n",
              absl::GetFlag(FLAGS_parameterization).c_str(), o.lr_ratio,
              o.eta_ov, TrialEndName(r->end), static_cast<long long>(r->steps),
              std::chrono::duration<double>(t1 - t0).count());
  for (const auto& [k, v] : r->results)
    std::printf("  %s = %.6g\n", k.c_str(), v);
  return 0;
}
