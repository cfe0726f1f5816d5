// The service attacked as an outsider with a token would attack it: a real
// qkov-server on loopback, real gRPC stubs with real tokens. Each test tries
// one family of attacks (the SQL console, worker impersonation, other
// users' sweeps, reflection, start-up with bad files, a full disk) and checks
// the precise refusal, that the server stays up and answers within its
// budget, that the database is intact, and that nothing outside it changed.
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
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::qkov::v1;

constexpr char kTokens[] =
    "# role token [name]\n"
    "worker    farm-token-0123456789 farm\n"
    "worker    farm2-token-012345678 farm2\n"
    "user      alice-token-012345678 alice\n"
    "user      bob-token-0123456789a bob\n"
    "admin     root-token-0123456789 root\n"
    "read-only reader-token-01234567 reader\n"
    "user      legacy-token-01234567\n";  // the older format: no name

constexpr char kSweep[] = R"(name: owned
axes: {parameterization: [CACO], lr_ratio: [1], eta_ov: [0.1], seed: [1, 2]}
training: {max_steps: 300, report_every: 100, evaluation: {num_examples: 128}}
)";

class HardeningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(dir_.File("tokens"), kTokens);
    for (const char* who : {"alice", "bob", "root", "reader", "legacy"}) {
      std::string token = std::string(kTokens).substr(
          std::string(kTokens).find(std::string(who) + "-token"), 21);
      WriteFile(dir_.File(std::string(who) + ".token"), token + "\n");
    }
    WriteFile(dir_.File("sweep.yaml"), kSweep);
  }

  std::unique_ptr<ServerUnderTest> StartServer(
      std::vector<std::string> flags = {}) {
    flags.push_back("--token_file=" + dir_.File("tokens"));
    return std::make_unique<ServerUnderTest>(dir_, flags);
  }
  static std::shared_ptr<grpc::Channel> Channel(const ServerUnderTest& s) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(16 << 20);  // as the qkov CLI
    return grpc::CreateCustomChannel(s.address(),
                                     grpc::InsecureChannelCredentials(), args);
  }
  static std::unique_ptr<grpc::ClientContext> Context(
      const std::string& token, absl::Duration deadline = absl::Seconds(10)) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    ctx->set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    return ctx;
  }
  CommandResult Qkov(const ServerUnderTest& s, const std::string& who,
                     std::vector<std::string> args) {
    std::vector<std::string> argv = {
        QKOV_CLI_BIN, "--server=" + s.address(), "--deadline=10",
        "--token_file=" + dir_.File(who + ".token")};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }
  // Peak resident memory of a process, in bytes (VmHWM).
  static int64_t PeakRss(pid_t pid) {
    std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
    std::string line;
    while (std::getline(in, line)) {
      if (absl::StartsWith(line, "VmHWM:")) {
        std::vector<std::string> parts =
            absl::StrSplit(line, ' ', absl::SkipEmpty());
        return std::stoll(parts[1]) * 1024;
      }
    }
    return -1;
  }
  std::vector<std::string> FilesIn(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir))
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  TempDir dir_;
};

constexpr char kReader[] = "reader-token-01234567";
constexpr char kAlice[] = "alice-token-012345678";
constexpr char kBob[] = "bob-token-0123456789a";
constexpr char kRoot[] = "root-token-0123456789";
constexpr char kLegacy[] = "legacy-token-01234567";
constexpr char kFarm[] = "farm-token-0123456789";
constexpr char kFarm2[] = "farm2-token-012345678";

absl::StatusOr<v1::QuerySqlResponse> Sql(
    v1::SweepService::Stub& stub, const std::string& sql,
    absl::Duration deadline = absl::Seconds(10)) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->AddMetadata("authorization", std::string("Bearer ") + kReader);
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  v1::QuerySqlRequest req;
  req.set_sql(sql);
  v1::QuerySqlResponse resp;
  grpc::Status s = stub.QuerySql(ctx.get(), req, &resp);
  if (!s.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                        s.error_message());
  }
  return resp;
}

