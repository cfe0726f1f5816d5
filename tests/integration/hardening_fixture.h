// HardeningTest: a real qkov-server on loopback with a tokens file of every
// role (kTokens) and real gRPC stubs, for the attack files
// hardening_test.cc (the SQL console, SIGTERM under runaway queries,
// hostile strings, start-up errors, a full disk) and
// hardening_access_test.cc (worker impersonation, other users' sweeps,
// reflection and health).
#ifndef TESTS_INTEGRATION_HARDENING_FIXTURE_H_
#define TESTS_INTEGRATION_HARDENING_FIXTURE_H_

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

namespace fs = std::filesystem;
namespace v1 = ::qkov::v1;

inline constexpr char kTokens[] =
    "# role token [name]\n"
    "worker    farm-token-0123456789 farm\n"
    "worker    farm2-token-012345678 farm2\n"
    "user      alice-token-012345678 alice\n"
    "user      bob-token-0123456789a bob\n"
    "admin     root-token-0123456789 root\n"
    "read-only reader-token-01234567 reader\n"
    "user      legacy-token-01234567\n";  // the older format: no name

inline constexpr char kSweep[] = R"(name: owned
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

inline constexpr char kReader[] = "reader-token-01234567";
inline constexpr char kAlice[] = "alice-token-012345678";
inline constexpr char kBob[] = "bob-token-0123456789a";
inline constexpr char kRoot[] = "root-token-0123456789";
inline constexpr char kLegacy[] = "legacy-token-01234567";
inline constexpr char kFarm[] = "farm-token-0123456789";
inline constexpr char kFarm2[] = "farm2-token-012345678";

inline absl::StatusOr<v1::QuerySqlResponse> Sql(
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
inline void ExpectServerAnswers(v1::SweepService::Stub& stub) {
  const absl::Time start = absl::Now();
  auto r = Sql(stub, "SELECT count(*) FROM sweeps", absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

}  // namespace qkov::testing

#endif  // TESTS_INTEGRATION_HARDENING_FIXTURE_H_
