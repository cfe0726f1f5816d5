// Bearer-token authentication with roles. Tokens come from a file the server
// reads at start (`--token_file`) and again on Reload() (SIGHUP), one per
// line: `ROLE TOKEN [NAME]`, ROLE
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
// Reload() swaps in the file's tokens at once; a token that left the file
// stays valid, with its role and name, for the overlap Reload() is given
// (docs/cluster.md, "Day two"). A file that does not parse changes
// nothing.
//
// Thread safety: every method is thread-safe; a check sees the tokens of
// one load, before or after a reload.
#ifndef QKOV_SERVER_SERVICE_AUTH_H_
#define QKOV_SERVER_SERVICE_AUTH_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "storage/results_store.h"

namespace qkov::service {

enum class Role { kWorker, kUser, kAdmin, kReadOnly };

// What a call needs.
enum class Permission { kWorker, kRead, kWrite };

class Authenticator {
 public:
  // INVALID_ARGUMENT naming the line for a malformed file, NOT_FOUND if it
  // cannot be read. `now` is the clock the overlap of Reload() is measured
  // on (tests give a fake one).
  static absl::StatusOr<std::unique_ptr<Authenticator>> Load(
      const std::string& path, std::function<absl::Time()> now = &absl::Now);

  // What a reload changed.
  struct ReloadCounts {
    int tokens = 0;   // in the file now
    int added = 0;    // in the file now, not before
    int retired = 0;  // left the file: valid until `until`
    absl::Time until;
  };
  // Reads the file Load() read again. On OK its tokens serve from now on
  // and the ones that left it stay valid for `overlap` (zero: refused at
  // once). On an error (the same as Load's) the tokens in use stay as they
  // were.
  absl::StatusOr<ReloadCounts> Reload(absl::Duration overlap)
      ABSL_LOCKS_EXCLUDED(mu_);
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
  // Keyed by the SHA-256 of the token: a lookup's time depends on the
  // digest of what was presented, never on how much of a real token it
  // matches.
  using Tokens = absl::flat_hash_map<std::string, Holder>;
  // Tokens that left the file, valid until `until`.
  struct Retired {
    std::shared_ptr<const Tokens> tokens;
    absl::Time until;
  };
  Authenticator(std::string path, std::function<absl::Time()> now)
      : path_(std::move(path)), now_(std::move(now)) {}
  static absl::StatusOr<Tokens> Parse(const std::string& path);
  // The holder of `token` (current tokens first, then retired ones still in
  // their overlap); nullopt when none.
  std::optional<Holder> Lookup(absl::string_view token) const
      ABSL_LOCKS_EXCLUDED(mu_);
  std::optional<Holder> Find(
      const std::multimap<grpc::string_ref, grpc::string_ref>& metadata,
      const char* method, grpc::Status* error) const;

  const std::string path_;
  const std::function<absl::Time()> now_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const Tokens> tokens_ ABSL_GUARDED_BY(mu_);
  std::vector<Retired> retired_ ABSL_GUARDED_BY(mu_);
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
