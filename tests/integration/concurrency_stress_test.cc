// Everything at once on one in-process qkov-server (a real SQLite file,
// tokens of every role, the dashboard): workers registering, leasing,
// reporting, heartbeating, completing and failing; researchers submitting
// and cancelling sweeps, watching them, and reading results, curves and SQL;
// dashboard readers on the JSON API (through its reply cache) and the event
// stream; Prometheus scraping /metrics. Checks: no call fails with an error a
// client cannot act on, and the database agrees with what the workers were
// told. Bounded: a fixed time, and a deadline on every call.
//
// Two transports for the workers' and researchers' calls:
//  - Grpc: through gRPC on loopback, as clients make them (main suite);
//  - Direct: the same calls on the server's Coordinator from the test's
//    threads, as the gRPC handlers make them. This is the case
//    tests/tsan.sh runs under ThreadSanitizer by default: Debian's gRPC
//    core is not instrumented, and its hand-offs between threads
//    (lock-free queues, its own event engine) are invisible to TSan, which
//    then reports the bytes it hands over. `tests/tsan.sh --grpc` builds
//    gRPC with TSan and runs both cases.
// The dashboard is reached over HTTP either way (libmicrohttpd locks with
// pthread mutexes, which TSan follows).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc_status.h"
#include "qkov/v1/sweep.grpc.pb.h"
#include "qkov/v1/worker.grpc.pb.h"
#include "server/service/server.h"
#include "storage/results_store.h"

namespace qkov {
namespace {

namespace v1 = ::qkov::v1;

constexpr char kWorkerToken[] = "farm-token-0123456789";
constexpr char kUserToken[] = "alice-token-012345678";
constexpr char kReaderToken[] = "reader-token-01234567";
constexpr char kAdminToken[] = "admin-token-012345678";

void Authorize(grpc::ClientContext* ctx, const std::string& token) {
  ctx->AddMetadata("authorization", "Bearer " + token);
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
}

// Codes a client acts on; anything else (INTERNAL, UNKNOWN, DATA_LOSS) is a
// defect.
bool Expected(const grpc::Status& s) {
  switch (s.error_code()) {
    case grpc::StatusCode::OK:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return true;
    default:
      return false;
  }
}

enum class Transport { kGrpc, kDirect };

class ConcurrencyStressTest : public ::testing::TestWithParam<Transport> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qkov-stress-XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::ofstream(dir_ + "/tokens")
        << "worker    " << kWorkerToken << " farm\n"
        << "user      " << kUserToken << " alice\n"
        << "read-only " << kReaderToken << " reader\n"
        << "admin     " << kAdminToken << " root\n";
    service::ServerConfig config;
    config.db_path = dir_ + "/results.db";
    config.token_file = dir_ + "/tokens";
    config.http_listen = "127.0.0.1:0";
    config.http_static_dir = QKOV_DASHBOARD_DIR;
    config.metrics_listen = "127.0.0.1:0";
    config.coordinator.lease_duration = absl::Seconds(2);
    auto server = service::QkovServer::Start(config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
    sweeps_ = v1::SweepService::NewStub(channel_);
    workers_ = v1::WorkerService::NewStub(channel_);
    core_ = server_->coordinator();
  }
  void TearDown() override {
    server_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }

  void Check(const char* call, const grpc::Status& s) {
    ++calls_;
    if (Expected(s)) return;
    std::lock_guard<std::mutex> lock(mu_);
    unexpected_.push_back(
        absl::StrCat(call, ": ", s.error_code(), " ", s.error_message()));
  }

