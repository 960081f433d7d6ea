// Tests of each section of an agent spec: what every key loads, and the error (with its
// position) for each way a section can be wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/agent_spec.h"

namespace lousho::config {
namespace {
namespace fs = std::filesystem;

class AgentSpecSectionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-sections-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  Result<AgentSpec> Load(const std::string& yaml) {
    LoadOptions o;
    o.known_tools = {"read", "write", "bash"};
    o.env = [](const std::string& name) -> std::optional<std::string> {
      if (name == "TOKEN") return std::string("t0k");
      return std::nullopt;
    };
    return LoadAgentSpec(Write("agent.yaml", yaml), o);
  }
  // Each case is a spec's text after "model: script/echo\n" and the whole message after the
  // file's path ("\n@": a further error, "@" standing for the path).
  struct Bad {
    const char* yaml;
    const char* error;
  };
  void ExpectErrors(std::initializer_list<Bad> cases) {
    for (const Bad& b : cases) {
      auto spec = Load(std::string("model: script/echo\n") + b.yaml);
      ASSERT_FALSE(spec.ok()) << b.yaml;
      EXPECT_EQ(spec.error().code, ErrorCode::kConfigInvalid) << b.yaml;
      const std::string path = (dir_ / "agent.yaml").string();
      std::string expected = path + b.error;
      for (size_t at = expected.find("\n@"); at != std::string::npos; at = expected.find("\n@", at))
        expected.replace(at + 1, 1, path);
      EXPECT_EQ(spec.error().message, expected) << b.yaml;
    }
  }
  fs::path dir_;
};

TEST_F(AgentSpecSectionsTest, ProvidersLoadEveryKey) {
  auto spec = Load(R"(model: mine/m1
providers:
  mine:
    api: anthropic-messages
    baseUrl: https://example.invalid/v1
    apiKeyEnv: MINE_KEY
    auth: bearer
    headers: {X-A: b}
    connectTimeoutSec: 3
    idleTimeoutSec: 4
    maxRetries: 0
    retryBaseMs: 10
    retryMaxDelayMs: 20
    models:
      - m0
      - {id: m1, name: One, contextWindow: 1000, maxOutput: 100, inputPrice: 1.5,
         outputPrice: 2, cacheReadPrice: 0.5, cacheWritePrice: 0.25, images: yes,
         reasoning: on}
)");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const ProviderSettings& p = spec->providers.at("mine");
  EXPECT_EQ(p.name, "mine");
  EXPECT_EQ(p.api, "anthropic-messages");
  EXPECT_EQ(p.base_url, "https://example.invalid/v1");
  EXPECT_EQ(p.api_key_env, "MINE_KEY");
  EXPECT_EQ(p.auth, "bearer");
  EXPECT_EQ(p.headers.at("X-A"), "b");
  EXPECT_EQ(p.connect_timeout_s, 3);
  EXPECT_EQ(p.idle_timeout_s, 4);
  EXPECT_EQ(p.max_retries, 0);
  EXPECT_EQ(p.retry_base_ms, 10);
  EXPECT_EQ(p.retry_max_delay_ms, 20);
  ASSERT_EQ(p.models.size(), 2u);
  EXPECT_EQ(p.models[0].id, "m0");
  EXPECT_EQ(p.models[0].name, "m0");
  EXPECT_EQ(p.models[1].name, "One");
  EXPECT_EQ(p.models[1].context_window, 1000);
  EXPECT_EQ(p.models[1].max_output, 100);
  EXPECT_DOUBLE_EQ(p.models[1].input_price, 1.5);
  EXPECT_DOUBLE_EQ(p.models[1].output_price, 2);
  EXPECT_DOUBLE_EQ(p.models[1].cache_read_price, 0.5);
  EXPECT_DOUBLE_EQ(p.models[1].cache_write_price, 0.25);
  EXPECT_TRUE(p.models[1].images);
  EXPECT_TRUE(p.models[1].reasoning);
}

TEST_F(AgentSpecSectionsTest, ProviderErrors) {
  ExpectErrors({
      {"providers: [a]\n", ":2:12: providers: expected a mapping"},
      {"providers: {script: {api: openai-chat}}\n",
       ":2:13: providers: 'script' is reserved for offline scripts"},
      {"providers: {p: {baseUrl: 'http://h'}}\n",
       ":2:16: provider 'p': missing required key 'api'"},
      {"providers: {p: {api: grpc, baseUrl: 'http://h'}}\n",
       ":2:22: api: expected openai-chat, openai-responses, anthropic-messages or gemini, got "
       "'grpc'"},
      {"providers: {p: {api: openai-chat}}\n",
       ":2:16: provider 'p': missing required key 'baseUrl'"},
      {"providers: {p: {api: openai-chat, baseUrl: 'ftp://h'}}\n",
       ":2:44: baseUrl: must start with http:// or https://"},
      {"providers: {p: {api: openai-chat, baseUrl: 'http://h', auth: basic}}\n",
       ":2:62: auth: expected x-api-key or bearer"},
      {"providers: {p: {api: openai-chat, baseUrl: 'http://h', headers: [a]}}\n",
       ":2:65: headers: expected a mapping"},
      {"providers: {p: {api: openai-chat, baseUrl: 'http://h', maxRetries: -1}}\n",
       ":2:68: maxRetries: must be at least 0"},
      {"providers: {p: {api: openai-chat, baseUrl: 'http://h', connectTimeoutSec: 0}}\n",
       ":2:75: connectTimeoutSec: must be at least 1"},
      {"providers: {p: {api: openai-chat, baseUrl: 'http://h', models: m}}\n",
       ":2:64: models: expected a list"},
      {"providers: {p: {api: openai-chat, baseUrl: 'http://h', models: [{name: n}]}}\n",
       ":2:65: model: missing required key 'id'"},
      {"providers: {p: {api: openai-chat, baseUrl: 'http://h', models: [{id: m, inputPrice: "
       "-1}]}}\n",
       ":2:85: inputPrice: expected a non-negative number, got '-1'"},
      {"providers: {p: {api: openai-chat, baseUrl: 'http://h', models: [{id: m, size: 1}]}}\n",
       ":2:73: unknown key 'size' in model (known keys: id, name, contextWindow, maxOutput, "
       "inputPrice, outputPrice, cacheReadPrice, cacheWritePrice, images, reasoning)"},
      {"providers: {p: {api: openai-chat, baseUrl: 'http://h', key: k}}\n",
       ":2:56: unknown key 'key' in provider 'p' (known keys: api, baseUrl, apiKeyEnv, headers, "
       "auth, models, connectTimeoutSec, idleTimeoutSec, maxRetries, retryBaseMs, "
       "retryMaxDelayMs)"},
  });
}

TEST_F(AgentSpecSectionsTest, CommandsLoadAndFail) {
  auto spec = Load(
      "model: script/echo\ncommands:\n  - {name: /fix, prompt: 'Fix {{args}}', description: D, "
      "hint: H}\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_EQ(spec->commands.size(), 1u);
  EXPECT_EQ(spec->commands[0].name, "fix");
  EXPECT_EQ(spec->commands[0].prompt, "Fix {{args}}");
  EXPECT_EQ(spec->commands[0].description, "D");
  EXPECT_EQ(spec->commands[0].hint, "H");
  ExpectErrors({
      {"commands: {a: b}\n", ":2:11: commands: expected a list"},
      {"commands: [a]\n", ":2:12: command: expected a mapping"},
      {"commands: [{prompt: p}]\n", ":2:12: command: missing required key 'name'"},
      {"commands: [{name: 'two words', prompt: p}]\n", ":2:19: command name must be one word"},
      {"commands: [{name: /, prompt: p}]\n", ":2:19: command name must be one word"},
      {"commands: [{name: fix}]\n", ":2:12: command 'fix': missing required key 'prompt'"},
      {"commands: [{name: fix, prompt: p, args: a}]\n",
       ":2:35: unknown key 'args' in command (known keys: name, description, prompt, hint)"},
  });
}

TEST_F(AgentSpecSectionsTest, ScriptsLoadAndFail) {
  Write("s.yaml", "- text: from a file\n");
  auto spec = Load(
      "model: script/inline\nscripts:\n  inline: [{text: hi, delayMs: 5, chunkSize: 2}]\n"
      "  file: s.yaml\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_EQ(spec->scripts.count("inline"), 1u);
  EXPECT_EQ(spec->scripts.at("inline").replies[0].steps[0].text, "hi");
  EXPECT_EQ(spec->scripts.at("inline").replies[0].steps[0].delay_ms, 5);
  EXPECT_EQ(spec->scripts.at("inline").replies[0].steps[0].chunk_size, 2);
  EXPECT_EQ(spec->scripts.at("file").replies[0].steps[0].text, "from a file");
  ExpectErrors({
      {"scripts: [a]\n", ":2:10: scripts: expected a mapping"},
      {"scripts: {a: [{text: t, stopReason: done}]}\n",
       ":2:37: stopReason: expected end_turn, max_tokens or refusal"},
      {"scripts: {a: [{toolCalls: x}]}\n", ":2:27: toolCalls: expected a list"},
      {"scripts: {a: [{toolCalls: [{id: i}]}]}\n", ":2:28: tool call: missing required key 'name'"},
      {"scripts: {a: [{toolCalls: [{name: n, arguments: [1]}]}]}\n",
       ":2:49: arguments: expected a mapping"},
      {"scripts: {a: [{error: {code: NOPE}}]}\n", ":2:30: code: unknown error code"},
      {"scripts: {a: [{steps: x}]}\n", ":2:23: steps: expected a list"},
      {"scripts: {a: [{steps: []}]}\n", ":2:15: script reply: needs at least one step"},
      // Every error of a spec is reported, one a line ("\n@" stands for the next line's path).
      {"scripts: {a: {steps: []}}\n",
       ":2:15: unknown key 'steps' in script (known keys: replies)\n@:2:14: script: missing "
       "required key 'replies'"},
      {"scripts: {a: {}}\n", ":2:14: script: missing required key 'replies'"},
  });
  auto missing = Load("model: script/echo\nscripts: {a: missing.yaml}\n");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message.rfind((dir_ / "agent.yaml").string() + ":2:14: scripts.a: " +
                                              (dir_ / "missing.yaml").string() + ": cannot read",
                                          0),
            0u)
      << missing.error().message;
}

TEST_F(AgentSpecSectionsTest, McpServersLoadAndFail) {
  auto spec = Load(R"(model: script/echo
mcp_servers:
  files: {command: srv, args: [--token, '${TOKEN}'], env: {A: b}, cwd: /tmp}
  web: {type: sse, url: 'https://h/sse', headers: [{name: Auth, value: 'x ${TOKEN}'}]}
mcp: {startTimeoutMs: 5, callTimeoutMs: 6, maxRestarts: 0}
)");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_EQ(spec->mcp_servers.size(), 2u);
  EXPECT_EQ(spec->mcp_servers[0].transport, McpTransport::kStdio);
  EXPECT_EQ(spec->mcp_servers[0].args, (std::vector<std::string>{"--token", "t0k"}));
  EXPECT_EQ(spec->mcp_servers[0].cwd, "/tmp");
  EXPECT_EQ(spec->mcp_servers[1].transport, McpTransport::kSse);
  ASSERT_EQ(spec->mcp_servers[1].headers.size(), 1u);
  EXPECT_EQ(spec->mcp_servers[1].headers[0].second, "x t0k");
  EXPECT_EQ(spec->mcp.start_timeout_ms, 5);
  EXPECT_EQ(spec->mcp.call_timeout_ms, 6);
  EXPECT_EQ(spec->mcp.max_restarts, 0);
  ExpectErrors({
      {"mcp_servers: [a]\n", ":2:14: mcp_servers: expected a mapping"},
      {"mcp_servers: {a: {type: ws, url: 'http://h'}}\n",
       ":2:25: type: expected stdio, http or sse, got 'ws'"},
      {"mcp_servers: {a: {args: [x]}}\n", ":2:18: mcp server 'a': missing required key 'command'"},
      {"mcp_servers: {a: {command: c, headers: {}}}\n",
       ":2:40: mcp server 'a': 'url', 'headers' and 'oauth' need type http or sse"},
      {"mcp_servers: {a: {command: ''}}\n", ":2:28: command: must not be empty"},
      {"mcp_servers: {a: {command: c, args: x}}\n", ":2:37: args: expected a list of strings"},
      {"mcp_servers: {a: {type: http}}\n", ":2:18: mcp server 'a': missing required key 'url'"},
      {"mcp_servers: {a: {url: 'http://h', cwd: /}}\n",
       ":2:41: cwd: only stdio servers take 'cwd'"},
      {"mcp_servers: {a: {url: 'ws://h'}}\n", ":2:24: url: must start with http:// or https://"},
      {"mcp_servers: {a: {command: '${NOPE}'}}\n",
       ":2:28: command: environment variable NOPE is not set (write ${NOPE:-default} for a "
       "default)"},
      {"mcp: {maxRestarts: -1}\n", ":2:20: maxRestarts: must be at least 0"},
      {"mcp: {startTimeoutMs: 0}\n", ":2:23: startTimeoutMs: must be at least 1"},
      {"mcp: {restarts: 1}\n",
       ":2:7: unknown key 'restarts' in mcp (known keys: startTimeoutMs, callTimeoutMs, "
       "maxRestarts, clientMetadataUrl)"},
  });
}

TEST_F(AgentSpecSectionsTest, OtherTopLevelKeysFail) {
  ExpectErrors({
      {"instructions: a\ninstructionsFile: b\n",
       ":3:19: use either 'instructions' or 'instructionsFile', not both"},
      {"tools: read\n", ":2:8: tools: expected a list of tool names"},
      {"tools: [reed]\n", ":2:9: unknown tool 'reed' (did you mean 'read'?)"},
      {"tools: [zzzzzzzz]\n", ":2:9: unknown tool 'zzzzzzzz' (built-in tools: read, write, bash)"},
      {"limits: {maxOutputTokens: 0}\n", ":2:27: maxOutputTokens: must be at least 1"},
      {"permissions: allow\n", ":2:14: permissions: expected a list or a mapping"},
      {"mode: yolo\n", ":2:7: mode: expected one of default, accept-edits, plan, bypass"},
      {"roots: /\n", ":2:8: roots: expected a list of folders"},
      {"rules: {}\n", ":2:8: rules: expected a list of rule files, folders or rules"},
      {"ttsr: {repeatMode: always}\n",
       ":2:20: ttsr.repeatMode: expected one of once, after-gap, got 'always'"},
  });
  auto unread = Load("model: script/echo\ninstructionsFile: nothing.md\n");
  ASSERT_FALSE(unread.ok());
  EXPECT_EQ(unread.error().message, (dir_ / "agent.yaml").string() +
                                        ":2:19: instructionsFile: cannot read " +
                                        (dir_ / "nothing.md").string());
}

TEST_F(AgentSpecSectionsTest, TopLevelKeysLoad) {
  Write("notes.md", "From a file.");
  fs::create_directories(dir_ / "extra");
  auto spec = Load(
      "model: script/echo\ninstructionsFile: notes.md\npermissions: {bash: ask}\n"
      "mode: bypass\nroots: [extra]\nsessionDir: sessions/../s\n"
      "ttsr: {enabled: false, contextMode: keep, interruptMode: never, repeatMode: after-gap, "
      "repeatGap: 2}\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->instructions, "From a file.");
  EXPECT_EQ(spec->permissions["bash"].asString(), "ask");
  EXPECT_EQ(spec->default_mode, "bypass");
  EXPECT_EQ(spec->roots, (std::vector<std::string>{(dir_ / "extra").string()}));
  EXPECT_EQ(spec->session_dir, (dir_ / "s").string());
  EXPECT_EQ(spec->ttsr.enabled, false);
  EXPECT_EQ(spec->ttsr.context_mode, "keep");
  EXPECT_EQ(spec->ttsr.interrupt_mode, "never");
  EXPECT_EQ(spec->ttsr.repeat_mode, "after-gap");
  EXPECT_EQ(spec->ttsr.repeat_gap, 2);
}

TEST_F(AgentSpecSectionsTest, ProxyTakesAUrlOrAMapping) {
  auto none = Load("model: script/echo\n");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(none->proxy.set);  // the environment decides
  auto both = Load("model: script/echo\nproxy: http://p.corp:3128\n");
  ASSERT_TRUE(both.ok()) << both.error().message;
  EXPECT_TRUE(both->proxy.set);
  EXPECT_EQ(both->proxy.https, "http://p.corp:3128");
  EXPECT_EQ(both->proxy.http, "http://p.corp:3128");
  auto map = Load(
      "model: script/echo\nproxy:\n  https: http://u:${TOKEN}@s.corp:8443\n  http: direct\n"
      "  noProxy: [git.corp, .lan]\n");
  ASSERT_TRUE(map.ok()) << map.error().message;
  EXPECT_EQ(map->proxy.https, "http://u:t0k@s.corp:8443");  // ${VAR} expanded
  EXPECT_EQ(map->proxy.http, "direct");
  EXPECT_EQ(map->proxy.no_proxy, "git.corp,.lan");
  auto only_https = Load("model: script/echo\nproxy: {https: 'http://s:1'}\n");
  ASSERT_TRUE(only_https.ok()) << only_https.error().message;
  EXPECT_EQ(only_https->proxy.http, "");  // left out: direct
}

TEST_F(AgentSpecSectionsTest, ProxyErrorsNameTheKeyAndNeverTheCredentials) {
  struct Case {
    const char* yaml;
    const char* error;
  };
  const Case cases[] = {
      {"proxy: [a]\n", "proxy: expected a proxy URL or a mapping {https, http, noProxy}"},
      {"proxy: {ftp: 'http://p:1'}\n", "proxy.ftp: unknown key (expected https, http or noProxy)"},
      {"proxy: {https: 'socks5://user:hunter2@p:1'}\n",
       "proxy.https: a socks5:// proxy is not supported"},
      {"proxy: 'http://user:hunter2@p:notaport'\n", "proxy: a bad port 'notaport'"},
      {"proxy: {noProxy: [a, '']}\n", "proxy.noProxy[1]: expected a host name"},
      {"proxy: 'http://${NOPE}@p:1'\n", "proxy: "},
  };
  for (const Case& c : cases) {
    auto spec = Load(std::string("model: script/echo\n") + c.yaml);
    ASSERT_FALSE(spec.ok()) << c.yaml;
    EXPECT_EQ(spec.error().code, ErrorCode::kConfigInvalid) << c.yaml;
    EXPECT_NE(spec.error().message.find(c.error), std::string::npos) << spec.error().message;
    EXPECT_EQ(spec.error().message.find("hunter2"), std::string::npos) << spec.error().message;
  }
}

}  // namespace
}  // namespace lousho::config