// The server answers a plain query, fast.
void ExpectServerAnswers(v1::SweepService::Stub& stub) {
  const absl::Time start = absl::Now();
  auto r = Sql(stub, "SELECT count(*) FROM sweeps", absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

TEST_F(HardeningTest, SqlConsoleRefusesEveryEscapeAndStaysUp) {
  auto server = StartServer();
  auto stub = v1::SweepService::NewStub(Channel(*server));
  const std::vector<std::string> before = FilesIn(dir_.path());
  struct Attack {
    std::string sql;
    absl::StatusCode code;
    std::string says;
  };
  const std::vector<Attack> attacks = {
      {"SELECT fts3_tokenizer('simple')", absl::StatusCode::kInvalidArgument,
       "function fts3_tokenizer() is not allowed"},
      {"SELECT fts3_tokenizer('simple', x'4141414141414141')",
       absl::StatusCode::kInvalidArgument, "fts3_tokenizer"},
      {"ATTACH '" + server->db_path() + "' AS a",
       absl::StatusCode::kInvalidArgument, "ATTACH is not allowed"},
      {"ATTACH '" + dir_.File("other.db") + "' AS a",
       absl::StatusCode::kInvalidArgument, "ATTACH is not allowed"},
      {"ATTACH '/etc/passwd' AS a", absl::StatusCode::kInvalidArgument,
       "ATTACH is not allowed"},
      {"PRAGMA query_only = 0", absl::StatusCode::kInvalidArgument,
       "PRAGMA query_only is not allowed"},
      {"PRAGMA writable_schema = 1", absl::StatusCode::kInvalidArgument,
       "PRAGMA writable_schema"},
      {"PRAGMA locking_mode = EXCLUSIVE", absl::StatusCode::kInvalidArgument,
       "PRAGMA locking_mode"},
      {"PRAGMA temp_store_directory = '/tmp'",
       absl::StatusCode::kInvalidArgument, "PRAGMA temp_store_directory"},
      {"BEGIN", absl::StatusCode::kInvalidArgument, "transaction control"},
      {"SELECT zeroblob(500000000)", absl::StatusCode::kInvalidArgument,
       "zeroblob"},
      {"SELECT load_extension('/tmp/evil.so')",
       absl::StatusCode::kInvalidArgument, "load_extension"},
      {"DELETE FROM sweeps", absl::StatusCode::kInvalidArgument, "read-only"},
      {"SELECT * FROM dbstat", absl::StatusCode::kInvalidArgument,
       "reading 'dbstat'"},
  };
  for (const Attack& a : attacks) {
    auto r = Sql(*stub, a.sql);
    ASSERT_FALSE(r.ok()) << a.sql;
    EXPECT_EQ(r.status().code(), a.code) << a.sql << ": " << r.status();
    EXPECT_NE(r.status().message().find(a.says), std::string::npos)
        << a.sql << ": " << r.status();
    ExpectServerAnswers(*stub);
  }
  // The connection state of one request never reaches the next: after a
  // refused BEGIN, a query sees rows committed since.
  ASSERT_EQ(
      Qkov(*server, "alice", {"submit", dir_.File("sweep.yaml")}).exit_code, 0);
  auto n = Sql(*stub, "SELECT count(*) FROM trials");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->rows(0).values(0).int_value(), 2);

  // Blobs and text that is not UTF-8 come back as bytes, not a broken reply.
  auto blob = Sql(*stub, "SELECT x'00ff', CAST(x'ff' AS TEXT), 'ok'");
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_EQ(blob->rows(0).values(0).blob_value(), std::string("\x00\xff", 2));
  EXPECT_EQ(blob->rows(0).values(1).blob_value(), "\xff");
  EXPECT_EQ(blob->rows(0).values(2).text_value(), "ok");

  // A large cross join stops at the result-byte cap, without the server's
  // memory growing with it.
  const int64_t rss_before = PeakRss(server->process().pid());
  auto big =
      Sql(*stub,
          "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM "
          "n WHERE x < 3000), s(t, k) AS (SELECT 'y', 0 UNION ALL "
          "SELECT t || t, k + 1 FROM s WHERE k < 10) "
          "SELECT a.x, b.x, (SELECT t FROM s WHERE k = 10) FROM n a, n b");
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_TRUE(big->truncated());
  EXPECT_EQ(big->truncated_by(), "8388608 bytes");
  const int64_t rss_after = PeakRss(server->process().pid());
  EXPECT_LT(rss_after - rss_before, int64_t{200} << 20)
      << "peak RSS " << rss_before << " -> " << rss_after;
  ExpectServerAnswers(*stub);

  // Runaway queries whose clients give up end with them: four in a row
  // (the console runs at most four at once) leave room for the next query.
  for (int i = 0; i < 4; ++i) {
    auto r = Sql(*stub,
                 "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                 "FROM r) SELECT count(*) FROM r",
                 absl::Milliseconds(300));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded)
        << r.status();
  }
  ExpectServerAnswers(*stub);

  EXPECT_EQ(QueryRows(server->db_path(), "PRAGMA integrity_check")[0][0], "ok");
  // No file appeared beside the database (ATTACH would have created one).
  std::vector<std::string> after = FilesIn(dir_.path());
  for (const std::string& f : before) {
    after.erase(std::remove(after.begin(), after.end(), f), after.end());
  }
  EXPECT_TRUE(after.empty()) << absl::StrJoin(after, ", ");
  EXPECT_FALSE(fs::exists(dir_.File("other.db")));
}

