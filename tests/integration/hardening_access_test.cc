// Who may act as whom, tried against a real qkov-server with real tokens
// (tests/integration/hardening_fixture.h): a worker acting as another, a
// user changing another's sweep, reflection without a token; each refusal
// precise, the server up, the database intact.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "qkov/v1/sweep.grpc.pb.h"
#include "qkov/v1/worker.grpc.pb.h"
#include "tests/integration/hardening_fixture.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

TEST_F(HardeningTest, AWorkerCannotActAsAnother) {
  auto server = StartServer({"--lease_seconds=60"});
  auto channel = Channel(*server);
  auto workers = v1::WorkerService::NewStub(channel);
  ASSERT_EQ(
      Qkov(*server, "alice", {"submit", dir_.File("sweep.yaml")}).exit_code, 0);
  v1::RegisterWorkerRequest reg;
  reg.set_name("a");
  v1::RegisterWorkerResponse a, b;
  ASSERT_TRUE(workers->RegisterWorker(Context(kFarm).get(), reg, &a).ok());
  reg.set_name("b");
  ASSERT_TRUE(workers->RegisterWorker(Context(kFarm2).get(), reg, &b).ok());
  EXPECT_EQ(a.worker_key().size(), 64u);
  v1::LeaseTrialRequest lr;
  lr.set_worker_id(a.worker_id());
  lr.set_worker_key(a.worker_key());
  v1::LeaseTrialResponse lease;
  ASSERT_TRUE(workers->LeaseTrial(Context(kFarm).get(), lr, &lease).ok());
  ASSERT_EQ(lease.outcome(), v1::LeaseTrialResponse::LEASED);
  const std::string trial = lease.lease().trial_id();
  const int attempt = lease.lease().attempt();

  struct Who {
    std::string label, token, worker_id, key;
  };
  const std::vector<Who> impostors = {
      {"b as itself", kFarm2, b.worker_id(), b.worker_key()},
      {"b forging a's id", kFarm2, a.worker_id(), b.worker_key()},
      {"a's id, a's token, no key", kFarm, a.worker_id(), ""},
      {"a's id, a's token, b's key", kFarm, a.worker_id(), b.worker_key()},
      {"a's id and key, b's token", kFarm2, a.worker_id(), a.worker_key()},
  };
  for (const Who& w : impostors) {
    v1::ReportMetricsRequest m;
    m.set_worker_id(w.worker_id);
    m.set_worker_key(w.key);
    m.set_trial_id(trial);
    m.set_attempt(attempt);
    auto* p = m.add_points();
    p->set_step(1);
    p->set_name("train_loss");
    p->set_value(123);
    v1::ReportMetricsResponse mr;
    grpc::Status s = workers->ReportMetrics(Context(w.token).get(), m, &mr);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << w.label << ": " << s.error_message();

    v1::CompleteTrialRequest c;
    c.set_worker_id(w.worker_id);
    c.set_worker_key(w.key);
    c.set_trial_id(trial);
    c.set_attempt(attempt);
    (*c.mutable_results())["accuracy"] = 0;
    v1::CompleteTrialResponse cr;
    s = workers->CompleteTrial(Context(w.token).get(), c, &cr);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << w.label << ": " << s.error_message();

    v1::FailTrialRequest f;
    f.set_worker_id(w.worker_id);
    f.set_worker_key(w.key);
    f.set_trial_id(trial);
    f.set_attempt(attempt);
    f.set_reason("forged");
    v1::FailTrialResponse fr;
    s = workers->FailTrial(Context(w.token).get(), f, &fr);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << w.label << ": " << s.error_message();

    v1::HeartbeatRequest h;
    h.set_worker_id(w.worker_id);
    h.set_worker_key(w.key);
    auto* ref = h.add_leases();
    ref->set_trial_id(trial);
    ref->set_attempt(attempt);
    v1::HeartbeatResponse hr;
    s = workers->Heartbeat(Context(w.token).get(), h, &hr);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED)
        << w.label << ": " << s.error_message();
  }
  // Nothing of theirs is stored; the trial is still a's, which completes it.
  EXPECT_EQ(QueryInt(server->db_path(), "SELECT COUNT(*) FROM metrics"), 0);
  EXPECT_EQ(QueryInt(server->db_path(), "SELECT COUNT(*) FROM results"), 0);
  EXPECT_EQ(QueryRows(server->db_path(),
                      "SELECT state, attempts FROM trials WHERE trial_id = '" +
                          trial + "'")[0],
            (std::vector<std::string>{"running", "1"}));
  v1::CompleteTrialRequest c;
  c.set_worker_id(a.worker_id());
  c.set_worker_key(a.worker_key());
  c.set_trial_id(trial);
  c.set_attempt(attempt);
  c.set_steps(300);
  (*c.mutable_results())["accuracy"] = 1;
  v1::CompleteTrialResponse cr;
  grpc::Status s = workers->CompleteTrial(Context(kFarm).get(), c, &cr);
  EXPECT_TRUE(s.ok()) << s.error_message();

  // Completion fields are validated.
  v1::LeaseTrialResponse second;
  ASSERT_TRUE(workers->LeaseTrial(Context(kFarm).get(), lr, &second).ok());
  ASSERT_EQ(second.outcome(), v1::LeaseTrialResponse::LEASED);
  c.set_trial_id(second.lease().trial_id());
  c.set_attempt(second.lease().attempt());
  c.set_steps(-5);
  s = workers->CompleteTrial(Context(kFarm).get(), c, &cr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("steps: must be >= 0"), std::string::npos)
      << s.error_message();
  c.set_steps(300);
  (*c.mutable_results())["accuracy"] = std::nan("");
  s = workers->CompleteTrial(Context(kFarm).get(), c, &cr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("did not diverge"), std::string::npos)
      << s.error_message();
  c.mutable_provenance()->set_hostname(std::string(10 << 20, 'h'));
  (*c.mutable_results())["accuracy"] = 1;
  s = workers->CompleteTrial(Context(kFarm).get(), c, &cr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("provenance.hostname"), std::string::npos)
      << s.error_message();
  c.mutable_provenance()->set_hostname("node");
  for (int i = 0; i < 17; ++i)
    (*c.mutable_provenance()->mutable_input_sha256())[absl::StrCat("f", i)] =
        "0";
  s = workers->CompleteTrial(Context(kFarm).get(), c, &cr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("provenance.input_sha256: 17 files"),
            std::string::npos)
      << s.error_message();
  c.mutable_provenance()->clear_input_sha256();
  (*c.mutable_provenance()->mutable_input_sha256())["text.train"] =
      std::string(1 << 20, 'x');
  s = workers->CompleteTrial(Context(kFarm).get(), c, &cr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("provenance.input_sha256"),
            std::string::npos)
      << s.error_message();
  EXPECT_EQ(QueryInt(server->db_path(),
                     "SELECT COUNT(*) FROM trials WHERE state = 'done'"),
            1);
}

