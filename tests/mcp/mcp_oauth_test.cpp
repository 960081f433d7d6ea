// OAuth for HTTP MCP servers: the pure parts (PKCE against RFC 7636's vector, base64, the Bearer
// challenge, metadata documents, scopes), the token store (0600, read back by a new process),
// the loopback listener, and the whole login against an authorization server in the test
// (the `iss` check, a pasted redirect, refresh on 401, incremental consent on 403).
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "agent/mcp/oauth.h"
#include "agent/mcp/oauth_flow.h"
#include "agent/mcp/oauth_loopback.h"
#include "agent/mcp/oauth_store.h"
#include "support/env.h"
#include "support/files.h"
#include "support/http/http_client.h"
#include "support/json_util.h"
#include "support/subprocess.h"

namespace lousho::agent::mcp {
namespace {
namespace fs = std::filesystem;

TEST(OAuthPure, PkceS256MatchesRfc7636AppendixB) {
  EXPECT_EQ(PkceS256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

TEST(OAuthPure, Base64MatchesRfc4648) {
  EXPECT_EQ(Base64Encode("", false), "");
  EXPECT_EQ(Base64Encode("f", false), "Zg==");
  EXPECT_EQ(Base64Encode("fo", false), "Zm8=");
  EXPECT_EQ(Base64Encode("foobar", false), "Zm9vYmFy");
  EXPECT_EQ(Base64Encode("fo", true), "Zm8");
  EXPECT_EQ(Base64Encode("\xfb\xff", true), "-_8");
  EXPECT_EQ(Base64Encode("\xfb\xff", false), "+/8=");
}

TEST(OAuthPure, RandomTokensAreUrlSafeAndDiffer) {
  auto a = RandomUrlToken(32);
  auto b = RandomUrlToken(32);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 43u);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(
      a->find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
      std::string::npos);
}

TEST(OAuthPure, BearerChallengeParams) {
  auto c = ParseBearerChallenge(
      R"(Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", )"
      R"(scope="files:read files:write", error="insufficient_scope")");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->Param("resource_metadata"),
            "https://mcp.example.com/.well-known/oauth-protected-resource");
  EXPECT_EQ(c->Param("scope"), "files:read files:write");
  EXPECT_EQ(c->Param("error"), "insufficient_scope");
  // Another scheme first, quoted commas and escapes, a token value, names in any case.
  c = ParseBearerChallenge(
      R"(Basic realm="a, b", BEARER Realm="x \"y\"", error=invalid_token, scope="a")");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->Param("realm"), "x \"y\"");
  EXPECT_EQ(c->Param("error"), "invalid_token");
  EXPECT_EQ(c->Param("scope"), "a");
  EXPECT_FALSE(ParseBearerChallenge(R"(Basic realm="bearer")"));
  EXPECT_FALSE(ParseBearerChallenge(""));
  c = ParseBearerChallenge("Bearer");
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->params.empty());
}

TEST(OAuthPure, WellKnownUrls) {
  EXPECT_EQ(
      ProtectedResourceMetadataUrls("https://h.example/public/mcp"),
      (std::vector<std::string>{"https://h.example/.well-known/oauth-protected-resource/public/mcp",
                                "https://h.example/.well-known/oauth-protected-resource"}));
  EXPECT_EQ(ProtectedResourceMetadataUrls("http://127.0.0.1:8/"),
            (std::vector<std::string>{"http://127.0.0.1:8/.well-known/oauth-protected-resource"}));
  EXPECT_EQ(AuthServerMetadataUrls("https://auth.example/tenant1"),
            (std::vector<std::string>{
                "https://auth.example/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example/.well-known/openid-configuration/tenant1",
                "https://auth.example/tenant1/.well-known/openid-configuration"}));
  EXPECT_EQ(AuthServerMetadataUrls("https://auth.example"),
            (std::vector<std::string>{"https://auth.example/.well-known/oauth-authorization-server",
                                      "https://auth.example/.well-known/openid-configuration"}));
  EXPECT_TRUE(ProtectedResourceMetadataUrls("not a url").empty());
}

TEST(OAuthPure, UrlsAndForms) {
  EXPECT_EQ(FormBody({{"a b", "c&d=é"}, {"x", ""}}), "a%20b=c%26d%3D%C3%A9&x=");
  auto q = ParseQuery("?code=a%2Bb+c&state=s&state=t&empty&=v&bad=%zz");
  EXPECT_EQ(q["code"], "a+b c");
  EXPECT_EQ(q["state"], "s");  // the first of a repeated parameter
  EXPECT_EQ(q["empty"], "");
  EXPECT_EQ(q["bad"], "%zz");
  EXPECT_EQ(q.count(""), 0u);
  EXPECT_EQ(WithQuery("https://a/x?p=1", {{"q", "2"}}), "https://a/x?p=1&q=2");
  EXPECT_EQ(CanonicalResource("HTTPS://Mcp.Example.com/"), "https://mcp.example.com");
  EXPECT_EQ(CanonicalResource("https://mcp.example.com/mcp#frag"), "https://mcp.example.com/mcp");
  auto u = SplitUrl("http://127.0.0.1:5/cb?x=1#f");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->origin, "http://127.0.0.1:5");
  EXPECT_EQ(u->path, "/cb?x=1");
  EXPECT_FALSE(SplitUrl("http://"));
}

