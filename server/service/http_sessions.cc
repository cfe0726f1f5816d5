// The dashboard's sessions (HttpService, server/service/http_service.h):
// who a request is (Authorize), the same-origin check of a POST, and the
// login and logout pages with their cookie, throttles and redirects
// (docs/security.md, "Sessions").
#include <openssl/rand.h>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/sha256.h"
#include "common/status_macros.h"
#include "common/text.h"
#include "server/service/http_service.h"

namespace qkov::service {
namespace {

constexpr char kSessionCookie[] = "qkov_session";

// The value of cookie `name` in a Cookie header, "" when absent.
std::string CookieValue(const std::string& header, absl::string_view name) {
  for (absl::string_view part : absl::StrSplit(header, ';')) {
    part = absl::StripAsciiWhitespace(part);
    if (absl::ConsumePrefix(&part, name) && absl::ConsumePrefix(&part, "="))
      return std::string(part);
  }
  return "";
}

// Field `name` of an application/x-www-form-urlencoded body, "" if absent.
std::string FormValue(absl::string_view body, absl::string_view name) {
  for (absl::string_view pair : absl::StrSplit(body, '&')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    std::string key, value;
    if (http::PercentDecode(kv.first, true, &key) && key == name &&
        http::PercentDecode(kv.second, true, &value))
      return value;
  }
  return "";
}

std::string NewSessionId() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return "";
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

http::HttpReply TooMany(const std::string& why, absl::Duration wait) {
  const int64_t seconds = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(absl::ToDoubleSeconds(wait))));
  http::HttpReply r = http::ErrorReply(absl::ResourceExhaustedError(
      absl::StrCat("dashboard: ", why, "; retry in ", seconds, " s")));
  r.headers.emplace_back("Retry-After", absl::StrCat(seconds));
  return r;
}

}  // namespace

absl::StatusOr<std::string> HttpService::Authorize(
    const http::HttpRequest& req) const {
  if (auth_ == nullptr) return req.client;
  storage::Actor actor;
  const std::string value = req.Header("Authorization");
  absl::string_view header = value;
  if (!header.empty()) {
    if (!absl::ConsumePrefix(&header, "Bearer "))
      return absl::UnauthenticatedError(
          "dashboard: Authorization header is not 'Bearer TOKEN'");
    RETURN_IF_ERROR(
        auth_->CheckToken(header, Permission::kRead, "dashboard", &actor));
    return actor.name;
  }
  const std::string id = CookieValue(req.Header("Cookie"), kSessionCookie);
  if (id.empty()) {
    return absl::UnauthenticatedError(
        "dashboard: log in at /login or send 'Authorization: Bearer TOKEN'");
  }
  std::string token;
  {
    absl::MutexLock lock(&sessions_mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.expires < absl::Now())
      return absl::UnauthenticatedError(
          "dashboard: the session has expired; log in again at /login");
    token = it->second.token;
  }
  RETURN_IF_ERROR(
      auth_->CheckToken(token, Permission::kRead, "dashboard", &actor));
  return actor.name;
}

bool HttpService::SameOrigin(const http::HttpRequest& req) {
  const std::string self =
      absl::StrCat(req.tls ? "https://" : "http://",
                   absl::AsciiStrToLower(req.Header("Host")));
  const std::string origin = absl::AsciiStrToLower(req.Header("Origin"));
  if (!origin.empty()) return origin == self;
  const std::string referer = absl::AsciiStrToLower(req.Header("Referer"));
  return referer == self || absl::StartsWith(referer, self + "/");
}

http::HttpReply HttpService::Login(const http::HttpRequest& req) {
  if (req.HasParam("token")) {
    return http::ErrorReply(absl::InvalidArgumentError(
        "dashboard: a token goes in the POST body, never in the URL"));
  }
  if (!SameOrigin(req)) {
    return http::ErrorReply(absl::PermissionDeniedError(
        "dashboard: a login must come from this dashboard's own page (its "
        "Origin or Referer)"));
  }
  if (auth_ == nullptr) return http::RedirectReply("/");
  // Decided from the address alone, before the token is looked at.
  if (absl::Duration wait = failures_.Wait(req.client);
      wait > absl::ZeroDuration())
    return TooMany("too many failed logins from this address", wait);
  const std::string token = FormValue(req.body, "token");
  storage::Actor actor;
  absl::Status ok =
      auth_->CheckToken(token, Permission::kRead, "login", &actor);
  if (!ok.ok()) {
    failures_.Take(req.client);
    return http::RedirectReply(ok.code() == absl::StatusCode::kPermissionDenied
                                   ? "/login?failed=role"
                                   : "/login?failed=token");
  }
  const std::string token_key = Sha256Hex(token);
  if (absl::Duration wait = logins_.Wait(token_key);
      wait > absl::ZeroDuration())
    return TooMany("too many logins with this token", wait);
  logins_.Take(token_key);
  const std::string id = NewSessionId();
  if (id.empty()) {
    return http::ErrorReply(absl::UnavailableError(
        "dashboard: no random bytes for a session; retry"));
  }
  {
    absl::MutexLock lock(&sessions_mu_);
    const absl::Time now = absl::Now();
    std::deque<std::string>& mine = by_token_[token_key];
    // Expired ones first, then this token's oldest: never another token's.
    for (auto it = mine.begin(); it != mine.end();) {
      auto s = sessions_.find(*it);
      if (s == sessions_.end() || s->second.expires < now) {
        if (s != sessions_.end()) sessions_.erase(s);
        it = mine.erase(it);
      } else {
        ++it;
      }
    }
    while (static_cast<int>(mine.size()) >= config_.sessions_per_token) {
      sessions_.erase(mine.front());
      mine.pop_front();
    }
    mine.push_back(id);
    sessions_[id] = Session{token, now + config_.session_lifetime};
  }
  http::HttpReply reply = http::RedirectReply("/");
  reply.headers.emplace_back(
      "Set-Cookie",
      absl::StrCat(kSessionCookie, "=", id,
                   "; Path=/; HttpOnly; SameSite=Strict; Max-Age=",
                   absl::ToInt64Seconds(config_.session_lifetime),
                   config_.tls_cert.empty() ? "" : "; Secure"));
  return reply;
}

http::HttpReply HttpService::Logout(const http::HttpRequest& req) {
  if (!SameOrigin(req)) {
    return http::ErrorReply(absl::PermissionDeniedError(
        "dashboard: a logout must come from this dashboard's own page (its "
        "Origin or Referer)"));
  }
  const std::string id = CookieValue(req.Header("Cookie"), kSessionCookie);
  if (!id.empty()) {
    absl::MutexLock lock(&sessions_mu_);
    auto it = sessions_.find(id);
    if (it != sessions_.end()) {
      std::deque<std::string>& mine = by_token_[Sha256Hex(it->second.token)];
      mine.erase(std::remove(mine.begin(), mine.end(), id), mine.end());
      sessions_.erase(it);
    }
  }
  http::HttpReply reply = http::RedirectReply("/login");
  reply.headers.emplace_back(
      "Set-Cookie",
      absl::StrCat(kSessionCookie,
                   "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"));
  return reply;
}

}  // namespace qkov::service