TEST_F(HardeningTest, OnlyTheOwnerOrAnAdminChangesASweep) {
  auto server = StartServer();
  CommandResult r = Qkov(*server, "alice", {"submit", dir_.File("sweep.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (std::vector<std::string> cmd :
       {std::vector<std::string>{"cancel", "owned"},
        {"pause", "owned"},
        {"resume", "owned"},
        {"retry", "owned"},
        {"submit", dir_.File("sweep.yaml"), "--set", "axes.seed=[1,2,3]"}}) {
    r = Qkov(*server, "bob", cmd);
    EXPECT_EQ(r.exit_code, 5) << cmd[0] << ": " << r.err;
    EXPECT_NE(r.err.find("permission denied"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("belongs to alice"), std::string::npos) << r.err;
  }
  // Nothing changed.
  EXPECT_EQ(QueryRows(server->db_path(),
                      "SELECT owner, cancelled, paused FROM sweeps")[0],
            (std::vector<std::string>{"alice", "0", "0"}));
  EXPECT_EQ(QueryInt(server->db_path(), "SELECT COUNT(*) FROM trials"), 2);
  r = Qkov(*server, "reader", {"status"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("owner"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("alice"), std::string::npos) << r.out;
  // The owner and an admin may.
  EXPECT_EQ(Qkov(*server, "alice", {"pause", "owned"}).exit_code, 0);
  EXPECT_EQ(Qkov(*server, "root", {"resume", "owned"}).exit_code, 0);
  r = Qkov(*server, "root",
           {"submit", dir_.File("sweep.yaml"), "--set", "axes.seed=[1,2,3]"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Qkov(*server, "root", {"cancel", "owned"}).exit_code, 0);
  EXPECT_EQ(
      QueryRows(server->db_path(), "SELECT owner, cancelled FROM sweeps")[0],
      (std::vector<std::string>{"alice", "1"}));
  // A token line without a name still loads; its holder is named by the
  // token's hash.
  WriteFile(dir_.File("legacy.yaml"),
            std::string(kSweep).replace(6, 5, "oldfmt"));
  r = Qkov(*server, "legacy", {"submit", dir_.File("legacy.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string owner =
      QueryRows(server->db_path(),
                "SELECT owner FROM sweeps WHERE name = 'oldfmt'")[0][0];
  EXPECT_TRUE(absl::StartsWith(owner, "token-")) << owner;
  EXPECT_EQ(owner.size(), 14u) << owner;
}

// One call of a method by its full name, with raw bytes (for services whose
// generated code is not installed: reflection, health).
struct RawReply {
  grpc::Status status;
  std::string bytes;
};
RawReply CallRaw(const std::shared_ptr<grpc::Channel>& channel,
                 const std::string& method, const std::string& request,
                 const std::string& token, bool streaming) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  auto next = [&cq]() {
    void* tag;
    bool ok = false;
    cq.Next(&tag, &ok);
    return ok;
  };
  grpc::Slice slice(request);
  grpc::ByteBuffer req(&slice, 1);
  RawReply out;
  grpc::ByteBuffer resp;
  if (streaming) {
    auto call = stub.PrepareCall(&ctx, method, &cq);
    call->StartCall(reinterpret_cast<void*>(1));
    if (next()) {
      call->Write(req, reinterpret_cast<void*>(2));
      if (next()) {
        call->WritesDone(reinterpret_cast<void*>(3));
        next();
        call->Read(&resp, reinterpret_cast<void*>(4));
        next();
      }
    }
    call->Finish(&out.status, reinterpret_cast<void*>(5));
    next();
  } else {
    auto call = stub.PrepareUnaryCall(&ctx, method, req, &cq);
    call->StartCall();
    call->Finish(&resp, &out.status, reinterpret_cast<void*>(1));
    next();
  }
  std::vector<grpc::Slice> slices;
  if (resp.Dump(&slices).ok()) {
    for (const auto& s : slices)
      out.bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

TEST_F(HardeningTest, ReflectionNeedsATokenHealthDoesNot) {
  auto server = StartServer();
  auto channel = Channel(*server);
  const std::string method =
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";
  const std::string list_services("\x3a\x00", 2);  // list_services: ""
  RawReply anonymous = CallRaw(channel, method, list_services, "", true);
  EXPECT_FALSE(anonymous.status.ok());
  EXPECT_EQ(anonymous.bytes.find("qkov.v1.SweepService"), std::string::npos);
  RawReply wrong =
      CallRaw(channel, method, list_services, "not-a-token-0000000000", true);
  EXPECT_FALSE(wrong.status.ok());
  EXPECT_EQ(wrong.bytes.find("qkov.v1.SweepService"), std::string::npos);
  RawReply reader = CallRaw(channel, method, list_services, kReader, true);
  EXPECT_TRUE(reader.status.ok()) << reader.status.error_message();
  EXPECT_NE(reader.bytes.find("qkov.v1.SweepService"), std::string::npos);
  // Health: SERVING (status = 1) to anyone.
  RawReply health =
      CallRaw(channel, "/grpc.health.v1.Health/Check", "", "", false);
  EXPECT_TRUE(health.status.ok()) << health.status.error_message();
  EXPECT_EQ(health.bytes, std::string("\x08\x01", 2));
}

}  // namespace
}  // namespace qkov::testing
