// Property test over hostile input: thousands of sweep specs and
// worker messages, each a valid one with random fields replaced by absurd
// values (NaN, inf, huge, negative, empty, overlong, unknown enums). Nothing
// may crash; every refusal is INVALID_ARGUMENT (or the precise lease code)
// naming the field; the database stays consistent.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "server/core/coordinator.h"

namespace qkov::core {
namespace {

namespace v1 = ::qkov::v1;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

double AbsurdDouble(std::mt19937_64& rng) {
  const double choices[] = {std::nan(""), HUGE_VAL, -HUGE_VAL, -1,  0,
                            1e300,        -1e-300,  1e-320,    0.5, 7};
  return choices[rng() % 10];
}
int64_t AbsurdInt(std::mt19937_64& rng) {
  const int64_t choices[] = {-1,
                             0,
                             1,
                             2,
                             7,
                             std::numeric_limits<int32_t>::max(),
                             std::numeric_limits<int32_t>::min(),
                             1000000,
                             -1000000000,
                             3};
  return choices[rng() % 10];
}
std::string AbsurdString(std::mt19937_64& rng) {
  const std::string choices[] = {
      "",  std::string(5000, 'x'), "bad name!", "\xff\xfe", "ok-name", "a/b",
      "\n"};
  return choices[rng() % 7];
}

// Replaces one randomly chosen (possibly nested) field with an absurd value.
void Mutate(Message* m, std::mt19937_64& rng, int depth = 0) {
  const auto* d = m->GetDescriptor();
  const Reflection* r = m->GetReflection();
  const FieldDescriptor* f =
      d->field(static_cast<int>(rng() % d->field_count()));
  if (f->is_repeated()) {
    if (rng() % 3 == 0) {
      r->ClearField(m, f);
      return;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE:
        r->AddDouble(m, f, AbsurdDouble(rng));
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        r->AddUInt64(m, f, rng());
        break;
      case FieldDescriptor::CPPTYPE_INT32:
        r->AddInt32(m, f, static_cast<int32_t>(AbsurdInt(rng)));
        break;
      case FieldDescriptor::CPPTYPE_ENUM:
        r->AddEnumValue(m, f, static_cast<int>(AbsurdInt(rng) % 9));
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        r->AddString(m, f, AbsurdString(rng));
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        Mutate(r->AddMessage(m, f), rng, depth + 1);
        break;
      default:
        break;
    }
    return;
  }
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      r->SetDouble(m, f, AbsurdDouble(rng));
      break;
    case FieldDescriptor::CPPTYPE_INT32:
      r->SetInt32(m, f, static_cast<int32_t>(AbsurdInt(rng)));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      r->SetInt64(m, f, AbsurdInt(rng));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      r->SetUInt64(m, f, rng());
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      r->SetBool(m, f, rng() % 2);
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      r->SetEnumValue(m, f, static_cast<int>(AbsurdInt(rng) % 9));
      break;
    case FieldDescriptor::CPPTYPE_STRING:
      r->SetString(m, f, AbsurdString(rng));
      break;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      if (depth < 4) Mutate(r->MutableMessage(m, f), rng, depth + 1);
      break;
    default:
      break;
  }
}

class FuzzTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qkov-fuzz-XXXXXX";
    dir_ = mkdtemp(tmpl);
    store_ = std::move(*storage::ResultsStore::Open(dir_ + "/r.db"));
    CoordinatorOptions o;
    o.limits.max_trials = 5000;
    o.max_points_per_report = 1000;
    core_ = std::make_unique<Coordinator>(store_.get(), &clock_, o);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  static v1::SweepSpec Valid(int i) {
    v1::SweepSpec s;
    s.set_name("fuzz-" + std::to_string(i));
    s.mutable_axes()->add_parameterizations(v1::FAFO);
    s.mutable_axes()->add_lr_ratios(1);
    s.mutable_axes()->add_eta_ovs(0.1);
    s.mutable_axes()->add_seeds(1);
    return s;
  }

  std::string dir_;
  FakeClock clock_;
  std::unique_ptr<storage::ResultsStore> store_;
  std::unique_ptr<Coordinator> core_;
};

TEST_F(FuzzTest, HostileSweepSpecsAreRefusedPrecisely) {
  std::mt19937_64 rng(2026);
  int accepted = 0, refused = 0;
  for (int i = 0; i < 3000; ++i) {
    v1::SubmitSweepRequest req;
    *req.mutable_spec() = Valid(i);
    const int mutations = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < mutations; ++k) Mutate(req.mutable_spec(), rng);
    auto resp = core_->sweeps().SubmitSweep(req);
    if (resp.ok()) {
      ++accepted;
      const auto& a = req.spec().axes();
      EXPECT_EQ(resp->trials_added() + resp->trials_existing(),
                a.parameterizations_size() * a.lr_ratios_size() *
                    a.eta_ovs_size() * a.seeds_size());
    } else {
      ++refused;
      ASSERT_EQ(resp.status().code(), absl::StatusCode::kInvalidArgument)
          << resp.status();
      EXPECT_EQ(resp.status().message().rfind("spec.", 0), 0u) << resp.status();
    }
  }
  EXPECT_GT(accepted, 100);
  EXPECT_GT(refused, 1000);
  EXPECT_TRUE(*store_->IntegrityOk());
}

