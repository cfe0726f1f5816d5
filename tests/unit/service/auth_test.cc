// Token files and the role and owner a call is given (server/service/auth),
// and the file read again with an overlap for the tokens that left it.
#include "server/service/auth.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>

namespace qkov::service {
namespace {

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/qkov-auth-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  absl::StatusOr<std::unique_ptr<Authenticator>> Load(const std::string& text) {
    const std::string path = dir_ + "/tokens";
    std::ofstream(path) << text;
    return Authenticator::Load(path);
  }
  // Metadata as a call carrying `value` in its authorization header.
  struct Call {
    explicit Call(const std::string& v) : value(v) {
      if (!value.empty()) md.emplace("authorization", value);
    }
    std::string value;
    std::multimap<grpc::string_ref, grpc::string_ref> md;
  };
  std::string dir_;
};

TEST_F(AuthTest, RolesNamesAndTheOlderFormat) {
  auto auth = Load(
      "# role token name\n"
      "worker    farm-token-0123456789 farm\n"
      "user      alice-token-012345678 alice\n"
      "admin     root-token-0123456789 root\n"
      "read-only reader-token-01234567\n");
  ASSERT_TRUE(auth.ok()) << auth.status();
  storage::Actor actor;
  Call alice("Bearer alice-token-012345678");
  EXPECT_TRUE((*auth)->Check(alice.md, Permission::kWrite, "M", &actor).ok());
  EXPECT_EQ(actor.name, "alice");
  EXPECT_FALSE(actor.admin);
  EXPECT_EQ(
      (*auth)->Check(alice.md, Permission::kWorker, "M", &actor).error_code(),
      grpc::StatusCode::PERMISSION_DENIED);
  Call root("Bearer root-token-0123456789");
  EXPECT_TRUE((*auth)->Check(root.md, Permission::kWrite, "M", &actor).ok());
  EXPECT_TRUE(actor.admin);
  Call reader("Bearer reader-token-01234567");
  EXPECT_TRUE((*auth)->Check(reader.md, Permission::kRead, "M", &actor).ok());
  EXPECT_EQ(actor.name.rfind("token-", 0), 0u) << actor.name;
  EXPECT_EQ(actor.name.size(), 14u);
  grpc::Status s =
      (*auth)->Check(reader.md, Permission::kWrite, "Submit", &actor);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(s.error_message(),
            "Submit: role read-only may not call this method");
  Call farm("Bearer farm-token-0123456789");
  EXPECT_TRUE((*auth)->Check(farm.md, Permission::kWorker, "M", &actor).ok());
  EXPECT_EQ(actor.name, "farm");
}

TEST_F(AuthTest, MissingMalformedAndUnknownTokensAreUnauthenticated) {
  auto auth = Load("user alice-token-012345678 alice\n");
  ASSERT_TRUE(auth.ok());
  storage::Actor actor;
  for (const char* value :
       {"", "alice-token-012345678", "Basic alice-token-012345678",
        "Bearer nobody-token-0000000000", "Bearer "}) {
    Call c(value);
    grpc::Status s = (*auth)->Check(c.md, Permission::kRead, "M", &actor);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << value;
    EXPECT_FALSE((*auth)->CheckAnyToken(c.md, "M").ok()) << value;
  }
  Call ok("Bearer alice-token-012345678");
  EXPECT_TRUE((*auth)->CheckAnyToken(ok.md, "M").ok());
}

// A reload: the file's new tokens serve at once, a token that left it is
// valid until the overlap ends (on the authenticator's clock), a changed
// role takes effect at once, and a file that does not parse changes
// nothing.
TEST_F(AuthTest, ReloadKeepsLeftTokensForTheOverlapOnly) {
  const std::string path = dir_ + "/tokens";
  std::ofstream(path) << "worker farm-token-0123456789 farm\n"
                         "user   old-token-0123456789a alice\n"
                         "user   bob-token-0123456789a bob\n";
  absl::Time now = absl::FromUnixSeconds(1'000'000);
  auto auth = Authenticator::Load(path, [&now] { return now; });
  ASSERT_TRUE(auth.ok()) << auth.status();
  auto check = [&](const char* token, Permission p) {
    return (*auth)->CheckToken(token, p, "M").code();
  };
  EXPECT_EQ(check("new-token-0123456789a", Permission::kWrite),
            absl::StatusCode::kUnauthenticated);

  std::ofstream(path, std::ios::trunc)
      << "worker farm-token-0123456789 farm\n"
         "user   new-token-0123456789a alice\n"
         "read-only bob-token-0123456789a bob\n";
  absl::StatusOr<Authenticator::ReloadCounts> counts =
      (*auth)->Reload(absl::Minutes(10));
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->tokens, 3);
  EXPECT_EQ(counts->added, 1);
  EXPECT_EQ(counts->retired, 1);
  EXPECT_EQ(counts->until, now + absl::Minutes(10));
  storage::Actor actor;
  EXPECT_TRUE(
      (*auth)
          ->CheckToken("new-token-0123456789a", Permission::kWrite, "M", &actor)
          .ok());
  EXPECT_EQ(actor.name, "alice");
  EXPECT_TRUE(
      (*auth)
          ->CheckToken("old-token-0123456789a", Permission::kWrite, "M", &actor)
          .ok());
  EXPECT_EQ(actor.name, "alice");
  EXPECT_EQ(check("bob-token-0123456789a", Permission::kWrite),
            absl::StatusCode::kPermissionDenied);  // read-only now
  EXPECT_EQ(check("farm-token-0123456789", Permission::kWorker),
            absl::StatusCode::kOk);

