// Coordinator throughput with many simulated workers over real gRPC on
// loopback. Prints numbers; never fails on time.
//
//   coordinator_bench [--workers=16] [--trials=100000] [--seconds=10]
//                     [--batch=1000] [--overhead_trials=10000] [--trial_ms=20]
//                     [--runs=submit,direct,cycles,batched,rpc,ingest,overhead]
//
// Runs, on one fresh database in a temporary directory:
//   submit     SubmitSweep of a --trials grid (4 x 25 x 1 x trials/100);
//              then, untimed, the same sweep extended to 3 x --trials, so
//              that the runs below do not run out of queued trials
//   direct     the cycle below in-process, without gRPC (1 and --workers
//              threads)
//   cycles     lease + complete cycles/s, --workers threads, --seconds
//   batched    the same, leasing and completing batches of 8 trials
//   rpc        empty RPCs/s from the same workers (gRPC's health check):
//              the floor under one RPC per trial
//   ingest     metric points/s, --workers threads sending --batch points
//   overhead   --overhead_trials fake trials of --trial_ms on --workers
//              workers: makespan against the ideal, and that overhead
//              carried to 1-second trials
//   scrape     (only when asked for) the cycles run in --scrape_rounds
//              pairs of rounds of --seconds/2, alternately without and
//              with a Prometheus scrape of /metrics every second: cycles/s
//              of each, and the scrapes' time and size
//   history    (only when asked for) --history_workers running trials
//              reporting while the history grows to each of
//              --history_rows: report latency and rate with 0, 1 and 8
//              watchers (+4 dashboard event streams), interleaved, and each
//              read path's time; with --history_delete_points, a sweep
//              deleted while they report (bench/history_run.h)
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>
#include <httplib.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/history_run.h"
#include "bench/simulated_workers.h"
#include "common/clock.h"
#include "qkov/v1/sweep.grpc.pb.h"
#include "qkov/v1/worker.grpc.pb.h"
#include "server/core/coordinator.h"
#include "server/service/server.h"
#include "storage/results_store.h"

ABSL_FLAG(int, workers, 16, "simulated workers (threads, one channel each)");
ABSL_FLAG(int, trials, 100000,
          "trials in the submitted grid (multiple of 100)");
ABSL_FLAG(double, seconds, 10, "duration of the cycles and ingest runs");
ABSL_FLAG(int, batch, 1000, "metric points per ReportMetrics");
ABSL_FLAG(int, overhead_trials, 10000, "fake trials in the overhead run");
ABSL_FLAG(int, trial_ms, 20, "duration of one fake trial");
ABSL_FLAG(bool, profile_sql, false,
          "print the store's SQL statements by time spent (SQLite's timing)");
ABSL_FLAG(int, dashboard_tabs, 0,
          "open dashboard sweep pages during the runs: each follows the "
          "sweep's server-sent events and, as the page does, fetches the "
          "sweep, a table page, the ratio plot, the curves and the DTAP grid "
          "after each event, at most once a second");
ABSL_FLAG(int, scrape_rounds, 3,
          "scrape: pairs of rounds (without, with a scrape every second)");
ABSL_FLAG(int, history_workers, 64, "history: simulated running trials");
ABSL_FLAG(std::vector<std::string>, history_rows,
          std::vector<std::string>({"1000", "10000", "100000", "1000000"}),
          "history: the metric-row counts to measure at");
ABSL_FLAG(int, history_rounds, 2, "history: rounds of the watcher settings");
ABSL_FLAG(std::vector<std::string>, history_watchers,
          std::vector<std::string>({"0:0", "1:0", "8:4"}),
          "history: settings W:E of W watch streams and E dashboard event "
          "streams, measured in turn");
ABSL_FLAG(int64_t, history_delete_points, 0,
          "history: last, delete a cancelled sweep of this many curve points "
          "while the workers report (0: none)");
ABSL_FLAG(int, report_every_ms, 0,
          "history: each worker's report interval (0: back to back)");
ABSL_FLAG(std::string, runs, "submit,direct,cycles,batched,rpc,ingest,overhead",
          "which runs to make (submit always runs: the others need its grid)");

