#include "server/service/server_metrics.h"

#include <google/protobuf/descriptor.h>
#include <prometheus/text_serializer.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/version.h"
#include "http/http_server.h"
#include "http/metrics_page.h"
#include "storage/write_queue.h"

namespace qkov::service {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// Every method the server answers: the qkov services' (from their
// descriptors), health checking and reflection.
std::vector<std::string> KnownMethods() {
  std::vector<std::string> out;
  const google::protobuf::DescriptorPool* pool =
      google::protobuf::DescriptorPool::generated_pool();
  for (const char* service :
       {"qkov.v1.SweepService", "qkov.v1.WorkerService"}) {
    const google::protobuf::ServiceDescriptor* d =
        pool->FindServiceByName(service);
    if (d == nullptr) continue;
    for (int i = 0; i < d->method_count(); ++i)
      out.push_back(absl::StrCat("/", service, "/", d->method(i)->name()));
  }
  out.push_back("/grpc.health.v1.Health/Check");
  out.push_back("/grpc.health.v1.Health/Watch");
  out.push_back(
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo");
  out.push_back("other");
  return out;
}

const char* CodeName(grpc::StatusCode code) {
  static constexpr const char* kNames[] = {"OK",
                                           "CANCELLED",
                                           "UNKNOWN",
                                           "INVALID_ARGUMENT",
                                           "DEADLINE_EXCEEDED",
                                           "NOT_FOUND",
                                           "ALREADY_EXISTS",
                                           "PERMISSION_DENIED",
                                           "RESOURCE_EXHAUSTED",
                                           "FAILED_PRECONDITION",
                                           "ABORTED",
                                           "OUT_OF_RANGE",
                                           "UNIMPLEMENTED",
                                           "INTERNAL",
                                           "UNAVAILABLE",
                                           "DATA_LOSS",
                                           "UNAUTHENTICATED"};
  const int i = static_cast<int>(code);
  return i >= 0 && i < static_cast<int>(std::size(kNames)) ? kNames[i]
                                                           : "UNKNOWN";
}

int64_t FileBytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

}  // namespace

const std::vector<double>& ServerMetrics::TrialDurationBuckets() {
  static const std::vector<double> kBuckets = {
      1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400};
  return kBuckets;
}

const std::vector<double>& ServerMetrics::RpcDurationBuckets() {
  static const std::vector<double> kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1,      2.5,   10};
  return kBuckets;
}

ServerMetrics::ServerMetrics(Options options)
    : options_(std::move(options)),
      registry_(std::make_shared<prometheus::Registry>()) {
  lease_grants_ =
      &prometheus::BuildCounter()
           .Name("qkov_lease_grants_total")
           .Help(
               "Attempts started: trials leased to a worker (a renewed or "
               "re-sent lease is not counted).")
           .Register(*registry_)
           .Add({});
  lease_expirations_ =
      &prometheus::BuildCounter()
           .Name("qkov_lease_expirations_total")
           .Help("Leases that ran out without a heartbeat: attempts lost.")
           .Register(*registry_)
           .Add({});
  trial_retries_ =
      &prometheus::BuildCounter()
           .Name("qkov_trial_retries_total")
           .Help("Trials queued again after a failed or lost attempt.")
           .Register(*registry_)
           .Add({});
  scrapes_refused_ =
      &prometheus::BuildCounter()
           .Name("qkov_metrics_scrapes_refused_total")
           .Help(
               "Requests for /metrics refused for their token: none or "
               "unknown (401), a worker token (403).")
           .Register(*registry_)
           .Add({});
  finished_ = &prometheus::BuildCounter()
                   .Name("qkov_trials_finished_total")
                   .Help(
                       "Trials that ended, by outcome: done, diverged, "
                       "failed (retry budget spent or permanent), "
                       "stopped_early.")
                   .Register(*registry_);
  for (const char* outcome : {"done", "diverged", "failed", "stopped_early"})
    finished_->Add({{"outcome", outcome}});
  trial_duration_ =
      &prometheus::BuildHistogram()
           .Name("qkov_trial_duration_seconds")
           .Help(
               "Time from lease to end of each attempt that ended (done, "
               "diverged, failed, lost, preempted, stopped early), by task.")
           .Register(*registry_);
  rpcs_ = &prometheus::BuildCounter()
               .Name("qkov_rpcs_total")
               .Help("gRPC calls answered, by method and status code.")
               .Register(*registry_);
  auto& latency =
      prometheus::BuildHistogram()
          .Name("qkov_rpc_duration_seconds")
          .Help("Time from a gRPC call's metadata to its status, by method.")
          .Register(*registry_);
  for (const std::string& m : KnownMethods())
    rpc_latency_[m] = &latency.Add({{"method", m}}, RpcDurationBuckets());
  prometheus::BuildGauge()
      .Name("qkov_build_info")
      .Help(
          "Always 1; `version` is the code version results record in "
          "their provenance (qkov-server --version).")
      .Register(*registry_)
      .Add({{"version", CodeVersion()}})
      .Set(1);
}

