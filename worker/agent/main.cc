// qkov-worker: pulls trials from a qkov-server and trains them.
//
//   qkov-worker --server=127.0.0.1:PORT [--device=cpu|cuda:0]
//   [--exit_when_idle]
//
// SIGTERM/SIGINT/SIGUSR1: hand the running trials back (with checkpoints) and
// exit 3. Exit codes: 0 no work left, 1 coordinator unreachable or fatal
// error, 2 bad flags or setup, 3 stopped by a signal.
//
// --slots=N runs N trials at once, each its own registered worker
// (NAME/slotK). --device=auto picks CUDA when LibTorch sees a GPU (the ones
// in CUDA_VISIBLE_DEVICES), else the CPU; with several GPUs visible, slot K
// uses GPU K mod count.
#include <torch/cuda.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "common/signals.h"
#include "worker/agent/agent.h"
#include "worker/training/cpu_runtime.h"

ABSL_FLAG(std::string, server, "", "coordinator address host:port");
ABSL_FLAG(std::string, name, "", "worker name (default host:pid)");
ABSL_FLAG(std::string, device, "cpu", "cpu, cuda, cuda:N or auto");
ABSL_FLAG(
    int, slots, 1,
    "concurrent lease loops in this process (each its own registered worker)");
ABSL_FLAG(int, batch_trials, 1,
          "lease up to this many compatible trials at once and train them as "
          "one batch");
ABSL_FLAG(int, threads, 1, "torch intra-op threads per worker");
ABSL_FLAG(bool, flush_denormals, true,
          "train with subnormal floats flushed to zero (flush-to-zero and "
          "denormals-are-zero; recorded in each attempt's provenance)");
ABSL_FLAG(bool, exit_when_idle, false,
          "exit when no sweep has queued or running trials");
ABSL_FLAG(int, unreachable_timeout_seconds, 600,
          "give up after the coordinator is unreachable this long");
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
  config.batch_trials = absl::GetFlag(FLAGS_batch_trials);
  if (config.batch_trials < 1 || config.batch_trials > 256) {
    std::fprintf(stderr, "qkov-worker: --batch_trials must be in [1, 256]\n");
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
  std::vector<std::unique_ptr<qkov::agent::Agent>> agents;
  for (int k = 0; k < slots; ++k) {
    qkov::agent::AgentConfig c = config;
    if (slots > 1) c.name += "/slot" + std::to_string(k);
    c.device = device;
    if (device == "cuda" && gpus > 1)
      c.device = "cuda:" + std::to_string(k % gpus);
    agents.push_back(std::make_unique<qkov::agent::Agent>(c));
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
