// The service attacked as an outsider with a token would attack it: a real
// qkov-server on loopback, real gRPC stubs with real tokens. Each test tries
// one family of attacks (the SQL console, worker impersonation, other
// users' sweeps, reflection, start-up with bad files, a full disk) and checks
// the precise refusal, that the server stays up and answers within its
// budget, that the database is intact, and that nothing outside it changed.
//
// This file: the SQL console, SIGTERM under runaway queries, hostile strings,
// start-up errors and a full disk; who may act as whom is in
// hardening_access_test.cc.
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