  // --- the calls, through gRPC or on the Coordinator (GetParam()) ---
  bool direct() const { return GetParam() == Transport::kDirect; }
  template <typename Resp>
  static grpc::Status Direct(absl::StatusOr<Resp> r, Resp* resp) {
    if (!r.ok()) return ToGrpcStatus(r.status());
    *resp = *std::move(r);
    return grpc::Status::OK;
  }
  // One gRPC call of `stub` with `token`'s credentials.
  template <typename Stub, typename Req, typename Resp>
  static grpc::Status Rpc(Stub* stub,
                          grpc::Status (Stub::*method)(grpc::ClientContext*,
                                                       const Req&, Resp*),
                          const char* token, const Req& req, Resp* resp) {
    grpc::ClientContext ctx;
    Authorize(&ctx, token);
    return (stub->*method)(&ctx, req, resp);
  }
  using Workers = v1::WorkerService::Stub;
  using Sweeps = v1::SweepService::Stub;

  grpc::Status RegisterWorker(const v1::RegisterWorkerRequest& req,
                              v1::RegisterWorkerResponse* resp) {
    if (direct())
      return Direct(core_->workers().RegisterWorker(req, farm_), resp);
    return Rpc(workers_.get(), &Workers::RegisterWorker, kWorkerToken, req,
               resp);
  }
  grpc::Status LeaseTrial(const v1::LeaseTrialRequest& req,
                          v1::LeaseTrialResponse* resp) {
    if (direct()) return Direct(core_->workers().LeaseTrial(req, farm_), resp);
    return Rpc(workers_.get(), &Workers::LeaseTrial, kWorkerToken, req, resp);
  }
  grpc::Status ReportMetrics(const v1::ReportMetricsRequest& req,
                             v1::ReportMetricsResponse* resp) {
    if (direct())
      return Direct(core_->workers().ReportMetrics(req, farm_), resp);
    return Rpc(workers_.get(), &Workers::ReportMetrics, kWorkerToken, req,
               resp);
  }
  grpc::Status Heartbeat(const v1::HeartbeatRequest& req,
                         v1::HeartbeatResponse* resp) {
    if (direct()) return Direct(core_->workers().Heartbeat(req, farm_), resp);
    return Rpc(workers_.get(), &Workers::Heartbeat, kWorkerToken, req, resp);
  }
  grpc::Status CompleteTrial(const v1::CompleteTrialRequest& req,
                             v1::CompleteTrialResponse* resp) {
    if (direct())
      return Direct(core_->workers().CompleteTrial(req, farm_), resp);
    return Rpc(workers_.get(), &Workers::CompleteTrial, kWorkerToken, req,
               resp);
  }
  grpc::Status FailTrial(const v1::FailTrialRequest& req,
                         v1::FailTrialResponse* resp) {
    if (direct()) return Direct(core_->workers().FailTrial(req, farm_), resp);
    return Rpc(workers_.get(), &Workers::FailTrial, kWorkerToken, req, resp);
  }
  grpc::Status CancelSweep(const v1::CancelSweepRequest& req,
                           v1::CancelSweepResponse* resp) {
    if (direct())
      return Direct(core_->sweeps().CancelSweep(req.name(), alice_), resp);
    return Rpc(sweeps_.get(), &Sweeps::CancelSweep, kUserToken, req, resp);
  }
  grpc::Status QueryResults(const v1::QueryResultsRequest& req,
                            v1::QueryResultsResponse* resp) {
    if (direct()) return Direct(core_->results().QueryResults(req), resp);
    return Rpc(sweeps_.get(), &Sweeps::QueryResults, kReaderToken, req, resp);
  }
  grpc::Status ListTrials(const v1::ListTrialsRequest& req,
                          v1::ListTrialsResponse* resp) {
    if (direct()) return Direct(core_->sweeps().ListTrials(req), resp);
    return Rpc(sweeps_.get(), &Sweeps::ListTrials, kReaderToken, req, resp);
  }
  grpc::Status GetTrialMetrics(const v1::GetTrialMetricsRequest& req,
                               v1::GetTrialMetricsResponse* resp) {
    if (direct()) return Direct(core_->results().GetTrialMetrics(req), resp);
    return Rpc(sweeps_.get(), &Sweeps::GetTrialMetrics, kReaderToken, req,
               resp);
  }
  grpc::Status QuerySql(const v1::QuerySqlRequest& req,
                        v1::QuerySqlResponse* resp) {
    if (direct()) return Direct(core_->results().QuerySql(req), resp);
    return Rpc(sweeps_.get(), &Sweeps::QuerySql, kReaderToken, req, resp);
  }
  grpc::Status Submit(const std::string& name, int seeds) {
    v1::SubmitSweepRequest req;
    req.mutable_spec()->set_name(name);
    auto* axes = req.mutable_spec()->mutable_axes();
    axes->add_parameterizations(v1::FAFO);
    axes->add_lr_ratios(1);
    axes->add_eta_ovs(0.1);
    for (int i = 0; i < seeds; ++i) axes->add_seeds(i);
    v1::SubmitSweepResponse resp;
    if (direct())
      return Direct(core_->sweeps().SubmitSweep(req, alice_), &resp);
    return Rpc(sweeps_.get(), &Sweeps::SubmitSweep, kUserToken, req, &resp);
  }
  // Follows `name` for half a second: through the WatchSweep stream, or by
  // the handler's own loop (Progress, then WaitForChange). Returns the
  // messages (views) received.
  int Watch(const std::string& name) {
    const absl::Time end = absl::Now() + absl::Milliseconds(500);
    int messages = 0;
    if (direct()) {
      absl::Time since = absl::InfinitePast();
      while (absl::Now() < end) {
        const uint64_t seen = core_->changes().ChangeCount();
        auto p = core_->sweeps().Progress(name, &since, /*brief=*/false,
                                          core::SweepControl::kProgressReuse);
        Check("Progress", ToGrpcStatus(p.status()));
        if (!p.ok() || p->finished()) break;
        ++messages;
        core_->changes().WaitForChange(seen, end);
      }
      return messages;
    }
    grpc::ClientContext ctx;
    Authorize(&ctx, kReaderToken);
    ctx.set_deadline(absl::ToChronoTime(end));
    v1::WatchSweepRequest req;
    req.set_name(name);
    auto reader = sweeps_->WatchSweep(&ctx, req);
    v1::SweepProgress progress;
    while (reader->Read(&progress)) ++messages;
    Check("WatchSweep", reader->Finish());
    return messages;
  }

