#include "http/http_addresses.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace qkov::http {

std::string ClientKey(const sockaddr* sa) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (sa == nullptr) return "unknown";
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    return text;
  }
  if (sa->sa_family == AF_INET6) {
    in6_addr a = reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
      inet_ntop(AF_INET, &a.s6_addr[12], text, sizeof(text));
      return text;
    }
    // One host commonly holds a whole /64: throttle it as one client.
    std::memset(&a.s6_addr[8], 0, 8);
    inet_ntop(AF_INET6, &a, text, sizeof(text));
    return absl::StrCat(text, "/64");
  }
  return "unknown";
}

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 ||
         inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string HostName(absl::string_view host) {
  if (absl::StartsWith(host, "[")) {
    const size_t end = host.find(']');
    if (end == absl::string_view::npos) return "";
    return absl::AsciiStrToLower(host.substr(1, end - 1));
  }
  const size_t colon = host.find(':');
  if (colon != absl::string_view::npos && host.rfind(':') == colon)
    host = host.substr(0, colon);
  return absl::AsciiStrToLower(host);
}

}  // namespace qkov::http
