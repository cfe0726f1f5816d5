// Bearer-token authentication with roles. Tokens come from a file the server
// reads at start (`--token_file`), one per line: `ROLE TOKEN`, ROLE one of
// worker, user, read-only; `#` starts a comment. Clients send
// `authorization: Bearer TOKEN` metadata (docs/security.md).
//
//   worker     WorkerService only
//   user       every SweepService call
//   read-only  SweepService reads: Get/List/Query/Watch
//
// Thread safety: immutable after Load; Check is thread-safe.
#ifndef QKOV_SERVER_SERVICE_AUTH_H_
#define QKOV_SERVER_SERVICE_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace qkov::service {

enum class Role { kWorker, kUser, kReadOnly };

// What a call needs.
enum class Permission { kWorker, kRead, kWrite };

class Authenticator {
 public:
  // INVALID_ARGUMENT naming the line for a malformed file, NOT_FOUND if it
  // cannot be read.
  static absl::StatusOr<std::unique_ptr<Authenticator>> Load(
      const std::string& path);
  // UNAUTHENTICATED (no or unknown token) or PERMISSION_DENIED (role too weak).
  grpc::Status Check(const grpc::ServerContext* context, Permission needed,
                     const char* method) const;

 private:
  absl::flat_hash_map<std::string, Role> tokens_;
};

// Check() when `auth` is set; OK when the server runs without tokens.
inline grpc::Status Authorize(const Authenticator* auth,
                              const grpc::ServerContext* ctx, Permission needed,
                              const char* method) {
  return auth == nullptr ? grpc::Status::OK : auth->Check(ctx, needed, method);
}

}  // namespace qkov::service

#endif  // QKOV_SERVER_SERVICE_AUTH_H_
