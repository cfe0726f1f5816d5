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
#include "common/signals.h"
#include "worker/agent/agent.h"

ABSL_FLAG(std::string, server, "", "coordinator address host:port");
ABSL_FLAG(std::string, name, "", "worker name (default host:pid)");
ABSL_FLAG(std::string, device, "cpu", "cpu, cuda or cuda:N");
ABSL_FLAG(int, threads, 1, "torch intra-op threads per worker");
ABSL_FLAG(bool, exit_when_idle, false, "exit when no sweep has queued or running trials");
ABSL_FLAG(int, unreachable_timeout_seconds, 600, "give up after the coordinator is unreachable this long");
ABSL_FLAG(std::string, token_file, "", "file holding the worker's bearer token (default $QKOV_TOKEN_FILE)");
ABSL_FLAG(std::string, tls_ca, "", "CA (PEM) to verify the server; enables TLS (default $QKOV_TLS_CA)");
ABSL_FLAG(std::string, tls_cert, "", "client certificate (PEM) (default $QKOV_TLS_CERT)");
ABSL_FLAG(std::string, tls_key, "", "client key (PEM) (default $QKOV_TLS_KEY)");
ABSL_FLAG(std::string, tls_server_name, "", "name to expect in the server certificate");

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
  qkov::agent::AgentConfig config;
  config.server = absl::GetFlag(FLAGS_server);
  config.name = absl::GetFlag(FLAGS_name);
  config.device = absl::GetFlag(FLAGS_device);
  config.torch_threads = absl::GetFlag(FLAGS_threads);
  config.exit_when_idle = absl::GetFlag(FLAGS_exit_when_idle);
  config.unreachable_timeout = absl::Seconds(absl::GetFlag(FLAGS_unreachable_timeout_seconds));
  config.security.token_file = absl::GetFlag(FLAGS_token_file);
  config.security.tls_ca = absl::GetFlag(FLAGS_tls_ca);
  config.security.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  config.security.tls_key = absl::GetFlag(FLAGS_tls_key);
  config.security.tls_server_name = absl::GetFlag(FLAGS_tls_server_name);
  qkov::SecurityFromEnvironment(&config.security);
  qkov::agent::Agent agent(config);

  qkov::WatchSignals({SIGTERM, SIGINT, SIGUSR1}, [&agent](int sig) {
    std::fprintf(stderr, "qkov-worker: signal %d: handing back the running trial\n", sig);
    agent.Stop();
  });

  absl::Status s = agent.Run();
  std::fprintf(stderr, "qkov-worker: %d trials completed%s%s\n", agent.trials_completed(),
               s.ok() ? "" : "; ", s.ok() ? "" : s.ToString().c_str());
  if (!s.ok()) {
    return absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s) || absl::IsNotFound(s) ? 2 : 1;
  }
  return 0;
}