void ServerMetrics::OnTrialEvents(
    const std::vector<storage::TrialEvent>& events) {
  using Kind = storage::TrialEvent::Kind;
  for (const storage::TrialEvent& e : events) {
    if (e.kind == Kind::kLeased) {
      lease_grants_->Increment();
      continue;
    }
    if (e.kind == Kind::kExpired) lease_expirations_->Increment();
    if ((e.kind == Kind::kExpired || e.kind == Kind::kFailed) &&
        e.state == storage::kQueued) {
      trial_retries_->Increment();
    }
    if (e.state == storage::kDone || e.state == storage::kDiverged ||
        e.state == storage::kFailed || e.state == storage::kStoppedEarly) {
      finished_->Add({{"outcome", e.state}}).Increment();
    }
    if (e.duration_ms >= 0) {
      trial_duration_->Add({{"task", e.task}}, TrialDurationBuckets())
          .Observe(static_cast<double>(e.duration_ms) / 1000.0);
    }
  }
}

void ServerMetrics::WorkerSeen(const std::string& worker_id) {
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&workers_mu_);
  last_call_[worker_id] = now;
}

void ServerMetrics::RpcDone(const std::string& method, grpc::StatusCode code,
                            absl::Duration latency) {
  auto it = rpc_latency_.find(method);
  if (it == rpc_latency_.end()) it = rpc_latency_.find("other");
  it->second->Observe(absl::ToDoubleSeconds(latency));
  rpcs_->Add({{"method", it->first}, {"code", CodeName(code)}}).Increment();
}

void ServerMetrics::ScrapeRefused() { scrapes_refused_->Increment(); }

namespace {

// The queue as the database counts it: trials by state, the leasable
// depth, the oldest wait, the leases in flight.
void AddQueueFamilies(const storage::QueueState& q, int64_t now_ms,
                      std::vector<MetricFamily>* out) {
  std::vector<ClientMetric> by_state;
  for (const char* state :
       {storage::kQueued, storage::kRunning, storage::kDone, storage::kDiverged,
        storage::kFailed, storage::kPreempted, storage::kCancelled,
        storage::kStoppedEarly}) {
    auto it = q.trials_by_state.find(state);
    by_state.push_back(http::MetricSample(
        it == q.trials_by_state.end() ? 0 : static_cast<double>(it->second),
        {{"state", state}}));
  }
  out->push_back(
      http::MetricFamilyOf("qkov_trials",
                           "Trials of every sweep, by state (the database's "
                           "counts).",
                           MetricType::Gauge, std::move(by_state)));
  out->push_back(http::MetricFamilyOf(
      "qkov_queue_depth",
      "Queued trials a worker may lease (of sweeps neither paused nor "
      "cancelled).",
      MetricType::Gauge,
      {http::MetricSample(static_cast<double>(q.queue_depth))}));
  const double oldest =
      q.oldest_queued_ms > 0
          ? std::max<double>(0, (now_ms - q.oldest_queued_ms) / 1000.0)
          : 0;
  out->push_back(
      http::MetricFamilyOf("qkov_queue_oldest_age_seconds",
                           "Of the trials next in line (each leasable "
                           "sweep's first in queue order), the longest time "
                           "one has waited; 0 when none is queued.",
                           MetricType::Gauge, {http::MetricSample(oldest)}));
  auto running = q.trials_by_state.find(storage::kRunning);
  out->push_back(http::MetricFamilyOf(
      "qkov_leases_in_flight", "Trials leased to a worker now (running).",
      MetricType::Gauge,
      {http::MetricSample(running == q.trials_by_state.end()
                              ? 0
                              : static_cast<double>(running->second))}));
}

// The HTTP replies of the dashboard and /metrics, by status code.
void AddHttpFamilies(std::vector<MetricFamily>* out) {
  std::vector<ClientMetric> replies;
  for (const auto& [code, n] : http::HttpServer::RepliesByCode())
    replies.push_back(http::MetricSample(static_cast<double>(n),
                                         {{"code", absl::StrCat(code)}}));
  out->push_back(
      http::MetricFamilyOf("qkov_http_responses_total",
                           "HTTP replies sent by the dashboard and /metrics "
                           "(libmicrohttpd's own included), by status code.",
                           MetricType::Counter, std::move(replies)));
}

}  // namespace