namespace v1 = ::qkov::v1;
using ::qkov::bench::BatchLoop;
using ::qkov::bench::Clock;
using ::qkov::bench::Completion;
using ::qkov::bench::Connect;
using ::qkov::bench::EmptyRpcLoop;
using ::qkov::bench::Lease;
using ::qkov::bench::ProcessCpuSeconds;
using ::qkov::bench::ReportDry;
using ::qkov::bench::RunWorkers;
using ::qkov::bench::Since;
using ::qkov::bench::Spec;
using ::qkov::bench::Timed;
using ::qkov::bench::Worker;
using ::qkov::bench::WorkLoop;

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int n_workers = absl::GetFlag(FLAGS_workers);
  std::string tmpl_s =
      std::string(getenv("QKOV_BENCH_DIR") ? getenv("QKOV_BENCH_DIR")
                                           : "/tmp") +
      "/qkov-bench-XXXXXX";
  char* tmpl = tmpl_s.data();
  const std::string dir = mkdtemp(tmpl);
  qkov::service::ServerConfig config;
  config.db_path = dir + "/bench.db";
  config.coordinator.lease_duration = absl::Seconds(600);
  config.coordinator.limits.max_trials = 1000000;
  config.profile_sql = absl::GetFlag(FLAGS_profile_sql);
  const int tabs = absl::GetFlag(FLAGS_dashboard_tabs);
  const bool history = absl::StrContains(absl::GetFlag(FLAGS_runs), "history");
  if (tabs > 0 || history) {
    config.http_listen = "127.0.0.1:0";
    config.http_static_dir = QKOV_DASHBOARD_DIR;
  }
  const bool scrape = absl::StrContains(absl::GetFlag(FLAGS_runs), "scrape");
  if (scrape) config.metrics_listen = "127.0.0.1:0";
  auto server = qkov::service::QkovServer::Start(config);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().ToString().c_str());
    return 1;
  }
  // For a run that cannot give a true number: no number, exit status 2.
  auto stop_early = [&server, &dir]() {
    (*server)->Shutdown();
    std::system(("rm -rf " + dir).c_str());
    return 2;
  };
  const std::string address = absl::StrCat("127.0.0.1:", (*server)->port());
  auto client = v1::SweepService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  std::printf(
      "coordinator_bench: %d simulated workers, %u hardware threads, db %s\n",
      n_workers, std::thread::hardware_concurrency(), config.db_path.c_str());

  // 1. Submit a large grid.
  {
    grpc::ClientContext ctx;
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = Spec("big", absl::GetFlag(FLAGS_trials));
    v1::SubmitSweepResponse resp;
    const auto t0 = Clock::now();
    grpc::Status s = client->SubmitSweep(&ctx, req, &resp);
    const double dt = Since(t0);
    if (!s.ok()) {
      std::fprintf(stderr, "submit: %s\n", s.error_message().c_str());
      return 1;
    }
    std::printf("submit      %lld trials in %.3f s\n",
                static_cast<long long>(resp.trials_added()), dt);
  }
  {
    grpc::ClientContext ctx;
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = Spec("big", 3 * absl::GetFlag(FLAGS_trials));
    v1::SubmitSweepResponse resp;
    if (!client->SubmitSweep(&ctx, req, &resp).ok()) std::abort();
  }

  if (history) {
    qkov::bench::HistoryOptions h;
    h.address = address;
    h.http_port = (*server)->http_port();
    h.workers = absl::GetFlag(FLAGS_history_workers);
    h.levels.clear();
    for (const std::string& r : absl::GetFlag(FLAGS_history_rows)) {
      int64_t n = 0;
      if (!absl::SimpleAtoi(r, &n)) {
        std::fprintf(stderr, "--history_rows: '%s' is not a count\n",
                     r.c_str());
        return stop_early();
      }
      h.levels.push_back(n);
    }
    h.settings.clear();
    for (const std::string& w : absl::GetFlag(FLAGS_history_watchers)) {
      std::pair<std::string, std::string> parts = absl::StrSplit(w, ':');
      int watchers = 0, streams = 0;
      if (!absl::SimpleAtoi(parts.first, &watchers) ||
          !absl::SimpleAtoi(parts.second, &streams)) {
        std::fprintf(stderr, "--history_watchers: '%s' is not W:E\n",
                     w.c_str());
        return stop_early();
      }
      h.settings.emplace_back(watchers, streams);
    }
    h.seconds = absl::GetFlag(FLAGS_seconds);
    h.rounds = absl::GetFlag(FLAGS_history_rounds);
    h.report_every_ms = absl::GetFlag(FLAGS_report_every_ms);
    h.delete_points = absl::GetFlag(FLAGS_history_delete_points);
    if (!qkov::bench::HistoryRun(h)) return stop_early();
  }

  // 1b. The same cycle without gRPC: the coordinator and SQLite alone, on
  // one thread and on --workers threads (what the store's one writer allows).
  const std::string runs = absl::GetFlag(FLAGS_runs);
  auto wanted = [&runs](const char* run) {
    for (absl::string_view r : absl::StrSplit(runs, ','))
      if (r == run) return true;
    return false;
  };
  const std::pair<int, int> direct_runs[] = {
      {1, 1}, {absl::GetFlag(FLAGS_workers), 1}, {1, 8}};
  for (const auto& run : direct_runs) {
    // Named copies: lambdas may not capture structured bindings in C++17.
    const int threads = run.first;
    const int batch = run.second;
    if (!wanted("direct")) break;
    auto store = qkov::storage::ResultsStore::Open(
        absl::StrCat(dir, "/direct", threads, "x", batch, ".db"));
    qkov::core::Coordinator core(store->get(), qkov::Clock::Real(),
                                 config.coordinator);
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = Spec("direct", 40000);
    if (!core.sweeps().SubmitSweep(req).ok()) std::abort();
    std::atomic<int64_t> cycles{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> pool;
    const auto t0 = Clock::now();
    for (int k = 0; k < threads; ++k) {
      pool.emplace_back([&, k] {
        v1::RegisterWorkerRequest reg;
        reg.set_name(absl::StrCat("direct-", k));
        Worker w;
        auto registered = core.workers().RegisterWorker(reg);
        w.id = registered->worker_id();
        w.key = registered->worker_key();
        v1::LeaseTrialRequest lr;
        lr.set_worker_id(w.id);
        lr.set_worker_key(w.key);
        lr.set_max_trials(batch);
        auto lease = core.workers().LeaseTrial(lr);
        while (!stop && lease.ok() &&
               lease->outcome() == v1::LeaseTrialResponse::LEASED) {
          if (batch == 1) {
            v1::CompleteTrialRequest c = Completion(w, lease->lease());
            c.set_lease_next(true);
            auto resp = core.workers().CompleteTrial(c);
            if (!resp.ok()) std::abort();
            *lease = resp->next();
            ++cycles;
            continue;
          }
          v1::CompleteTrialsRequest c;
          c.set_worker_id(w.id);
          c.set_worker_key(w.key);
          c.set_lease_next(batch);
          *c.add_trials() = Completion(w, lease->lease());
          for (const v1::Lease& l : lease->more())
            *c.add_trials() = Completion(w, l);
          auto resp = core.workers().CompleteTrials(c);
          if (!resp.ok()) std::abort();
          *lease = resp->next();
          cycles += c.trials_size();
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(
        std::min(3.0, absl::GetFlag(FLAGS_seconds))));
    stop = true;
    for (auto& t : pool) t.join();
    const auto stats = (*store)->GetWriteStats();
    std::printf(
        "direct      %.0f lease+complete cycles/s on %d thread(s), batches of "
        "%d, no gRPC (%.1f writes per commit)\n",
        cycles / Since(t0), threads, batch,
        static_cast<double>(stats.writes) /
            std::max<int64_t>(1, stats.commits));
  }

  // Dashboard tabs: one thread follows the events, one fetches.
  std::atomic<bool> tabs_stop{false};
  std::atomic<int64_t> tab_fetches{0};
  std::vector<std::unique_ptr<httplib::Client>> tab_clients;
  std::vector<std::thread> tab_threads;
  for (int i = 0; i < tabs; ++i) {
    auto changed = std::make_shared<std::atomic<bool>>(true);
    tab_clients.push_back(
        std::make_unique<httplib::Client>("127.0.0.1", (*server)->http_port()));
    httplib::Client* events = tab_clients.back().get();
    events->set_read_timeout(3600, 0);
    tab_threads.emplace_back([events, changed, &tabs_stop] {
      events->Get("/api/v1/events?sweep=big", [changed, &tabs_stop](
                                                  const char* data, size_t n) {
        if (std::string(data, n).find("event: progress") != std::string::npos)
          *changed = true;
        return !tabs_stop;
      });
    });
    const int port = (*server)->http_port();
    tab_threads.emplace_back([port, changed, &tabs_stop, &tab_fetches] {
      httplib::Client c("127.0.0.1", port);
      c.set_read_timeout(120, 0);
      while (!tabs_stop) {
        if (changed->exchange(false)) {
          for (const char* path :
               {"/api/v1/sweeps/big", "/api/v1/sweeps/big/results?limit=50",
                "/api/v1/sweeps/big/aggregate?by=parameterization,lr_ratio&"
                "metric=distinct_attention",
                "/api/v1/sweeps/big/curves?metric=train_loss&limit=100",
                "/api/v1/sweeps/big/heatmaps"}) {
            c.Get(path);
            ++tab_fetches;
          }
        }
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    });
  }
  if (tabs > 0) {
    // An open page has drawn once: wait for each tab's first five calls.
    const auto t0 = Clock::now();
    while (tab_fetches < 5 * tabs)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::printf(
        "dashboard   %d sweep page(s) open during the runs below (first "
        "draw of all: %.1f s)\n",
        tabs, Since(t0));
  }

  std::vector<Worker> workers;
  for (int i = 0; i < n_workers; ++i) workers.push_back(Connect(address, i));
  const double seconds = absl::GetFlag(FLAGS_seconds);

  // 2. Lease + complete cycles, one trial per RPC, then (2b) batches of 8
  // (what qkov-worker --batch_trials=8 does).
  if (wanted("cycles")) {
    const Timed r = RunWorkers(workers, seconds, (*server)->store(),
                               [](Worker& w, const std::atomic<bool>& stop) {
                                 return WorkLoop(w, 0, stop);
                               });
    if (r.dry > 0) {
      ReportDry("cycles", r);
      return stop_early();
    }
    std::printf(
        "cycles      %.0f lease+complete cycles/s (%lld in %.1f s; the lease "
        "rides on the completion; %.1f writes per commit, writer busy "
        "%.0f%% of the time, process CPU %.0f us per cycle)\n",
        r.done / r.seconds, static_cast<long long>(r.done), r.seconds,
        static_cast<double>(r.writes.writes) /
            std::max<int64_t>(1, r.writes.commits),
        100.0 * r.writes.busy_ns / (r.seconds * 1e9),
        1e6 * r.cpu_seconds / std::max<int64_t>(1, r.done));
  }
  if (wanted("batched")) {
    constexpr int kBatch = 8;
    const Timed r = RunWorkers(workers, seconds, (*server)->store(),
                               [](Worker& w, const std::atomic<bool>& stop) {
                                 return BatchLoop(w, kBatch, stop);
                               });
    if (r.dry > 0) {
      ReportDry("batched", r);
      return stop_early();
    }
    std::printf(
        "batched     %.0f lease+complete cycles/s in batches of %d (%lld "
        "trials in %.1f s; one CompleteTrials per batch brings the next; "
        "writer busy %.0f%% of the time, process CPU %.0f us per trial)\n",
        r.done / r.seconds, kBatch, static_cast<long long>(r.done), r.seconds,
        100.0 * r.writes.busy_ns / (r.seconds * 1e9),
        1e6 * r.cpu_seconds / std::max<int64_t>(1, r.done));
  }

  // 2c. Cycles with and without a scrape of /metrics every second,
  // interleaved so that drift in the machine or the database falls on both.
  if (scrape) {
    const int rounds = absl::GetFlag(FLAGS_scrape_rounds);
    double rate[2] = {0, 0};
    std::vector<double> scrape_ms;
    size_t scrape_bytes = 0;
    for (int round = 0; round < 2 * rounds; ++round) {
      const bool with = round % 2 == 1;
      std::atomic<bool> stop_scraper{false};
      std::thread scraper;
      if (with) {
        scraper = std::thread([&] {
          httplib::Client c("127.0.0.1", (*server)->metrics_port());
          while (!stop_scraper.load()) {
            const auto t0 = std::chrono::steady_clock::now();
            httplib::Result r = c.Get("/metrics");
            const double ms = std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - t0)
                                  .count();
            if (r && r->status == 200) {
              scrape_ms.push_back(ms);
              scrape_bytes = r->body.size();
            }
            for (int i = 0; i < 100 && !stop_scraper.load(); ++i)
              std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
        });
      }
      const Timed r = RunWorkers(workers, seconds / 2, (*server)->store(),
                                 [](Worker& w, const std::atomic<bool>& stop) {
                                   return WorkLoop(w, 0, stop);
                                 });
      stop_scraper = true;
      if (scraper.joinable()) scraper.join();
      if (r.dry > 0) {
        ReportDry("scrape", r);
        return stop_early();
      }
      rate[with] += r.done / r.seconds / rounds;
      std::printf("scrape      round %d %s: %.0f cycles/s\n", round / 2 + 1,
                  with ? "with a scrape every second" : "without scrapes   ",
                  r.done / r.seconds);
    }
    std::sort(scrape_ms.begin(), scrape_ms.end());
    std::printf(
        "scrape      mean %.0f cycles/s without, %.0f with a scrape every "
        "second (%+.1f%%); %zu scrapes of %zu bytes, median %.1f ms, max %.1f "
        "ms\n",
        rate[0], rate[1], 100.0 * (rate[1] - rate[0]) / rate[0],
        scrape_ms.size(), scrape_bytes,
        scrape_ms.empty() ? 0.0 : scrape_ms[scrape_ms.size() / 2],
        scrape_ms.empty() ? 0.0 : scrape_ms.back());
  }

  // 2c. The same workers sending empty RPCs: what gRPC alone allows.
  if (wanted("rpc")) {
    const Timed r = RunWorkers(workers, seconds, (*server)->store(),
                               [](Worker& w, const std::atomic<bool>& stop) {
                                 return EmptyRpcLoop(w, stop);
                               });
    std::printf(
        "rpc         %.0f empty RPCs/s (gRPC health check: no store, %lld in "
        "%.1f s; process CPU %.0f us per RPC)\n",
        r.done / r.seconds, static_cast<long long>(r.done), r.seconds,
        1e6 * r.cpu_seconds / std::max<int64_t>(1, r.done));
  }

  // 3. Metric ingest: every worker needs one queued trial to report on.
  if (wanted("ingest")) {
    grpc::ClientContext ctx;
    v1::GetSweepRequest get;
    get.set_name("big");
    v1::Sweep big;
    int64_t queued = 0;
    if (client->GetSweep(&ctx, get, &big).ok()) {
      for (const auto& c : big.counts()) {
        if (c.state() == v1::QUEUED) queued = c.count();
      }
    }
    if (queued < n_workers) {
      std::fprintf(stderr,
                   "ingest: %lld trials left for %d workers; raise --trials or "
                   "lower --seconds\n",
                   static_cast<long long>(queued), n_workers);
      return stop_early();
    }
  }
  if (wanted("ingest")) {
    const int batch = absl::GetFlag(FLAGS_batch);
    std::atomic<int64_t> points{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    const auto t0 = Clock::now();
    for (auto& w : workers) {
      threads.emplace_back([&]() {
        v1::Lease lease;
        if (!Lease(w, &lease)) return;  // checked above: one per worker
        int64_t step = 0;
        const char* names[] = {
            "train_loss",   "train_accuracy", "distinct_attention",
            "separability", "qk_norm",        "ov_norm",
            "lr_qk",        "lr_ov"};
        while (!stop) {
          v1::ReportMetricsRequest req;
          req.set_worker_id(w.id);
          req.set_worker_key(w.key);
          req.set_trial_id(lease.trial_id());
          req.set_attempt(lease.attempt());
          for (int i = 0; i < batch; ++i) {
            auto* p = req.add_points();
            p->set_step(step + i / 8);
            p->set_name(names[i % 8]);
            p->set_value(0.25);
          }
          step += batch / 8;
          grpc::ClientContext ctx;
          v1::ReportMetricsResponse resp;
          if (!w.stub->ReportMetrics(&ctx, req, &resp).ok()) std::abort();
          points += batch;
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto& t : threads) t.join();
    const double dt = Since(t0);
    std::printf(
        "ingest      %.0f metric points/s (batches of %d, %lld points in %.1f "
        "s)\n",
        points / dt, batch, static_cast<long long>(points.load()), dt);
  }

  // 4. Scheduling overhead on fake trials.
  if (wanted("overhead")) {
    const int n = absl::GetFlag(FLAGS_overhead_trials);
    const int trial_ms = absl::GetFlag(FLAGS_trial_ms);
    {
      grpc::ClientContext ctx;
      v1::CancelSweepRequest cancel;
      cancel.set_name("big");
      v1::CancelSweepResponse resp;
      client->CancelSweep(&ctx, cancel, &resp);
    }
    grpc::ClientContext ctx;
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = Spec("overhead", n);
    v1::SubmitSweepResponse resp;
    if (!client->SubmitSweep(&ctx, req, &resp).ok()) std::abort();
    const std::atomic<bool> never{false};
    std::vector<std::thread> threads;
    const auto t0 = Clock::now();
    for (auto& w : workers) {
      threads.emplace_back([&]() { WorkLoop(w, trial_ms, never); });
    }
    for (auto& t : threads) t.join();
    const double makespan = Since(t0);
    const double rounds =
        std::ceil(static_cast<double>(resp.trials_added()) / n_workers);
    const double ideal = rounds * trial_ms / 1000.0;
    const double per_trial_overhead =
        (makespan - ideal) / rounds;  // seconds added per trial per worker
    const double ideal_1s = rounds * 1.0;
    std::printf(
        "overhead    %lld trials of %d ms on %d workers: makespan %.2f s, "
        "ideal %.2f s (+%.2f%%)\n",
        static_cast<long long>(resp.trials_added()), trial_ms, n_workers,
        makespan, ideal, 100 * (makespan - ideal) / ideal);
    std::printf(
        "            carried to 1 s trials: %.1f s against an ideal %.0f s "
        "(+%.3f%%); "
        "Ray Tune's published figure for this shape: 715 s (+14.4%%)\n",
        ideal_1s + per_trial_overhead * rounds, ideal_1s,
        100 * per_trial_overhead);
  }
  {
    struct stat db, wal;
    const std::string path = config.db_path;
    if (stat(path.c_str(), &db) == 0 &&
        stat((path + "-wal").c_str(), &wal) == 0) {
      std::printf(
          "files       database %.0f MB, WAL %.0f MB, %lld background "
          "checkpoints\n",
          db.st_size / 1e6, wal.st_size / 1e6,
          static_cast<long long>(
              (*server)->store()->GetWriteStats().checkpoints));
    }
  }
  if (tabs > 0) {
    tabs_stop = true;
    for (auto& c : tab_clients) c->stop();
    for (auto& t : tab_threads) t.join();
    std::printf("dashboard   %lld page fetches by %d open sweep page(s)\n",
                static_cast<long long>(tab_fetches.load()), tabs);
  }
  if (config.profile_sql) {
    // Whole run, submit included; per run: --runs=<one run>.
    std::printf("sql         statements on the writer, by time spent:\n");
    const auto profile = (*server)->store()->WriterStatementProfile();
    for (size_t i = 0; i < profile.size() && i < 16; ++i) {
      const auto& t = profile[i];
      std::printf("  %7.3f s %9lld runs %8.1f us each  %.70s\n", t.nanos / 1e9,
                  static_cast<long long>(t.runs),
                  t.nanos / 1e3 / std::max<int64_t>(1, t.runs), t.sql.c_str());
    }
  }
  (*server)->Shutdown();
  std::system(("rm -rf " + dir).c_str());
  return 0;
}
