#include "server/service/server_manual.h"

namespace qkov::service {

ManPage ServerManPage() {
  ManPage p;
  p.program = "qkov-server";
  p.summary = "the qkov-sweep coordinator: sweeps, leases, results, dashboard";
  p.synopsis = R"(.B qkov-server
.BI \-\-db= FILE
.RI [ OPTION ...]
.br
.B qkov-server
.BI \-\-init_tokens= FILE)";
  p.description =
      R"(qkov-server accepts sweeps of the QK/OV learning-rate experiments over
gRPC, expands each into trials, leases them to
.BR qkov-worker (1)
processes with expiring, fenced leases, and stores every metric, result
and its provenance in one SQLite file. It answers
.BR qkov (1)'s
queries, serves a read-only web dashboard, Prometheus metrics, and logs
every event with its fields.
.PP
A result a worker was told is stored is committed: a killed server
restarts from the file and loses nothing it acknowledged. Keep the
database on a local disk, never on NFS or Lustre.
.PP
Without
.BR \-\-token_file ,
every caller is an anonymous admin: fine on one machine, where the
listeners stay on loopback. On a network, use tokens and TLS.)";
  p.groups = {
      {"Database and listener",
       "",
       {"db", "listen", "port_file", "synchronous_full"}},
      {"Authentication and TLS",
       ".PP\nThe token file holds one\n.I ROLE TOKEN NAME\nline per holder; "
       "ROLE is worker, user, admin or read\\-only. "
       "SIGHUP (systemctl reload qkov\\-server) reads it again; a token that "
       "left it stays valid for the overlap.",
       {"token_file", "token_overlap_seconds", "init_tokens", "tls_cert",
        "tls_key", "tls_client_ca"}},
      {"Leases and limits",
       "",
       {"lease_seconds", "heartbeat_seconds", "max_trials",
        "max_trial_memory_gb", "sql_timeout_seconds"}},
      {"Dashboard",
       "",
       {"http_listen", "http_port_file", "http_static_dir",
        "http_allowed_hosts"}},
      {"Dashboard limits",
       ".PP\nEvery limit of the dashboard's HTTP front; a request past one is "
       "refused with its HTTP status.",
       {"http_max_connections", "http_max_connections_per_address",
        "http_header_bytes", "http_max_headers", "http_max_query_args",
        "http_max_body_bytes", "http_request_timeout_seconds",
        "http_idle_timeout_seconds", "http_threads", "http_max_event_streams",
        "http_event_streams_per_token", "http_session_lifetime_seconds",
        "http_sessions_per_token", "http_login_failures_per_minute",
        "http_logins_per_token_per_minute"}},
      {"Metrics and logs",
       "",
       {"metrics_listen", "metrics_port_file", "backup_dir", "log_format"}},
  };
  p.sections = {
      {"FILES", R"(Paths of the Debian package and its systemd unit.
.TP
.I /var/lib/qkov/results.db
The results database (with its
.I \-wal
and
.I \-shm
files while the server runs).
.TP
.I /etc/qkov/server.env
The unit's settings: QKOV_LISTEN, QKOV_METRICS_LISTEN, QKOV_SERVER_FLAGS.
.TP
.I /etc/qkov/tokens
The token file (mode 0600, owned by qkov).
.TP
.I /etc/qkov/tls/
The lab CA, the server's certificate and its key (readable by group qkov).
.TP
.I /var/backups/qkov/
Backups made by qkov\-backup.timer every 6 hours.
.TP
.I /usr/share/qkov/dashboard/
The dashboard's pages.
.TP
.I /usr/share/qkov/prometheus/
A scrape configuration and alert rules with their tests.)"},
      {"ENVIRONMENT", R"(.TP
.B JOURNAL_STREAM
Set by systemd: when it names stderr, events go to the journal, each field
a journal field (QKOV_EVENT, QKOV_TRIAL, QKOV_WORKER, ...).
.TP
.B QKOV_LOG_JOURNAL=0
Log to stderr even under systemd.
.TP
.B GRPC_VERBOSITY
gRPC's own messages (default ERROR), logged as grpc_log events.)"},
      {"EXIT STATUS", R"(.TP
.B 0
Stopped by SIGTERM or SIGINT after finishing the calls in progress; or
.B \-\-init_tokens
wrote its file.
.TP
.B 1
The database, a TLS file or an address could not be opened or bound
(one line names which).
.TP
.B 2
A flag is missing or out of range.)"},
      {"EXAMPLES", R"(One machine, everything on loopback:
.PP
.RS
.nf
qkov\-server \-\-db=results.db \-\-listen=127.0.0.1:50051 \e
    \-\-http_listen=127.0.0.1:8080
.fi
.RE
.PP
A lab's service node, with tokens, TLS, the dashboard and metrics:
.PP
.RS
.nf
qkov\-server \-\-init_tokens=/etc/qkov/tokens
qkov\-server \-\-db=/var/lib/qkov/results.db \-\-listen=0.0.0.0:50051 \e
    \-\-token_file=/etc/qkov/tokens \e
    \-\-tls_cert=/etc/qkov/tls/server.pem \-\-tls_key=/etc/qkov/tls/server.key \e
    \-\-http_listen=0.0.0.0:8443 \-\-http_allowed_hosts=qkov.lab.example \e
    \-\-metrics_listen=127.0.0.1:9464 \-\-log_format=json
.fi
.RE
.PP
One trial's story in the journal:
.PP
.RS
.nf
journalctl \-u qkov\-server QKOV_TRIAL=1\-00000003
.fi
.RE)"},
      {"SEE ALSO", R"(.BR qkov (1),
.BR qkov\-worker (1),
.BR qkov\-data (1);
in /usr/share/doc/qkov: cluster.md (setting up a lab), operations.md
(metrics, alerts, logs), security.md (tokens, TLS, the dashboard's
limits), protocol.md (leases).)"},
  };
  return p;
}

}  // namespace qkov::service
