#include "client/connection.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/grpc_status.h"
#include "common/text.h"

namespace qkov::client {

absl::StatusOr<std::unique_ptr<Connection>> Connection::Create(
    const std::string& address, absl::Duration deadline,
    const ChannelSecurity& security) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  absl::StatusOr<SecureChannel> channel =
      SecureChannel::Create(address, security, args);
  if (!channel.ok()) return channel.status();
  return std::unique_ptr<Connection>(
      new Connection(address, deadline, *channel));
}

Connection::Connection(const std::string& address, absl::Duration deadline,
                       SecureChannel channel)
    : address_(address), deadline_(deadline), channel_(std::move(channel)) {
  stub_ = qkov::v1::SweepService::NewStub(channel_.channel());
}

std::unique_ptr<grpc::ClientContext> Connection::Context() const {
  return Context(absl::ZeroDuration());
}

std::unique_ptr<grpc::ClientContext> Connection::Context(
    absl::Duration at_least) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(
      absl::ToChronoTime(absl::Now() + std::max(deadline_, at_least)));
  channel_.Apply(ctx.get());
  return ctx;
}

int ExitCodeFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
      return kExitInvalid;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnreachable;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return kExitDenied;
    default:
      return kExitError;
  }
}

int ReportError(const absl::Status& status, const std::string& server_address) {
  std::string msg =
      absl::StrReplaceAll(std::string(status.message()), {{"\n", " "}});
  std::string line;
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      line = absl::StrCat("cannot reach qkov-server at ", server_address, " (",
                          msg, ")");
      break;
    case absl::StatusCode::kInvalidArgument:
      line = absl::StrCat("invalid: ", msg);
      break;
    case absl::StatusCode::kNotFound:
      line = absl::StrCat("not found: ", msg);
      break;
    case absl::StatusCode::kUnauthenticated:
      line = absl::StrCat("not authenticated: ", msg,
                          " (set --token_file or $QKOV_TOKEN_FILE)");
      break;
    case absl::StatusCode::kPermissionDenied:
      line = absl::StrCat("permission denied: ", msg);
      break;
    default:
      line = absl::StrCat(absl::StatusCodeToString(status.code()), ": ", msg);
  }
  // The message may quote the server's or the user's strings.
  std::fprintf(stderr, "qkov: %s\n", TerminalSafe(line).c_str());
  return ExitCodeFor(status.code());
}

absl::StatusOr<qkov::v1::GetTrialMetricsResponse> FetchCurves(
    Connection& conn, const std::string& trial_id,
    const std::vector<std::string>& names) {
  qkov::v1::GetTrialMetricsRequest req;
  req.set_trial_id(trial_id);
  for (const auto& n : names) req.add_names(n);
  qkov::v1::GetTrialMetricsResponse resp;
  grpc::Status s =
      conn.stub()->GetTrialMetrics(conn.Context().get(), req, &resp);
  if (!s.ok()) return FromGrpcStatus(s);
  return resp;
}

absl::StatusOr<std::vector<qkov::v1::ResultRow>> FetchRows(
    Connection& conn, const std::string& sweep) {
  constexpr int64_t kPage = 10000;
  std::vector<qkov::v1::ResultRow> rows;
  for (int64_t offset = 0;; offset += kPage) {
    qkov::v1::QueryResultsRequest req;
    req.set_sweep_name(sweep);
    req.set_offset(offset);
    req.set_limit(kPage);
    qkov::v1::QueryResultsResponse resp;
    grpc::Status s =
        conn.stub()->QueryResults(conn.Context().get(), req, &resp);
    if (!s.ok()) return FromGrpcStatus(s);
    for (qkov::v1::ResultRow& r : *resp.mutable_rows())
      rows.push_back(std::move(r));
    if (resp.rows_size() < kPage) break;
  }
  return rows;
}

}  // namespace qkov::client
