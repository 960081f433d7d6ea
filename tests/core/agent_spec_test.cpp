// Tests of agent spec loading: keys, errors with positions, folders, scripts.
#include "config/agent_spec.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace lousho::config {
namespace {
namespace fs = std::filesystem;

class AgentSpecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-spec-" + std::to_string(::getpid()) + "-" +
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
  LoadOptions Opts() {
    LoadOptions o;
    o.known_tools = {"read", "write", "edit", "bash"};
    return o;
  }
  fs::path dir_;
};

TEST_F(AgentSpecTest, LoadsEveryKey) {
  Write("inst.md", "Be brief.");
  std::string path = Write("a.yaml", R"(name: coder
description: d
model: openai/gpt-4o-mini
instructionsFile: inst.md
thinking: high
tools: [read, bash]
maxSteps: 7
limits: {maxOutputTokens: 100, maxTotalTokens: 1000}
permissions:
  - {tool: bash, pattern: "git *", action: allow}
mode: plan
rules: []
providers:
  mine:
    api: openai-chat
    baseUrl: http://127.0.0.1:9/v1
    apiKeyEnv: MY_KEY
    headers: {X-Team: a}
    models:
      - {id: m1, contextWindow: 1000, inputPrice: 1.5, images: true}
commands:
  - {name: fix, description: Fix it, prompt: "Fix {{args}}"}
)");
  auto spec = LoadAgentSpec(path, Opts());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->name, "coder");
  EXPECT_EQ(spec->model, "openai/gpt-4o-mini");
  EXPECT_EQ(spec->instructions, "Be brief.");
  EXPECT_EQ(spec->thinking, "high");
  EXPECT_EQ(spec->tools, (std::vector<std::string>{"read", "bash"}));
  EXPECT_EQ(spec->max_steps, 7);
  EXPECT_EQ(spec->limits.max_output_tokens, 100);
  EXPECT_EQ(spec->limits.max_total_tokens, 1000);
  EXPECT_EQ(spec->permissions[0]["pattern"].asString(), "git *");
  EXPECT_EQ(spec->default_mode, "plan");
  ASSERT_EQ(spec->providers.count("mine"), 1u);
  EXPECT_EQ(spec->providers["mine"].base_url, "http://127.0.0.1:9/v1");
  EXPECT_EQ(spec->providers["mine"].headers["X-Team"], "a");
  EXPECT_DOUBLE_EQ(spec->providers["mine"].models[0].input_price, 1.5);
  EXPECT_TRUE(spec->providers["mine"].models[0].images);
  ASSERT_EQ(spec->commands.size(), 1u);
  EXPECT_EQ(spec->commands[0].prompt, "Fix {{args}}");
}

TEST_F(AgentSpecTest, JsonSpecsWork) {
  std::string path = Write("a.json", R"({"model": "anthropic/claude-sonnet-4-5", "maxSteps": 3})");
  auto spec = LoadAgentSpec(path, Opts());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->max_steps, 3);
  EXPECT_FALSE(spec->tools_set);
}

TEST_F(AgentSpecTest, UnknownKeyNamesPositionAndSuggestion) {
  std::string path = Write("a.yaml", "model: openai/x\ninstruction: hi\n");
  auto spec = LoadAgentSpec(path, Opts());
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(spec.error().message,
            path + ":2:1: unknown key 'instruction' (did you mean 'instructions'?)");
}

TEST_F(AgentSpecTest, BadValuesAreInvalidWithPosition) {
  struct Case {
    std::string yaml;
    std::string expect;
  } cases[] = {
      {"model: gpt4\n", ":1:8: model: expected 'provider/model', got 'gpt4'"},
      {"model: a/b\nthinking: loud\n", ":2:11: thinking: expected one of"},
      {"model: a/b\nmaxSteps: zero\n", ":2:11: maxSteps: expected a whole number"},
      {"model: a/b\ntools: [read, sed]\n", ":2:15: unknown tool 'sed'"},
      {"name: x\n", ":1:1: missing required key 'model'"},
      {"model: a/b\nlimits: {maxTokens: 3}\n", "unknown key 'maxTokens' in limits"},
      {"model: [a\n", ":2:1: "},
      {"model: script/nothing\n", "no script named 'nothing'"},
  };
  for (const auto& c : cases) {
    std::string path = Write("bad.yaml", c.yaml);
    auto spec = LoadAgentSpec(path, Opts());
    ASSERT_FALSE(spec.ok()) << c.yaml;
    EXPECT_EQ(spec.error().code, ErrorCode::kConfigInvalid) << c.yaml;
    EXPECT_NE(spec.error().message.find(c.expect), std::string::npos)
        << c.yaml << " -> " << spec.error().message;
  }
}