  // One worker: register, then lease, report, heartbeat, and complete (one
  // trial in eight fails instead) until `stop`.
  void Worker(int w, const std::atomic<bool>& stop) {
    std::string id, key;
    {
      v1::RegisterWorkerRequest reg;
      reg.set_name(absl::StrCat("stress-", w));
      v1::RegisterWorkerResponse resp;
      grpc::Status s = RegisterWorker(reg, &resp);
      Check("RegisterWorker", s);
      if (!s.ok()) return;
      id = resp.worker_id();
      key = resp.worker_key();
    }
    for (int round = 0; !stop && round < 100000; ++round) {
      v1::LeaseTrialResponse lease;
      {
        v1::LeaseTrialRequest req;
        req.set_worker_id(id);
        req.set_worker_key(key);
        grpc::Status s = LeaseTrial(req, &lease);
        Check("LeaseTrial", s);
        if (!s.ok() || lease.outcome() != v1::LeaseTrialResponse::LEASED) {
          absl::SleepFor(absl::Milliseconds(20));  // the queue is empty
          continue;
        }
      }
      const v1::Lease& l = lease.lease();
      for (int r = 0; r < 3 && !stop; ++r) {
        v1::ReportMetricsRequest req;
        req.set_worker_id(id);
        req.set_worker_key(key);
        req.set_trial_id(l.trial_id());
        req.set_attempt(l.attempt());
        for (int p = 0; p < 20; ++p) {
          auto* point = req.add_points();
          point->set_step(r * 20 + p + 1);
          point->set_name(p % 2 ? "train_loss" : "accuracy");
          point->set_value(1.0 / (r * 20 + p + 1));
        }
        v1::ReportMetricsResponse resp;
        Check("ReportMetrics", ReportMetrics(req, &resp));
      }
      {
        v1::HeartbeatRequest req;
        req.set_worker_id(id);
        req.set_worker_key(key);
        auto* ref = req.add_leases();
        ref->set_trial_id(l.trial_id());
        ref->set_attempt(l.attempt());
        v1::HeartbeatResponse resp;
        Check("Heartbeat", Heartbeat(req, &resp));
      }
      if (round % 8 == 7) {
        v1::FailTrialRequest req;
        req.set_worker_id(id);
        req.set_worker_key(key);
        req.set_trial_id(l.trial_id());
        req.set_attempt(l.attempt());
        req.set_reason("stress: a failure on purpose");
        v1::FailTrialResponse resp;
        Check("FailTrial", FailTrial(req, &resp));
        continue;
      }
      v1::CompleteTrialRequest req;
      req.set_worker_id(id);
      req.set_worker_key(key);
      req.set_trial_id(l.trial_id());
      req.set_attempt(l.attempt());
      (*req.mutable_results())["accuracy"] = 0.5 + 0.01 * w;
      req.set_steps(60);
      v1::CompleteTrialResponse resp;
      const grpc::Status s = CompleteTrial(req, &resp);
      Check("CompleteTrial", s);
      if (s.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        completed_[l.trial_id()] = true;
      }
    }
  }

