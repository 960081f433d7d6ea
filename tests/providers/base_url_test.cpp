// Tests for ParseBaseUrl (support/http/http_client): hosts, ports and paths, IPv6 literals.
#include <gtest/gtest.h>

#include "support/http/http_client.h"

namespace lousho::agent {
namespace {

TEST(BaseUrlTest, Ipv6LiteralsKeepTheirBrackets) {
  auto u = ParseBaseUrl("http://[::1]:8080/v1/?q=1#f");
  ASSERT_TRUE(u.ok()) << u.error().message;
  EXPECT_EQ(u->host, "[::1]");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->path_prefix, "/v1");
  auto d = ParseBaseUrl("https://[::1]");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->host, "[::1]");
  EXPECT_EQ(d->port, 443);
  EXPECT_NE(ParseBaseUrl("http://[::1/v1").error().message.find("unclosed IPv6"),
            std::string::npos);
  EXPECT_NE(ParseBaseUrl("http://[::1]x").error().message.find("bad port"), std::string::npos);
}

TEST(BaseUrlTest, PortsAndDefaults) {
  auto h = ParseBaseUrl("HTTP://example.com?x");
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->scheme, "http");
  EXPECT_EQ(h->port, 80);
  EXPECT_EQ(h->path_prefix, "");
  auto p = ParseBaseUrl("http://example.com:65535//");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->port, 65535);
  EXPECT_EQ(p->path_prefix, "");
  for (const char* bad :
       {"http://h:0", "http://h:65536", "http://h:123456", "http://h:8a", "http://h:-1"})
    EXPECT_NE(ParseBaseUrl(bad).error().message.find("bad port"), std::string::npos) << bad;
  EXPECT_NE(ParseBaseUrl("http://u:p@h/").error().message.find("credentials"), std::string::npos);
  EXPECT_NE(ParseBaseUrl("http://:8080").error().message.find("missing host"), std::string::npos);
}

}  // namespace
}  // namespace lousho::agent
