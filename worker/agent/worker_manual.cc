#include "worker/agent/worker_manual.h"

namespace qkov::agent {

ManPage WorkerManPage() {
  ManPage p;
  p.program = "qkov-worker";
  p.summary = "trains qkov-sweep trials leased from a qkov-server";
  p.synopsis = R"(.B qkov-worker
.BI \-\-server= HOST:PORT
.RI [ OPTION ...])";
  p.description = R"(qkov-worker registers with a
.BR qkov-server (1),
leases trials, trains the paper's models with LibTorch on the CPU or a
CUDA device, reports their curves while they train and their results when
they end, and leases the next. It holds a lease by heartbeats; a worker
cut off for longer than the server's lease period loses its trial to
another worker, and the coordinator refuses anything it sends for it.
.PP
SIGTERM, SIGINT and SIGUSR1 hand the running trials back with their
checkpoints, so another worker resumes them where they stopped (Slurm
sends SIGUSR1 before a time limit). SIGUSR2 drains the worker: the
running trials finish and are reported, nothing more is leased, and it
exits 0. Unreachable coordinators are waited
out with backoff, up to
.BR \-\-unreachable_timeout_seconds .
.PP
.B \-\-slots=N
runs N trials at once, each its own registered worker
.RI ( NAME /slot K ).
.B \-\-device=auto
picks CUDA when LibTorch sees a GPU, else the CPU; with several GPUs,
slot K uses GPU K mod their count.
.B \-\-batch_trials=N
leases up to N compatible trials and trains them as one stack, as many as
fit the memory budget
.RB ( \-\-memory_fraction
of the device's available memory, split among the slots).)";
  p.groups = {
      {"Coordinator",
       "",
       {"server", "name", "exit_when_idle", "rpc_deadline_seconds",
        "unreachable_timeout_seconds"}},
      {"Authentication and TLS",
       ".PP\nEach file can also come from the environment (below); a flag "
       "wins.",
       {"token_file", "tls_ca", "tls_cert", "tls_key", "tls_server_name"}},
      {"Training",
       "",
       {"device", "slots", "threads", "batch_trials", "memory_fraction",
        "flush_denormals"}},
      {"Metrics and logs",
       "",
       {"metrics_listen", "metrics_port_file", "metrics_token_file",
        "log_format"}},
  };
  p.sections = {
      {"FILES", R"(Paths of the Debian package's qkov\-worker.service.
.TP
.I /etc/qkov/worker.env
The unit's settings: QKOV_SERVER, QKOV_TOKEN_FILE, QKOV_TLS_CA,
QKOV_WORKER_FLAGS.
.TP
.I /etc/qkov/worker.token
A worker\-role token (mode 0600, owned by qkov).
.TP
.I /etc/qkov/tls/ca.pem
The lab CA the server's certificate chains to.
.TP
.I /usr/share/qkov/slurm/
launch\-workers.sh and the job array's script.)"},
      {"ENVIRONMENT", R"(.TP
.B QKOV_TOKEN_FILE
The bearer token's file, when
.B \-\-token_file
is not given.
.TP
.BR QKOV_TLS_CA ", " QKOV_TLS_CERT ", " QKOV_TLS_KEY ", " QKOV_TLS_SERVER_NAME
The CA, a client certificate and key, and the name the server's
certificate carries, when the flags are not given.
.TP
.B CUDA_VISIBLE_DEVICES
The GPUs
.B \-\-device=auto
may use.
.TP
.BR JOURNAL_STREAM ", " QKOV_LOG_JOURNAL=0
As for
.BR qkov-server (1):
events go to the journal under systemd, unless QKOV_LOG_JOURNAL=0.)"},
      {"EXIT STATUS", R"(.TP
.B 0
No work left
.RB ( \-\-exit_when_idle ).
.TP
.B 1
The coordinator stayed unreachable, or a fatal error.
.TP
.B 2
A flag or the setup is wrong (one line names it).
.TP
.B 3
Stopped by a signal, the running trials handed back: a stop asked for,
which qkov\-worker.service counts as success.)"},
      {"EXAMPLES", R"(.RS
.nf
qkov\-worker \-\-server=127.0.0.1:50051 \-\-exit_when_idle
QKOV_TOKEN_FILE=~/.qkov/worker.token QKOV_TLS_CA=~/.qkov/lab\-ca.pem \e
    qkov\-worker \-\-server=qkov.lab.example:50051 \-\-device=auto \e
    \-\-batch_trials=auto \-\-metrics_listen=127.0.0.1:9465
.fi
.RE)"},
      {"SEE ALSO", R"(.BR qkov-server (1),
.BR qkov (1);
in /usr/share/doc/qkov: cluster.md (Slurm arrays, stack sizes),
operations.md (metrics, logs), protocol.md (leases, idempotence).)"},
  };
  return p;
}

}  // namespace qkov::agent