  now += absl::Minutes(10) - absl::Seconds(1);
  EXPECT_EQ(check("old-token-0123456789a", Permission::kWrite),
            absl::StatusCode::kOk);
  now += absl::Seconds(1);
  EXPECT_EQ(check("old-token-0123456789a", Permission::kWrite),
            absl::StatusCode::kUnauthenticated);
  Call old_call("Bearer old-token-0123456789a");
  EXPECT_EQ((*auth)->Check(old_call.md, Permission::kWrite, "M").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  // A file that does not parse: the error names the line; the tokens in
  // use stay.
  std::ofstream(path, std::ios::trunc) << "user short\n";
  absl::StatusOr<Authenticator::ReloadCounts> bad =
      (*auth)->Reload(absl::Minutes(10));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(path + ":1: token shorter"),
            std::string::npos)
      << bad.status();
  EXPECT_EQ(check("new-token-0123456789a", Permission::kWrite),
            absl::StatusCode::kOk);

  // Overlap zero: a token that leaves is refused at once.
  std::ofstream(path, std::ios::trunc) << "user bob-token-0123456789a bob\n";
  ASSERT_TRUE((*auth)->Reload(absl::ZeroDuration()).ok());
  EXPECT_EQ(check("new-token-0123456789a", Permission::kWrite),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(check("bob-token-0123456789a", Permission::kWrite),
            absl::StatusCode::kOk);
}

TEST_F(AuthTest, BadFilesNameTheLine) {
  struct Case {
    std::string text, says;
  };
  for (const Case& c : std::vector<Case>{
           {"user short\n", "tokens:1: token shorter than 16 characters"},
           {"# c\nboss alice-token-012345678\n",
            "tokens:2: unknown role 'boss'"},
           {"user alice-token-012345678 a b\n",
            "tokens:1: expected 'ROLE TOKEN [NAME]'"},
           {"user alice-token-012345678 al;ce\n", "tokens:1: NAME must be"},
           {"user alice-token-012345678 a\nadmin alice-token-012345678 b\n",
            "tokens:2: the same token appears twice"},
           {"# nothing\n", "holds no tokens"},
       }) {
    auto auth = Load(c.text);
    ASSERT_FALSE(auth.ok()) << c.text;
    EXPECT_EQ(auth.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(auth.status().message().find(c.says), std::string::npos)
        << auth.status();
  }
  auto missing = Authenticator::Load(dir_ + "/none");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  auto directory = Authenticator::Load(dir_);
  EXPECT_EQ(directory.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(AuthTest, WithoutTokensEveryCallerIsAnAnonymousAdmin) {
  grpc::ServerContext ctx;
  storage::Actor actor{"x", false};
  EXPECT_TRUE(Authorize(nullptr, &ctx, Permission::kWrite, "M", &actor).ok());
  EXPECT_EQ(actor.name, "");
  EXPECT_TRUE(actor.admin);
}

// qkov-server --init_tokens: a file Load reads, one token per role, 0600,
// never written over an existing one.
TEST_F(AuthTest, InitTokensWritesOnePerRoleAndNeverOverwrites) {
  const std::string path = dir_ + "/new-tokens";
  ASSERT_TRUE(WriteNewTokenFile(path).ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto auth = Authenticator::Load(path);
  ASSERT_TRUE(auth.ok()) << auth.status();
  std::ifstream in(path);
  std::string line;
  std::map<std::string, std::string> token_of;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string role, token, name;
    fields >> role >> token >> name;
    EXPECT_EQ(token.size(), 48u) << line;
    token_of[role] = token;
  }
  ASSERT_EQ(token_of.size(), 4u);
  storage::Actor actor;
  EXPECT_TRUE(
      (*auth)
          ->CheckToken(token_of["admin"], Permission::kWrite, "t", &actor)
          .ok());
  EXPECT_TRUE(actor.admin);
  EXPECT_EQ(actor.name, "admin");
  EXPECT_TRUE(
      (*auth)->CheckToken(token_of["read-only"], Permission::kRead, "t").ok());
  EXPECT_EQ((*auth)
                ->CheckToken(token_of["read-only"], Permission::kWrite, "t")
                .code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(
      (*auth)->CheckToken(token_of["worker"], Permission::kWorker, "t").ok());
  // A second run, and a run over any existing file, leave it as it was.
  const std::string before = [&] {
    std::ifstream f(path);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  EXPECT_EQ(WriteNewTokenFile(path).code(), absl::StatusCode::kAlreadyExists);
  std::ifstream again(path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(again), {}), before);
  EXPECT_EQ(WriteNewTokenFile(dir_ + "/no/such/dir/tokens").code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace qkov::service
