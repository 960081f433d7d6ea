// The OAuth login of one server against an authorization server and a protected resource in the
// test (loopback HTTP): discovery from the challenge, registration, the authorization URL, the
// loopback redirect (and a pasted one), the `iss` check, the token exchange with the PKCE
// verifier, refresh on 401 and a new login for more scopes on 403 insufficient_scope.
#include <gtest/gtest.h>
#include <httplib.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "agent/mcp/oauth.h"
#include "agent/mcp/oauth_flow.h"
#include "agent/mcp/oauth_loopback.h"
#include "agent/mcp/servers.h"
#include "support/http/http_client.h"
#include "support/json_util.h"

namespace lousho::agent::mcp {
namespace {
namespace fs = std::filesystem;

// A GET of `url` (on loopback) as a browser makes it: the status and the body.
std::pair<int, std::string> BrowserGet(const std::string& url) {
  auto parts = SplitUrl(url);
  auto base = ParseBaseUrl(parts->origin);
  HttpPostRequest req;
  req.method = "GET";
  req.path = parts->path;
  std::string body;
  HttpStreamResult res = HttpClient(*base, HttpOptions{})
                             .PostStream(
                                 req,
                                 [&](std::string_view b, const MoreReady&) {
                                   body.append(b);
                                   return true;
                                 },
                                 CancelToken());
  return {res.status, res.status >= 300 ? res.error_body : body};
}

TEST(OAuthLoopback, WaitsForItsStateAndAnswersOthers) {
  auto l = LoopbackListener::Open();
  ASSERT_TRUE(l.ok());
  const std::string uri = (*l)->redirect_uri();
  ASSERT_EQ(uri.rfind("http://127.0.0.1:", 0), 0u);
  std::pair<int, std::string> wrong, other, right;
  std::thread browser([&] {
    wrong = BrowserGet(uri + "?code=x&state=not-it");
    other = BrowserGet(uri.substr(0, uri.size() - 8) + "favicon.ico");
    right = BrowserGet(uri + "?code=c%2B1&state=s-1&iss=https%3A%2F%2Fas");
  });
  auto q = (*l)->Wait("s-1", 60000, CancelToken());
  browser.join();
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_EQ(q->at("code"), "c+1");
  EXPECT_EQ(q->at("iss"), "https://as");
  EXPECT_EQ(wrong.first, 400);
  EXPECT_EQ(other.first, 400);
  EXPECT_EQ(right.first, 200);
  EXPECT_NE(right.second.find("logged in"), std::string::npos);
}

TEST(OAuthLoopback, CancelEndsTheWait) {
  auto l = LoopbackListener::Open();
  ASSERT_TRUE(l.ok());
  CancelSource cancel;
  cancel.Cancel();
  auto q = (*l)->Wait("s", 60000, cancel.token());
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().code, ErrorCode::kCancelled);
  auto timed = (*l)->Wait("s", 0, CancelToken());
  ASSERT_FALSE(timed.ok());
  EXPECT_EQ(timed.error().code, ErrorCode::kTimeout);
}

// The authorization server and the resource's metadata, one httplib server (paths apart).
class OAuthFlowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/lousho-oauthflow-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    svr_.Get("/.well-known/oauth-protected-resource/mcp",
             [this](const httplib::Request&, httplib::Response& res) {
               Json::Value d(Json::objectValue);
               d["resource"] = Origin() + "/mcp";
               d["authorization_servers"].append(Origin() + "/as");
               d["scopes_supported"].append("read");
               res.set_content(WriteJson(d), "application/json");
             });
    svr_.Get("/.well-known/oauth-authorization-server/as",
             [this](const httplib::Request&, httplib::Response& res) {
               Json::Value d(Json::objectValue);
               d["issuer"] = Origin() + "/as";
               d["authorization_endpoint"] = Origin() + "/as/authorize";
               d["token_endpoint"] = Origin() + "/as/token";
               d["registration_endpoint"] = Origin() + "/as/register";
               d["code_challenge_methods_supported"].append("S256");
               d["authorization_response_iss_parameter_supported"] = true;
               std::lock_guard<std::mutex> lock(mu_);
               if (!auth_methods_.isNull())
                 d["token_endpoint_auth_methods_supported"] = auth_methods_;
               res.set_content(WriteJson(d), "application/json");
             });
    svr_.Post("/as/register", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      registered_ = req.body;
      register_type_ = req.get_header_value("Content-Type");
      res.status = 201;
      res.set_content(R"({"client_id":"cid-1","token_endpoint_auth_method":"none"})",
                      "application/json");
    });
    svr_.Post("/as/token", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      token_type_ = req.get_header_value("Content-Type");
      auto f = ParseQuery(req.body);
      grants_.push_back(f);
      token_auth_.push_back(req.get_header_value("Authorization"));
      Json::Value d(Json::objectValue);
      if (!accept_auth_.empty() && token_auth_.back() != accept_auth_) {
        res.status = 401;
        res.set_content(R"({"error":"invalid_client","error_description":"bad client"})",
                        "application/json");
        return;
      }
      if (f["grant_type"] == "refresh_token" && f["refresh_token"] != "rt-" + std::to_string(n_)) {
        res.status = 400;
        res.set_content(R"({"error":"invalid_grant"})", "application/json");
        return;
      }
      ++n_;
      d["access_token"] = "at-" + std::to_string(n_);
      d["refresh_token"] = "rt-" + std::to_string(n_);
      d["expires_in"] = 3600;
      res.set_content(WriteJson(d), "application/json");
    });
    // The protected MCP server: one tool for the latest token, a challenge otherwise.
    svr_.Post("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (req.get_header_value("Authorization") != "Bearer at-" + std::to_string(n_) || n_ == 0) {
          res.status = 401;
          res.set_header("WWW-Authenticate", Challenge());
          return;
        }
      }
      auto msg = ParseJson(req.body);
      if (!msg.ok() || !msg->isMember("id")) {
        res.status = 202;
        return;
      }
      Json::Value reply(Json::objectValue);
      reply["jsonrpc"] = "2.0";
      reply["id"] = (*msg)["id"];
      const std::string method = StringOr(*msg, "method");
      Json::Value& r = reply["result"];
      if (method == "initialize") {
        r["protocolVersion"] = "2025-11-25";
        r["capabilities"]["tools"] = Json::Value(Json::objectValue);
        r["serverInfo"]["name"] = "guarded";
      } else if (method == "tools/list") {
        Json::Value tool(Json::objectValue);
        tool["name"] = "secret";
        tool["inputSchema"]["type"] = "object";
        r["tools"].append(tool);
      }
      res.set_content(WriteJson(reply), "application/json");
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void TearDown() override {
    svr_.stop();
    thread_.join();
    fs::remove_all(dir_);
  }
  std::string Origin() const { return "http://127.0.0.1:" + std::to_string(port_); }
  OAuthOptions Options() const {
    OAuthOptions o;
    o.server_url = Origin() + "/mcp";
    o.store_dir = dir_;
    o.login_timeout_ms = 60000;
    return o;
  }
  std::string Challenge(const std::string& extra = "") const {
    return "Bearer resource_metadata=\"" + Origin() +
           "/.well-known/oauth-protected-resource/mcp\"" + extra;
  }
  // A login UI that plays the user's browser: it reads the authorization URL and comes back to
  // the redirect with a code, the state and `iss` (or pastes the address when `paste`).
  LoginUi Browser(const std::string& iss, bool paste = false) {
    LoginUi ui;
    ui.show = [this, iss, paste](const std::string& url, const CancelToken& done,
                                 const CancelToken&) -> Result<std::string> {
      auto q = ParseQuery(url.substr(url.find('?')));
      {
        std::lock_guard<std::mutex> lock(mu_);
        asked_ = q;
      }
      const std::string back =
          WithQuery(q["redirect_uri"], {{"code", "the-code"}, {"state", q["state"]}, {"iss", iss}});
      if (paste) return back;
      BrowserGet(back);
      done.WaitFor(60000);
      return std::string();
    };
    return ui;
  }

  std::string dir_;
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::string registered_, register_type_, token_type_;
  std::vector<std::map<std::string, std::string>> grants_;
  std::map<std::string, std::string> asked_;
  int n_ = 0;
  Json::Value auth_methods_;             // token_endpoint_auth_methods_supported; null: not said
  std::vector<std::string> token_auth_;  // the Authorization header of each token request
  std::string accept_auth_;              // not empty: any other header is an invalid_client
};

