// The CLI's connection to qkov-server, and the mapping from a failed call
// to one readable line and an exit code (docs/cli.md):
//   0 ok, 1 other error, 2 invalid input, 3 not found, 4 server unreachable,
//   5 not authenticated or permission denied.
#ifndef QKOV_CLIENT_CONNECTION_H_
#define QKOV_CLIENT_CONNECTION_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/channel.h"
#include "qkov/v1/sweep.grpc.pb.h"

namespace qkov::client {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitInvalid = 2;
inline constexpr int kExitNotFound = 3;
inline constexpr int kExitUnreachable = 4;
inline constexpr int kExitDenied = 5;

class Connection {
 public:
  // Reads the token and TLS files; the error names the flag.
  static absl::StatusOr<std::unique_ptr<Connection>> Create(
      const std::string& address, absl::Duration deadline,
      const ChannelSecurity& security);
  qkov::v1::SweepService::Stub* stub() { return stub_.get(); }
  const std::string& address() const { return address_; }
  // A context with the per-call deadline and the token.
  std::unique_ptr<grpc::ClientContext> Context() const;
  // The same, waiting at least `at_least` (a call whose work grows with the
  // data, such as DeleteSweep).
  std::unique_ptr<grpc::ClientContext> Context(absl::Duration at_least) const;

 private:
  std::string address_;
  absl::Duration deadline_;
  Connection(const std::string& address, absl::Duration deadline,
             SecureChannel channel);
  SecureChannel channel_;
  std::unique_ptr<qkov::v1::SweepService::Stub> stub_;
};

// A trial's curves (all of them when `names` is empty), stitched across its
// attempts.
absl::StatusOr<qkov::v1::GetTrialMetricsResponse> FetchCurves(
    Connection& conn, const std::string& trial_id,
    const std::vector<std::string>& names);

// Every result row of a sweep, in pages of 10,000 (one answer of a
// 100,000-trial sweep would pass the server's message limit).
absl::StatusOr<std::vector<qkov::v1::ResultRow>> FetchRows(
    Connection& conn, const std::string& sweep);

// Prints "qkov: <one line>" to stderr and returns the exit code.
int ReportError(const absl::Status& status,
                const std::string& server_address = "");
int ExitCodeFor(absl::StatusCode code);

}  // namespace qkov::client

#endif  // QKOV_CLIENT_CONNECTION_H_
