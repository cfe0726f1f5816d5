// Watchers and researchers' reads beside the workers, on a real qkov-server
// in-process (gRPC on loopback, a real SQLite file, tokens of every role):
// a read-only token's watch streams and queries cannot hold back a submit,
// a lease or a report, even with every researchers' read connection taken
// (as long reads would take them); and a stopping server does not wait for
// them. Every wait is bounded.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "qkov/v1/sweep.grpc.pb.h"
#include "qkov/v1/worker.grpc.pb.h"
#include "server/service/server.h"
#include "storage/reader_pool.h"

namespace qkov {
namespace {

namespace v1 = ::qkov::v1;

constexpr char kWorkerToken[] = "farm-token-0123456789";
constexpr char kUserToken[] = "alice-token-012345678";
constexpr char kReaderToken[] = "reader-token-01234567";

std::unique_ptr<grpc::ClientContext> Ctx(
    const std::string& token, absl::Duration deadline = absl::Seconds(60)) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->AddMetadata("authorization", "Bearer " + token);
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  return ctx;
}

v1::SweepSpec Spec(const std::string& name, int seeds) {
  v1::SweepSpec s;
  s.set_name(name);
  s.mutable_axes()->add_parameterizations(v1::FAFO);
  s.mutable_axes()->add_lr_ratios(1);
  s.mutable_axes()->add_eta_ovs(0.1);
  for (int i = 0; i < seeds; ++i) s.mutable_axes()->add_seeds(i);
  return s;
}

class WatchLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qkov-watch-load-XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::ofstream(dir_ + "/tokens")
        << "worker    " << kWorkerToken << " farm\n"
        << "user      " << kUserToken << " alice\n"
        << "read-only " << kReaderToken << " reader\n";
    service::ServerConfig config;
    config.db_path = dir_ + "/results.db";
    config.token_file = dir_ + "/tokens";
    auto server = service::QkovServer::Start(config);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    auto channel =
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                            grpc::InsecureChannelCredentials());
    sweeps_ = v1::SweepService::NewStub(channel);
    workers_ = v1::WorkerService::NewStub(channel);
    ASSERT_TRUE(Submit("s", 4).ok());
    auto ctx = Ctx(kWorkerToken);
    v1::RegisterWorkerRequest reg;
    reg.set_name("w");
    v1::RegisterWorkerResponse resp;
    ASSERT_TRUE(workers_->RegisterWorker(ctx.get(), reg, &resp).ok());
    worker_id_ = resp.worker_id();
    worker_key_ = resp.worker_key();
    ASSERT_TRUE(Lease(&lease_).ok());
    // A history to read: 4,000 points.
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(Report(250).ok());
  }
  void TearDown() override {
    held_.clear();
    server_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }

  grpc::Status Submit(const std::string& name, int seeds) {
    auto ctx = Ctx(kUserToken);
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = Spec(name, seeds);
    v1::SubmitSweepResponse resp;
    return sweeps_->SubmitSweep(ctx.get(), req, &resp);
  }
  grpc::Status Lease(v1::Lease* lease) {
    auto ctx = Ctx(kWorkerToken);
    v1::LeaseTrialRequest req;
    req.set_worker_id(worker_id_);
    req.set_worker_key(worker_key_);
    v1::LeaseTrialResponse resp;
    grpc::Status s = workers_->LeaseTrial(ctx.get(), req, &resp);
    if (s.ok() && resp.outcome() != v1::LeaseTrialResponse::LEASED)
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no lease");
    *lease = resp.lease();
    return s;
  }
  // One report of `steps` steps of four curves.
  grpc::Status Report(int steps) {
    auto ctx = Ctx(kWorkerToken);
    v1::ReportMetricsRequest req;
    req.set_worker_id(worker_id_);
    req.set_worker_key(worker_key_);
    req.set_trial_id(lease_.trial_id());
    req.set_attempt(lease_.attempt());
    for (int s = 0; s < steps; ++s) {
      step_ += 10;
      for (const char* n : {"train_loss", "train_accuracy",
                            "distinct_attention", "separability"}) {
        v1::MetricPoint* p = req.add_points();
        p->set_step(step_);
        p->set_name(n);
        p->set_value(1.0 / static_cast<double>(step_));
      }
    }
    v1::ReportMetricsResponse resp;
    return workers_->ReportMetrics(ctx.get(), req, &resp);
  }
  grpc::Status Complete(const v1::Lease& lease) {
    auto ctx = Ctx(kWorkerToken);
    v1::CompleteTrialRequest c;
    c.set_worker_id(worker_id_);
    c.set_worker_key(worker_key_);
    c.set_trial_id(lease.trial_id());
    c.set_attempt(lease.attempt());
    c.set_steps(step_);
    (*c.mutable_results())["train_loss"] = 0.5;
    c.mutable_provenance()->set_code_version("test");
    v1::CompleteTrialResponse resp;
    return workers_->CompleteTrial(ctx.get(), c, &resp);
  }

  // Takes every connection of the researchers' read pool, one of them
  // holding a read snapshot open.
  void HoldClientReaders() {
    storage::ReaderPool* pool = server_->store()->ClientReadersForTesting();
    for (int i = 0; i < pool->size(); ++i) {
      auto lease = pool->Acquire();
      ASSERT_TRUE(lease.ok()) << lease.status();
      held_.push_back(std::move(*lease));
    }
    ASSERT_TRUE(held_[0].db()->Execute("BEGIN").ok());
    auto count = held_[0].db()->Prepare("SELECT COUNT(*) FROM metrics");
    ASSERT_TRUE(count.ok() && (*count)->Step().ok());
    snapshot_ = std::move(*count);
  }
  void ReleaseClientReaders() {
    snapshot_.reset();
    if (!held_.empty()) held_[0].db()->Execute("COMMIT").IgnoreError();
    held_.clear();
  }

  // A read-only watcher: reads the stream until it ends.
  struct Watcher {
    std::unique_ptr<grpc::ClientContext> ctx =
        Ctx(kReaderToken, absl::Hours(1));
    std::atomic<int> messages{0};
    std::thread thread;
    grpc::Status status;
  };
  std::unique_ptr<Watcher> Watch(const std::string& sweep) {
    auto w = std::make_unique<Watcher>();
    Watcher* raw = w.get();
    raw->thread = std::thread([this, raw, sweep] {
      v1::WatchSweepRequest req;
      req.set_name(sweep);
      auto reader = sweeps_->WatchSweep(raw->ctx.get(), req);
      v1::SweepProgress p;
      while (reader->Read(&p)) ++raw->messages;
      raw->status = reader->Finish();
    });
    return w;
  }
  // Waits (up to 30 s) until every watcher has its first message.
  bool FirstMessages(const std::vector<std::unique_ptr<Watcher>>& ws) {
    const absl::Time until = absl::Now() + absl::Seconds(30);
    for (const auto& w : ws) {
      while (w->messages == 0 && absl::Now() < until)
        absl::SleepFor(absl::Milliseconds(10));
      if (w->messages == 0) return false;
    }
    return true;
  }

  std::string dir_;
  std::unique_ptr<service::QkovServer> server_;
  std::unique_ptr<v1::SweepService::Stub> sweeps_;
  std::unique_ptr<v1::WorkerService::Stub> workers_;
  std::string worker_id_, worker_key_;
  v1::Lease lease_;
  int64_t step_ = 0;
  std::vector<storage::ReaderPool::Lease> held_;
  std::unique_ptr<storage::Statement> snapshot_;
};

