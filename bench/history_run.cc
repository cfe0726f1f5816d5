#include "bench/history_run.h"

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "bench/simulated_workers.h"
#include "qkov/v1/sweep.grpc.pb.h"
#include "qkov/v1/worker.grpc.pb.h"

namespace qkov::bench {
namespace {

constexpr char kSweep[] = "history";
const char* const kNames[] = {"train_loss", "train_accuracy",
                              "distinct_attention", "val_accuracy"};
constexpr int kNamesPerStep = 4;

// A running trial and the next step it reports.
struct Reporter {
  Worker worker;
  v1::Lease lease;
  int64_t step = 0;
};

// Metric rows written so far by this run (each report adds new steps, so
// every point is a new row).
std::atomic<int64_t> rows_written{0};

// One report of `steps` steps (all four curves at each).
bool Report(Reporter& r, int steps) {
  v1::ReportMetricsRequest req;
  req.set_worker_id(r.worker.id);
  req.set_worker_key(r.worker.key);
  req.set_trial_id(r.lease.trial_id());
  req.set_attempt(r.lease.attempt());
  for (int s = 0; s < steps; ++s) {
    r.step += 100;
    for (const char* name : kNames) {
      v1::MetricPoint* p = req.add_points();
      p->set_step(r.step);
      p->set_name(name);
      p->set_value(1.0 / static_cast<double>(r.step));
    }
  }
  grpc::ClientContext ctx;
  v1::ReportMetricsResponse resp;
  if (!r.worker.stub->ReportMetrics(&ctx, req, &resp).ok()) return false;
  rows_written += req.points_size();
  return true;
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

// `watchers` WatchSweep streams and `streams` dashboard event streams on
// the sweep, each reading until Stop().
class Watchers {
 public:
  Watchers(const HistoryOptions& o, int watchers, int streams) {
    for (int i = 0; i < watchers; ++i) {
      auto ctx = std::make_unique<grpc::ClientContext>();
      grpc::ClientContext* c = ctx.get();
      contexts_.push_back(std::move(ctx));
      threads_.emplace_back([this, c, address = o.address] {
        auto stub = v1::SweepService::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
        v1::WatchSweepRequest req;
        req.set_name(kSweep);
        auto reader = stub->WatchSweep(c, req);
        v1::SweepProgress p;
        while (reader->Read(&p)) ++messages_;
        reader->Finish().IgnoreError();
      });
    }
    for (int i = 0; i < streams; ++i) {
      clients_.push_back(
          std::make_unique<httplib::Client>("127.0.0.1", o.http_port));
      httplib::Client* c = clients_.back().get();
      c->set_read_timeout(3600, 0);
      threads_.emplace_back([this, c] {
        c->Get(absl::StrCat("/api/v1/events?sweep=", kSweep),
               [this](const char* data, size_t n) {
                 if (std::string(data, n).find("event: progress") !=
                     std::string::npos)
                   ++messages_;
                 return !stop_;
               });
      });
    }
    // Each has read the sweep once (the whole first view) before timing.
    const auto t0 = Clock::now();
    while (messages_ < watchers + streams && Since(t0) < 60)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~Watchers() {
    stop_ = true;
    for (auto& c : contexts_) c->TryCancel();
    for (auto& c : clients_) c->stop();
    for (auto& t : threads_) t.join();
  }
  int64_t messages() const { return messages_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> messages_{0};
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts_;
  std::vector<std::unique_ptr<httplib::Client>> clients_;
  std::vector<std::thread> threads_;
};

struct Interval {
  double seconds = 0;
  std::vector<double> latencies_ms;
  int failed = 0;
  double cpu_seconds = 0;  // the whole process: server, workers, watchers
};

// Every reporter reports for `seconds`, one step per report.
Interval Measure(std::vector<Reporter>& reporters, double seconds,
                 int every_ms) {
  std::atomic<bool> stop{false};
  absl::Mutex mu;
  Interval out;
  std::vector<std::thread> threads;
  const double cpu0 = ProcessCpuSeconds();
  const auto t0 = Clock::now();
  for (Reporter& r : reporters) {
    threads.emplace_back([&, rp = &r] {
      std::vector<double> mine;
      int failed = 0;
      auto next = Clock::now();
      while (!stop) {
        const auto s = Clock::now();
        if (!Report(*rp, 1)) ++failed;
        mine.push_back(1e3 * Since(s));
        if (every_ms > 0) {
          next += std::chrono::milliseconds(every_ms);
          std::this_thread::sleep_until(next);
        }
      }
      absl::MutexLock lock(&mu);
      out.latencies_ms.insert(out.latencies_ms.end(), mine.begin(), mine.end());
      out.failed += failed;
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  out.seconds = Since(t0);
  out.cpu_seconds = ProcessCpuSeconds() - cpu0;
  return out;
}

// A sweep of 100 trials and `points` curve points, cancelled, deleted while
// `reporters` report back to back; the same interval without a deletion
// first.
bool DeleteDuring(const HistoryOptions& o, std::vector<Reporter>& reporters,
                  v1::SweepService::Stub* sweeps) {
  const char* kOld = "history-old";
  {
    grpc::ClientContext ctx;
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = Spec(kOld, 100);
    req.mutable_spec()->set_priority(200);  // leased before any other
    v1::SubmitSweepResponse resp;
    if (!sweeps->SubmitSweep(&ctx, req, &resp).ok()) return false;
  }
  std::vector<Reporter> old(100);
  for (int i = 0; i < 100; ++i) {
    old[i].worker = Connect(o.address, 100000 + i);
    if (!Lease(old[i].worker, &old[i].lease)) return false;
    for (int64_t sent = 0; sent < o.delete_points / 100;) {
      const int steps = static_cast<int>(std::max<int64_t>(
          1, std::min<int64_t>(
                 250, (o.delete_points / 100 - sent) / kNamesPerStep)));
      if (!Report(old[i], steps)) return false;
      sent += steps * kNamesPerStep;
    }
  }
  {
    grpc::ClientContext ctx;
    v1::CancelSweepRequest req;
    req.set_name(kOld);
    v1::CancelSweepResponse resp;
    if (!sweeps->CancelSweep(&ctx, req, &resp).ok()) return false;
  }
  auto line = [](const char* what, const Interval& iv) {
    std::printf(
        "history     %-34s %7.0f reports/s  p50 %6.2f ms  p99 %6.2f ms  "
        "max %7.2f ms\n",
        what, iv.latencies_ms.size() / iv.seconds,
        Quantile(iv.latencies_ms, 0.5), Quantile(iv.latencies_ms, 0.99),
        Quantile(iv.latencies_ms, 1.0));
  };
  line("reports, no deletion", Measure(reporters, o.seconds, 0));
  std::atomic<double> took{-1};
  v1::DeleteSweepResponse deleted;
  std::thread deleter([&] {
    const auto t0 = Clock::now();
    grpc::ClientContext ctx;
    v1::DeleteSweepRequest req;
    req.set_name(kOld);
    if (sweeps->DeleteSweep(&ctx, req, &deleted).ok()) took = Since(t0);
  });
  // Reports for as long as the deletion takes (at least o.seconds).
  Interval during;
  while (took < 0) {
    Interval iv = Measure(reporters, o.seconds, 0);
    during.seconds += iv.seconds;
    during.latencies_ms.insert(during.latencies_ms.end(),
                               iv.latencies_ms.begin(), iv.latencies_ms.end());
    if (during.seconds > 600) break;  // a deletion that never ends
  }
  deleter.join();
  if (took < 0) return false;
  line("reports, during the deletion", during);
  std::printf(
      "history     delete: %lld trials, %lld points in %.2f s (%.0f "
      "points/s), %.1f MB freed in the file\n",
      static_cast<long long>(deleted.trials_deleted()),
      static_cast<long long>(deleted.metric_points_deleted()), took.load(),
      deleted.metric_points_deleted() / took.load(),
      deleted.bytes_freed() / 1e6);
  std::fflush(stdout);
  return true;
}

// The median of `n` timings of `read`, in milliseconds.
double TimeRead(const std::function<bool()>& read, int n = 3) {
  std::vector<double> t;
  for (int i = 0; i < n; ++i) {
    const auto s = Clock::now();
    if (!read()) return -1;
    t.push_back(1e3 * Since(s));
  }
  return Quantile(t, 0.5);
}

}  // namespace

bool HistoryRun(const HistoryOptions& o) {
  auto sweeps = v1::SweepService::NewStub(
      grpc::CreateChannel(o.address, grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext ctx;
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = Spec(kSweep, o.workers);
    req.mutable_spec()->set_priority(100);  // before any other sweep's trials
    v1::SubmitSweepResponse resp;
    grpc::Status s = sweeps->SubmitSweep(&ctx, req, &resp);
    if (!s.ok()) {
      std::fprintf(stderr, "history: submit: %s\n", s.error_message().c_str());
      return false;
    }
  }
  std::vector<Reporter> reporters(o.workers);
  for (int i = 0; i < o.workers; ++i) {
    reporters[i].worker = Connect(o.address, 1000 + i);
    if (!Lease(reporters[i].worker, &reporters[i].lease)) {
      std::fprintf(stderr, "history: worker %d got no lease\n", i);
      return false;
    }
  }
  std::printf(
      "history     %d simulated workers, one running trial each, reporting "
      "%s; %d round(s) of %.1f s per setting\n",
      o.workers,
      o.report_every_ms > 0
          ? absl::StrCat("every ", o.report_every_ms, " ms").c_str()
          : "again as soon as each report returns",
      o.rounds, o.seconds);
  for (const int64_t level : o.levels) {
    // Fill: reports of 250 steps (1,000 rows), spread over the trials. The
    // measured intervals add rows of their own: each line says how many
    // there were when it began.
    const int64_t need = level - rows_written;
    if (need > 0) {
      const int64_t per_trial = need / o.workers;
      std::vector<std::thread> fill;
      std::atomic<bool> ok{true};
      for (int t = 0; t < 2; ++t) {
        fill.emplace_back([&, t] {
          for (size_t i = t; i < reporters.size(); i += 2) {
            for (int64_t sent = 0; sent < per_trial;) {
              const int steps = static_cast<int>(std::max<int64_t>(
                  1,
                  std::min<int64_t>(250, (per_trial - sent) / kNamesPerStep)));
              if (!Report(reporters[i], steps)) ok = false;
              sent += steps * kNamesPerStep;
            }
          }
        });
      }
      for (auto& t : fill) t.join();
      if (!ok) {
        std::fprintf(stderr, "history: a fill report failed\n");
        return false;
      }
    }
    for (int round = 1; round <= o.rounds; ++round) {
      for (const auto& [watchers, streams] : o.settings) {
        Watchers w(o, watchers, streams);
        const int64_t rows = rows_written;
        const Interval iv = Measure(reporters, o.seconds, o.report_every_ms);
        std::printf(
            "history     rows %8lld  round %d  %d watcher(s) + %d event "
            "stream(s): %7.0f reports/s  p50 %6.2f ms  p99 %6.2f ms  CPU "
            "%4.0f%% of a core%s\n",
            static_cast<long long>(rows), round, watchers, streams,
            iv.latencies_ms.size() / iv.seconds, Quantile(iv.latencies_ms, 0.5),
            Quantile(iv.latencies_ms, 0.99), 100 * iv.cpu_seconds / iv.seconds,
            iv.failed ? absl::StrCat("  (", iv.failed, " failed)").c_str()
                      : "");
        std::fflush(stdout);
      }
    }
    // Each read path, alone, on this history.
    const int64_t rows = rows_written;
    const std::string trial = reporters[0].lease.trial_id();
    httplib::Client http("127.0.0.1", o.http_port);
    http.set_read_timeout(600, 0);
    auto grpc_read = [&](auto call) {
      return [&sweeps, call]() {
        grpc::ClientContext ctx;
        return call(sweeps.get(), &ctx);
      };
    };
    auto http_read = [&http](std::string path) {
      return [&http, path]() {
        auto r = http.Get(path);
        return r && r->status == 200;
      };
    };
    const std::vector<std::pair<std::string, std::function<bool()>>> reads = {
        {"watch: first view (every trial, latest values)",
         grpc_read([](v1::SweepService::Stub* s, grpc::ClientContext* c) {
           v1::WatchSweepRequest req;
           req.set_name(kSweep);
           auto reader = s->WatchSweep(c, req);
           v1::SweepProgress p;
           const bool got = reader->Read(&p);
           c->TryCancel();
           reader->Finish().IgnoreError();
           return got;
         })},
        {"GetSweep",
         grpc_read([](v1::SweepService::Stub* s, grpc::ClientContext* c) {
           v1::GetSweepRequest req;
           req.set_name(kSweep);
           v1::Sweep resp;
           return s->GetSweep(c, req, &resp).ok();
         })},
        {"ListTrials",
         grpc_read([](v1::SweepService::Stub* s, grpc::ClientContext* c) {
           v1::ListTrialsRequest req;
           req.set_sweep_name(kSweep);
           v1::ListTrialsResponse resp;
           return s->ListTrials(c, req, &resp).ok();
         })},
        {"GetTrial",
         grpc_read([trial](v1::SweepService::Stub* s, grpc::ClientContext* c) {
           v1::GetTrialRequest req;
           req.set_trial_id(trial);
           v1::Trial resp;
           return s->GetTrial(c, req, &resp).ok();
         })},
        {"GetTrialMetrics, one curve of one trial (returns its history)",
         grpc_read([trial](v1::SweepService::Stub* s, grpc::ClientContext* c) {
           v1::GetTrialMetricsRequest req;
           req.set_trial_id(trial);
           req.add_names("train_loss");
           v1::GetTrialMetricsResponse resp;
           return s->GetTrialMetrics(c, req, &resp).ok();
         })},
        {"QueryResults",
         grpc_read([](v1::SweepService::Stub* s, grpc::ClientContext* c) {
           v1::QueryResultsRequest req;
           req.set_sweep_name(kSweep);
           v1::QueryResultsResponse resp;
           return s->QueryResults(c, req, &resp).ok();
         })},
        {"dashboard /api/v1/sweeps/NAME",
         http_read(absl::StrCat("/api/v1/sweeps/", kSweep))},
        {"dashboard results page",
         http_read(
             absl::StrCat("/api/v1/sweeps/", kSweep, "/results?limit=50"))},
        {"dashboard curves (50 trials, 200 points each)",
         http_read(absl::StrCat("/api/v1/sweeps/", kSweep,
                                "/curves?metric=train_loss&limit=50"))},
    };
    for (const auto& [name, read] : reads) {
      std::printf("history     rows %8lld  read %-62s %8.2f ms\n",
                  static_cast<long long>(rows), name.c_str(), TimeRead(read));
    }
    std::fflush(stdout);
  }
  if (o.delete_points > 0 && !DeleteDuring(o, reporters, sweeps.get())) {
    std::fprintf(stderr, "history: the deletion run failed\n");
    return false;
  }
  return true;
}

}  // namespace qkov::bench
