#include "http/http_message.h"

#include <microhttpd.h>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text.h"

namespace qkov::http {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

bool PercentDecode(absl::string_view in, bool query, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      const int hi = HexDigit(in[i + 1]), lo = HexDigit(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && query) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return out->find('\0') == std::string::npos && IsValidUtf8(*out);
}

// --- HttpRequest ---

std::string HttpRequest::Header(absl::string_view name) const {
  for (const auto& [k, v] : headers)
    if (absl::EqualsIgnoreCase(k, name)) return v;
  return "";
}

bool HttpRequest::HasParam(absl::string_view name) const {
  for (const auto& [k, v] : query)
    if (k == name) return true;
  return false;
}

std::string HttpRequest::Param(absl::string_view name) const {
  for (const auto& [k, v] : query)
    if (k == name) return v;
  return "";
}

std::vector<std::string> HttpRequest::Params(absl::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : query) {
    if (k != name) continue;
    for (absl::string_view part : absl::StrSplit(v, ',', absl::SkipEmpty()))
      out.emplace_back(part);
  }
  return out;
}

// --- ReplyStream ---

ReplyStream::~ReplyStream() {
  if (on_close_) on_close_();
}

bool ReplyStream::Write(absl::string_view bytes) {
  absl::MutexLock lock(&mu_);
  if (ended_) return false;
  if (static_cast<int64_t>(pending_.size() + bytes.size()) > max_backlog_) {
    ended_ = true;
  } else {
    pending_.append(bytes.data(), bytes.size());
    last_write_ = absl::Now();
  }
  if (suspended_ && connection_ != nullptr) {
    suspended_ = false;
    MHD_resume_connection(connection_);
  }
  return !ended_;
}

void ReplyStream::End() {
  absl::MutexLock lock(&mu_);
  ended_ = true;
  if (suspended_ && connection_ != nullptr) {
    suspended_ = false;
    MHD_resume_connection(connection_);
  }
}

bool ReplyStream::ended() const {
  absl::MutexLock lock(&mu_);
  return ended_;
}

absl::Time ReplyStream::last_write() const {
  absl::MutexLock lock(&mu_);
  return last_write_;
}

int64_t ReplyStream::Read(char* buf, size_t max) {
  absl::MutexLock lock(&mu_);
  if (!pending_.empty()) {
    const size_t n = std::min(max, pending_.size());
    std::memcpy(buf, pending_.data(), n);
    pending_.erase(0, n);
    return static_cast<int64_t>(n);
  }
  if (ended_ || connection_ == nullptr) return MHD_CONTENT_READER_END_OF_STREAM;
  // Nothing to send: leave the event loop until Write or End resumes us.
  suspended_ = true;
  MHD_suspend_connection(connection_);
  return 0;
}

void ReplyStream::Closed() {
  std::function<void()> on_close;
  {
    absl::MutexLock lock(&mu_);
    ended_ = true;
    suspended_ = false;
    connection_ = nullptr;
    fd_ = -1;
    on_close.swap(on_close_);
  }
  if (on_close) on_close();
}

int ReplyStream::SuspendedFd() const {
  absl::MutexLock lock(&mu_);
  return suspended_ ? fd_ : -1;
}

// --- errors ---

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

HttpReply RedirectReply(const std::string& to) {
  HttpReply r;
  r.status = 303;
  r.content_type = "text/plain; charset=utf-8";
  r.headers.emplace_back("Location", to);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

HttpReply ErrorReply(const absl::Status& status, int http) {
  HttpReply reply;
  reply.status = http != 0 ? http : HttpStatusFor(status.code());
  const nlohmann::json body = {
      {"error",
       {{"code", reply.status},
        {"status", absl::StatusCodeToString(status.code())},
        {"message", TerminalSafe(status.message())}}}};
  reply.body =
      body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  reply.headers.emplace_back("Cache-Control", "no-store");
  return reply;
}

}  // namespace qkov::http