std::vector<MetricFamily> ServerMetrics::CollectState() {
  std::vector<MetricFamily> out;
  const absl::Time now = absl::Now();
  absl::StatusOr<storage::QueueState> q =
      options_.store->trials().ReadQueueState();
  out.push_back(http::MetricFamilyOf(
      "qkov_store_up", "1 when the last scrape read the database, else 0.",
      MetricType::Gauge, {http::MetricSample(q.ok() ? 1 : 0)}));
  absl::flat_hash_map<std::string, bool> holders;
  if (q.ok()) {
    AddQueueFamilies(*q, absl::ToUnixMillis(now), &out);
    for (const std::string& w : q->lease_holders) holders[w] = true;
  }
  absl::StatusOr<storage::LeasingRecord> leasing =
      options_.store->leases().Leasing();
  if (leasing.ok()) {
    out.push_back(http::MetricFamilyOf(
        "qkov_leasing_paused",
        "1 while leasing is paused server-wide for maintenance (`qkov "
        "leasing pause`): no trial of any sweep is leased.",
        MetricType::Gauge, {http::MetricSample(leasing->paused ? 1 : 0)}));
  }
  AddWorkerFamilies(holders, now, &out);
  AddDatabaseFamilies(&out);
  AddHttpFamilies(&out);
  return out;
}

// Workers: active (a call within one lease period) or silent (seen since
// the server started, or within the last day, but not lately). Of the
// workers holding leases, the longest silence: a holder unknown to this
// server (it started after the lease was granted) counts from the start.
void ServerMetrics::AddWorkerFamilies(
    const absl::flat_hash_map<std::string, bool>& holders, absl::Time now,
    std::vector<MetricFamily>* out) {
  int64_t active = 0, silent = 0;
  double holder_silence = 0;
  {
    absl::MutexLock lock(&workers_mu_);
    for (auto it = last_call_.begin(); it != last_call_.end();) {
      const absl::Duration quiet = now - it->second;
      if (quiet > absl::Hours(24)) {
        last_call_.erase(it++);
        continue;
      }
      (quiet <= options_.lease_duration ? active : silent) += 1;
      ++it;
    }
    for (const auto& [worker, unused] : holders) {
      auto it = last_call_.find(worker);
      const absl::Time last = it == last_call_.end() ? started_ : it->second;
      holder_silence =
          std::max(holder_silence, absl::ToDoubleSeconds(now - last));
    }
  }
  out->push_back(http::MetricFamilyOf(
      "qkov_workers",
      "Workers by state: active (a call within one lease period), silent "
      "(seen within the last day, not lately).",
      MetricType::Gauge,
      {http::MetricSample(static_cast<double>(active), {{"state", "active"}}),
       http::MetricSample(static_cast<double>(silent),
                          {{"state", "silent"}})}));
  out->push_back(http::MetricFamilyOf(
      "qkov_worker_heartbeat_oldest_age_seconds",
      "Of the workers holding leases, the time since the quietest one's last "
      "call; 0 when no lease is held.",
      MetricType::Gauge, {http::MetricSample(holder_silence)}));
}

// qkov-backup's copies: a file is named results-*.db only once its
// integrity check passed (deploy/systemd/qkov-backup.sh), so the newest
// such file is the last good backup. A folder that cannot be read counts as
// one without backups.
void ServerMetrics::AddBackupFamilies(std::vector<MetricFamily>* out) {
  double newest = 0;
  int count = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(options_.backup_dir, ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!absl::StartsWith(name, "results-") || !absl::EndsWith(name, ".db"))
      continue;
    struct stat st;
    if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    ++count;
    newest = std::max(newest, static_cast<double>(st.st_mtim.tv_sec) +
                                  st.st_mtim.tv_nsec * 1e-9);
  }
  out->push_back(http::MetricFamilyOf(
      "qkov_backup_last_success_timestamp_seconds",
      "Modification time of the newest verified backup in --backup_dir; 0 "
      "when there is none (or the folder cannot be read).",
      MetricType::Gauge, {http::MetricSample(newest)}));
  out->push_back(http::MetricFamilyOf(
      "qkov_backups", "Verified backups in --backup_dir.", MetricType::Gauge,
      {http::MetricSample(static_cast<double>(count))}));
}

