// qkov-worker: pulls trials from a qkov-server and trains them.
//
//   qkov-worker --server=127.0.0.1:PORT [--device=cpu|cuda:0]
//   [--exit_when_idle]
//
// SIGTERM/SIGINT/SIGUSR1: hand the running trials back (with checkpoints) and
// exit 3. SIGUSR2: drain: finish the running trials, lease no other, exit 0.
// Exit codes: 0 no work left or drained, 1 coordinator unreachable or fatal
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
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/flags_help.h"
#include "common/lease_limits.h"
#include "common/log.h"
#include "common/man_page.h"
#include "common/signals.h"
#include "common/version.h"
#include "worker/agent/agent.h"
#include "worker/agent/slot_plan.h"
#include "worker/agent/worker_manual.h"
#include "worker/agent/worker_metrics.h"
#include "worker/training/cpu_runtime.h"
#include "worker/training/device_memory.h"
#include "worker/training/torch_status.h"

ABSL_FLAG(std::string, server, "", "coordinator address host:port");
ABSL_FLAG(std::string, log_format, "text",
          "log events as 'text' (logfmt lines) or 'json' (one object per "
          "line); under systemd they go to the journal with their fields");
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
ABSL_FLAG(std::string, metrics_listen, "",
          "serve Prometheus metrics at http://HOST:PORT/metrics (port 0 "
          "picks one); off when empty (docs/operations.md)");
ABSL_FLAG(std::string, metrics_port_file, "",
          "write the metrics listener's bound port here once listening");
ABSL_FLAG(std::string, metrics_token_file, "",
          "a file holding the one token a scrape must send as "
          "'Authorization: Bearer TOKEN'; none asked for when empty");
ABSL_FLAG(std::string, tls_cert, "",
          "client certificate (PEM) (default $QKOV_TLS_CERT)");
ABSL_FLAG(std::string, tls_key, "", "client key (PEM) (default $QKOV_TLS_KEY)");
ABSL_FLAG(std::string, tls_server_name, "",
          "name to expect in the server certificate (default "
          "$QKOV_TLS_SERVER_NAME)");

namespace {

// The settings every slot shares, from the flags and the environment;
// INVALID_ARGUMENT naming the flag.
absl::StatusOr<qkov::agent::AgentConfig> BaseConfigFromFlags() {
  qkov::agent::AgentConfig config;
  config.server = absl::GetFlag(FLAGS_server);
  if (config.server.empty())
    return absl::InvalidArgumentError("--server is required");
  config.torch_threads = absl::GetFlag(FLAGS_threads);
  if (config.torch_threads < 1)
    return absl::InvalidArgumentError("--threads must be >= 1");
  const int rpc_deadline = absl::GetFlag(FLAGS_rpc_deadline_seconds);
  if (rpc_deadline < 1)
    return absl::InvalidArgumentError(absl::StrCat(
        "--rpc_deadline_seconds: must be >= 1 (got ", rpc_deadline, ")"));
  config.rpc_deadline = absl::Seconds(rpc_deadline);
  const std::string batch_trials = absl::GetFlag(FLAGS_batch_trials);
  config.fill_budget = batch_trials == "auto";
  if (!config.fill_budget &&
      (!absl::SimpleAtoi(batch_trials, &config.batch_trials) ||
       config.batch_trials < 1 ||
       config.batch_trials > qkov::limits::kMaxLeaseTrials)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--batch_trials must be auto or in [1, ",
                     qkov::limits::kMaxLeaseTrials, "]"));
  }
  config.name = absl::GetFlag(FLAGS_name);
  if (config.name.empty()) {
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    config.name = absl::StrCat(host, ":", getpid());
  }
  config.exit_when_idle = absl::GetFlag(FLAGS_exit_when_idle);
  config.unreachable_timeout =
      absl::Seconds(absl::GetFlag(FLAGS_unreachable_timeout_seconds));
  config.security.token_file = absl::GetFlag(FLAGS_token_file);
  config.security.tls_ca = absl::GetFlag(FLAGS_tls_ca);
  config.security.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  config.security.tls_key = absl::GetFlag(FLAGS_tls_key);
  config.security.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
  qkov::SecurityFromEnvironment(&config.security);
  return config;
}

// One agent per slot (worker/agent/slot_plan.h), each device's memory read
// through LibTorch.
absl::StatusOr<std::vector<std::unique_ptr<qkov::agent::Agent>>> MakeAgents(
    const qkov::agent::AgentConfig& base) {
  qkov::agent::SlotPlanRequest request;
  request.base = base;
  request.slots = absl::GetFlag(FLAGS_slots);
  request.device = absl::GetFlag(FLAGS_device);
  request.gpus = torch::cuda::is_available()
                     ? static_cast<int>(torch::cuda::device_count())
                     : 0;
  request.memory_fraction = absl::GetFlag(FLAGS_memory_fraction);
  absl::StatusOr<qkov::agent::SlotPlan> plan = qkov::agent::PlanSlots(
      request, [](const std::string& device) -> absl::StatusOr<int64_t> {
        absl::StatusOr<torch::Device> parsed =
            qkov::training::ParseDevice(device, "--device");
        if (!parsed.ok()) return parsed.status();
        return qkov::training::AvailableMemoryBytes(*parsed);
      });
  if (!plan.ok()) return plan.status();
  for (const std::string& note : plan->notes)
    qkov::log::Info("slot_plan", {{"note", note}});
  std::vector<std::unique_ptr<qkov::agent::Agent>> agents;
  for (qkov::agent::AgentConfig& c : plan->agents)
    agents.push_back(std::make_unique<qkov::agent::Agent>(std::move(c)));
  return agents;
}