Json::Value Doc(const std::string& text) {
  auto v = ParseJson(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? *v : Json::Value();
}

TEST(OAuthPure, ProtectedResourceMetadata) {
  auto m = ParseProtectedResourceMetadata(Doc(
      R"({"resource":"https://r/mcp","authorization_servers":["https://as",7,""],"scopes_supported":["a","b"]})"));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->resource, "https://r/mcp");
  EXPECT_EQ(m->authorization_servers, std::vector<std::string>{"https://as"});
  EXPECT_EQ(m->scopes_supported, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(ParseProtectedResourceMetadata(Doc(R"({"resource":"https://r"})")).ok());
  EXPECT_FALSE(ParseProtectedResourceMetadata(Doc("[1]")).ok());
}

TEST(OAuthPure, AuthServerMetadata) {
  const std::string good =
      R"({"issuer":"https://as/t","authorization_endpoint":"https://as/a","token_endpoint":"https://as/t/token",
          "registration_endpoint":"https://as/r","code_challenge_methods_supported":["plain","S256"],
          "client_id_metadata_document_supported":true,
          "authorization_response_iss_parameter_supported":true,"scopes_supported":["x"]})";
  auto m = ParseAuthServerMetadata(Doc(good), "https://as/t/");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->token_endpoint, "https://as/t/token");
  EXPECT_EQ(m->registration_endpoint, "https://as/r");
  EXPECT_TRUE(m->client_id_metadata_documents);
  EXPECT_TRUE(m->iss_parameter);
  // Another issuer than the one asked for (RFC 8414 3.3): refused.
  auto other = ParseAuthServerMetadata(Doc(good), "https://evil/t");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("issuer"), std::string::npos);
  // No S256: no login.
  auto plain = ParseAuthServerMetadata(
      Doc(R"({"issuer":"https://as","authorization_endpoint":"https://as/a","token_endpoint":"https://as/t",
              "code_challenge_methods_supported":["plain"]})"),
      "https://as");
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.error().message.find("S256"), std::string::npos);
  EXPECT_FALSE(ParseAuthServerMetadata(
                   Doc(R"({"issuer":"https://as","code_challenge_methods_supported":["S256"]})"),
                   "https://as")
                   .ok());
}

TEST(OAuthPure, TokenResponses) {
  auto t = ParseTokenResponse(Doc(
      R"({"access_token":"at","refresh_token":"rt","expires_in":60,"scope":"a","token_type":"Bearer"})"));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->access_token, "at");
  EXPECT_EQ(t->refresh_token, "rt");
  EXPECT_EQ(t->expires_in, 60);
  auto refused = ParseTokenResponse(
      Doc(R"({"error":"invalid_grant","error_description":"the code was used"})"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("invalid_grant: the code was used"), std::string::npos);
  EXPECT_FALSE(ParseTokenResponse(Doc(R"({"token_type":"Bearer"})")).ok());
}

TEST(OAuthPure, ScopeChoice) {
  ProtectedResourceMetadata prm;
  AuthServerMetadata as;
  as.scopes_supported = {"as1"};
  EXPECT_EQ(ChooseScope("", prm, as, ""), "as1");
  prm.scopes_supported = {"r1", "r2"};
  EXPECT_EQ(ChooseScope("", prm, as, ""), "r1 r2");
  EXPECT_EQ(ChooseScope("c1", prm, as, ""), "c1");
  // Incremental consent: what was granted stays asked for, once.
  EXPECT_EQ(ChooseScope("write", prm, as, "read write"), "write read");
  EXPECT_EQ(ChooseScope("", {}, {}, ""), "");
}

TEST(OAuthPure, TokenEndpointAuthMethodChoice) {
  // RFC 8414: no list means client_secret_basic; basic is preferred where both are offered.
  EXPECT_EQ(*ChooseTokenAuthMethod({}, true), "client_secret_basic");
  EXPECT_EQ(*ChooseTokenAuthMethod({"client_secret_post", "client_secret_basic"}, true),
            "client_secret_basic");
  EXPECT_EQ(*ChooseTokenAuthMethod({"none", "client_secret_post"}, true), "client_secret_post");
  // A public client (no secret) sends its id only.
  EXPECT_EQ(*ChooseTokenAuthMethod({"client_secret_basic"}, false), "none");
  auto neither = ChooseTokenAuthMethod({"private_key_jwt"}, true);
  ASSERT_FALSE(neither.ok());
  EXPECT_NE(neither.error().message.find("private_key_jwt"), std::string::npos);
}

TEST(OAuthPure, ClientSecretBasicFormEncodesIdAndSecretBeforeBase64) {
  // RFC 6749 2.3.1: id and secret are form-encoded, joined by ':', then base64 (with padding).
  // The expected value was computed apart (Python: urllib.parse.quote, base64.b64encode).
  std::vector<std::pair<std::string, std::string>> headers, fields = {{"grant_type", "x"}};
  AuthenticateClient({"a b:c", "p&s=w:d%/\xC3\xA9", "client_secret_basic"}, &headers, &fields);
  ASSERT_EQ(headers.size(), 1u);
  EXPECT_EQ(headers[0].first, "Authorization");
  EXPECT_EQ(headers[0].second, "Basic YSUyMGIlM0FjOnAlMjZzJTNEdyUzQWQlMjUlMkYlQzMlQTk=");
  // Neither the id nor the secret goes in the body then.
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0].first, "grant_type");
}