TEST_F(OAuthFlowTest, LoginFromTheChallengeThenRefreshAndAnewProcessSeesTheToken) {
  auto auth = std::make_shared<ServerAuth>(Options());
  EXPECT_EQ(auth->Authorization(), "");
  EXPECT_FALSE(auth->Unauthorized(401, Challenge(", scope=\"read write\"")));
  EXPECT_TRUE(auth->needs_login());
  auto begun = auth->BeginLogin(CancelToken());
  ASSERT_TRUE(begun.ok()) << begun.error().message;
  const std::string redirect = begun->listener->redirect_uri();
  Status st = auth->FinishLogin(std::move(*begun), Browser(Origin() + "/as"), CancelToken());
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_FALSE(auth->needs_login());
  EXPECT_EQ(auth->Authorization(), "Bearer at-1");
  std::unique_lock<std::mutex> lock(mu_);
  // The authorization request: PKCE S256, the resource, the challenge's scope.
  EXPECT_EQ(asked_["response_type"], "code");
  EXPECT_EQ(asked_["client_id"], "cid-1");
  EXPECT_EQ(asked_["code_challenge_method"], "S256");
  EXPECT_EQ(asked_["resource"], Origin() + "/mcp");
  EXPECT_EQ(asked_["scope"], "read write");
  EXPECT_EQ(asked_["redirect_uri"], redirect);
  // Registration is JSON naming the loopback redirect; the exchange a form with the verifier.
  EXPECT_EQ(register_type_, "application/json");
  EXPECT_NE(registered_.find(redirect), std::string::npos);
  EXPECT_EQ(token_type_, "application/x-www-form-urlencoded");
  ASSERT_EQ(grants_.size(), 1u);
  EXPECT_EQ(grants_[0]["grant_type"], "authorization_code");
  EXPECT_EQ(grants_[0]["code"], "the-code");
  EXPECT_EQ(PkceS256(grants_[0]["code_verifier"]), asked_["code_challenge"]);
  EXPECT_EQ(grants_[0]["resource"], Origin() + "/mcp");
  EXPECT_EQ(grants_[0]["client_id"], "cid-1");
  lock.unlock();
  // A 401 with a token: refreshed, and the request goes again.
  EXPECT_TRUE(auth->Unauthorized(401, Challenge()));
  EXPECT_EQ(auth->Authorization(), "Bearer at-2");
  // Another ServerAuth (as a new process has) starts with the stored token.
  EXPECT_EQ(ServerAuth(Options()).Authorization(), "Bearer at-2");
  lock.lock();
  ASSERT_EQ(grants_.size(), 2u);
  EXPECT_EQ(grants_[1]["grant_type"], "refresh_token");
  EXPECT_EQ(grants_[1]["refresh_token"], "rt-1");
}

