#include "bench/simulated_workers.h"

#include <grpcpp/impl/client_unary_call.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace qkov::bench {

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

v1::SweepSpec Spec(const std::string& name, int trials) {
  v1::SweepSpec s;
  s.set_name(name);
  for (auto p : {v1::FAFO, v1::FACO, v1::CAFO, v1::CACO})
    s.mutable_axes()->add_parameterizations(p);
  const int ratios = trials >= 100 ? 25 : 1;
  for (int i = 0; i < ratios; ++i) s.mutable_axes()->add_lr_ratios(1 + i);
  s.mutable_axes()->add_eta_ovs(0.01);
  for (int i = 0; i < trials / (4 * ratios); ++i)
    s.mutable_axes()->add_seeds(i);
  return s;
}

Worker Connect(const std::string& address, int i) {
  grpc::ChannelArguments args;
  args.SetInt("qkov.bench.channel",
              i);  // distinct channels, not one shared connection
  Worker w;
  w.channel = grpc::CreateCustomChannel(
      address, grpc::InsecureChannelCredentials(), args);
  w.stub = v1::WorkerService::NewStub(w.channel);
  grpc::ClientContext ctx;
  v1::RegisterWorkerRequest req;
  req.set_name(absl::StrCat("bench-", i));
  v1::RegisterWorkerResponse resp;
  if (!w.stub->RegisterWorker(&ctx, req, &resp).ok()) std::abort();
  w.id = resp.worker_id();
  w.key = resp.worker_key();
  return w;
}

v1::CompleteTrialRequest Completion(const Worker& w, const v1::Lease& lease) {
  v1::CompleteTrialRequest c;
  c.set_worker_id(w.id);
  c.set_worker_key(w.key);
  c.set_trial_id(lease.trial_id());
  c.set_attempt(lease.attempt());
  c.set_steps(1000);
  for (const char* n :
       {"accuracy", "loss", "gold_probability", "distinct_attention",
        "separability", "ac", "acmc", "comprehensiveness", "sufficiency",
        "top_k", "steps", "converged", "train_loss", "qk_norm", "ov_norm",
        "qk_balancedness", "ov_balancedness"}) {
    (*c.mutable_results())[n] = 0.5;
  }
  for (const char* n : {"train_loss", "accuracy", "loss", "gold_probability",
                        "distinct_attention", "qk_norm", "ov_norm", "lr"}) {
    v1::MetricPoint* p = c.add_final_points();
    p->set_step(1000);
    p->set_name(n);
    p->set_value(0.25);
  }
  v1::Provenance* prov = c.mutable_provenance();
  prov->set_code_version("0.1.0 (git 5226a28)");
  prov->set_torch_version("1.13.0");
  prov->set_grpc_version("1.51.1");
  prov->set_protobuf_version("3.21.12");
  prov->set_compiler("GCC 12.2.0");
  prov->set_device("cpu (batch of 8)");
  prov->set_hostname("node-017");
  prov->set_blas("OpenBLAS 0.3.21 (PRESCOTT)");
  prov->set_torch_threads(1);
  AddDtapHeatmap(&c);
  return c;
}

void AddDtapHeatmap(v1::CompleteTrialRequest* c) {
  v1::Heatmap* h = c->add_heatmaps();
  h->set_name("dtap");
  h->set_x_label("attention to the task-relevant tokens (%)");
  h->set_y_label("gold-token probability (%)");
  for (int i = 0; i <= 5; ++i) {
    h->add_x_edges(i * 0.2);
    h->add_y_edges(i * 0.2);
  }
  for (int i = 0; i < 25; ++i) h->add_values(4);
}

bool Lease(Worker& w, v1::Lease* lease) {
  grpc::ClientContext ctx;
  v1::LeaseTrialRequest req;
  req.set_worker_id(w.id);
  req.set_worker_key(w.key);
  v1::LeaseTrialResponse resp;
  if (!w.stub->LeaseTrial(&ctx, req, &resp).ok()) return false;
  if (resp.outcome() != v1::LeaseTrialResponse::LEASED) return false;
  *lease = resp.lease();
  return true;
}

int64_t WorkLoop(Worker& w, int trial_ms, const std::atomic<bool>& stop) {
  int64_t done = 0;
  v1::Lease lease;
  bool have = Lease(w, &lease);
  while (have && !stop) {
    if (trial_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(trial_ms));
    grpc::ClientContext ctx;
    v1::CompleteTrialRequest req = Completion(w, lease);
    req.set_lease_next(true);
    v1::CompleteTrialResponse resp;
    grpc::Status st = w.stub->CompleteTrial(&ctx, req, &resp);
    if (!st.ok()) {
      std::fprintf(stderr, "complete: %s\n", st.error_message().c_str());
      std::abort();
    }
    ++done;
    have = resp.next().outcome() == v1::LeaseTrialResponse::LEASED;
    if (have) lease = resp.next().lease();
  }
  return done;
}

int64_t BatchLoop(Worker& w, int batch, const std::atomic<bool>& stop) {
  int64_t done = 0;
  v1::LeaseTrialResponse next;
  {
    grpc::ClientContext ctx;
    v1::LeaseTrialRequest req;
    req.set_worker_id(w.id);
    req.set_worker_key(w.key);
    req.set_max_trials(batch);
    if (!w.stub->LeaseTrial(&ctx, req, &next).ok()) return 0;
  }
  while (next.outcome() == v1::LeaseTrialResponse::LEASED && !stop) {
    v1::CompleteTrialsRequest req;
    req.set_worker_id(w.id);
    req.set_worker_key(w.key);
    req.set_lease_next(batch);
    *req.add_trials() = Completion(w, next.lease());
    for (const v1::Lease& l : next.more()) *req.add_trials() = Completion(w, l);
    grpc::ClientContext ctx;
    v1::CompleteTrialsResponse resp;
    grpc::Status st = w.stub->CompleteTrials(&ctx, req, &resp);
    if (!st.ok()) {
      std::fprintf(stderr, "complete batch: %s\n", st.error_message().c_str());
      std::abort();
    }
    done += req.trials_size();
    next = resp.next();
  }
  return done;
}

int64_t EmptyRpcLoop(Worker& w, const std::atomic<bool>& stop) {
  const grpc::internal::RpcMethod method("/grpc.health.v1.Health/Check",
                                         grpc::internal::RpcMethod::NORMAL_RPC);
  grpc::Slice empty("");  // an empty HealthCheckRequest (service "")
  const grpc::ByteBuffer request(&empty, 1);
  int64_t calls = 0;
  while (!stop) {
    grpc::ClientContext ctx;
    grpc::ByteBuffer response;
    if (!grpc::internal::BlockingUnaryCall(w.channel.get(), method, &ctx,
                                           request, &response)
             .ok())
      std::abort();
    ++calls;
  }
  return calls;
}

double ProcessCpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void ReportDry(const char* run, const Timed& r) {
  std::fprintf(stderr,
               "%s: %d workers ran out of queued trials before the end (%lld "
               "done); raise --trials or lower --seconds\n",
               run, r.dry, static_cast<long long>(r.done));
}

}  // namespace qkov::bench
