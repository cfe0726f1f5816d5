#include "server/service/auth.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "common/text.h"
#include "server/core/sweep_spec.h"

namespace qkov::service {
namespace {

const char* RoleName(Role r) {
  switch (r) {
    case Role::kWorker:
      return "worker";
    case Role::kUser:
      return "user";
    case Role::kAdmin:
      return "admin";
    case Role::kReadOnly:
      return "read-only";
  }
  return "?";
}

bool Allows(Role r, Permission p) {
  switch (p) {
    case Permission::kWorker:
      return r == Role::kWorker;
    case Permission::kWrite:
      return r == Role::kUser || r == Role::kAdmin;
    case Permission::kRead:
      return r == Role::kUser || r == Role::kAdmin || r == Role::kReadOnly;
  }
  return false;
}

}  // namespace

absl::StatusOr<Authenticator::Tokens> Authenticator::Parse(
    const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFlagFile("--token_file", path));
  Tokens tokens;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  auto bad_line = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("--token_file: ", path, ":", n, ": ", what));
  };
  while (std::getline(in, line)) {
    ++n;
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#') continue;
    std::vector<std::string> parts =
        absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (parts.size() != 2 && parts.size() != 3) {
      return bad_line("expected 'ROLE TOKEN [NAME]'");
    }
    Role role;
    if (parts[0] == "worker") {
      role = Role::kWorker;
    } else if (parts[0] == "user") {
      role = Role::kUser;
    } else if (parts[0] == "admin") {
      role = Role::kAdmin;
    } else if (parts[0] == "read-only") {
      role = Role::kReadOnly;
    } else {
      return bad_line(absl::StrCat("unknown role '", TerminalSafe(parts[0]),
                                   "' (worker, user, admin, read-only)"));
    }
    if (parts[1].size() < 16) {
      return bad_line("token shorter than 16 characters");
    }
    std::string name;
    if (parts.size() == 3) {
      name = parts[2];
      const bool ok = !name.empty() && name.size() <= 64 &&
                      std::all_of(name.begin(), name.end(), [](char c) {
                        return absl::ascii_isalnum(c) || c == '.' || c == '_' ||
                               c == '@' || c == '-';
                      });
      if (!ok) {
        return bad_line(
            "NAME must be 1..64 letters, digits or ._@- characters");
      }
    } else {
      name = absl::StrCat("token-", core::Sha256Hex(parts[1]).substr(0, 8));
    }
    const std::string digest = core::Sha256Hex(parts[1]);
    if (tokens.contains(digest)) {
      return bad_line("the same token appears twice");
    }
    tokens[digest] = Holder{role, name};
  }
  if (tokens.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--token_file: ", path, " holds no tokens"));
  }
  return tokens;
}

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::Load(
    const std::string& path, std::function<absl::Time()> now) {
  ASSIGN_OR_RETURN(Tokens tokens, Parse(path));
  auto auth =
      std::unique_ptr<Authenticator>(new Authenticator(path, std::move(now)));
  {
    absl::MutexLock lock(&auth->mu_);
    auth->tokens_ = std::make_shared<const Tokens>(std::move(tokens));
  }
  return auth;
}

absl::StatusOr<Authenticator::ReloadCounts> Authenticator::Reload(
    absl::Duration overlap) {
  ASSIGN_OR_RETURN(Tokens fresh, Parse(path_));
  auto next = std::make_shared<const Tokens>(std::move(fresh));
  const absl::Time now = now_();
  ReloadCounts counts;
  counts.tokens = static_cast<int>(next->size());
  counts.until = now + std::max(overlap, absl::ZeroDuration());
  absl::MutexLock lock(&mu_);
  for (const auto& [digest, holder] : *next)
    counts.added += tokens_->contains(digest) ? 0 : 1;
  Tokens left;
  for (const auto& [digest, holder] : *tokens_)
    if (!next->contains(digest)) left[digest] = holder;
  counts.retired = static_cast<int>(left.size());
  // Retired sets whose overlap is over are dropped here, so that the list
  // stays as short as the reloads within one overlap.
  std::vector<Retired> kept;
  for (Retired& r : retired_)
    if (r.until > now) kept.push_back(std::move(r));
  if (!left.empty() && counts.until > now)
    kept.push_back(
        Retired{std::make_shared<const Tokens>(std::move(left)), counts.until});
  retired_ = std::move(kept);
  tokens_ = std::move(next);
  return counts;
}

std::optional<Authenticator::Holder> Authenticator::Lookup(
    absl::string_view token) const {
  const std::string digest = core::Sha256Hex(token);
  absl::ReaderMutexLock lock(&mu_);
  if (auto it = tokens_->find(digest); it != tokens_->end()) return it->second;
  if (retired_.empty()) return std::nullopt;
  const absl::Time now = now_();
  for (const Retired& r : retired_) {
    if (r.until <= now) continue;
    if (auto it = r.tokens->find(digest); it != r.tokens->end())
      return it->second;
  }
  return std::nullopt;
}

