// The HTTP front's client keys and Host names (http/http_addresses).
#include "http/http_addresses.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

namespace qkov::http {
namespace {

std::string KeyOfV4(const char* text) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, text, &a.sin_addr);
  return ClientKey(reinterpret_cast<const sockaddr*>(&a));
}

std::string KeyOfV6(const char* text) {
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  inet_pton(AF_INET6, text, &a.sin6_addr);
  return ClientKey(reinterpret_cast<const sockaddr*>(&a));
}

TEST(HttpAddressesTest, ClientKeysCountAnIpv6HostByItsSlash64) {
  EXPECT_EQ(KeyOfV4("198.18.0.7"), "198.18.0.7");
  EXPECT_EQ(KeyOfV6("::ffff:198.18.0.7"), "198.18.0.7");
  EXPECT_EQ(KeyOfV6("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
  EXPECT_EQ(KeyOfV6("2001:db8:1:2::1"), KeyOfV6("2001:db8:1:2:ffff::9"));
  EXPECT_EQ(ClientKey(nullptr), "unknown");
  sockaddr unix_addr{};
  unix_addr.sa_family = AF_UNIX;
  EXPECT_EQ(ClientKey(&unix_addr), "unknown");
}

TEST(HttpAddressesTest, HostNamesLoseThePortAndTheCase) {
  EXPECT_EQ(HostName("Qkov.Lab.Example:8080"), "qkov.lab.example");
  EXPECT_EQ(HostName("localhost"), "localhost");
  EXPECT_EQ(HostName("[::1]:8080"), "::1");
  EXPECT_EQ(HostName("[::1"), "");
  EXPECT_EQ(HostName("::1"), "::1");  // several colons: no port to strip
}

TEST(HttpAddressesTest, IpLiteralsOfBothFamilies) {
  EXPECT_TRUE(IsIpLiteral("127.0.0.1"));
  EXPECT_TRUE(IsIpLiteral("::1"));
  EXPECT_FALSE(IsIpLiteral("localhost"));
  EXPECT_FALSE(IsIpLiteral("127.0.0.1.example"));
  EXPECT_FALSE(IsIpLiteral(""));
}

}  // namespace
}  // namespace qkov::http
