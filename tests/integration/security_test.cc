// Bearer tokens with roles, and TLS with client certificates, against the
// real binaries. Certificates are made with openssl at test time.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/integration/harness.h"

namespace qkov::testing {
namespace {

constexpr char kSweep[] = R"(name: secure
axes: {parameterization: [CACO], lr_ratio: [1], eta_ov: [0.1], seed: [1, 2]}
training: {max_steps: 300, report_every: 100, evaluation: {num_examples: 128}}
)";

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(dir_.File("tokens"),
              "# role token\n"
              "worker  worker-token-0123456789\n"
              "user    user-token-0123456789ab\n"
              "read-only reader-token-0123456789\n");
    for (const char* who : {"worker", "user", "reader"}) {
      WriteFile(dir_.File(std::string(who) + ".token"),
                std::string(who) + "-token-0123456789" +
                    (std::string(who) == "user" ? "ab" : "") + "\n");
    }
    WriteFile(dir_.File("wrong.token"), "not-a-known-token-000000\n");
    WriteFile(dir_.File("sweep.yaml"), kSweep);
  }

  CommandResult Qkov(ServerUnderTest& s, const std::string& token,
                     std::vector<std::string> args,
                     std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {QKOV_CLI_BIN, "--server=" + s.address(),
                                     "--deadline=5"};
    if (!token.empty())
      argv.push_back("--token_file=" + dir_.File(token + ".token"));
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }

  void MakeCertificates() {
    CommandResult r = MakeTestCertificates(dir_.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  TempDir dir_;
};

TEST_F(SecurityTest, TokensAndRoles) {
  ServerUnderTest server(dir_, {"--token_file=" + dir_.File("tokens")});
  CommandResult r = Qkov(server, "", {"status"});
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_NE(r.err.find("not authenticated: ListSweeps: missing bearer token"),
            std::string::npos)
      << r.err;

  r = Qkov(server, "wrong", {"status"});
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_NE(r.err.find("unknown token"), std::string::npos) << r.err;

  r = Qkov(server, "reader", {"submit", dir_.File("sweep.yaml")});
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_NE(r.err.find("permission denied: SubmitSweep: role read-only"),
            std::string::npos)
      << r.err;
  r = Qkov(server, "worker", {"submit", dir_.File("sweep.yaml")});
  EXPECT_EQ(r.exit_code, 5);

  r = Qkov(server, "user", {"submit", dir_.File("sweep.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Qkov(server, "reader", {"status", "secure"});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  // A worker without the worker role is refused and exits non-zero.
  Process bad({QKOV_WORKER_BIN, "--server=" + server.address(),
               "--token_file=" + dir_.File("user.token"), "--exit_when_idle"},
              dir_.File("bad.log"));
  EXPECT_NE(bad.Wait(30), 0);
  EXPECT_NE(ReadFile(dir_.File("bad.log")).find("PERMISSION_DENIED"),
            std::string::npos);

  Process good(
      {QKOV_WORKER_BIN, "--server=" + server.address(), "--exit_when_idle"},
      dir_.File("good.log"), {"QKOV_TOKEN_FILE=" + dir_.File("worker.token")});
  ASSERT_EQ(good.Wait(60), 0) << ReadFile(dir_.File("good.log"));
  EXPECT_EQ(QueryInt(server.db_path(),
                     "SELECT COUNT(*) FROM trials WHERE state = 'done'"),
            2);
}

TEST_F(SecurityTest, TlsWithClientCertificates) {
  MakeCertificates();
  ServerUnderTest server(dir_, {"--token_file=" + dir_.File("tokens"),
                                "--tls_cert=" + dir_.File("server.pem"),
                                "--tls_key=" + dir_.File("server.key"),
                                "--tls_client_ca=" + dir_.File("ca.pem")});
  const std::vector<std::string> tls = {"--tls_ca=" + dir_.File("ca.pem"),
                                        "--tls_cert=" + dir_.File("client.pem"),
                                        "--tls_key=" + dir_.File("client.key"),
                                        "--tls_server_name=localhost"};
  // Plaintext and TLS without a client certificate cannot connect.
  CommandResult r = Qkov(server, "user", {"status"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  r = Qkov(server, "user", {"status"},
           {"--tls_ca=" + dir_.File("ca.pem"), "--tls_server_name=localhost"});
  EXPECT_EQ(r.exit_code, 4) << r.err;

  r = Qkov(server, "user", {"submit", dir_.File("sweep.yaml")}, tls);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> worker = {
      QKOV_WORKER_BIN, "--server=" + server.address(),
      "--token_file=" + dir_.File("worker.token"), "--exit_when_idle"};
  worker.insert(worker.end(), tls.begin(), tls.end());
  Process w(worker, dir_.File("w.log"));
  ASSERT_EQ(w.Wait(60), 0) << ReadFile(dir_.File("w.log"));
  r = Qkov(server, "reader", {"results", "secure"}, tls);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" done "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace qkov::testing