TEST_F(OAuthFlowTest, AnswerFromAnotherIssuerIsRefused) {
  auto auth = std::make_shared<ServerAuth>(Options());
  auth->Unauthorized(401, Challenge());
  auto begun = auth->BeginLogin(CancelToken());
  ASSERT_TRUE(begun.ok()) << begun.error().message;
  Status st = auth->FinishLogin(std::move(*begun), Browser("https://evil.example"), CancelToken());
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("issuer"), std::string::npos);
  EXPECT_EQ(auth->Authorization(), "");
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_TRUE(grants_.empty());  // the code was never exchanged
}

TEST_F(OAuthFlowTest, PastedRedirectAndIncrementalConsent) {
  auto auth = std::make_shared<ServerAuth>(Options());
  auth->Unauthorized(401, Challenge());
  auto begun = auth->BeginLogin(CancelToken());
  ASSERT_TRUE(begun.ok()) << begun.error().message;
  // Without a challenge scope, the resource's scopes are asked for.
  Status st = auth->FinishLogin(std::move(*begun), Browser(Origin() + "/as", /*paste=*/true),
                                CancelToken());
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(auth->Authorization(), "Bearer at-1");
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_EQ(asked_["scope"], "read");
  }
  // 403 insufficient_scope: no refresh, a new login asking for the old and the new scopes.
  EXPECT_FALSE(
      auth->Unauthorized(403, Challenge(", error=\"insufficient_scope\", scope=\"admin\"")));
  EXPECT_TRUE(auth->needs_login());
  begun = auth->BeginLogin(CancelToken());
  ASSERT_TRUE(begun.ok());
  EXPECT_EQ(ParseQuery(begun->url.substr(begun->url.find('?')))["scope"], "admin read");
  // Logout forgets it, here and on disk.
  auto out = auth->Logout();
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(*out);
  EXPECT_EQ(ServerAuth(Options()).Authorization(), "");
}

