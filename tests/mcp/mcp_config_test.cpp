// Tests of where MCP servers come from: the spec's mcp_servers (with ${VAR}), the editor's
// mcpServers, and how the two merge.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "acp/codec.h"
#include "agent/mcp/servers.h"
#include "config/agent_spec.h"
#include "support/json_util.h"

namespace lousho {
namespace {
namespace fs = std::filesystem;

class McpSpecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-mcp-spec-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Result<config::AgentSpec> Load(const std::string& text) {
    std::ofstream(dir_ / "agent.yaml") << text;
    config::LoadOptions o;
    o.env = [](const std::string& k) -> std::optional<std::string> {
      if (k == "GH_TOKEN") return "t0k";
      if (k == "HOME_DIR") return "/home/me";
      return std::nullopt;
    };
    return config::LoadAgentSpec((dir_ / "agent.yaml").string(), o);
  }
  fs::path dir_;
};

TEST_F(McpSpecTest, ServersOfEveryTransportWithVariables) {
  auto spec = Load(R"(model: script/echo
mcp:
  startTimeoutMs: 2500
  callTimeoutMs: 9000
  maxRestarts: 1
mcp_servers:
  files:
    command: npx
    args: ["-y", "fs-server", "${HOME_DIR}/src"]
    env: {LEVEL: "${MISSING_OK:-debug}"}
    cwd: /tmp
  github:
    type: http
    url: https://api.example.com/mcp
    headers: {Authorization: "Bearer ${GH_TOKEN}"}
  old:
    type: sse
    url: http://127.0.0.1:9/sse
    headers: [{name: X-Key, value: "$${literal}"}]
)");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_EQ(spec->mcp_servers.size(), 3u);
  const auto& files = spec->mcp_servers[0];
  EXPECT_EQ(files.name, "files");
  EXPECT_EQ(files.transport, config::McpTransport::kStdio);
  EXPECT_EQ(files.command, "npx");
  EXPECT_EQ(files.args, (std::vector<std::string>{"-y", "fs-server", "/home/me/src"}));
  EXPECT_EQ(files.env, (std::vector<std::pair<std::string, std::string>>{{"LEVEL", "debug"}}));
  EXPECT_EQ(files.cwd, "/tmp");
  const auto& gh = spec->mcp_servers[1];
  EXPECT_EQ(gh.transport, config::McpTransport::kHttp);
  EXPECT_EQ(gh.headers[0].second, "Bearer t0k");
  const auto& old = spec->mcp_servers[2];
  EXPECT_EQ(old.transport, config::McpTransport::kSse);
  EXPECT_EQ(old.headers[0], (std::pair<std::string, std::string>{"X-Key", "${literal}"}));
  EXPECT_EQ(spec->mcp.start_timeout_ms, 2500);
  EXPECT_EQ(spec->mcp.call_timeout_ms, 9000);
  EXPECT_EQ(spec->mcp.max_restarts, 1);
}

TEST_F(McpSpecTest, ClientMetadataUrlIsAnHttpsUrlWithAPath) {
  auto spec =
      Load("model: script/echo\nmcp:\n  clientMetadataUrl: https://example.com/lousho.json\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->mcp.client_metadata_url, "https://example.com/lousho.json");
  for (const char* bad : {"http://example.com/lousho.json", "https://example.com/", "lousho"}) {
    auto wrong = Load(std::string("model: script/echo\nmcp:\n  clientMetadataUrl: ") + bad + "\n");
    ASSERT_FALSE(wrong.ok()) << bad;
    EXPECT_NE(wrong.error().message.find("clientMetadataUrl"), std::string::npos);
  }
}

TEST_F(McpSpecTest, PreRegisteredOAuthClientOfAnHttpServer) {
  auto spec = Load(R"(model: script/echo
mcp_servers:
  gh:
    url: https://x/mcp
    oauth: {clientId: app-1, clientSecret: "${GH_TOKEN}", scopes: [repo, read]}
  env:
    url: https://y/mcp
    oauth: {clientId: app-2, clientSecretEnv: APP_SECRET}
)");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_EQ(spec->mcp_servers.size(), 2u);
  const auto& gh = spec->mcp_servers[0].oauth;
  EXPECT_EQ(gh.client_id, "app-1");
  EXPECT_EQ(gh.client_secret, "t0k");
  EXPECT_EQ(gh.scopes, (std::vector<std::string>{"repo", "read"}));
  const auto& env = spec->mcp_servers[1].oauth;
  EXPECT_EQ(env.client_id, "app-2");
  EXPECT_EQ(env.client_secret, "") << "read from the environment when used";
  EXPECT_EQ(env.client_secret_env, "APP_SECRET");
  const struct {
    const char* server;
    const char* error;
  } bad[] = {
      {"{command: c, oauth: {clientId: a}}", "'url', 'headers' and 'oauth' need type http or sse"},
      {"{url: 'https://x', oauth: {clientSecret: s}}", "oauth: missing required key 'clientId'"},
      {"{url: 'https://x', oauth: {clientId: a, clientSecret: s, clientSecretEnv: E}}",
       "give clientSecret or clientSecretEnv, not both"},
      {"{url: 'https://x', oauth: {clientId: a, secret: s}}", "unknown key 'secret' in oauth"},
      {"{url: 'https://x', oauth: {clientId: a, scopes: repo}}",
       "oauth.scopes: expected a list of strings"},
  };
  for (const auto& c : bad) {
    auto r = Load(std::string("model: script/echo\nmcp_servers:\n  a: ") + c.server + "\n");
    ASSERT_FALSE(r.ok()) << c.server;
    EXPECT_NE(r.error().message.find(c.error), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find("clientSecret: s"), std::string::npos);
  }
}

TEST(McpMergeTest, AnEditorsHttpServerUsesTheSpecsOAuthClientForItsUrl) {
  config::McpServerSpec editor;
  editor.name = "tracker";
  editor.transport = config::McpTransport::kHttp;
  editor.url = "https://t/mcp";
  config::McpServerSpec other = editor;
  other.name = "other";
  other.url = "https://o/mcp";
  config::McpServerSpec mine = editor;
  mine.name = "t";
  mine.oauth.client_id = "app";
  mine.oauth.client_secret_env = "T_SECRET";
  auto merged = agent::mcp::MergeServers({editor, other}, {mine});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].oauth.client_id, "app");
  EXPECT_EQ(merged[0].oauth.client_secret_env, "T_SECRET");
  EXPECT_EQ(merged[1].oauth.client_id, "") << "another URL";
}