TEST(OAuthPure, ClientSecretPostAndPublicClientsUseTheBody) {
  std::vector<std::pair<std::string, std::string>> headers, fields;
  AuthenticateClient({"id 1", "s&e=c", "client_secret_post"}, &headers, &fields);
  EXPECT_TRUE(headers.empty());
  // The form body encodes them, and a server reads back the originals.
  auto back = ParseQuery("?" + FormBody(fields));
  EXPECT_EQ(back["client_id"], "id 1");
  EXPECT_EQ(back["client_secret"], "s&e=c");
  fields.clear();
  AuthenticateClient({"public", "", "none"}, &headers, &fields);
  EXPECT_TRUE(headers.empty());
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0], std::make_pair(std::string("client_id"), std::string("public")));
}

// --- the token store -------------------------------------------------------------------------

class OAuthDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/lousho-oauth-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

StoredToken SampleToken(const std::string& url) {
  StoredToken t;
  t.server_url = url;
  t.issuer = "https://as";
  t.token_endpoint = "https://as/token";
  t.client_id = "c-1";
  t.resource = url;
  t.access_token = "at-1";
  t.refresh_token = "rt-1";
  t.scope = "a b";
  t.expires_at = 1900000000;
  return t;
}

using OAuthStore = OAuthDir;

TEST_F(OAuthStore, PrivateFileReadBackByANewProcess) {
  TokenStore store(dir_ + "/lousho/mcp-auth");
  const std::string url = "https://mcp.example.com/mcp";
  ASSERT_TRUE(store.Save(SampleToken(url)).ok());
  ASSERT_TRUE(store.Save(SampleToken("https://other.example/mcp")).ok());
  struct stat st {};
  ASSERT_EQ(stat(store.PathFor(url).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Another process (this test binary, running only the reader below) finds it.
  SubprocessOptions o;
  o.argv = {ExecutablePath(), "--gtest_filter=OAuthStoreChild.ReadsTheParentsToken"};
  o.env = {{"LOUSHO_OAUTH_TEST_DIR", store.dir()}, {"LOUSHO_OAUTH_TEST_URL", url}};
  o.timeout_ms = 60000;
  auto run = RunSubprocess(o);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 0) << run->output;
  EXPECT_NE(run->output.find("[  PASSED  ] 1 test"), std::string::npos) << run->output;
  // Logout removes that server's file only.
  auto forgot = store.Forget(url);
  ASSERT_TRUE(forgot.ok());
  EXPECT_TRUE(*forgot);
  EXPECT_TRUE(store.Load(url)->access_token.empty());
  EXPECT_EQ(store.Load("https://other.example/mcp")->access_token, "at-1");
  EXPECT_FALSE(*store.Forget(url));
}

// Run by the test above in a process of its own; skipped otherwise.
TEST(OAuthStoreChild, ReadsTheParentsToken) {
  auto dir = ProcessEnv("LOUSHO_OAUTH_TEST_DIR");
  auto url = ProcessEnv("LOUSHO_OAUTH_TEST_URL");
  if (!dir || !url) GTEST_SKIP() << "run by OAuthStore.PrivateFileReadBackByANewProcess";
  auto t = TokenStore(*dir).Load(*url);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->access_token, "at-1");
  EXPECT_EQ(t->refresh_token, "rt-1");
  EXPECT_EQ(t->client_id, "c-1");
  EXPECT_EQ(t->scope, "a b");
  EXPECT_EQ(t->expires_at, 1900000000);
}

TEST_F(OAuthStore, BadFilesAndPlaces) {
  TokenStore store(dir_);
  const std::string url = "https://mcp.example.com/mcp";
  ASSERT_TRUE(store.Save(SampleToken(url)).ok());
  // A file of another URL under this name (a copy, a collision) is not used.
  fs::copy_file(store.PathFor(url), store.PathFor("https://x/mcp"));
  EXPECT_TRUE(store.Load("https://x/mcp")->access_token.empty());
  // A broken file is an error that does not quote it.
  ASSERT_TRUE(WritePrivateFile(store.PathFor(url), "{\"access_token\": \"sec").ok());
  auto broken = store.Load(url);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().message.find("sec"), std::string::npos);
  // No home: nothing is kept, and saying so.
  EXPECT_FALSE(TokenStore("").Save(SampleToken(url)).ok());
  EXPECT_EQ(TokenStoreDir([](const std::string& n) -> std::optional<std::string> {
              if (n == "XDG_CONFIG_HOME") return std::string("/cfg");
              return std::nullopt;
            }),
            "/cfg/lousho/mcp-auth");
}

}  // namespace
}  // namespace lousho::agent::mcp
