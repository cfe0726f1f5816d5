// The dashboard's JSON API on a large sweep. Prints numbers; never fails on
// time (docs/PERFORMANCE.md).
//
//   dashboard_bench [--trials=100000] [--repeats=5] [--hold_port_file=FILE]
//
// Starts a qkov-server in-process (gRPC and the dashboard on loopback, a
// fresh database in a temporary directory), submits a --trials grid (4
// parameterizations x 25 ratios x trials/100 seeds), completes every trial
// over gRPC with a synthetic trial's 17 results and 8 final curve points,
// then times, cold and as the median of --repeats, each call the sweep page
// makes, and the two ways `qkov results --by` can aggregate (on the server:
// AggregateResults; in the client: QueryResults of every row), and the page's
// calls after a restart (the server warms its cache as it starts). "cold" is
// the first call after the sweep settled (the server reads the whole sweep
// once); "median" the calls after it (only changed trials are read again),
// each made distinct so the server computes it; "shared" the same call
// again, answered from the reply cache every open page shares. With
// --hold_port_file it then writes the dashboard's port there and serves
// until SIGTERM, for bench/dashboard_paint.py.
#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "bench/simulated_workers.h"
#include "common/aggregate.h"
#include "common/signals.h"
#include "qkov/v1/sweep.grpc.pb.h"
#include "qkov/v1/worker.grpc.pb.h"
#include "server/service/server.h"

ABSL_FLAG(int, trials, 100000, "trials in the sweep (multiple of 100)");
ABSL_FLAG(int, repeats, 5, "timed repeats of each call after the cold one");
ABSL_FLAG(std::string, hold_port_file, "",
          "after timing, write the dashboard's port here and serve until "
          "SIGTERM");

namespace v1 = ::qkov::v1;
using Clock = std::chrono::steady_clock;