  // A researcher: submits sweeps, cancels every third, and reads.
  void Researcher(int r, const std::atomic<bool>& stop) {
    for (int i = 0; !stop && i < 100000; ++i) {
      const std::string name = absl::StrCat("r", r, "-", i);
      Check("SubmitSweep", Submit(name, 6));
      if (i % 3 == 2) {
        v1::CancelSweepRequest req;
        req.set_name(name);
        v1::CancelSweepResponse resp;
        Check("CancelSweep", CancelSweep(req, &resp));
      }
      {
        v1::QueryResultsRequest req;
        req.set_sweep_name(absl::StrCat("r", r, "-0"));
        v1::QueryResultsResponse resp;
        Check("QueryResults", QueryResults(req, &resp));
      }
      {
        v1::ListTrialsRequest req;
        req.set_sweep_name(name);
        v1::ListTrialsResponse resp;
        Check("ListTrials", ListTrials(req, &resp));
        if (resp.trials_size() > 0) {
          v1::GetTrialMetricsRequest m;
          m.set_trial_id(resp.trials(0).trial_id());
          v1::GetTrialMetricsResponse curves;
          Check("GetTrialMetrics", GetTrialMetrics(m, &curves));
        }
      }
      {
        v1::QuerySqlRequest req;
        req.set_sql("SELECT state, COUNT(*) FROM trials GROUP BY state");
        v1::QuerySqlResponse resp;
        Check("QuerySql", QuerySql(req, &resp));
      }
      absl::SleepFor(absl::Milliseconds(30));
    }
  }

  // A watcher: follows "r0-0" and "r1-0" in turn, half a second each.
  void Watcher(const std::atomic<bool>& stop) {
    for (int i = 0; !stop && i < 100000; ++i)
      watch_messages_ += Watch(i % 2 ? "r0-0" : "r1-0");
  }

  // A dashboard reader: the JSON API, and the event stream's first bytes.
  void Dashboard(int d, const std::atomic<bool>& stop) {
    httplib::Client c("127.0.0.1", server_->http_port());
    c.set_read_timeout(10, 0);
    const httplib::Headers auth = {
        {"Authorization", absl::StrCat("Bearer ", kReaderToken)}};
    for (int i = 0; !stop && i < 100000; ++i) {
      // Views of many sweeps, so that the reply cache keeps adding entries
      // while other readers look theirs up.
      std::string path = "/api/v1/sweeps";
      if (i % 4 == 1 || i % 4 == 3)
        path = absl::StrCat("/api/v1/sweeps/r", i % 2, "-", i % 40, "/trials");
      if (i % 8 == 2) path = "/api/v1/events";
      int status = 0;
      if (path == "/api/v1/events") {
        auto res = c.Get(path, auth, [&](const char*, size_t) {
          return false;  // the stream began: hang up
        });
        status = res ? res->status : 0;
        if (!res && res.error() == httplib::Error::Canceled) status = 200;
      } else {
        auto res = c.Get(path, auth);
        status = res ? res->status : 0;
      }
      ++calls_;
      if (status != 200 && status != 404 && status != 429) {
        std::lock_guard<std::mutex> lock(mu_);
        unexpected_.push_back(absl::StrCat("GET ", path, ": ", status));
      }
      absl::SleepFor(absl::Milliseconds(d));
    }
  }

