#include "server/service/auth.h"

#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace qkov::service {
namespace {

const char* RoleName(Role r) {
  switch (r) {
    case Role::kWorker:
      return "worker";
    case Role::kUser:
      return "user";
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
      return r == Role::kUser;
    case Permission::kRead:
      return r == Role::kUser || r == Role::kReadOnly;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::Load(
    const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return absl::NotFoundError(
        absl::StrCat("--token_file: cannot read ", path));
  auto auth = std::unique_ptr<Authenticator>(new Authenticator());
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#') continue;
    std::vector<std::string> parts =
        absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (parts.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", n, ": expected 'ROLE TOKEN'"));
    }
    Role role;
    if (parts[0] == "worker") {
      role = Role::kWorker;
    } else if (parts[0] == "user") {
      role = Role::kUser;
    } else if (parts[0] == "read-only") {
      role = Role::kReadOnly;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", n, ": unknown role '", parts[0],
                       "' (worker, user, read-only)"));
    }
    if (parts[1].size() < 16) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", n, ": token shorter than 16 characters"));
    }
    auth->tokens_[parts[1]] = role;
  }
  if (auth->tokens_.empty())
    return absl::InvalidArgumentError(absl::StrCat(path, ": no tokens"));
  return auth;
}

grpc::Status Authenticator::Check(const grpc::ServerContext* context,
                                  Permission needed, const char* method) const {
  const auto& md = context->client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) {
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        absl::StrCat(method,
                     ": missing bearer token (authorization metadata)"));
  }
  absl::string_view value(it->second.data(), it->second.size());
  if (!absl::ConsumePrefix(&value, "Bearer ")) {
    return grpc::Status(
        grpc::StatusCode::UNAUTHENTICATED,
        absl::StrCat(method, ": authorization metadata is not 'Bearer TOKEN'"));
  }
  auto token = tokens_.find(std::string(value));
  if (token == tokens_.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        absl::StrCat(method, ": unknown token"));
  }
  if (!Allows(token->second, needed)) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(method, ": role ", RoleName(token->second),
                                     " may not call this method"));
  }
  return grpc::Status::OK;
}

}  // namespace qkov::service