TEST_F(WatchLoadTest, ReadOnlyReadersCannotDelayWrites) {
  std::vector<std::unique_ptr<Watcher>> watchers;
  for (int i = 0; i < 4; ++i) watchers.push_back(Watch("s"));
  ASSERT_TRUE(FirstMessages(watchers));
  HoldClientReaders();
  // Queries by the read-only token, now waiting for a read connection.
  std::vector<std::future<grpc::Status>> queries;
  for (int i = 0; i < 2; ++i) {
    queries.push_back(std::async(std::launch::async, [this] {
      auto ctx = Ctx(kReaderToken);
      v1::GetTrialMetricsRequest req;
      req.set_trial_id(lease_.trial_id());
      v1::GetTrialMetricsResponse resp;
      return sweeps_->GetTrialMetrics(ctx.get(), req, &resp);
    }));
  }
  // Submit, report, heartbeat, lease and complete, all through.
  auto writes = std::async(std::launch::async, [this]() -> std::string {
    if (grpc::Status s = Submit("t", 2); !s.ok())
      return "submit: " + s.error_message();
    if (grpc::Status s = Report(10); !s.ok())
      return "report: " + s.error_message();
    {
      auto ctx = Ctx(kWorkerToken);
      v1::HeartbeatRequest req;
      req.set_worker_id(worker_id_);
      req.set_worker_key(worker_key_);
      v1::LeaseRef* ref = req.add_leases();
      ref->set_trial_id(lease_.trial_id());
      ref->set_attempt(lease_.attempt());
      v1::HeartbeatResponse resp;
      if (grpc::Status s = workers_->Heartbeat(ctx.get(), req, &resp); !s.ok())
        return "heartbeat: " + s.error_message();
    }
    if (grpc::Status s = Complete(lease_); !s.ok())
      return "complete: " + s.error_message();
    v1::Lease next;
    if (grpc::Status s = Lease(&next); !s.ok())
      return "lease: " + s.error_message();
    if (grpc::Status s = Complete(next); !s.ok())
      return "complete: " + s.error_message();
    return "";
  });
  const bool finished =
      writes.wait_for(std::chrono::seconds(50)) == std::future_status::ready;
  ReleaseClientReaders();
  ASSERT_TRUE(finished) << "a write waited for the researchers' reads";
  EXPECT_EQ(writes.get(), "");
  // The queries were held back, not refused: they answer now.
  for (auto& q : queries) {
    grpc::Status s = q.get();
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
  // The watchers see the completions.
  const int before = watchers[0]->messages;
  const absl::Time until = absl::Now() + absl::Seconds(30);
  while (watchers[0]->messages == before && absl::Now() < until)
    absl::SleepFor(absl::Milliseconds(10));
  EXPECT_GT(watchers[0]->messages, before);
  for (auto& w : watchers) w->ctx->TryCancel();
  for (auto& w : watchers) w->thread.join();
}

TEST_F(WatchLoadTest, ShutdownDoesNotWaitForWatchersOrReads) {
  std::vector<std::unique_ptr<Watcher>> watchers;
  for (int i = 0; i < 4; ++i) watchers.push_back(Watch("s"));
  ASSERT_TRUE(FirstMessages(watchers));
  HoldClientReaders();
  // A read waiting for a connection (it would wait for its 60 s deadline).
  auto query = std::async(std::launch::async, [this] {
    auto ctx = Ctx(kReaderToken);
    v1::GetTrialMetricsRequest req;
    req.set_trial_id(lease_.trial_id());
    v1::GetTrialMetricsResponse resp;
    return sweeps_->GetTrialMetrics(ctx.get(), req, &resp);
  });
  // Wake the watchers into a round that must wait for a read connection.
  ASSERT_TRUE(Report(1).ok());
  auto stop = std::async(std::launch::async, [this] { server_->Shutdown(); });
  const bool stopped =
      stop.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  ReleaseClientReaders();
  ASSERT_TRUE(stopped) << "Shutdown waited for a read";
  const grpc::Status q = query.get();
  EXPECT_FALSE(q.ok());
  for (auto& w : watchers) {
    w->thread.join();
    EXPECT_FALSE(w->status.ok());
  }
}

}  // namespace
}  // namespace qkov