TEST_F(AgentSpecTest, ModelsAndCompaction) {
  auto spec = LoadAgentSpec(
      Write("a.yaml",
            "model: script/echo\nmodels: [script/echo, openai/gpt-4o, local/qwen]\n"
            "providers:\n  local: {api: openai-chat, baseUrl: 'http://127.0.0.1:1/v1'}\n"
            "compaction: {auto: false, threshold: 70, keepRecentTokens: 5000}\n"),
      Opts());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->models, (std::vector<std::string>{"script/echo", "openai/gpt-4o", "local/qwen"}));
  EXPECT_FALSE(spec->compaction.auto_compact);
  EXPECT_EQ(spec->compaction.threshold_percent, 70);
  EXPECT_EQ(spec->compaction.keep_recent_tokens, 5000);
  auto defaults = LoadAgentSpec(Write("b.yaml", "model: script/echo\n"), Opts());
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->models.empty());
  EXPECT_TRUE(defaults->compaction.auto_compact);
  EXPECT_EQ(defaults->compaction.threshold_percent, 85);
  EXPECT_EQ(defaults->compaction.keep_recent_tokens, 20000);

  struct Bad {
    const char* yaml;
    const char* error;
  };
  for (const Bad& b : {
           Bad{"models: gpt-4o\n", ":2:9: models: expected a list of 'provider/model' names"},
           Bad{"models: [gpt-4o]\n", ":2:10: models: expected 'provider/model', got 'gpt-4o'"},
           Bad{"models: [openai/a, openai/a]\n", ":2:20: models: 'openai/a' is listed twice"},
           Bad{"models: [opnai/a]\n",
               ":2:10: models: unknown provider 'opnai' (did you mean 'openai'?)"},
           Bad{"models: [script/nope]\n", ":2:10: models: no script named 'nope'"},
           Bad{"compaction: {threshold: 120}\n",
               ":2:25: compaction.threshold: a percentage, 1 to 100"},
           Bad{"compaction: {auto: maybe}\n", ":2:20: compaction.auto: expected true or false"},
           Bad{"compaction: {keep: 1}\n",
               ":2:14: unknown key 'keep' in compaction (known keys: auto, threshold, "
               "keepRecentTokens)"},
       }) {
    const std::string path = Write("bad.yaml", std::string("model: script/echo\n") + b.yaml);
    auto bad = LoadAgentSpec(path, Opts());
    ASSERT_FALSE(bad.ok()) << b.yaml;
    EXPECT_EQ(bad.error().code, ErrorCode::kConfigInvalid);
    EXPECT_EQ(bad.error().message, path + b.error) << b.yaml;
  }
}

TEST_F(AgentSpecTest, MissingPathIsNotFound) {
  auto spec = LoadAgentSpec((dir_ / "nope.yaml").string(), Opts());
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().code, ErrorCode::kConfigNotFound);
  auto empty_dir = LoadAgentSpec(dir_.string(), Opts());
  ASSERT_FALSE(empty_dir.ok());
  EXPECT_EQ(empty_dir.error().code, ErrorCode::kConfigNotFound);
}

TEST_F(AgentSpecTest, FolderWithAgentsMdAndRulesAndModelOverride) {
  Write("agent.yaml", "model: openai/gpt-4o\ninstructions: Base.\n");
  Write("AGENTS.md", "Project notes.\n");
  Write("rules/no-todo.md", "---\n---\n");
  LoadOptions o = Opts();
  o.model_override = "anthropic/claude-haiku-4-5";
  auto spec = LoadAgentSpec(dir_.string(), o);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->instructions, "Base.\n\nProject notes.\n");
  EXPECT_EQ(spec->model, "anthropic/claude-haiku-4-5");
  EXPECT_EQ(spec->rules_dir, (dir_ / "rules").string());
  EXPECT_EQ(spec->name, dir_.filename().string());
  o.model_override = "nonsense";
  auto bad = LoadAgentSpec(dir_.string(), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--model"), std::string::npos);
}