std::optional<Authenticator::Holder> Authenticator::Find(
    const std::multimap<grpc::string_ref, grpc::string_ref>& md,
    const char* method, grpc::Status* error) const {
  auto it = md.find("authorization");
  if (it == md.end()) {
    *error = grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        absl::StrCat(method,
                     ": missing bearer token (authorization metadata)"));
    return std::nullopt;
  }
  absl::string_view value(it->second.data(), it->second.size());
  if (!absl::ConsumePrefix(&value, "Bearer ")) {
    *error = grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        absl::StrCat(method, ": authorization metadata is not 'Bearer TOKEN'"));
    return std::nullopt;
  }
  std::optional<Holder> holder = Lookup(value);
  if (!holder.has_value()) {
    *error = grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          absl::StrCat(method, ": unknown token"));
  }
  return holder;
}

grpc::Status Authenticator::Check(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
    Permission needed, const char* method, storage::Actor* actor) const {
  grpc::Status error;
  const std::optional<Holder> holder = Find(metadata, method, &error);
  if (!holder.has_value()) return error;
  if (!Allows(holder->role, needed)) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(method, ": role ", RoleName(holder->role),
                                     " may not call this method"));
  }
  if (actor != nullptr)
    *actor = storage::Actor{holder->name, holder->role == Role::kAdmin};
  return grpc::Status::OK;
}

absl::Status Authenticator::CheckToken(absl::string_view token,
                                       Permission needed, const char* what,
                                       storage::Actor* actor) const {
  if (token.empty()) {
    return absl::UnauthenticatedError(
        absl::StrCat(what, ": missing bearer token"));
  }
  const std::optional<Holder> holder = Lookup(token);
  if (!holder.has_value())
    return absl::UnauthenticatedError(absl::StrCat(what, ": unknown token"));
  if (!Allows(holder->role, needed)) {
    return absl::PermissionDeniedError(absl::StrCat(
        what, ": role ", RoleName(holder->role), " may not read this"));
  }
  if (actor != nullptr)
    *actor = storage::Actor{holder->name, holder->role == Role::kAdmin};
  return absl::OkStatus();
}

grpc::Status Authenticator::CheckAnyToken(
    const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
    const char* method) const {
  grpc::Status error;
  return Find(metadata, method, &error).has_value() ? grpc::Status::OK : error;
}

namespace {

class ReflectionAuth : public grpc::experimental::Interceptor {
 public:
  ReflectionAuth(grpc::experimental::ServerRpcInfo* info,
                 const Authenticator* auth)
      : info_(info), auth_(auth) {}

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::
                POST_RECV_INITIAL_METADATA)) {
      const auto* md = methods->GetRecvInitialMetadata();
      if (md == nullptr || !auth_->CheckAnyToken(*md, info_->method()).ok())
        info_->server_context()->TryCancel();
    }
    methods->Proceed();
  }

 private:
  grpc::experimental::ServerRpcInfo* info_;
  const Authenticator* auth_;
};

}  // namespace

grpc::experimental::Interceptor* ReflectionAuthFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  if (auth_ == nullptr ||
      !absl::StartsWith(info->method(), "/grpc.reflection."))
    return nullptr;
  return new ReflectionAuth(info, auth_);
}

absl::Status WriteNewTokenFile(const std::string& path) {
  std::string text =
      "# qkov-server tokens: ROLE TOKEN NAME, one per line "
      "(docs/security.md).\n"
      "# Hand each holder its own line's token; keep this file mode 0600.\n";
  for (const char* role_name :
       {"worker workers", "user user", "admin admin", "read-only readers"}) {
    unsigned char bytes[24];
    if (RAND_bytes(bytes, sizeof(bytes)) != 1)
      return absl::UnavailableError("--init_tokens: no random bytes (OpenSSL)");
    const std::vector<std::string> parts = absl::StrSplit(role_name, ' ');
    absl::StrAppend(&text, parts[0], " ",
                    absl::BytesToHexString(absl::string_view(
                        reinterpret_cast<const char*>(bytes), sizeof(bytes))),
                    " ", parts[1], "\n");
  }
  // O_EXCL: an existing file (a lab's live tokens) is never replaced.
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int err = errno;
    if (err == EEXIST) {
      return absl::AlreadyExistsError(absl::StrCat(
          "--init_tokens: ", TerminalSafe(path),
          " exists; it is never overwritten (remove it first to start over)"));
    }
    return absl::UnavailableError(absl::StrCat("--init_tokens: cannot create ",
                                               TerminalSafe(path), ": ",
                                               std::strerror(err)));
  }
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(path.c_str());
      return absl::UnavailableError(absl::StrCat("--init_tokens: cannot write ",
                                                 TerminalSafe(path), ": ",
                                                 std::strerror(err)));
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(path.c_str());
    return absl::UnavailableError(
        absl::StrCat("--init_tokens: cannot write ", TerminalSafe(path)));
  }
  return absl::OkStatus();
}

}  // namespace qkov::service
