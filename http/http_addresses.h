// The addresses and names of the dashboard's HTTP front
// (http/http_server.h): a client's address as the key its limits
// are counted by, and the name a Host header asks for.
#ifndef QKOV_HTTP_HTTP_ADDRESSES_H_
#define QKOV_HTTP_HTTP_ADDRESSES_H_

#include <sys/socket.h>

#include <string>

#include "absl/strings/string_view.h"

namespace qkov::http {

// A client's address as a throttling key: IPv4 dotted (also when mapped
// into IPv6), IPv6 as its /64 ("2001:db8::/64": one host commonly holds a
// whole /64), "unknown" for anything else or null.
std::string ClientKey(const sockaddr* sa);

// True for an IPv4 or IPv6 literal ("127.0.0.1", "::1").
bool IsIpLiteral(const std::string& host);

// "Name:port", "[v6]:port" or "name" -> the lower-case name ("" for a
// bracket that does not close).
std::string HostName(absl::string_view host);

}  // namespace qkov::http

#endif  // QKOV_HTTP_HTTP_ADDRESSES_H_