TEST_F(McpSpecTest, MissingVariableIsInvalidAtItsPosition) {
  auto spec = Load(R"(model: script/echo
mcp_servers:
  github:
    url: https://x/mcp
    headers:
      Authorization: "Bearer ${NOPE_TOKEN}"
)");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().code, ErrorCode::kConfigInvalid);
  const std::string want = (dir_ / "agent.yaml").string() + ":6:22: ";
  EXPECT_EQ(spec.error().message.rfind(want, 0), 0u) << spec.error().message;
  EXPECT_NE(spec.error().message.find("NOPE_TOKEN is not set"), std::string::npos);
}

TEST_F(McpSpecTest, BadServersAreInvalid) {
  for (const char* body : {"  a: {type: ftp, url: http://x}\n", "  a: {args: [x]}\n",
                           "  a: {command: x, url: http://y}\n", "  a: {url: ftp://y}\n",
                           "  a: {command: x, bogus: 1}\n"}) {
    auto spec = Load(std::string("model: script/echo\nmcp_servers:\n") + body);
    ASSERT_FALSE(spec.ok()) << body;
    EXPECT_EQ(spec.error().code, ErrorCode::kConfigInvalid) << body;
    EXPECT_NE(spec.error().message.find(":3:"), std::string::npos) << spec.error().message;
  }
}

TEST(McpAcpTest, McpServersFromJsonReadsTheSchemaShapes) {
  auto list = *ParseJson(R"([
    {"name":"fs","command":"/bin/fs","args":["--root","/w"],"env":[{"name":"A","value":"1"}]},
    {"type":"http","name":"gh","url":"https://x/mcp","headers":[{"name":"Authorization","value":"Bearer t"}]},
    {"type":"sse","name":"old","url":"http://y/sse","headers":[]}
  ])");
  auto servers = acp::McpServersFromJson(list);
  ASSERT_TRUE(servers.ok()) << servers.error().message;
  ASSERT_EQ(servers->size(), 3u);
  EXPECT_EQ((*servers)[0].transport, config::McpTransport::kStdio);
  EXPECT_EQ((*servers)[0].args, (std::vector<std::string>{"--root", "/w"}));
  EXPECT_EQ((*servers)[0].env[0].second, "1");
  EXPECT_EQ((*servers)[1].transport, config::McpTransport::kHttp);
  EXPECT_EQ((*servers)[1].headers[0].second, "Bearer t");
  EXPECT_EQ((*servers)[2].transport, config::McpTransport::kSse);
}

TEST(McpAcpTest, MalformedServersNameThePath) {
  struct Case {
    const char* json;
    const char* path;
  } cases[] = {
      {R"([{"command":"x"}])", "params.mcpServers[0].name"},
      {R"([{"name":"a"}])", "params.mcpServers[0].command"},
      {R"([{"name":"a","command":"x","env":[{"name":"A"}]}])", "params.mcpServers[0].env[0].value"},
      {R"([{"name":"a","type":"http"}])", "params.mcpServers[0].url"},
      {R"([{"name":"a","type":"ws","url":"x"}])", "params.mcpServers[0].type"},
      {R"([{"name":"a","command":"x","args":[1]}])", "params.mcpServers[0].args[0]"},
  };
  for (const auto& c : cases) {
    auto r = acp::McpServersFromJson(*ParseJson(c.json));
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.error().message.rfind(c.path, 0), 0u) << r.error().message;
  }
}

TEST(McpMergeTest, TheEditorsServerOfTheSameNameWins) {
  config::McpServerSpec a{
      "a", config::McpTransport::kStdio, "editor-a", {}, {}, "", "", {}, nullptr, {}};
  config::McpServerSpec a2{"a", config::McpTransport::kStdio, "spec-a", {}, {}, "", "", {}, nullptr,
                           {}};
  config::McpServerSpec b{"b", config::McpTransport::kStdio, "spec-b", {}, {}, "", "", {}, nullptr,
                          {}};
  auto merged = agent::mcp::MergeServers({a}, {a2, b});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].command, "editor-a");
  EXPECT_EQ(merged[1].command, "spec-b");
}

TEST(ExpandVarsTest, Forms) {
  auto env = [](const std::string& k) -> std::optional<std::string> {
    if (k == "A") return "x";
    return std::nullopt;
  };
  EXPECT_EQ(*config::ExpandVars("${A}-${B:-d}-$${A}-$A", env), "x-d-${A}-$A");
  EXPECT_FALSE(config::ExpandVars("${B}", env).ok());
  EXPECT_FALSE(config::ExpandVars("${A", env).ok());
  EXPECT_FALSE(config::ExpandVars("${A B}", env).ok());
}

}  // namespace
}  // namespace lousho