// The editor's URL step, played by the test: it "opens" the URL by coming back to its redirect.
class FakeUrlSteps : public Elicitation {
 public:
  explicit FakeUrlSteps(std::string iss) : iss_(std::move(iss)) {}
  bool CanAskForm() const override { return false; }
  bool CanOpenUrl() const override { return true; }
  Result<FormReply> AskForm(const std::string&, const FormRequest&, const CancelToken&) override {
    return MakeError(ErrorCode::kClientError, "no forms");
  }
  Result<ElicitationAction> OpenUrl(const std::string& session_id, const UrlRequest& request,
                                    const CancelToken& done, const CancelToken&) override {
    session_ = session_id;
    auto q = ParseQuery(request.url.substr(request.url.find('?')));
    BrowserGet(WithQuery(q["redirect_uri"], {{"code", "c"}, {"state", q["state"]}, {"iss", iss_}}));
    done.WaitFor(60000);
    return ElicitationAction::kAccept;
  }
  std::string session_;

 private:
  std::string iss_;
};

TEST_F(OAuthFlowTest, AServerWaitingForALoginDoesNotHoldTheSessionAndItsToolsComeAfter) {
  config::McpServerSpec spec;
  spec.name = "guarded";
  spec.transport = config::McpTransport::kHttp;
  spec.url = Origin() + "/mcp";
  FakeUrlSteps steps(Origin() + "/as");
  StartOptions so;
  so.settings.start_timeout_ms = 30000;
  so.auth_dir = dir_;
  CancelSource announced;
  so.login.elicitation = &steps;
  so.login.session_id = "sess-1";
  so.login.announced = announced.token();
  so.login.wait_announced = true;
  std::mutex m;
  std::condition_variable cv;
  std::vector<std::pair<bool, std::string>> told;
  so.login.on_login = [&](const std::string& server, bool waiting, const std::string& msg) {
    std::lock_guard<std::mutex> lock(m);
    EXPECT_EQ(server, "guarded");
    told.emplace_back(waiting, msg);
    cv.notify_all();
  };
  auto servers = McpServers::Start({spec}, so);
  // Started: not connected, waiting at a URL; the model sees only the tool that says so.
  auto status = servers->status();
  ASSERT_EQ(status.size(), 1u);
  EXPECT_FALSE(status[0].connected);
  ASSERT_EQ(status[0].login_url.rfind(Origin() + "/as/authorize?", 0), 0u) << status[0].error;
  EXPECT_NE(FailureMessage(status[0]).find("lousho mcp login guarded"), std::string::npos);
  auto tools = servers->CurrentTools(CancelToken());
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0]->name(), "mcp__guarded__login_needed");
  ToolContext ctx;
  EXPECT_NE(tools[0]->Run(Json::Value(), ctx).content[0].text.find(status[0].login_url),
            std::string::npos);
  // Nothing is asked before the door says the client knows the session.
  {
    std::lock_guard<std::mutex> lock(m);
    EXPECT_TRUE(told.empty());
  }
  announced.Cancel();
  {
    std::unique_lock<std::mutex> lock(m);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return told.size() == 2; }));
    EXPECT_TRUE(told[0].first);
    EXPECT_FALSE(told[1].first);
    EXPECT_NE(told[1].second.find("Logged in"), std::string::npos) << told[1].second;
  }
  EXPECT_EQ(steps.session_, "sess-1");
  tools = servers->CurrentTools(CancelToken());
  ASSERT_EQ(tools.size(), 1u);
  EXPECT_EQ(tools[0]->name(), "mcp__guarded__secret");
  EXPECT_TRUE(servers->status()[0].connected);
  servers->Close();
}

TEST_F(OAuthFlowTest, NoMetadataNoLogin) {
  OAuthOptions o = Options();
  o.server_url = Origin() + "/elsewhere";
  ServerAuth auth(o);
  auto begun = auth.BeginLogin(CancelToken());
  ASSERT_FALSE(begun.ok());
  EXPECT_NE(begun.error().message.find("protected-resource metadata"), std::string::npos);
}

}  // namespace
}  // namespace lousho::agent::mcp