  // Prometheus: /metrics every 20 ms (the store's events and worker calls
  // are counted meanwhile); the last scrape's lease grants.
  void Scraper(const std::atomic<bool>& stop) {
    httplib::Client c("127.0.0.1", server_->metrics_port());
    c.set_read_timeout(10, 0);
    const httplib::Headers auth = {
        {"Authorization", absl::StrCat("Bearer ", kReaderToken)}};
    for (int i = 0; !stop && i < 100000; ++i) {
      auto res = c.Get("/metrics", auth);
      ++calls_;
      if (!res || res->status != 200 ||
          res->body.find("qkov_lease_grants_total") == std::string::npos) {
        std::lock_guard<std::mutex> lock(mu_);
        unexpected_.push_back(
            absl::StrCat("GET /metrics: ", res ? res->status : 0));
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }

  std::string dir_;
  std::unique_ptr<service::QkovServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::SweepService::Stub> sweeps_;
  std::unique_ptr<v1::WorkerService::Stub> workers_;
  core::Coordinator* core_ = nullptr;
  const storage::Actor farm_{"farm", false};
  const storage::Actor alice_{"alice", false};
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> watch_messages_{0};
  std::mutex mu_;
  std::vector<std::string> unexpected_;
  std::map<std::string, bool> completed_;
};

TEST_P(ConcurrencyStressTest, EverythingAtOnceStaysConsistent) {
  ASSERT_TRUE(Submit("r0-0", 6).ok());
  ASSERT_TRUE(Submit("r1-0", 6).ok());
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < 6; ++w) threads.emplace_back([&, w] { Worker(w, stop); });
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] { Researcher(r, stop); });
  for (int i = 0; i < 2; ++i) threads.emplace_back([&] { Watcher(stop); });
  for (int d = 0; d < 4; ++d)
    threads.emplace_back([&, d] { Dashboard(d, stop); });
  threads.emplace_back([&] { Scraper(stop); });
  // 8 s: enough for every kind of call to overlap every other many times
  // (the counts are printed), short enough for the TSan build.
  absl::SleepFor(absl::Seconds(8));
  stop = true;
  for (std::thread& t : threads) t.join();
  std::printf("[stress] %lld calls, %lld watch messages, %zu completions\n",
              static_cast<long long>(calls_.load()),
              static_cast<long long>(watch_messages_.load()),
              completed_.size());
  for (const std::string& u : unexpected_) ADD_FAILURE() << u;
  EXPECT_GT(completed_.size(), 10u);
  EXPECT_GT(watch_messages_.load(), 0);

  // The database agrees with what the workers were told: every completion
  // acknowledged is a finished trial, and the file is intact.
  server_.reset();
  auto store = storage::ResultsStore::Open(dir_ + "/results.db");
  ASSERT_TRUE(store.ok()) << store.status();
  auto intact = (*store)->IntegrityOk();
  ASSERT_TRUE(intact.ok() && *intact);
  for (const auto& [trial, done] : completed_) {
    auto t = (*store)->trials().GetTrial(trial);
    ASSERT_TRUE(t.ok()) << trial << " " << t.status();
    EXPECT_EQ(t->state, "done") << trial;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, ConcurrencyStressTest,
                         ::testing::Values(Transport::kGrpc,
                                           Transport::kDirect),
                         [](const ::testing::TestParamInfo<Transport>& info) {
                           return info.param == Transport::kGrpc ? "Grpc"
                                                                 : "Direct";
                         });

}  // namespace
}  // namespace qkov
