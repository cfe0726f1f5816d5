// qkov-worker: pulls trials from a qkov-server and trains them.
//
//   qkov-worker --server=127.0.0.1:PORT [--device=cpu|cuda:0]
//   [--exit_when_idle]
//
// SIGTERM/SIGINT/SIGUSR1: hand the running trials back (with checkpoints) and
// exit 3. Exit codes: 0 no work left, 1 coordinator unreachable or fatal
// error, 2 bad flags or setup, 3 stopped by a signal.
//
// --batch_trials=N leases up to N trials that train together (as many as
// fit the memory budget: --memory_fraction of the device's available memory,
// split among its slots); auto leases as many as fit of trials that stack
// (up to 4096 on a GPU, 32 on the CPU), and one of the others
// (docs/cluster.md, "Stack size").
//
// --slots=N runs N trials at once, each its own registered worker
// (NAME/slotK). --device=auto picks CUDA when LibTorch sees a GPU (the ones
// in CUDA_VISIBLE_DEVICES), else the CPU; with several GPUs visible, slot K
// uses GPU K mod count.
#include <torch/cuda.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "common/flags_help.h"
#include "common/lease_limits.h"
#include "common/signals.h"
#include "common/version.h"
#include "worker/agent/agent.h"
#include "worker/training/cpu_runtime.h"
#include "worker/training/device_memory.h"
#include "worker/training/torch_status.h"

ABSL_FLAG(std::string, server, "", "coordinator address host:port");
ABSL_FLAG(std::string, name, "", "worker name (default host:pid)");
ABSL_FLAG(std::string, device, "cpu", "cpu, cuda, cuda:N or auto");
ABSL_FLAG(
    int, slots, 1,
    "concurrent lease loops in this process (each its own registered worker)");
ABSL_FLAG(std::string, batch_trials, "1",
          "N (1-4096): lease up to N compatible trials at once and train "
          "them as one batch, as many as fit the memory budget; auto: as many "
          "as fit, up to 4096 on a GPU and 32 on the CPU, when they stack, "
          "else one");
ABSL_FLAG(double, memory_fraction, 0.8,
          "share of the device's available memory (measured at start, split "
          "among the slots on the device) that one batch of trials may use");
ABSL_FLAG(int, threads, 1, "torch intra-op threads per worker");
ABSL_FLAG(bool, flush_denormals, true,
          "train with subnormal floats flushed to zero (flush-to-zero and "
          "denormals-are-zero; recorded in each attempt's provenance)");
ABSL_FLAG(bool, exit_when_idle, false,
          "exit when no sweep has queued or running trials");
ABSL_FLAG(int, unreachable_timeout_seconds, 600,
          "give up after the coordinator is unreachable this long");
ABSL_FLAG(int, rpc_deadline_seconds, 20,
          "deadline of one call to the coordinator; a call past it is "
          "retried (a report's points wait for the next report)");
ABSL_FLAG(std::string, token_file, "",
          "file holding the worker's bearer token (default $QKOV_TOKEN_FILE)");
ABSL_FLAG(std::string, tls_ca, "",
          "CA (PEM) to verify the server; enables TLS (default $QKOV_TLS_CA)");
ABSL_FLAG(std::string, tls_cert, "",
          "client certificate (PEM) (default $QKOV_TLS_CERT)");
ABSL_FLAG(std::string, tls_key, "", "client key (PEM) (default $QKOV_TLS_KEY)");
ABSL_FLAG(std::string, tls_server_name, "",
          "name to expect in the server certificate");