TEST_F(HardeningTest, SigtermEndsRunawayQueriesWithinTheGracePeriod) {
  auto server = StartServer({"--sql_timeout_seconds=3600"});
  auto stub = v1::SweepService::NewStub(Channel(*server));
  // Fill the console with four runaway queries; a fifth being refused shows
  // all four are running. The probes take a slot while they run, so a
  // runaway refused meanwhile asks again, as a client would.
  std::vector<absl::Status> results(4);
  std::vector<std::thread> runners;
  for (int i = 0; i < 4; ++i) {
    runners.emplace_back([&, i] {
      const absl::Time until = absl::Now() + absl::Seconds(30);
      do {
        results[i] = Sql(*stub,
                         "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT "
                         "x + 1 FROM r) SELECT count(*) FROM r",
                         absl::Hours(1))
                         .status();
      } while (absl::IsResourceExhausted(results[i]) && absl::Now() < until);
    });
  }
  const bool full = WaitUntil(
      [&] {
        return Sql(*stub, "SELECT 1").status().code() ==
               absl::StatusCode::kResourceExhausted;
      },
      30);
  EXPECT_TRUE(full);
  const absl::Time start = absl::Now();
  server->process().Signal(SIGTERM);
  const int code = server->process().Wait(30);
  const absl::Duration took = absl::Now() - start;
  for (auto& t : runners) t.join();
  EXPECT_EQ(code, 0);
  // The documented grace period is 5 s; the queries stop at once.
  EXPECT_LT(took, absl::Seconds(6)) << took;
  for (const absl::Status& s : results) {
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
    EXPECT_NE(s.message().find("shutting down"), std::string::npos) << s;
  }
}

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