TEST_F(AgentSpecTest, ScriptedErrorCodesMustBeKnown) {
  auto known = LoadAgentSpec(Write("a.yaml", R"(model: script/s
scripts:
  s:
    - steps:
        - error: {code: LOUSHO_PROVIDER_AUTH}
        - error: {message: down}
)"),
                             Opts());
  ASSERT_TRUE(known.ok()) << known.error().message;
  const std::vector<ScriptStep>& steps = known->scripts["s"].replies[0].steps;
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].error_code, ErrorCode::kProviderAuth);
  EXPECT_EQ(steps[1].error_code, ErrorCode::kProviderUnavailable);  // the default

  std::string path = Write("b.yaml", R"(model: script/s
scripts:
  s:
    - error: {code: LOUSHO_NO_SUCH_THING}
)");
  auto unknown = LoadAgentSpec(path, Opts());
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(unknown.error().message, path + ":4:21: code: unknown error code");
}

TEST_F(AgentSpecTest, ScriptsInlineAndBesideTheSpec) {
  std::string path = Write("a.yaml", R"(model: script/s
scripts:
  s:
    - match: "hi"
      text: "hello"
    - steps:
        - toolCalls: [{name: read, arguments: {path: x}}]
        - {text: done, stopReason: max_tokens}
)");
  auto spec = LoadAgentSpec(path, Opts());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const Script& s = spec->scripts["s"];
  ASSERT_EQ(s.replies.size(), 2u);
  EXPECT_EQ(s.replies[0].match, "hi");
  EXPECT_EQ(s.replies[0].steps[0].text, "hello");
  ASSERT_EQ(s.replies[1].steps.size(), 2u);
  EXPECT_EQ(s.replies[1].steps[0].tool_calls[0].arguments["path"].asString(), "x");
  EXPECT_EQ(s.replies[1].steps[1].stop_reason, "max_tokens");

  Write("b.script.yaml", "replies:\n  - text: from file\n");
  std::string path2 = Write("b.yaml", "model: script/b\n");
  auto spec2 = LoadAgentSpec(path2, Opts());
  ASSERT_TRUE(spec2.ok()) << spec2.error().message;
  EXPECT_EQ(spec2->scripts["b"].replies[0].steps[0].text, "from file");

  Write("c.script.yaml", "replies:\n  - text: x\n    colour: red\n");
  auto spec3 = LoadAgentSpec(Write("c.yaml", "model: script/c\n"), Opts());
  ASSERT_FALSE(spec3.ok());
  EXPECT_NE(spec3.error().message.find("c.script.yaml:3:5: unknown key 'colour'"),
            std::string::npos)
      << spec3.error().message;
}

TEST_F(AgentSpecTest, BuiltinEchoScriptNeedsNoDefinition) {
  auto spec = LoadAgentSpec(Write("a.yaml", "model: script/echo\n"), Opts());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(BuiltinScripts().at("echo").replies[0].steps[0].text, "You said: {{input}}");
}