int main(int argc, char** argv) {
  qkov::HelpListsFlagsOf(__FILE__, "qkov-worker", qkov::CodeVersion());
  absl::SetProgramUsageMessage(
      "qkov-worker --server=HOST:PORT [--device=cpu|cuda:N] "
      "[--exit_when_idle]");
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_server).empty()) {
    std::fprintf(stderr, "qkov-worker: --server is required\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_threads) < 1) {
    std::fprintf(stderr, "qkov-worker: --threads must be >= 1\n");
    return 2;
  }
  const int slots = absl::GetFlag(FLAGS_slots);
  if (slots < 1 || slots > 256) {
    std::fprintf(stderr, "qkov-worker: --slots must be in [1, 256]\n");
    return 2;
  }
  std::string device = absl::GetFlag(FLAGS_device);
  const int gpus = torch::cuda::is_available()
                       ? static_cast<int>(torch::cuda::device_count())
                       : 0;
  if (device == "auto") device = gpus > 0 ? "cuda" : "cpu";

  qkov::agent::AgentConfig config;
  config.server = absl::GetFlag(FLAGS_server);
  config.name = absl::GetFlag(FLAGS_name);
  config.torch_threads = absl::GetFlag(FLAGS_threads);
  config.exit_when_idle = absl::GetFlag(FLAGS_exit_when_idle);
  config.unreachable_timeout =
      absl::Seconds(absl::GetFlag(FLAGS_unreachable_timeout_seconds));
  if (absl::GetFlag(FLAGS_rpc_deadline_seconds) < 1) {
    std::fprintf(stderr,
                 "qkov-worker: --rpc_deadline_seconds: must be >= 1 "
                 "(got %d)\n",
                 absl::GetFlag(FLAGS_rpc_deadline_seconds));
    return 2;
  }
  config.rpc_deadline =
      absl::Seconds(absl::GetFlag(FLAGS_rpc_deadline_seconds));
  const std::string batch_trials = absl::GetFlag(FLAGS_batch_trials);
  config.fill_budget = batch_trials == "auto";
  if (!config.fill_budget &&
      (!absl::SimpleAtoi(batch_trials, &config.batch_trials) ||
       config.batch_trials < 1 ||
       config.batch_trials > qkov::limits::kMaxLeaseTrials)) {
    std::fprintf(stderr,
                 "qkov-worker: --batch_trials must be auto or in [1, %d]\n",
                 qkov::limits::kMaxLeaseTrials);
    return 2;
  }
  const double memory_fraction = absl::GetFlag(FLAGS_memory_fraction);
  if (!(memory_fraction > 0 && memory_fraction <= 1)) {
    std::fprintf(stderr, "qkov-worker: --memory_fraction must be in (0, 1]\n");
    return 2;
  }
  config.security.token_file = absl::GetFlag(FLAGS_token_file);
  config.security.tls_ca = absl::GetFlag(FLAGS_tls_ca);
  config.security.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  config.security.tls_key = absl::GetFlag(FLAGS_tls_key);
  config.security.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
  qkov::SecurityFromEnvironment(&config.security);
  if (config.name.empty()) {
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    config.name = std::string(host) + ":" + std::to_string(getpid());
  }
  // Before any slot's thread exists: they inherit the mode from this one.
  // The thread count first, so that no pool is started at another size.
  qkov::training::SetTrainingThreads(config.torch_threads);
  qkov::training::SetFlushDenormal(absl::GetFlag(FLAGS_flush_denormals));
  std::vector<qkov::agent::AgentConfig> configs;
  std::map<std::string, int> slots_on;  // device -> slots that share it
  for (int k = 0; k < slots; ++k) {
    qkov::agent::AgentConfig c = config;
    if (slots > 1) c.name += "/slot" + std::to_string(k);
    c.device = device;
    if (device == "cuda" && gpus > 1)
      c.device = "cuda:" + std::to_string(k % gpus);
    ++slots_on[c.device];
    configs.push_back(std::move(c));
  }
  // Each device's memory, measured once before anything trains on it (what
  // LibTorch's caching allocator keeps later would read as used), split
  // among the slots that share it.
  std::map<std::string, int64_t> budget;
  for (const auto& [name, n] : slots_on) {
    absl::StatusOr<torch::Device> parsed =
        qkov::training::ParseDevice(name, "--device");
    if (!parsed.ok() || (parsed->is_cuda() && gpus == 0)) {
      budget[name] = 0;  // each agent's Run() names the problem
      continue;
    }
    absl::StatusOr<int64_t> available =
        qkov::training::AvailableMemoryBytes(*parsed);
    if (!available.ok()) {
      std::fprintf(stderr, "qkov-worker: %s: %s\n", name.c_str(),
                   std::string(available.status().message()).c_str());
      if (config.fill_budget) {
        std::fprintf(stderr,
                     "qkov-worker: --batch_trials=auto needs the device's "
                     "available memory; give a number instead\n");
        return 2;
      }
      std::fprintf(stderr, "qkov-worker: %s: leases are not sized to memory\n",
                   name.c_str());
      budget[name] = 0;
      continue;
    }
    budget[name] = std::max<int64_t>(
        1, static_cast<int64_t>(memory_fraction *
                                static_cast<double>(*available) / n));
    std::fprintf(stderr,
                 "qkov-worker: %s: %.2f GiB available, %.2f GiB per batch "
                 "(--memory_fraction %.2f, %d slot%s)\n",
                 name.c_str(), *available / 1073741824.0,
                 budget[name] / 1073741824.0, memory_fraction, n,
                 n == 1 ? "" : "s");
  }
  std::vector<std::unique_ptr<qkov::agent::Agent>> agents;
  for (qkov::agent::AgentConfig& c : configs) {
    c.memory_budget_bytes = budget[c.device];
    // auto: on a GPU the stack is bounded by memory; a CPU core's trial-steps
    // per second peak near 32 and fall beyond (docs/PERFORMANCE.md, "GPU"), and
    // a larger stack would also keep trials from other workers.
    if (c.fill_budget)
      c.batch_trials = absl::StartsWith(c.device, "cuda")
                           ? qkov::limits::kMaxLeaseTrials
                           : 32;
    agents.push_back(std::make_unique<qkov::agent::Agent>(std::move(c)));
  }

  qkov::WatchSignals({SIGTERM, SIGINT, SIGUSR1}, [&agents](int sig) {
    std::fprintf(stderr,
                 "qkov-worker: signal %d: handing back the running trials\n",
                 sig);
    for (auto& a : agents) a->Stop();
  });

  std::vector<absl::Status> results(agents.size());
  std::vector<std::thread> threads;
  for (size_t k = 0; k < agents.size(); ++k) {
    threads.emplace_back([&, k] { results[k] = agents[k]->Run(); });
  }
  for (auto& t : threads) t.join();
  int completed = 0;
  bool stopped = false;
  absl::Status first_error = absl::OkStatus();
  for (size_t k = 0; k < agents.size(); ++k) {
    completed += agents[k]->trials_completed();
    if (agents[k]->stopped() && results[k].ok()) stopped = true;
    if (!results[k].ok() && first_error.ok()) first_error = results[k];
  }
  std::fprintf(stderr, "qkov-worker: %d trials completed%s%s\n", completed,
               first_error.ok() ? "" : "; ",
               first_error.ok() ? "" : first_error.ToString().c_str());
  if (!first_error.ok()) {
    const absl::Status& s = first_error;
    return absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s) ||
                   absl::IsNotFound(s)
               ? 2
               : 1;
  }
  return stopped ? 3 : 0;
}
