// The simulated workers of bench/coordinator_bench.cc: each on its own
// gRPC channel to a real qkov-server, leasing and completing trials as
// qkov-worker does (one trial per RPC, or batches), sending empty RPCs, or
// timing all of them together on threads.
#ifndef QKOV_BENCH_SIMULATED_WORKERS_H_
#define QKOV_BENCH_SIMULATED_WORKERS_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "qkov/v1/sweep.pb.h"
#include "qkov/v1/worker.grpc.pb.h"
#include "storage/results_store.h"

namespace qkov::bench {

namespace v1 = ::qkov::v1;
using Clock = std::chrono::steady_clock;

// Seconds since `t`.
double Since(Clock::time_point t);

// A grid of `trials` trials: the four parameterizations x 25 ratios (1 when
// trials < 100) x one rate x seeds.
v1::SweepSpec Spec(const std::string& name, int trials);

struct Worker {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::WorkerService::Stub> stub;
  std::string id;
  std::string key;
};

// Registers worker `i` on its own channel (aborts when the server refuses).
Worker Connect(const std::string& address, int i);

// A realistic completion: what qkov-worker sends for a synthetic trial (its
// 17 results, the DTAP heatmap, provenance, and the last evaluation's points
// not yet reported).
v1::CompleteTrialRequest Completion(const Worker& w, const v1::Lease& lease);

// A 5 x 5 DTAP heatmap of equal cells, as a synthetic trial sends it.
void AddDtapHeatmap(v1::CompleteTrialRequest* c);

// One LeaseTrial; false when no lease came back.
bool Lease(Worker& w, v1::Lease* lease);

// The qkov-worker cycle: lease once, then complete each trial (after
// `trial_ms` of fake work) with the next lease riding on the completion, until
// no lease comes back or `stop` is set. Returns the trials completed.
int64_t WorkLoop(Worker& w, int trial_ms, const std::atomic<bool>& stop);

// The --batch_trials qkov-worker cycle: lease a batch of `batch` trials,
// then complete the whole batch in one CompleteTrials that brings the next
// batch. Returns the trials completed.
int64_t BatchLoop(Worker& w, int batch, const std::atomic<bool>& stop);

// Empty unary RPCs (the server's gRPC health check) until `stop`: the floor
// under any design that sends one RPC per trial. Returns the calls made.
int64_t EmptyRpcLoop(Worker& w, const std::atomic<bool>& stop);

// CPU time of the whole process (server, gRPC and simulated workers).
double ProcessCpuSeconds();

struct Timed {
  double seconds = 0;
  double cpu_seconds = 0;  // process CPU during the run
  int64_t done = 0;        // trials completed
  int dry = 0;             // workers that ran out of trials before the end
  qkov::storage::ResultsStore::WriteStats writes;  // during the run
};

// Runs `loop` on every worker, each on its own thread, for `seconds`.
template <typename Loop>
Timed RunWorkers(std::vector<Worker>& workers, double seconds,
                 qkov::storage::ResultsStore* store, Loop loop) {
  std::atomic<int64_t> done{0};
  std::atomic<int> dry{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  const auto before = store->GetWriteStats();
  const double cpu0 = ProcessCpuSeconds();
  const auto t0 = Clock::now();
  for (auto& w : workers) {
    threads.emplace_back([&]() {
      done += loop(w, stop);
      if (!stop) ++dry;
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  Timed r;
  r.seconds = Since(t0);
  r.cpu_seconds = ProcessCpuSeconds() - cpu0;
  r.done = done;
  r.dry = dry;
  const auto after = store->GetWriteStats();
  r.writes.writes = after.writes - before.writes;
  r.writes.commits = after.commits - before.commits;
  r.writes.busy_ns = after.busy_ns - before.busy_ns;
  return r;
}

// A run whose workers ran out of queued trials measured idle time too: say
// so instead of printing a rate that is too low.
void ReportDry(const char* run, const Timed& r);

}  // namespace qkov::bench

#endif  // QKOV_BENCH_SIMULATED_WORKERS_H_