TEST_F(FuzzTest, HostileWorkerMessagesNeverCorruptTheStore) {
  v1::SubmitSweepRequest req;
  *req.mutable_spec() = Valid(0);
  req.mutable_spec()->mutable_axes()->add_seeds(2);
  req.mutable_spec()->mutable_axes()->add_seeds(3);
  ASSERT_TRUE(core_->sweeps().SubmitSweep(req).ok());
  v1::RegisterWorkerRequest reg;
  reg.set_name("w");
  const auto registered = core_->workers().RegisterWorker(reg);
  ASSERT_TRUE(registered.ok()) << registered.status();
  const std::string worker = registered->worker_id();
  const std::string key = registered->worker_key();
  v1::LeaseTrialRequest lr;
  lr.set_worker_id(worker);
  lr.set_worker_key(key);
  auto lease = core_->workers().LeaseTrial(lr);
  ASSERT_EQ(lease->outcome(), v1::LeaseTrialResponse::LEASED);

  std::mt19937_64 rng(7);
  const std::set<absl::StatusCode> allowed = {
      absl::StatusCode::kOk, absl::StatusCode::kInvalidArgument,
      absl::StatusCode::kNotFound, absl::StatusCode::kFailedPrecondition,
      absl::StatusCode::kPermissionDenied};
  for (int i = 0; i < 3000; ++i) {
    v1::ReportMetricsRequest report;
    report.set_worker_id(worker);
    report.set_worker_key(key);
    report.set_trial_id(lease->lease().trial_id());
    report.set_attempt(lease->lease().attempt());
    auto* p = report.add_points();
    p->set_step(i);
    p->set_name("train_loss");
    p->set_value(0.5);
    v1::CompleteTrialRequest complete;
    complete.set_worker_id(worker);
    complete.set_worker_key(key);
    complete.set_trial_id(lease->lease().trial_id());
    complete.set_attempt(lease->lease().attempt());
    (*complete.mutable_results())["accuracy"] = 1;
    v1::FailTrialRequest fail;
    fail.set_worker_id(worker);
    fail.set_worker_key(key);
    fail.set_trial_id(lease->lease().trial_id());
    fail.set_attempt(lease->lease().attempt());
    v1::HeartbeatRequest hb;
    hb.set_worker_id(worker);
    hb.set_worker_key(key);
    auto* ref = hb.add_leases();
    ref->set_trial_id(lease->lease().trial_id());
    ref->set_attempt(lease->lease().attempt());
    v1::CompleteTrialsRequest batch;
    batch.set_worker_id(worker);
    batch.set_worker_key(key);
    *batch.add_trials() = complete;
    batch.set_lease_next(1);
    absl::Status s;
    switch (rng() % 5) {
      case 0:
        Mutate(&report, rng);
        Mutate(&report, rng);
        s = core_->workers().ReportMetrics(report).status();
        break;
      case 1:
        Mutate(&complete, rng);
        Mutate(&complete, rng);
        s = core_->workers().CompleteTrial(complete).status();
        break;
      case 4:
        Mutate(&batch, rng);
        Mutate(&batch, rng);
        s = core_->workers().CompleteTrials(batch).status();
        break;
      case 2:
        Mutate(&fail, rng);
        Mutate(&fail, rng);
        s = core_->workers().FailTrial(fail).status();
        break;
      default:
        Mutate(&hb, rng);
        s = core_->workers().Heartbeat(hb).status();
        break;
    }
    ASSERT_TRUE(allowed.count(s.code())) << s;
    if (!s.ok()) {
      EXPECT_FALSE(s.message().empty());
    }
    // Keep a live lease around so that valid-looking calls reach the store.
    if (rng() % 50 == 0) {
      auto l = core_->workers().LeaseTrial(lr);
      if (l.ok() && l->outcome() == v1::LeaseTrialResponse::LEASED) lease = l;
    }
  }
  EXPECT_TRUE(*store_->IntegrityOk());
  // The state machine held: no trial is done twice, every done trial has
  // results.
  auto rows = store_->trials().TrialsWithResults("fuzz-0");
  ASSERT_TRUE(rows.ok());
  for (const auto& t : *rows) {
    if (t.state == "done") {
      EXPECT_FALSE(t.results.empty()) << t.trial_id;
    }
  }
}

}  // namespace
}  // namespace qkov::core
