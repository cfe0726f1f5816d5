#include "client/connection.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace qkov::client {

Connection::Connection(const std::string& address, absl::Duration deadline)
    : address_(address), deadline_(deadline) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  channel_ = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  stub_ = qkov::v1::SweepService::NewStub(channel_);
}

std::unique_ptr<grpc::ClientContext> Connection::Context() const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + deadline_));
  return ctx;
}

int ExitCodeFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return kExitOk;
    case absl::StatusCode::kInvalidArgument: return kExitInvalid;
    case absl::StatusCode::kNotFound: return kExitNotFound;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded: return kExitUnreachable;
    default: return kExitError;
  }
}

int ReportError(const absl::Status& status, const std::string& server_address) {
  std::string msg = absl::StrReplaceAll(std::string(status.message()), {{"\n", " "}});
  std::string line;
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      line = absl::StrCat("cannot reach qkov-server at ", server_address, " (", msg, ")");
      break;
    case absl::StatusCode::kInvalidArgument:
      line = absl::StrCat("invalid: ", msg);
      break;
    case absl::StatusCode::kNotFound:
      line = absl::StrCat("not found: ", msg);
      break;
    default:
      line = absl::StrCat(absl::StatusCodeToString(status.code()), ": ", msg);
  }
  std::fprintf(stderr, "qkov: %s\n", line.c_str());
  return ExitCodeFor(status.code());
}

}  // namespace qkov::client