TEST_F(HardeningTest, HostileStringsArePrintedEscaped) {
  auto server = StartServer();
  auto workers = v1::WorkerService::NewStub(Channel(*server));
  ASSERT_EQ(
      Qkov(*server, "alice", {"submit", dir_.File("sweep.yaml")}).exit_code, 0);
  // A worker name and a failure reason that would clear the screen, set the
  // terminal's title and recolour it.
  v1::RegisterWorkerRequest reg;
  reg.set_name("evil\x1b[2J\x1b]0;owned\x07");
  v1::RegisterWorkerResponse w;
  ASSERT_TRUE(workers->RegisterWorker(Context(kFarm).get(), reg, &w).ok());
  v1::LeaseTrialRequest lr;
  lr.set_worker_id(w.worker_id());
  lr.set_worker_key(w.worker_key());
  v1::LeaseTrialResponse lease;
  ASSERT_TRUE(workers->LeaseTrial(Context(kFarm).get(), lr, &lease).ok());
  ASSERT_EQ(lease.outcome(), v1::LeaseTrialResponse::LEASED);
  v1::FailTrialRequest f;
  f.set_worker_id(w.worker_id());
  f.set_worker_key(w.worker_key());
  f.set_trial_id(lease.lease().trial_id());
  f.set_attempt(lease.lease().attempt());
  f.set_reason(
      "boom\x1b[31m red \xc2\x9b"
      "1m\nfake line");
  v1::FailTrialResponse fr;
  ASSERT_TRUE(workers->FailTrial(Context(kFarm).get(), f, &fr).ok());
  CommandResult r =
      Qkov(*server, "reader", {"trial", lease.lease().trial_id()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x07'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("evil\\x1b[2J"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("boom\\x1b[31m red \\u009b1m\\nfake line"),
            std::string::npos)
      << r.out;
  // Stored as it came: the database keeps the exact bytes.
  EXPECT_EQ(QueryRows(server->db_path(), "SELECT error FROM attempts")[0][0],
            f.reason());
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

TEST_F(HardeningTest, StartupErrorsAreOneLineNamingTheCause) {
  WriteFile(dir_.File("notdb.db"), "this is not a database\n");
  {
    // A real database cut short.
    ServerUnderTest s(dir_);
    s.process().Signal(SIGTERM);
    ASSERT_EQ(s.process().Wait(30), 0);
    std::string bytes = ReadFile(s.db_path());
    ASSERT_GT(bytes.size(), 8192u);
    WriteFile(dir_.File("truncated.db"), bytes.substr(0, 8192 + 100));
  }
  WriteFile(dir_.File("bad.pem"),
            "-----BEGIN CERTIFICATE-----\nnot base64 at all\n"
            "-----END CERTIFICATE-----\n");
  WriteFile(dir_.File("empty.tokens"), "# nothing\n");
  // A port in use: another listener holds it.
  ServerUnderTest holder(dir_);
  struct Case {
    std::vector<std::string> flags;
    int exit_code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--db=" + dir_.File("notdb.db")}, 1, "--db: "},
      {{"--db=" + dir_.File("truncated.db")}, 1, "--db: "},
      {{"--db=" + dir_.File("no/such/dir/x.db")}, 1, "--db: "},
      {{"--db=" + dir_.File("a.db"), "--token_file=" + dir_.File("missing")},
       1,
       "--token_file: cannot read"},
      {{"--db=" + dir_.File("a.db"), "--token_file=" + dir_.path()},
       1,
       "is a directory"},
      {{"--db=" + dir_.File("a.db"),
        "--token_file=" + dir_.File("empty.tokens")},
       1,
       "holds no tokens"},
      {{"--db=" + dir_.File("a.db"), "--tls_cert=" + dir_.File("bad.pem"),
        "--tls_key=" + dir_.File("bad.pem")},
       1,
       "--tls_cert: "},
      {{"--db=" + dir_.File("a.db"), "--tls_cert=" + dir_.File("missing.pem"),
        "--tls_key=" + dir_.File("bad.pem")},
       1,
       "--tls_cert: cannot read"},
      {{"--db=" + dir_.File("a.db"),
        "--listen=127.0.0.1:" + std::to_string(holder.port())},
       1,
       "address already in use"},
      {{"--db=" + dir_.File("a.db"), "--lease_seconds=0"},
       2,
       "--heartbeat_seconds"},
      {{}, 2, "--db is required"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {QKOV_SERVER_BIN};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    CommandResult r = RunCommand(argv, 30);
    const std::string what = absl::StrJoin(c.flags, " ");
    EXPECT_EQ(r.exit_code, c.exit_code) << what << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << "\n"
                                                               << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << what << "\n" << r.err;
  }
  // The files it refused are as they were.
  EXPECT_EQ(ReadFile(dir_.File("notdb.db")), "this is not a database\n");
}

// The database on a small tmpfs that the test fills: workers ride out the
// full disk, and every trial is done once space returns, with the same
// worker processes.
TEST_F(HardeningTest, WorkersRideOutAFullDisk) {
  const std::string disk = dir_.File("disk");
  fs::create_directories(disk);
  if (mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=8m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno)
                 << "); the full-disk test needs root";
  }
  struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{disk};
  const std::string db = disk + "/results.db";
  ServerUnderTest server(
      dir_, {"--db=" + db, "--lease_seconds=300", "--heartbeat_seconds=1",
             "--token_file=" + dir_.File("tokens")});
  WriteFile(dir_.File("worker.token"), std::string(kFarm) + "\n");
  CommandResult r = Qkov(
      server, "alice",
      {"submit", dir_.File("sweep.yaml"), "--set", "axes.seed=[1,2,3,4,5,6]"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Fill what is left of the disk.
  {
    std::ofstream filler(disk + "/filler", std::ios::binary);
    const std::string block(1 << 16, 'x');
    while (filler.write(block.data(), block.size())) {
    }
  }
  std::vector<std::unique_ptr<Process>> workers;
  for (int i = 0; i < 2; ++i) {
    workers.push_back(std::make_unique<Process>(
        std::vector<std::string>{
            QKOV_WORKER_BIN, "--server=" + server.address(),
            "--token_file=" + dir_.File("worker.token"), "--exit_when_idle"},
        dir_.File(absl::StrCat("worker", i, ".log"))));
  }
  // Both workers meet the full disk and wait.
  const bool waiting = WaitUntil(
      [&] {
        for (int i = 0; i < 2; ++i) {
          if (ReadFile(dir_.File(absl::StrCat("worker", i, ".log")))
                  .find("disk is full") == std::string::npos)
            return false;
        }
        return true;
      },
      60);
  ASSERT_TRUE(waiting) << ReadFile(dir_.File("worker0.log"))
                       << ReadFile(dir_.File("worker1.log"));
  for (auto& w : workers) EXPECT_TRUE(w->Running());
  fs::remove(disk + "/filler");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(workers[i]->Wait(240), 0)
        << ReadFile(dir_.File(absl::StrCat("worker", i, ".log")));
  }
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM trials WHERE state = 'done'"),
            6);
  EXPECT_EQ(QueryRows(db, "PRAGMA integrity_check")[0][0], "ok");
}

}  // namespace
}  // namespace qkov::testing
