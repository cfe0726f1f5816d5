// Bearer-token authentication with roles. Tokens come from a file the server
// reads at start (`--token_file`), one per line: `ROLE TOKEN [NAME]`, ROLE
// one of worker, user, admin, read-only; `#` starts a comment. NAME (letters,
// digits, `._@-`, up to 64) names the token's holder: it becomes the owner of
// the sweeps the token submits. A line without a name (the older format)
// names its holder `token-` and the first 8 hex digits of the token's
// SHA-256. Clients send `authorization: Bearer TOKEN` metadata
// (docs/security.md).
//
//   worker     WorkerService only
//   user       every SweepService call; changes only its own sweeps
//   admin      every SweepService call, on any sweep
//   read-only  SweepService reads: Get/List/Query/Watch
//
// Thread safety: immutable after Load; Check is thread-safe.
#ifndef QKOV_SERVER_SERVICE_AUTH_H_
#define QKOV_SERVER_SERVICE_AUTH_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>

#include <map>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "storage/results_store.h"

namespace qkov::service {

enum class Role { kWorker, kUser, kAdmin, kReadOnly };

// What a call needs.
enum class Permission { kWorker, kRead, kWrite };

class Authenticator {
 public:
  // INVALID_ARGUMENT naming the line for a malformed file, NOT_FOUND if it
  // cannot be read.
  static absl::StatusOr<std::unique_ptr<Authenticator>> Load(
      const std::string& path);
  // UNAUTHENTICATED (no or unknown token) or PERMISSION_DENIED (role too
  // weak), for a call with `metadata` (ServerContext::client_metadata()).
  // On OK, *actor (when given) is the token's holder.
  grpc::Status Check(
      const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
      Permission needed, const char* method,
      storage::Actor* actor = nullptr) const;
  // The same check for a bare token (the HTTP adapter reads it from an
  // Authorization header or a session cookie): UNAUTHENTICATED for an empty
  // or unknown token, PERMISSION_DENIED for a role too weak, naming `what`.
  absl::Status CheckToken(absl::string_view token, Permission needed,
                          const char* what,
                          storage::Actor* actor = nullptr) const;
  // Whether `metadata` carries a known token, of any role.
  grpc::Status CheckAnyToken(
      const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
      const char* method) const;

 private:
  struct Holder {
    Role role;
    std::string name;
  };
  const Holder* Find(
      const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
      const char* method, grpc::Status* error) const;
  // Keyed by the SHA-256 of the token: a lookup's time depends on the
  // digest of what was presented, never on how much of a real token it
  // matches.
  absl::flat_hash_map<std::string, Holder> tokens_;
};

// Writes a first token file at `path`: one fresh token (24 random bytes,
// hex) per role, named workers, user, admin and readers, mode 0600, in the
// format Authenticator::Load reads. ALREADY_EXISTS when `path` exists (it is
// never overwritten), UNAVAILABLE when it cannot be written (the reason
// named). qkov-server --init_tokens.
absl::Status WriteNewTokenFile(const std::string& path);

// Puts server reflection (grpc.reflection.*) behind the tokens: a call
// without a known token is cancelled as soon as its metadata arrives, before
// the reflection service answers anything. (gRPC C++ server interceptors can
// cancel a call but not choose its status: the client sees CANCELLED.)
// Health checks stay open for probes; the qkov services check tokens
// themselves, with precise statuses.
class ReflectionAuthFactory
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit ReflectionAuthFactory(const Authenticator* auth) : auth_(auth) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  const Authenticator* auth_;
};

// Check() when `auth` is set. A server without tokens lets every call
// through, as an anonymous admin (one researcher on one machine). `actor`
// (may be null, for calls that change nothing) gets who is calling.
inline grpc::Status Authorize(const Authenticator* auth,
                              const grpc::ServerContext* ctx, Permission needed,
                              const char* method,
                              storage::Actor* actor = nullptr) {
  if (auth == nullptr) {
    if (actor != nullptr) *actor = storage::Actor{"", /*admin=*/true};
    return grpc::Status::OK;
  }
  return auth->Check(ctx->client_metadata(), needed, method, actor);
}

}  // namespace qkov::service

#endif  // QKOV_SERVER_SERVICE_AUTH_H_