// Paths the filesystem rejects (a name over NAME_MAX, a NUL byte, a path over PATH_MAX, a
// symbolic-link loop) are spec errors with a position, never an exception out of the loader.
TEST_F(AgentSpecTest, PathsTheFilesystemRejectsAreInvalidWithPosition) {
  const std::string long_name(300, 'a');
  std::string deep;
  for (int i = 0; i < 2100; ++i) deep += "d/";
  fs::create_directories(dir_ / "folder");
  fs::create_symlink("loop", dir_ / "loop");  // loop -> loop: resolving it fails with ELOOP
  struct Case {
    std::string yaml;
    std::string expect;  // after "<file>"
  } cases[] = {
      {"model: a/b\nroots:\n  - " + long_name + "\n",
       ":3:5: roots: path '" + std::string(60, 'a') + "...' has a name longer than 255 bytes"},
      {"model: a/b\nroots: [/tmp/" + long_name + "/x]\n", ":2:9: roots: path '/tmp/aaaa"},
      {"model: a/b\nroots: [\"a\\0b\"]\n", ":2:9: roots: path 'a"},
      {"model: a/b\nroots: [" + deep + "]\n", ":2:9: roots: path 'd/d/d/"},
      {"model: a/b\nroots: [loop/x]\n",
       ":2:9: roots: cannot resolve 'loop/x': Too many levels of symbolic links"},
      {"model: a/b\nroots: [\"\"]\n", ":2:9: roots: expected a path, got an empty string"},
      {"model: a/b\ninstructionsFile: " + long_name + "\n", ":2:19: instructionsFile: path 'aaaa"},
      {"model: a/b\ninstructionsFile: folder\n", ":2:19: instructionsFile: cannot read "},
      {"model: a/b\ninstructionsFile: /dev/zero\n",
       ":2:19: instructionsFile: cannot read /dev/zero"},
      {"model: a/b\nscripts:\n  s: " + long_name + ".yaml\n", ":3:6: scripts.s: path 'aaaa"},
      {"model: a/b\nscripts:\n  s: \"x\\0.yaml\"\n", ":3:6: scripts.s: path 'x"},
  };
  for (const auto& c : cases) {
    std::string path = Write("bad.yaml", c.yaml);
    auto spec = LoadAgentSpec(path, Opts());
    ASSERT_FALSE(spec.ok()) << c.yaml;
    EXPECT_EQ(spec.error().code, ErrorCode::kConfigInvalid) << c.yaml;
    EXPECT_EQ(spec.error().message.rfind(path + c.expect, 0), 0u)
        << c.yaml.substr(0, 200) << " -> " << spec.error().message;
  }
  // The NUL case names what is wrong, too.
  auto nul = LoadAgentSpec(Write("bad.yaml", "model: a/b\nroots: [\"a\\0b\"]\n"), Opts());
  ASSERT_FALSE(nul.ok());
  EXPECT_NE(nul.error().message.find("contains a NUL byte"), std::string::npos);
  auto too_long = LoadAgentSpec(Write("bad.yaml", "model: a/b\nroots: [" + deep + "]\n"), Opts());
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.error().message.find("is longer than 4095 bytes"), std::string::npos);
}

// The same through the binary: `lousho validate` and `lousho acp` exit 1 with the one-line error.
TEST_F(AgentSpecTest, BinaryReportsRejectedPathsAsInvalidSpec) {
  std::string spec =
      Write("agent.yaml", "model: script/echo\nroots:\n  - " + std::string(300, 'a') + "\n");
  for (const char* command : {"validate", "acp"}) {
    fs::path err = dir_ / "err";
    std::string cmd = "'" + std::string(LOUSHO_BINARY) + "' " + command + " '" + spec +
                      "' </dev/null >/dev/null 2>'" + err.string() + "'";
    int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << command << ": killed by a signal";
    EXPECT_EQ(WEXITSTATUS(status), 1) << command;
    std::stringstream text;
    text << std::ifstream(err).rdbuf();
    EXPECT_EQ(text.str(), "LOUSHO_CONFIG_INVALID: " + spec + ":3:5: roots: path '" +
                              std::string(60, 'a') + "...' has a name longer than 255 bytes\n")
        << command;
  }
}

TEST_F(AgentSpecTest, ExamplesInTheRepositoryAreValid) {
  for (const char* ex : {"demo", "openai", "anthropic", "local-ollama", "reviewer"}) {
    LoadOptions o;
    o.known_tools = {"read", "write", "edit", "bash", "grep", "find", "ls", "todo", "ask"};
    auto spec = LoadAgentSpec(std::string(LOUSHO_SOURCE_DIR) + "/examples/" + ex, o);
    EXPECT_TRUE(spec.ok()) << ex << ": " << spec.error().message;
  }
}

}  // namespace
}  // namespace lousho::config

namespace lousho::config {
namespace {

TEST(AgentSpecProviders, BuiltinNameIsMergedOverTheCatalogue) {
  namespace fs = std::filesystem;
  fs::path p = fs::temp_directory_path() / ("lousho-merge-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(p) << "model: openai/gpt-4o-mini\nproviders:\n  openai: {maxRetries: 0}\n";
  auto spec = LoadAgentSpec(p.string(), LoadOptions{});
  fs::remove(p);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const ProviderSettings& s = spec->providers.at("openai");
  EXPECT_EQ(s.max_retries, 0);
  EXPECT_EQ(s.api, "openai-chat");
  EXPECT_EQ(s.api_key_env, "OPENAI_API_KEY");
  EXPECT_EQ(s.base_url_env, "OPENAI_BASE_URL");
}

}  // namespace
}  // namespace lousho::config