// Runs every agent in its own thread to its end; the exit code (header).
int RunAgents(std::vector<std::unique_ptr<qkov::agent::Agent>>& agents) {
  qkov::WatchSignals({SIGTERM, SIGINT, SIGUSR1, SIGUSR2}, [&agents](int sig) {
    if (sig == SIGUSR2) {
      // The running trials finish; nothing more is leased.
      qkov::log::Info("worker_draining", {{"signal", sig}});
      for (auto& a : agents) a->Drain();
      return;
    }
    // The running trials are handed back with their checkpoints.
    qkov::log::Info("worker_stopping", {{"signal", sig}});
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
  if (first_error.ok()) {
    qkov::log::Info("worker_finished", {{"trials_completed", completed}});
  } else {
    qkov::log::Error("worker_finished",
                     {{"trials_completed", completed}, {"error", first_error}});
  }
  if (!first_error.ok()) {
    const absl::Status& s = first_error;
    return absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s) ||
                   absl::IsNotFound(s)
               ? 2
               : 1;
  }
  return stopped ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  qkov::HelpListsFlagsOf(__FILE__, "qkov-worker", qkov::CodeVersion());
  qkov::PrintManPageIfAsked(argc, argv, qkov::agent::WorkerManPage(),
                            qkov::CodeVersion());
  absl::SetProgramUsageMessage(
      "qkov-worker --server=HOST:PORT [--device=cpu|cuda:N] "
      "[--exit_when_idle]");
  absl::ParseCommandLine(argc, argv);
  if (absl::Status st =
          qkov::log::Init("qkov-worker", absl::GetFlag(FLAGS_log_format));
      !st.ok()) {
    std::fprintf(stderr, "qkov-worker: %s\n",
                 std::string(st.message()).c_str());
    return 2;
  }
  absl::StatusOr<qkov::agent::AgentConfig> config = BaseConfigFromFlags();
  if (!config.ok()) {
    qkov::log::Error("start_refused", {{"error", config.status().message()}});
    return 2;
  }
  // Before any slot's thread exists: they inherit the mode from this one.
  // The thread count first, so that no pool is started at another size.
  qkov::training::SetTrainingThreads(config->torch_threads);
  qkov::training::SetFlushDenormal(absl::GetFlag(FLAGS_flush_denormals));
  qkov::agent::WorkerCounters counters;
  config->counters = &counters;
  absl::StatusOr<std::vector<std::unique_ptr<qkov::agent::Agent>>> agents =
      MakeAgents(*config);
  if (!agents.ok()) {
    qkov::log::Error("start_refused", {{"error", agents.status().message()}});
    return 2;
  }
  std::unique_ptr<qkov::agent::WorkerMetrics> metrics;
  if (const std::string listen = absl::GetFlag(FLAGS_metrics_listen);
      !listen.empty()) {
    qkov::agent::WorkerMetrics::Options m;
    m.listen = listen;
    m.counters = &counters;
    if (const std::string f = absl::GetFlag(FLAGS_metrics_token_file);
        !f.empty()) {
      absl::StatusOr<std::string> token =
          qkov::ReadFlagFile("--metrics_token_file", f);
      if (!token.ok()) {
        qkov::log::Error("start_refused",
                         {{"error", token.status().message()}});
        return 2;
      }
      m.token = std::string(absl::StripAsciiWhitespace(*token));
      if (m.token.empty()) {
        qkov::log::Error("start_refused",
                         {{"error", absl::StrCat("--metrics_token_file: ", f,
                                                 " holds no token")}});
        return 2;
      }
    }
    for (const auto& a : *agents) {
      if (std::find(m.devices.begin(), m.devices.end(), a->config().device) ==
          m.devices.end()) {
        m.devices.push_back(a->config().device);
      }
    }
    std::vector<std::unique_ptr<qkov::agent::Agent>>* all = &*agents;
    m.trials_in_flight = [all] {
      int64_t n = 0;
      for (const auto& a : *all) n += a->trials_in_flight();
      return n;
    };
    absl::StatusOr<std::unique_ptr<qkov::agent::WorkerMetrics>> started =
        qkov::agent::WorkerMetrics::Start(std::move(m));
    if (!started.ok()) {
      qkov::log::Error("start_refused",
                       {{"error", started.status().message()}});
      return 1;
    }
    metrics = *std::move(started);
    if (const std::string f = absl::GetFlag(FLAGS_metrics_port_file);
        !f.empty()) {
      const std::string tmp = f + ".tmp";
      std::ofstream(tmp) << metrics->port() << "\n";
      std::rename(tmp.c_str(), f.c_str());
    }
    qkov::log::Info("metrics_listening", {{"port", metrics->port()}});
  }
  const int code = RunAgents(*agents);
  if (metrics != nullptr) metrics->Stop();
  return code;
}
