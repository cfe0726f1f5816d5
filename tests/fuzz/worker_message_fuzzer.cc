// Each worker message as the server handles it: the input's first byte
// picks the call (RegisterWorker, LeaseTrial, Heartbeat, ReportMetrics,
// CompleteTrial, CompleteTrials, FailTrial), the rest is the request's
// protobuf bytes as they arrive off the wire, handed to a Coordinator on a
// real SQLite file holding a sweep with a live lease. An empty worker id,
// key, trial or attempt is filled with the live lease's, so most inputs get
// past identity to the checks behind it. Properties: no crash, no leak;
// every refusal is one of the codes a worker must handle, with a message;
// the database passes its integrity check every 512 inputs.
#include <set>

#include "common/clock.h"
#include "server/core/coordinator.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/fuzz_sweep.h"

namespace v1 = ::qkov::v1;

namespace {

struct Fixture {
  qkov::FakeClock clock;
  std::unique_ptr<qkov::storage::ResultsStore> store;
  std::unique_ptr<qkov::core::Coordinator> core;
  std::string worker, key;
  std::string trial;
  int64_t attempt = 0;
  int64_t calls = 0;

  Fixture() {
    store = std::move(
        *qkov::storage::ResultsStore::Open(qkov::fuzz::ScratchDir() + "/w.db"));
    qkov::core::CoordinatorOptions o;
    o.max_points_per_report = 1000;
    core = std::make_unique<qkov::core::Coordinator>(store.get(), &clock, o);
    qkov::fuzz::SubmitFuzzSweep(core.get(), 8);
    v1::RegisterWorkerRequest reg;
    reg.set_name("fuzz-worker");
    auto r = core->workers().RegisterWorker(reg);
    if (!r.ok()) std::abort();
    worker = r->worker_id();
    key = r->worker_key();
    Lease();
  }

  // Keeps a lease live (expired or finished ones are requeued by time).
  void Lease() {
    clock.Advance(absl::Minutes(5));
    v1::LeaseTrialRequest lr;
    lr.set_worker_id(worker);
    lr.set_worker_key(key);
    auto l = core->workers().LeaseTrial(lr);
    if (l.ok() && l->outcome() == v1::LeaseTrialResponse::LEASED) {
      trial = l->lease().trial_id();
      attempt = l->lease().attempt();
    }
  }

  template <typename M>
  void Fill(M* m) {
    if (m->worker_id().empty()) m->set_worker_id(worker);
    if (m->worker_key().empty()) m->set_worker_key(key);
  }
  template <typename M>
  void FillLease(M* m) {
    Fill(m);
    if (m->trial_id().empty()) m->set_trial_id(trial);
    if (m->attempt() == 0) m->set_attempt(attempt);
  }
};

template <typename M>
bool Parse(const uint8_t* data, size_t size, M* m) {
  return m->ParseFromArray(data, static_cast<int>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* f = new Fixture;
  if (size < 1) return 0;
  const int which = data[0] % 7;
  ++data;
  --size;
  absl::Status s;
  switch (which) {
    case 0: {
      v1::RegisterWorkerRequest m;
      if (!Parse(data, size, &m)) return 0;
      s = f->core->workers().RegisterWorker(m).status();
      break;
    }
    case 1: {
      v1::LeaseTrialRequest m;
      if (!Parse(data, size, &m)) return 0;
      f->Fill(&m);
      s = f->core->workers().LeaseTrial(m).status();
      break;
    }
    case 2: {
      v1::HeartbeatRequest m;
      if (!Parse(data, size, &m)) return 0;
      f->Fill(&m);
      s = f->core->workers().Heartbeat(m).status();
      break;
    }
    case 3: {
      v1::ReportMetricsRequest m;
      if (!Parse(data, size, &m)) return 0;
      f->FillLease(&m);
      s = f->core->workers().ReportMetrics(m).status();
      break;
    }
    case 4: {
      v1::CompleteTrialRequest m;
      if (!Parse(data, size, &m)) return 0;
      f->FillLease(&m);
      s = f->core->workers().CompleteTrial(m).status();
      break;
    }
    case 5: {
      v1::CompleteTrialsRequest m;
      if (!Parse(data, size, &m)) return 0;
      f->Fill(&m);
      for (auto& t : *m.mutable_trials()) f->FillLease(&t);
      s = f->core->workers().CompleteTrials(m).status();
      break;
    }
    default: {
      v1::FailTrialRequest m;
      if (!Parse(data, size, &m)) return 0;
      f->FillLease(&m);
      s = f->core->workers().FailTrial(m).status();
      break;
    }
  }
  static const std::set<absl::StatusCode> kAllowed = {
      absl::StatusCode::kOk,
      absl::StatusCode::kInvalidArgument,
      absl::StatusCode::kNotFound,
      absl::StatusCode::kFailedPrecondition,
      absl::StatusCode::kPermissionDenied,
      absl::StatusCode::kResourceExhausted,
      absl::StatusCode::kAborted};
  QKOV_FUZZ_CHECK(kAllowed.count(s.code()) > 0, s.ToString());
  QKOV_FUZZ_CHECK(s.ok() || !s.message().empty(), "empty refusal");
  if (++f->calls % 64 == 0) f->Lease();
  if (f->calls % 512 == 0) {
    auto ok = f->store->IntegrityOk();
    QKOV_FUZZ_CHECK(ok.ok() && *ok, "integrity check failed");
  }
  return 0;
}
