// qkov-worker: pulls trials from a qkov-server and trains them.
//
//   qkov-worker --server=127.0.0.1:PORT [--device=cpu|cuda:0] [--exit_when_idle]
//
// SIGTERM/SIGINT/SIGUSR1: hand the running trial back and exit 0.
// Exit codes: 0 clean, 1 coordinator unreachable or fatal error, 2 bad flags.
#include <csignal>
#include <cstdio>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "worker/agent/agent.h"

ABSL_FLAG(std::string, server, "", "coordinator address host:port");
ABSL_FLAG(std::string, name, "", "worker name (default host:pid)");
ABSL_FLAG(std::string, device, "cpu", "cpu, cuda or cuda:N");
ABSL_FLAG(int, threads, 1, "torch intra-op threads per worker");
ABSL_FLAG(bool, exit_when_idle, false, "exit when no sweep has queued or running trials");
ABSL_FLAG(int, unreachable_timeout_seconds, 600, "give up after the coordinator is unreachable this long");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("qkov-worker --server=HOST:PORT [--device=cpu|cuda:N] [--exit_when_idle]");
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_server).empty()) {
    std::fprintf(stderr, "qkov-worker: --server is required\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_threads) < 1) {
    std::fprintf(stderr, "qkov-worker: --threads must be >= 1\n");
    return 2;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  qkov::agent::AgentConfig config;
  config.server = absl::GetFlag(FLAGS_server);
  config.name = absl::GetFlag(FLAGS_name);
  config.device = absl::GetFlag(FLAGS_device);
  config.torch_threads = absl::GetFlag(FLAGS_threads);
  config.exit_when_idle = absl::GetFlag(FLAGS_exit_when_idle);
  config.unreachable_timeout = absl::Seconds(absl::GetFlag(FLAGS_unreachable_timeout_seconds));
  qkov::agent::Agent agent(config);

  std::thread signal_thread([&agent, signals]() {
    int sig = 0;
    sigwait(&signals, &sig);
    if (sig != 0) agent.Stop();
  });
  signal_thread.detach();

  absl::Status s = agent.Run();
  std::fprintf(stderr, "qkov-worker: %d trials completed%s%s\n", agent.trials_completed(),
               s.ok() ? "" : "; ", s.ok() ? "" : s.ToString().c_str());
  if (!s.ok()) return absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s) ? 2 : 1;
  return 0;
}