// The database's files and their volume, and the writer's transactions.
void ServerMetrics::AddDatabaseFamilies(std::vector<MetricFamily>* out) {
  out->push_back(http::MetricFamilyOf(
      "qkov_db_size_bytes", "Size of the SQLite database file.",
      MetricType::Gauge,
      {http::MetricSample(static_cast<double>(FileBytes(options_.db_path)))}));
  out->push_back(http::MetricFamilyOf(
      "qkov_db_wal_size_bytes", "Size of the database's write-ahead log.",
      MetricType::Gauge,
      {http::MetricSample(
          static_cast<double>(FileBytes(options_.db_path + "-wal")))}));
  if (!options_.backup_dir.empty()) AddBackupFamilies(out);
  std::error_code ec;
  std::filesystem::path dir =
      std::filesystem::absolute(options_.db_path, ec).parent_path();
  struct statvfs vfs;
  if (!ec && ::statvfs(dir.c_str(), &vfs) == 0) {
    out->push_back(http::MetricFamilyOf(
        "qkov_db_volume_free_bytes",
        "Bytes free to unprivileged users on the database's file system.",
        MetricType::Gauge,
        {http::MetricSample(static_cast<double>(vfs.f_bavail) *
                            vfs.f_frsize)}));
    out->push_back(http::MetricFamilyOf(
        "qkov_db_volume_size_bytes", "Size of the database's file system.",
        MetricType::Gauge,
        {http::MetricSample(static_cast<double>(vfs.f_blocks) *
                            vfs.f_frsize)}));
  }
  const storage::ResultsStore::WriteStats w = options_.store->GetWriteStats();
  {
    ClientMetric h;
    uint64_t cumulative = 0;
    for (int i = 0; i < storage::WriteQueue::kGroupTimeBuckets; ++i) {
      cumulative += static_cast<uint64_t>(w.group_time[i]);
      ClientMetric::Bucket b;
      b.cumulative_count = cumulative;
      b.upper_bound = i + 1 < storage::WriteQueue::kGroupTimeBuckets
                          ? storage::WriteQueue::kGroupTimeBounds[i]
                          : std::numeric_limits<double>::infinity();
      h.histogram.bucket.push_back(b);
    }
    h.histogram.sample_count = cumulative;
    h.histogram.sample_sum = static_cast<double>(w.busy_ns) / 1e9;
    out->push_back(
        http::MetricFamilyOf("qkov_db_write_transaction_duration_seconds",
                             "Time of each write transaction (a group of "
                             "writes, BEGIN to COMMIT) on the writer thread.",
                             MetricType::Histogram, {h}));
  }
  out->push_back(http::MetricFamilyOf(
      "qkov_db_writes_total",
      "Writes committed (each a worker report, lease, "
      "completion, submission...).",
      MetricType::Counter,
      {http::MetricSample(static_cast<double>(w.writes))}));
  out->push_back(http::MetricFamilyOf(
      "qkov_db_wal_checkpoints_total",
      "WAL checkpoints run by the background checkpointer.",
      MetricType::Counter,
      {http::MetricSample(static_cast<double>(w.checkpoints))}));
}

std::string ServerMetrics::Scrape() {
  std::vector<MetricFamily> families = CollectState();
  std::vector<MetricFamily> counted = registry_->Collect();
  families.insert(families.end(), std::make_move_iterator(counted.begin()),
                  std::make_move_iterator(counted.end()));
  return prometheus::TextSerializer().Serialize(families);
}

http::HttpReply ServeMetrics(const http::HttpRequest& request,
                             ServerMetrics& metrics,
                             const Authenticator* auth) {
  std::function<absl::Status(absl::string_view)> check;
  if (auth != nullptr) {
    check = [auth](absl::string_view token) {
      return auth->CheckToken(token, Permission::kRead, "/metrics");
    };
  }
  return http::ServeMetricsPage(
      request, check, [&metrics] { metrics.ScrapeRefused(); },
      [&metrics] { return metrics.Scrape(); });
}

namespace {

// Times each call from its metadata to its status.
class RpcMetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  RpcMetricsInterceptor(ServerMetrics* metrics, std::string method)
      : metrics_(metrics), method_(std::move(method)) {}

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      start_ = absl::Now();
    }
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      const absl::Time start =
          start_ == absl::InfinitePast() ? absl::Now() : start_;
      metrics_->RpcDone(method_, methods->GetSendStatus().error_code(),
                        absl::Now() - start);
    }
    methods->Proceed();
  }

 private:
  ServerMetrics* metrics_;
  const std::string method_;
  absl::Time start_ = absl::InfinitePast();
};

}  // namespace

grpc::experimental::Interceptor* RpcMetricsFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new RpcMetricsInterceptor(metrics_,
                                   info->method() ? info->method() : "other");
}

}  // namespace qkov::service