namespace {

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

v1::SweepSpec Spec(int trials) {
  v1::SweepSpec s;
  s.set_name("big");
  for (auto p : {v1::FAFO, v1::FACO, v1::CAFO, v1::CACO})
    s.mutable_axes()->add_parameterizations(p);
  for (int i = 0; i < 25; ++i) s.mutable_axes()->add_lr_ratios(1 + i);
  s.mutable_axes()->add_eta_ovs(0.01);
  for (int i = 0; i < trials / 100; ++i) s.mutable_axes()->add_seeds(i);
  s.mutable_training()->set_max_steps(1000);
  return s;
}

// What qkov-worker sends for a synthetic trial: 17 results, 8 curves' last
// points, the DTAP heatmap.
v1::CompleteTrialRequest Completion(const std::string& id,
                                    const std::string& key,
                                    const v1::Lease& lease, int64_t n) {
  v1::CompleteTrialRequest c;
  c.set_worker_id(id);
  c.set_worker_key(key);
  c.set_trial_id(lease.trial_id());
  c.set_attempt(lease.attempt());
  c.set_steps(1000);
  for (const char* m : {"accuracy", "loss", "gold_probability", "separability",
                        "ac", "acmc", "comprehensiveness", "sufficiency",
                        "top_k", "steps", "converged", "train_loss", "qk_norm",
                        "ov_norm", "qk_balancedness", "ov_balancedness"}) {
    (*c.mutable_results())[m] = 0.5;
  }
  (*c.mutable_results())["distinct_attention"] = 0.3 + 0.001 * (n % 400);
  for (const char* m : {"train_loss", "accuracy", "loss", "gold_probability",
                        "distinct_attention", "qk_norm", "ov_norm", "lr"}) {
    for (int step : {500, 1000}) {
      v1::MetricPoint* p = c.add_final_points();
      p->set_step(step);
      p->set_name(m);
      p->set_value(0.25);
    }
  }
  c.mutable_provenance()->set_code_version("bench");
  qkov::bench::AddDtapHeatmap(&c);
  return c;
}

// Leases and completes every trial, 64 at a time. Returns the trials done.
int64_t CompleteAll(const std::string& address) {
  auto stub = v1::WorkerService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  v1::RegisterWorkerResponse reg;
  {
    grpc::ClientContext ctx;
    v1::RegisterWorkerRequest req;
    req.set_name("bench");
    if (!stub->RegisterWorker(&ctx, req, &reg).ok()) std::abort();
  }
  int64_t done = 0;
  v1::LeaseTrialResponse next;
  {
    grpc::ClientContext ctx;
    v1::LeaseTrialRequest req;
    req.set_worker_id(reg.worker_id());
    req.set_worker_key(reg.worker_key());
    req.set_max_trials(64);
    if (!stub->LeaseTrial(&ctx, req, &next).ok()) std::abort();
  }
  while (next.outcome() == v1::LeaseTrialResponse::LEASED) {
    v1::CompleteTrialsRequest req;
    req.set_worker_id(reg.worker_id());
    req.set_worker_key(reg.worker_key());
    req.set_lease_next(64);
    *req.add_trials() =
        Completion(reg.worker_id(), reg.worker_key(), next.lease(), done++);
    for (const v1::Lease& l : next.more())
      *req.add_trials() =
          Completion(reg.worker_id(), reg.worker_key(), l, done++);
    grpc::ClientContext ctx;
    v1::CompleteTrialsResponse resp;
    grpc::Status st = stub->CompleteTrials(&ctx, req, &resp);
    if (!st.ok()) {
      std::fprintf(stderr, "complete: %s\n", st.error_message().c_str());
      std::abort();
    }
    next = resp.next();
  }
  return done;
}

struct Timing {
  double cold = 0;
  double median = 0;
  double shared = 0;  // the same request again, answered from the server's
                      // reply cache (dashboard calls only)
  size_t bytes = 0;
};

// `call(k)` makes the k-th request: k = 0 the cold one, 1..repeats the
// timed ones, repeats + 1 a repeat of the last.
Timing Time(int repeats, const std::function<size_t(int)>& call) {
  Timing t;
  Clock::time_point start = Clock::now();
  t.bytes = call(0);
  t.cold = Since(start);
  std::vector<double> runs;
  for (int i = 1; i <= repeats; ++i) {
    start = Clock::now();
    call(i);
    runs.push_back(Since(start));
  }
  std::sort(runs.begin(), runs.end());
  t.median = runs.empty() ? t.cold : runs[runs.size() / 2];
  start = Clock::now();
  call(repeats);
  t.shared = Since(start);
  return t;
}

// `path` made distinct for the k-th request, so that the server computes
// it instead of answering from its reply cache (server/service/
// reply_cache.h): what a page pays the first time it asks after the sweep
// changed.
std::string Uncached(const std::string& path, int k) {
  return absl::StrCat(path, path.find('?') == std::string::npos ? "?" : "&",
                      "bench=", k);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int trials = absl::GetFlag(FLAGS_trials);
  const int repeats = absl::GetFlag(FLAGS_repeats);
  if (trials < 100 || trials % 100 != 0) {
    std::fprintf(stderr, "--trials must be a positive multiple of 100\n");
    return 2;
  }
  std::string tmpl_s =
      std::string(getenv("QKOV_BENCH_DIR") ? getenv("QKOV_BENCH_DIR")
                                           : "/tmp") +
      "/qkov-dashboard-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl_s.data());
  qkov::service::ServerConfig config;
  config.db_path = dir + "/bench.db";
  config.coordinator.lease_duration = absl::Seconds(600);
  config.coordinator.limits.max_trials = 1000000;
  config.http_listen = "127.0.0.1:0";
  config.http_static_dir = QKOV_DASHBOARD_DIR;
  auto server = qkov::service::QkovServer::Start(config);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  const std::string address = absl::StrCat("127.0.0.1:", (*server)->port());
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(1 << 30);  // every row of a large sweep
  auto client = v1::SweepService::NewStub(grpc::CreateCustomChannel(
      address, grpc::InsecureChannelCredentials(), args));
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::printf("dashboard_bench: %d trials, %d repeats, %u cores\n", trials,
              repeats, std::thread::hardware_concurrency());

  Clock::time_point start = Clock::now();
  {
    grpc::ClientContext ctx;
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = Spec(trials);
    v1::SubmitSweepResponse resp;
    grpc::Status st = client->SubmitSweep(&ctx, req, &resp);
    if (!st.ok()) {
      std::fprintf(stderr, "submit: %s\n", st.error_message().c_str());
      return 1;
    }
  }
  const int64_t done = CompleteAll(address);
  std::printf(
      "populate    %lld trials submitted and completed over gRPC in "
      "%.1f s\n",
      static_cast<long long>(done), Since(start));

  // The server re-reads trials changed within the last
  // ResultRowsCache::kRereadMarginMs; a settled sweep is read once.
  std::this_thread::sleep_for(std::chrono::milliseconds(
      qkov::core::ResultRowsCache::kRereadMarginMs + 500));
  httplib::Client http("127.0.0.1", (*server)->http_port());
  http.set_read_timeout(120, 0);
  struct Call {
    const char* what;
    std::string path;
  };
  const std::vector<Call> calls = {
      {"sweeps", "/api/v1/sweeps"},
      {"sweep", "/api/v1/sweeps/big"},
      {"table", "/api/v1/sweeps/big/results?limit=50"},
      {"table-sorted",
       "/api/v1/sweeps/big/results?limit=50&sort=distinct_attention&order="
       "desc"},
      {"table-filtered",
       "/api/v1/sweeps/big/results?limit=50&where=parameterization%3DCACO&"
       "where=lr_ratio%3D7"},
      {"ratio-plot",
       "/api/v1/sweeps/big/aggregate?by=parameterization,lr_ratio&metric="
       "distinct_attention"},
      {"curves", "/api/v1/sweeps/big/curves?metric=train_loss&limit=100"},
      {"dtap-grid", "/api/v1/sweeps/big/heatmaps"},
  };
  double page_cold = 0, page_median = 0;
  for (const Call& c : calls) {
    const Timing t = Time(repeats, [&](int k) {
      httplib::Result r = http.Get(Uncached(c.path, k));
      if (!r || r->status != 200) {
        std::fprintf(stderr, "%s: %s\n", c.path.c_str(),
                     r ? r->body.c_str() : "no reply");
        std::abort();
      }
      return r->body.size();
    });
    // The sweep page's own calls: the sweep, a table page, the plot, the
    // curves, the DTAP grid.
    const std::string w = c.what;
    if (w == "sweep" || w == "table" || w == "ratio-plot" || w == "curves" ||
        w == "dtap-grid") {
      page_cold += t.cold;
      page_median += t.median;
    }
    std::printf(
        "http %-15s cold %7.1f ms, median %7.1f ms, shared %5.1f ms, %8zu "
        "bytes  %s\n",
        c.what, 1e3 * t.cold, 1e3 * t.median, 1e3 * t.shared, t.bytes,
        c.path.c_str());
  }
  std::printf(
      "sweep page  its five JSON calls in sequence: cold %.1f ms, "
      "median %.1f ms\n",
      1e3 * page_cold, 1e3 * page_median);

  const Timing server_side = Time(repeats, [&](int) {
    grpc::ClientContext ctx;
    v1::AggregateResultsRequest req;
    req.set_sweep_name("big");
    req.add_by("parameterization");
    req.add_by("lr_ratio");
    for (const char* m : {"accuracy", "distinct_attention", "ac"})
      req.add_metrics(m);
    v1::AggregateResultsResponse resp;
    if (!client->AggregateResults(&ctx, req, &resp).ok()) std::abort();
    return resp.ByteSizeLong();
  });
  std::string client_error;
  const Timing client_side = Time(repeats, [&](int) -> size_t {
    grpc::ClientContext ctx;
    v1::QueryResultsRequest req;
    req.set_sweep_name("big");
    v1::QueryResultsResponse resp;
    grpc::Status st = client->QueryResults(&ctx, req, &resp);
    if (!st.ok()) {
      client_error = st.error_message();
      return 0;
    }
    auto groups = qkov::Aggregate(resp.rows(), {"parameterization", "lr_ratio"},
                                  {"accuracy", "distinct_attention", "ac"}, {});
    if (!groups.ok()) std::abort();
    return resp.ByteSizeLong();
  });
  std::printf(
      "results --by on the server (AggregateResults): cold %.1f ms, "
      "median %.1f ms, %zu bytes\n",
      1e3 * server_side.cold, 1e3 * server_side.median, server_side.bytes);
  if (client_error.empty()) {
    std::printf(
        "results --by in the client (QueryResults + Aggregate): cold "
        "%.1f ms, median %.1f ms, %zu bytes\n",
        1e3 * client_side.cold, 1e3 * client_side.median, client_side.bytes);
  } else {
    std::printf(
        "results --by in the client (QueryResults + Aggregate): "
        "refused after %.1f ms: %s\n",
        1e3 * client_side.median, client_error.c_str());
  }

  // A restarted server: it reads the most recent sweeps into the dashboard's
  // cache as it starts; then the page's calls.
  {
    (*server)->Shutdown();
    server->reset();
    start = Clock::now();
    server = qkov::service::QkovServer::Start(config);
    if (!server.ok()) {
      std::fprintf(stderr, "restart: %s\n", server.status().ToString().c_str());
      return 1;
    }
    (*server)->WaitUntilWarm();
    const double warm = Since(start);
    httplib::Client again("127.0.0.1", (*server)->http_port());
    again.set_read_timeout(120, 0);
    double page = 0;
    for (const Call& c : calls) {
      const std::string w = c.what;
      if (w != "sweep" && w != "table" && w != "ratio-plot" && w != "curves" &&
          w != "dtap-grid")
        continue;
      const Clock::time_point t0 = Clock::now();
      httplib::Result r = again.Get(c.path);
      if (!r || r->status != 200) std::abort();
      page += Since(t0);
    }
    std::printf(
        "restarted   server up and its cache warm in %.1f s; then the "
        "sweep page's five JSON calls: %.1f ms\n",
        warm, 1e3 * page);
  }

  const std::string hold = absl::GetFlag(FLAGS_hold_port_file);
  if (!hold.empty()) {
    absl::Notification stop;
    qkov::WatchSignals({SIGTERM, SIGINT}, [&](int) {
      if (!stop.HasBeenNotified()) stop.Notify();
    });
    std::ofstream(hold + ".tmp") << (*server)->http_port() << "\n";
    std::rename((hold + ".tmp").c_str(), hold.c_str());
    std::fflush(stdout);
    stop.WaitForNotification();
  }
  (*server)->Shutdown();
  std::system(("rm -rf " + dir).c_str());
  return 0;
}