namespace lousho::agent::mcp {
namespace {

// A client registered beforehand (a server's `oauth:`): no registration; the token endpoint
// gets client_secret_basic over the form-encoded id and secret; the secret is not stored, and a
// new ServerAuth (a new process) refreshes with the spec's secret.
TEST_F(OAuthFlowTest, PreRegisteredClientUsesBasicAndIsNeverRegistered) {
  OAuthOptions o = Options();
  o.server_name = "guarded";
  o.pre_registered.client_id = "my app:1";
  o.pre_registered.client_secret = "s3cret&=/x";
  o.pre_registered.scopes = {"read", "extra"};
  auto auth = std::make_shared<ServerAuth>(o);
  auth->Unauthorized(401, Challenge());
  auto begun = auth->BeginLogin(CancelToken());
  ASSERT_TRUE(begun.ok()) << begun.error().message;
  Status st = auth->FinishLogin(std::move(*begun), Browser(Origin() + "/as"), CancelToken());
  ASSERT_TRUE(st.ok()) << st.error().message;
  const std::string basic = "Basic " + Base64Encode("my%20app%3A1:s3cret%26%3D%2Fx", false);
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_TRUE(registered_.empty());
    EXPECT_EQ(asked_["client_id"], "my app:1");
    EXPECT_EQ(asked_["scope"], "read extra");
    ASSERT_EQ(token_auth_.size(), 1u);
    EXPECT_EQ(token_auth_[0], basic);
    EXPECT_EQ(grants_[0].count("client_secret"), 0u);
    EXPECT_EQ(grants_[0].count("client_id"), 0u);
  }
  // The stored file holds the tokens, not the secret.
  std::string stored;
  for (const auto& e : fs::directory_iterator(dir_)) {
    std::ifstream in(e.path());
    stored += std::string(std::istreambuf_iterator<char>(in), {});
  }
  EXPECT_NE(stored.find("at-1"), std::string::npos);
  EXPECT_EQ(stored.find("s3cret"), std::string::npos);
  // A new ServerAuth refreshes with the secret of its options.
  ServerAuth again(o);
  EXPECT_TRUE(again.Unauthorized(401, Challenge()));
  EXPECT_EQ(again.Authorization(), "Bearer at-2");
  std::lock_guard<std::mutex> lock(mu_);
  ASSERT_EQ(token_auth_.size(), 2u);
  EXPECT_EQ(token_auth_[1], basic);
  EXPECT_EQ(grants_[1]["grant_type"], "refresh_token");
}

TEST_F(OAuthFlowTest, PreRegisteredClientPostsWhereOnlyPostIsOfferedSecretFromEnv) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auth_methods_.append("client_secret_post");
  }
  OAuthOptions o = Options();
  o.pre_registered.client_id = "app";
  o.pre_registered.client_secret_env = "LOUSHO_TEST_PREREG_SECRET";
  unsetenv("LOUSHO_TEST_PREREG_SECRET");
  auto auth = std::make_shared<ServerAuth>(o);
  auth->Unauthorized(401, Challenge());
  auto missing = auth->BeginLogin(CancelToken());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("LOUSHO_TEST_PREREG_SECRET"), std::string::npos);
  setenv("LOUSHO_TEST_PREREG_SECRET", "from env+1", 1);
  auto begun = auth->BeginLogin(CancelToken());
  ASSERT_TRUE(begun.ok()) << begun.error().message;
  Status st = auth->FinishLogin(std::move(*begun), Browser(Origin() + "/as"), CancelToken());
  unsetenv("LOUSHO_TEST_PREREG_SECRET");
  ASSERT_TRUE(st.ok()) << st.error().message;
  std::lock_guard<std::mutex> lock(mu_);
  ASSERT_EQ(grants_.size(), 1u);
  EXPECT_EQ(token_auth_[0], "");
  EXPECT_EQ(grants_[0]["client_id"], "app");
  EXPECT_EQ(grants_[0]["client_secret"], "from env+1");
  EXPECT_TRUE(registered_.empty());
}

TEST_F(OAuthFlowTest, WrongPreRegisteredSecretNamesTheServerNotTheSecret) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    accept_auth_ = "Basic " + Base64Encode("app:right", false);
  }
  OAuthOptions o = Options();
  o.server_name = "guarded";
  o.pre_registered.client_id = "app";
  o.pre_registered.client_secret = "wrong-secret";
  auto auth = std::make_shared<ServerAuth>(o);
  auth->Unauthorized(401, Challenge());
  auto begun = auth->BeginLogin(CancelToken());
  ASSERT_TRUE(begun.ok()) << begun.error().message;
  Status st = auth->FinishLogin(std::move(*begun), Browser(Origin() + "/as"), CancelToken());
  ASSERT_FALSE(st.ok());
  const std::string& m = st.error().message;
  EXPECT_NE(m.find("MCP server 'guarded'"), std::string::npos) << m;
  EXPECT_NE(m.find("invalid_client"), std::string::npos) << m;
  EXPECT_NE(m.find("'app'"), std::string::npos) << m;
  EXPECT_EQ(m.find("wrong-secret"), std::string::npos) << m;
  EXPECT_EQ(auth->Authorization(), "");
}

}  // namespace
}  // namespace lousho::agent::mcp
