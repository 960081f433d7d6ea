// Tests of what editors and the ACP registry rely on: the agent lookup order of `lousho acp`, the
// built-in agent's model choice, stored credentials, `authenticate`, the -32000 message and the
// interactive `lousho setup` (driven through a pseudo-terminal against a loopback model server).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "config/credentials.h"
#include "config/default_agent.h"
#include "support/json_util.h"
#include "tests/providers/loopback_server.h"

namespace lousho {
namespace {
namespace fs = std::filesystem;

EnvLookup MapEnv(std::map<std::string, std::string> m) {
  return [m = std::move(m)](const std::string& name) -> std::optional<std::string> {
    auto it = m.find(name);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}

fs::path TempDir(const std::string& tag) {
  std::string tmpl = (fs::temp_directory_path() / ("lousho-ed-" + tag + "-XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr) return {};
  return fs::path(tmpl);
}

void WriteFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A spec with the offline model: loading it needs no key and no network.
const char kScriptSpec[] = "name: %s\nmodel: script/echo\n";
std::string ScriptSpec(const std::string& name) {
  char buf[128];
  std::snprintf(buf, sizeof buf, kScriptSpec, name.c_str());
  return buf;
}

// ---- lookup order and model choice (unit) ----

TEST(DefaultAgentTest, LookupOrderArgumentEnvProjectUserBuiltin) {
  fs::path home = TempDir("home");
  fs::path project = TempDir("project");
  auto env = MapEnv({{"HOME", home.string()}, {"LOUSHO_AGENT", "/env/agent.yaml"}});
  auto no_agent_env = MapEnv({{"HOME", home.string()}});

  config::AgentChoice c = config::ChooseAgent("/arg/agent.yaml", env, project.string());
  EXPECT_EQ(c.source, config::AgentSource::kArgument);
  EXPECT_EQ(c.path, "/arg/agent.yaml");

  c = config::ChooseAgent("", env, project.string());
  EXPECT_EQ(c.source, config::AgentSource::kEnvVar);
  EXPECT_EQ(c.path, "/env/agent.yaml");

  c = config::ChooseAgent("", no_agent_env, project.string());
  EXPECT_EQ(c.source, config::AgentSource::kBuiltin);
  EXPECT_NE(c.reason.find(project.string()), std::string::npos) << c.reason;

  WriteFile(home / ".config/lousho/agent.yaml", ScriptSpec("user"));
  c = config::ChooseAgent("", no_agent_env, project.string());
  EXPECT_EQ(c.source, config::AgentSource::kUser);
  EXPECT_EQ(c.path, (home / ".config/lousho/agent.yaml").string());

  // XDG_CONFIG_HOME replaces ~/.config.
  fs::path xdg = TempDir("xdg");
  c = config::ChooseAgent("", MapEnv({{"HOME", home.string()}, {"XDG_CONFIG_HOME", xdg.string()}}),
                          project.string());
  EXPECT_EQ(c.source, config::AgentSource::kBuiltin);

  WriteFile(project / ".lousho/agent.yaml", ScriptSpec("project"));
  c = config::ChooseAgent("", no_agent_env, project.string());
  EXPECT_EQ(c.source, config::AgentSource::kProject);
  EXPECT_EQ(c.path, (project / ".lousho/agent.yaml").string());

  fs::remove_all(home);
  fs::remove_all(project);
  fs::remove_all(xdg);
}

TEST(DefaultAgentTest, ModelFromCredentialsAnthropicThenOpenAiThenCompatible) {
  config::StoredCredentials none;
  auto pick = [&](std::map<std::string, std::string> env, const config::StoredCredentials& s) {
    return config::ChooseDefaultModel(MapEnv(std::move(env)), s);
  };
  config::DefaultModel m = pick({}, none);
  EXPECT_EQ(m.missing, config::NoCredentialsMessage());

  m = pick({{"OPENAI_API_KEY", "k"}, {"ANTHROPIC_API_KEY", "k"}}, none);
  EXPECT_EQ(m.model, "anthropic/claude-sonnet-4-5");
  EXPECT_TRUE(m.missing.empty());

  m = pick({{"OPENAI_API_KEY", "k"}}, none);
  EXPECT_EQ(m.model, "openai/gpt-4.1");

  m = pick({{"OPENAI_BASE_URL", "http://127.0.0.1:9/v1"}}, none);
  EXPECT_NE(m.missing.find("LOUSHO_MODEL=openai-compatible/"), std::string::npos) << m.missing;

  // A key with the base URL: the openai provider at that address, its default model.
  m = pick({{"OPENAI_BASE_URL", "http://127.0.0.1:9/v1"}, {"OPENAI_API_KEY", "k"}}, none);
  EXPECT_EQ(m.model, "openai/gpt-4.1");
  EXPECT_TRUE(m.missing.empty());
  m = pick({{"GOOGLE_API_KEY", "k"}}, none);
  EXPECT_EQ(m.model, "gemini/gemini-2.5-pro");

  // A compatible server stored by setup: its model only for that server's address.
  config::StoredCredentials local;
  local.model = "openai-compatible/qwen";
  local.env[config::kStoredCompatibleBaseUrl] = "http://127.0.0.1:9/v1";
  EXPECT_EQ(pick({{"OPENAI_BASE_URL", "http://127.0.0.1:9/v1"}}, local).model,
            "openai-compatible/qwen");
  EXPECT_FALSE(pick({{"OPENAI_BASE_URL", "http://10.0.0.2/v1"}}, local).missing.empty());

  m = pick({{"OPENAI_BASE_URL", "http://127.0.0.1:9/v1"}, {"LOUSHO_MODEL", "openai-compatible/q"}},
           none);
  EXPECT_EQ(m.model, "openai-compatible/q");
  EXPECT_TRUE(m.missing.empty());

  // LOUSHO_MODEL overrides whatever keys exist.
  m = pick({{"ANTHROPIC_API_KEY", "k"}, {"LOUSHO_MODEL", "openai/gpt-4.1-mini"}}, none);
  EXPECT_EQ(m.model, "openai/gpt-4.1-mini");

  // Stored credentials count only when the environment names nothing.
  config::StoredCredentials stored;
  stored.model = "openai/gpt-4.1";
  stored.env["OPENAI_API_KEY"] = "stored";
  EXPECT_EQ(pick({}, stored).model, "openai/gpt-4.1");
  EXPECT_EQ(pick({{"ANTHROPIC_API_KEY", "env"}}, stored).model, "anthropic/claude-sonnet-4-5");
}

TEST(CredentialsTest, SavedPrivateAndTheEnvironmentWins) {
  fs::path home = TempDir("cred");
  auto env = MapEnv({{"HOME", home.string()}});
  const std::string path = config::CredentialsPath(env);
  EXPECT_EQ(path, (home / ".config/lousho/credentials.json").string());
  auto empty = config::LoadCredentials(path);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->env.empty());

  config::StoredCredentials c;
  c.provider = "anthropic";
  c.model = "anthropic/claude-sonnet-4-5";
  c.env["ANTHROPIC_API_KEY"] = "sk-stored";
  ASSERT_TRUE(config::SaveCredentials(path, c).ok());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat((home / ".config/lousho").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u);

  auto back = config::LoadCredentials(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->model, c.model);
  EXPECT_EQ(back->env, c.env);

  EnvLookup layered =
      config::WithStoredCredentials(MapEnv({{"ANTHROPIC_API_KEY", "sk-env"}}), *back);
  EXPECT_EQ(layered("ANTHROPIC_API_KEY").value_or(""), "sk-env");
  layered = config::WithStoredCredentials(MapEnv({}), *back);
  EXPECT_EQ(layered("ANTHROPIC_API_KEY").value_or(""), "sk-stored");
  EXPECT_FALSE(layered("OPENAI_API_KEY").has_value());

  // A damaged file is an error that does not quote it.
  WriteFile(path, "{\"env\": {\"ANTHROPIC_API_KEY\": \"sk-secret\"");
  auto bad = config::LoadCredentials(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.find("sk-secret"), std::string::npos);
  fs::remove_all(home);
}

// ---- through the binary ----

// In the child: a new session whose controlling terminal (and stdio) is the pty `slave`.
void ChildAttachTerminal(const std::string& slave) {
  setsid();
  int s = open(slave.c_str(), O_RDWR);  // becomes the controlling terminal
  if (s < 0) _exit(126);
  dup2(s, 0);
  dup2(s, 1);
  dup2(s, 2);
}
// In the child: stdin from `in` (closed when -1), stdout to `out`, stderr to `err_path`.
void ChildAttachPipes(int in, int out, const std::string& err_path) {
  if (in < 0)
    close(0);
  else
    dup2(in, 0);
  dup2(out, 1);
  int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(e, 2);
}
// In the child: the binary, in `cwd`, with exactly `env` and no other descriptor.
[[noreturn]] void ChildExec(const std::vector<std::string>& args,
                            const std::vector<std::string>& env, const std::string& cwd,
                            bool closed_stdin) {
  if (chdir(cwd.c_str()) != 0) _exit(127);
  std::vector<char*> argv, envp;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  for (int fd = 3; fd < 256; ++fd) close(fd);
  if (closed_stdin) close(0);  // the pipe ends above may have been numbered 0
  execve(argv[0], argv.data(), envp.data());
  _exit(127);
}

// The binary run with exactly `env` (no inherited variables), stdin/stdout piped, or all three
// on a pseudo-terminal.
class Proc {
 public:
  // closed_stdin: the child starts with descriptor 0 closed (the registry's smoke test).
  Proc(const std::vector<std::string>& args, const std::vector<std::string>& env,
       const std::string& cwd, bool pty, bool closed_stdin = false) {
    // A child that ended early makes a write fail (and the test with it), not end the tests.
    signal(SIGPIPE, SIG_IGN);
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    std::string slave;
    if (pty) {
      master_ = posix_openpt(O_RDWR | O_NOCTTY);
      if (master_ < 0 || grantpt(master_) != 0 || unlockpt(master_) != 0) return;
      slave = ptsname(master_);
    } else if (pipe(in) != 0 || pipe(out) != 0) {
      return;
    }
    err_path_ = (fs::temp_directory_path() /
                 ("lousho-ed-err-" + std::to_string(getpid()) + "-" + std::to_string(++counter_)))
                    .string();
    pid_ = fork();
    if (pid_ == 0) {
      if (pty) {
        ChildAttachTerminal(slave);
      } else {
        ChildAttachPipes(closed_stdin ? -1 : in[0], out[1], err_path_);
      }
      ChildExec(args, env, cwd, closed_stdin);
    }
    if (!pty) {
      close(in[0]);
      close(out[1]);
      in_ = in[1];
      out_ = out[0];
    } else {
      in_ = out_ = master_;
    }
  }
  ~Proc() {
    if (in_ >= 0 && in_ != master_) close(in_);
    if (out_ >= 0 && out_ != master_) close(out_);
    if (master_ >= 0) close(master_);
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (!err_path_.empty()) fs::remove(err_path_);
  }
  void Send(const std::string& text) {
    ASSERT_EQ(write(in_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  void CloseInput() {
    if (in_ >= 0 && in_ != master_) close(in_);
    in_ = -1;
  }
  // Reads until `text` has been seen (empty: until EOF), or EOF, or 20 s without output;
  // returns all read so far.
  std::string ReadUntil(const std::string& text) {
    while (text.empty() || seen_.find(text) == std::string::npos) {
      if (!ReadMore()) break;
    }
    return seen_;
  }
  // The next line of output ("" at EOF).
  std::string Line() {
    for (;;) {
      size_t nl = seen_.find('\n', consumed_);
      if (nl != std::string::npos) {
        std::string l = seen_.substr(consumed_, nl - consumed_);
        consumed_ = nl + 1;
        return l;
      }
      if (!ReadMore()) return {};
    }
  }
  // The exit code; -1 (and the child killed) when it has not ended within 30 s.
  int Wait() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (r < 0) return -1;
      usleep(10000);
    }
    return -1;
  }
  bool ReadMore() {
    pollfd p{out_, POLLIN, 0};
    if (poll(&p, 1, 20000) <= 0) return false;
    char buf[4096];
    ssize_t n = read(out_, buf, sizeof buf);
    if (n <= 0) return false;  // EOF, or EIO once the pty's other side is gone
    seen_.append(buf, static_cast<size_t>(n));
    return true;
  }
  std::string Stderr() const {
    std::stringstream ss;
    ss << std::ifstream(err_path_).rdbuf();
    return ss.str();
  }

 private:
  static inline int counter_ = 0;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, master_ = -1;
  bool reaped_ = false;
  std::string seen_;
  size_t consumed_ = 0;
  std::string err_path_;
};

std::vector<std::string> MinimalEnv(const fs::path& home, std::vector<std::string> extra = {}) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=" + home.string(),
                                  "LOUSHO_TEST_MODE=1"};
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

const std::string kInit =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}})"
    "\n";
std::string NewSession(int id, const fs::path& cwd) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"session/new","params":{"cwd":")" + cwd.string() +
         R"(","mcpServers":[]}})"
         "\n";
}

Json::Value ParseLine(const std::string& line) {
  auto j = ParseJson(line);
  EXPECT_TRUE(j.ok()) << "not JSON: " << line;
  return j.ok() ? *j : Json::Value();
}

TEST(DefaultAgentTest, PrintAgentNamesTheChoiceAndWhy) {
  fs::path home = TempDir("pa-home");
  fs::path project = TempDir("pa-project");
  {
    Proc p({LOUSHO_BINARY, "acp", "--print-agent"}, MinimalEnv(home), project.string(), false);
    std::string out = p.ReadUntil("");
    EXPECT_EQ(p.Wait(), 0);
    EXPECT_NE(out.find("agent: built-in coding agent"), std::string::npos) << out;
    EXPECT_NE(out.find("status: not ready: " + config::NoCredentialsMessage()), std::string::npos)
        << out;
  }
  {
    Proc p({LOUSHO_BINARY, "acp", "--print-agent"}, MinimalEnv(home, {"ANTHROPIC_API_KEY=sk-test"}),
           project.string(), false);
    std::string out = p.ReadUntil("");
    EXPECT_EQ(p.Wait(), 0);
    EXPECT_NE(out.find("model: anthropic/claude-sonnet-4-5 (ANTHROPIC_API_KEY is set)"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("status: ready"), std::string::npos) << out;
    EXPECT_EQ(out.find("sk-test"), std::string::npos);
  }
  WriteFile(project / ".lousho/agent.yaml", ScriptSpec("from-project"));
  {
    Proc p({LOUSHO_BINARY, "acp", "--print-agent"}, MinimalEnv(home), project.string(), false);
    std::string out = p.ReadUntil("");
    EXPECT_EQ(p.Wait(), 0);
    EXPECT_NE(out.find("agent: " + (project / ".lousho/agent.yaml").string() + " (project"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("model: script/echo"), std::string::npos) << out;
  }
  // The project's spec is served: agentInfo.title is its name, and sessions start.
  {
    Proc p({LOUSHO_BINARY, "acp"}, MinimalEnv(home), project.string(), false);
    p.Send(kInit + NewSession(2, project));
    Json::Value init = ParseLine(p.Line());
    EXPECT_EQ(init["result"]["agentInfo"]["title"].asString(), "from-project");
    EXPECT_EQ(init["result"]["agentInfo"]["version"].asString(), LOUSHO_VERSION);
    Json::Value created = ParseLine(p.Line());
    EXPECT_TRUE(created["result"]["sessionId"].isString()) << created;
    p.CloseInput();
    EXPECT_EQ(p.Wait(), 0);
  }
  // LOUSHO_AGENT comes before the project's file; a bad one keeps the connection and is the
  // answer to session/new (FoundSpecThatDoesNotLoadIsToldPerSession has the rest).
  {
    Proc p({LOUSHO_BINARY, "acp"}, MinimalEnv(home, {"LOUSHO_AGENT=/no/such/agent.yaml"}),
           project.string(), false);
    p.Send(kInit + NewSession(2, project));
    EXPECT_TRUE(ParseLine(p.Line())["result"].isObject());
    Json::Value refused = ParseLine(p.Line());
    EXPECT_EQ(refused["error"]["data"]["code"].asString(), "LOUSHO_CONFIG_NOT_FOUND") << refused;
    EXPECT_EQ(refused["error"]["message"].asString().rfind(
                  "LOUSHO_CONFIG_NOT_FOUND: /no/such/agent.yaml: no such file or folder; the agent "
                  "spec /no/such/agent.yaml (LOUSHO_AGENT is set) did not load: fix it",
                  0),
              0u)
        << refused;
    p.CloseInput();
    EXPECT_EQ(p.Wait(), 0);
  }
  fs::remove_all(home);
  fs::remove_all(project);
}

// ---- a spec that does not load ----

std::string Request(int id, const std::string& method, const std::string& params) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method +
         R"(","params":)" + params + "}\n";
}

// A project's .lousho/agent.yaml with a typo: lousho answers initialize (the editor's connection
// stays up), and session/new and session/list answer the coded error with the spec's
// file:line:col, in the message and in data.details (which Zed shows); once the file is fixed,
// the next session/new loads it, and its sessionDir is where sessions are saved.
TEST(AcpStartTest, FoundSpecThatDoesNotLoadIsToldPerSession) {
  fs::path home = TempDir("found-home");
  fs::path project = TempDir("found-project");
  const fs::path spec = project / ".lousho/agent.yaml";
  WriteFile(spec, "name: typo\nmodel: script/echo\nmaxStep: 3\n");
  Proc p({LOUSHO_BINARY, "acp"}, MinimalEnv(home), project.string(), false);
  p.Send(kInit);
  Json::Value init = ParseLine(p.Line());
  EXPECT_EQ(init["result"]["protocolVersion"].asInt(), 1) << init;
  EXPECT_TRUE(init["result"]["agentCapabilities"]["loadSession"].asBool()) << init;

  const std::string where = spec.string() + ":3:1: unknown key 'maxStep'";
  auto expect_refused = [&](const Json::Value& r) {
    EXPECT_EQ(r["error"]["code"].asInt(), -32603) << r;
    const std::string message = r["error"]["message"].asString();
    EXPECT_EQ(message.rfind("LOUSHO_CONFIG_INVALID: " + where, 0), 0u) << message;
    EXPECT_NE(message.find("fix it (`lousho validate " + spec.string() + "` checks it)"),
              std::string::npos)
        << message;
    EXPECT_EQ(r["error"]["data"]["code"].asString(), "LOUSHO_CONFIG_INVALID") << r;
    EXPECT_EQ(r["error"]["data"]["details"].asString(), message);
  };
  p.Send(NewSession(2, project));
  expect_refused(ParseLine(p.Line()));
  p.Send(Request(3, "session/list", "{}"));
  expect_refused(ParseLine(p.Line()));
  p.Send(Request(4, "session/load",
                 R"({"sessionId":"nope","cwd":")" + project.string() + R"(","mcpServers":[]})"));
  expect_refused(ParseLine(p.Line()));

  // Fixed, with a session folder of its own: the next session/new loads it.
  const fs::path sessions = project / ".lousho/my-sessions";  // relative to the spec's folder
  WriteFile(spec, ScriptSpec("fixed") + "sessionDir: my-sessions\n");
  p.Send(NewSession(5, project));
  Json::Value created = ParseLine(p.Line());
  ASSERT_TRUE(created["result"]["sessionId"].isString()) << created;
  const std::string sid = created["result"]["sessionId"].asString();
  p.Send(Request(6, "session/prompt",
                 R"({"sessionId":")" + sid + R"(","prompt":[{"type":"text","text":"hi"}]})"));
  Json::Value answer;
  while (!answer.isMember("id")) {
    const std::string line = p.Line();
    if (line.empty()) break;
    Json::Value v = ParseLine(line);
    if (v["id"] == 6) answer = v;
  }
  EXPECT_EQ(answer["result"]["stopReason"].asString(), "end_turn") << answer;
  p.CloseInput();
  EXPECT_EQ(p.Wait(), 0);
  size_t files = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(sessions, ec), end; !ec && it != end; it.increment(ec))
    files += it->path().extension() == ".jsonl" ? 1 : 0;
  EXPECT_EQ(files, 1u) << "no session file under " << sessions;
  // Told once on stderr at start too (Zed's log).
  const std::string err = p.Stderr();
  EXPECT_NE(err.find("LOUSHO_CONFIG_INVALID: " + where), std::string::npos) << err;
  fs::remove_all(home);
  fs::remove_all(project);
}

// The built-in agent with an LOUSHO_MODEL naming no provider: initialize is answered, and
// session/new says the model came from LOUSHO_MODEL.
TEST(AcpStartTest, BadLoushoModelIsToldPerSession) {
  fs::path home = TempDir("model-home");
  Proc p({LOUSHO_BINARY, "acp"}, MinimalEnv(home, {"LOUSHO_MODEL=nosuch/model-x"}), home.string(),
         false);
  p.Send(kInit + NewSession(2, home));
  EXPECT_TRUE(ParseLine(p.Line())["result"].isObject());
  Json::Value refused = ParseLine(p.Line());
  EXPECT_EQ(refused["error"]["data"]["code"].asString(), "LOUSHO_CONFIG_INVALID") << refused;
  const std::string message = refused["error"]["message"].asString();
  EXPECT_NE(message.find("unknown provider 'nosuch'"), std::string::npos) << message;
  EXPECT_NE(message.find("(model 'nosuch/model-x': LOUSHO_MODEL is set)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("restart the agent"), std::string::npos) << message;
  p.CloseInput();
  EXPECT_EQ(p.Wait(), 0);
  fs::remove_all(home);
}

// A spec named on the command line that does not load ends lousho: exit 1, the coded error on
// stderr, nothing on stdout.
TEST(AcpStartTest, NamedSpecThatDoesNotLoadExitsOne) {
  fs::path home = TempDir("named-home");
  const fs::path spec = home / "agent.yaml";
  WriteFile(spec, "name: typo\nmodel: script/echo\nmaxStep: 3\n");
  Proc p({LOUSHO_BINARY, "acp", spec.string()}, MinimalEnv(home), home.string(), false);
  p.CloseInput();
  EXPECT_EQ(p.ReadUntil(""), "");
  EXPECT_EQ(p.Wait(), 1);
  EXPECT_EQ(p.Stderr().rfind("LOUSHO_CONFIG_INVALID: " + spec.string() +
                                 ":3:1: unknown key 'maxStep' (did you mean 'maxSteps'?)\n",
                             0),
            0u)
      << p.Stderr();
  fs::remove_all(home);
}

TEST(AuthenticateTest, MissingCredentialsThenStoredThenAuthenticate) {
  fs::path home = TempDir("auth-home");
  fs::path project = TempDir("auth-project");
  Proc p({LOUSHO_BINARY, "acp"}, MinimalEnv(home), project.string(), false);
  p.Send(kInit);
  Json::Value init = ParseLine(p.Line());
  const Json::Value& methods = init["result"]["authMethods"];
  ASSERT_EQ(methods.size(), 1u) << init;
  EXPECT_EQ(methods[0]["id"].asString(), "lousho-env");
  EXPECT_FALSE(methods[0].isMember("type"));  // ACP's default: agent

  p.Send(NewSession(2, project));
  Json::Value refused = ParseLine(p.Line());
  EXPECT_EQ(refused["error"]["code"].asInt(), -32000);
  EXPECT_EQ(refused["error"]["message"].asString(),
            "Authentication required: " + config::NoCredentialsMessage());

  const std::string auth =
      R"({"jsonrpc":"2.0","id":3,"method":"authenticate","params":{"methodId":"lousho-env"}})"
      "\n";
  p.Send(auth);
  Json::Value still = ParseLine(p.Line());
  EXPECT_EQ(still["error"]["code"].asInt(), -32000) << still;

  p.Send(R"({"jsonrpc":"2.0","id":4,"method":"authenticate","params":{"methodId":"nope"}})"
         "\n");
  EXPECT_EQ(ParseLine(p.Line())["error"]["code"].asInt(), -32602);

  // What `lousho setup` stores for a local server (no key; building it needs no network).
  config::StoredCredentials c;
  c.provider = "openai-compatible";
  c.model = "openai-compatible/local-model";
  c.env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1";
  ASSERT_TRUE(config::SaveCredentials((home / ".config/lousho/credentials.json").string(), c).ok());
  p.Send(R"({"jsonrpc":"2.0","id":5,"method":"authenticate","params":{"methodId":"lousho-env"}})"
         "\n");
  Json::Value ok = ParseLine(p.Line());
  EXPECT_TRUE(ok["result"].isObject()) << ok;
  p.Send(NewSession(6, project));
  Json::Value created = ParseLine(p.Line());
  EXPECT_TRUE(created["result"]["sessionId"].isString()) << created;
  p.CloseInput();
  EXPECT_EQ(p.Wait(), 0);
  fs::remove_all(home);
  fs::remove_all(project);
}

// The registry runs the binary with stdin closed: it must end (exit 0), not wait on whatever
// descriptor 0 became.
TEST(DefaultAgentTest, ClosedStdinExitsZero) {
  fs::path home = TempDir("closed-home");
  Proc p({LOUSHO_BINARY, "acp"}, MinimalEnv(home), home.string(), false, true);
  EXPECT_EQ(p.ReadUntil(""), "");
  EXPECT_EQ(p.Wait(), 0) << p.Stderr();
  fs::remove_all(home);
}

TEST(AuthenticateTest, TerminalMethodsOnlyForClientsThatRunThem) {
  fs::path home = TempDir("term-home");
  auto init_with = [&](const std::string& caps) {
    Proc p({LOUSHO_BINARY, "acp"}, MinimalEnv(home), home.string(), false);
    p.Send(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":)" +
        caps + "}}\n");
    p.CloseInput();
    Json::Value v = ParseLine(p.Line());
    EXPECT_EQ(p.Line(), "");  // one line, nothing else
    EXPECT_EQ(p.Wait(), 0);
    return v["result"]["authMethods"];
  };
  Json::Value modern = init_with(R"({"auth":{"terminal":true}})");
  ASSERT_EQ(modern.size(), 2u) << modern;
  EXPECT_EQ(modern[0]["type"].asString(), "terminal");
  EXPECT_EQ(modern[0]["args"][0].asString(), "--setup");
  Json::Value legacy = init_with(R"({"_meta":{"terminal-auth":true}})");
  ASSERT_EQ(legacy.size(), 2u) << legacy;
  EXPECT_FALSE(legacy[0].isMember("type"));
  const Json::Value& t = legacy[0]["_meta"]["terminal-auth"];
  EXPECT_EQ(fs::canonical(t["command"].asString()), fs::canonical(LOUSHO_BINARY));
  EXPECT_EQ(t["args"][0].asString(), "setup");
  EXPECT_EQ(init_with("{}").size(), 1u);
  fs::remove_all(home);
}

TEST(AuthenticateTest, SpecWithMissingKeyNamesTheVariableAndSetup) {
  fs::path home = TempDir("spec-home");
  WriteFile(home / "agent.yaml", "model: anthropic/claude-haiku-4-5\n");
  Proc p({LOUSHO_BINARY, "acp", (home / "agent.yaml").string()}, MinimalEnv(home), home.string(),
         false);
  p.Send(kInit + NewSession(2, home));
  ParseLine(p.Line());
  Json::Value refused = ParseLine(p.Line());
  EXPECT_EQ(refused["error"]["code"].asInt(), -32000);
  EXPECT_EQ(refused["error"]["message"].asString(),
            "Authentication required: ANTHROPIC_API_KEY is not set (needed by provider "
            "anthropic); set it in the agent's environment or run `lousho setup` in a terminal");
  p.CloseInput();
  EXPECT_EQ(p.Wait(), 0);
  fs::remove_all(home);
}

// ---- lousho setup ----

std::string Ev(const std::string& name, const std::string& data) {
  return "event: " + name + "\ndata: " + data + "\n\n";
}

std::string OkStream() {
  return Ev("message_start",
            R"({"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":5,"output_tokens":0}}})") +
         Ev("content_block_start",
            R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})") +
         Ev("content_block_delta",
            R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"OK"}})") +
         Ev("content_block_stop", R"({"type":"content_block_stop","index":0})") +
         Ev("message_delta",
            R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}})") +
         Ev("message_stop", R"({"type":"message_stop"})");
}

const char kKey[] = "sk-ant-test-0123456789-secret";

TEST(SetupTest, PtyKeyHiddenCheckedOnceStoredPrivate) {
  agent::testing::LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    res.set_content(OkStream(), "text/event-stream");
  });
  fs::path home = TempDir("setup-home");
  Proc p({LOUSHO_BINARY, "setup"}, MinimalEnv(home, {"ANTHROPIC_BASE_URL=" + server.url()}),
         home.string(), true);
  std::string out = p.ReadUntil("Choose 1, 2, 3 or 4: ");
  p.Send("1\n");
  out = p.ReadUntil("(it is not shown): ");
  ASSERT_NE(out.find("(it is not shown): "), std::string::npos) << out;
  p.Send(std::string(kKey) + "\n");
  out = p.ReadUntil("");
  EXPECT_EQ(p.Wait(), 0) << out;
  EXPECT_EQ(out.find(kKey), std::string::npos) << "the key was echoed: " << out;
  EXPECT_NE(out.find("Checking with one short request to anthropic/claude-sonnet-4-5 ... ok"),
            std::string::npos)
      << out;

  ASSERT_EQ(server.request_count(), 1);
  EXPECT_EQ(server.request(0).path, "/v1/messages");
  EXPECT_EQ(server.request(0).Header("x-api-key"), kKey);

  const fs::path file = home / ".config/lousho/credentials.json";
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto stored = config::LoadCredentials(file.string());
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->env.at("ANTHROPIC_API_KEY"), kKey);
  EXPECT_EQ(stored->model, "anthropic/claude-sonnet-4-5");

  // The stored key is used from now on: the built-in agent is ready.
  Proc check({LOUSHO_BINARY, "acp", "--print-agent"}, MinimalEnv(home), home.string(), false);
  std::string printed = check.ReadUntil("");
  EXPECT_EQ(check.Wait(), 0);
  EXPECT_NE(printed.find("status: ready"), std::string::npos) << printed;
  EXPECT_EQ(printed.find(kKey), std::string::npos);
  fs::remove_all(home);
}

TEST(SetupTest, RejectedKeyStoresNothingAndIsNotShown) {
  agent::testing::LoopbackServer server([&](int, const httplib::Request&, httplib::Response& res) {
    res.status = 401;
    res.set_content(std::string(R"({"error":{"message":"invalid key )") + kKey + "\"}}",
                    "application/json");
  });
  fs::path home = TempDir("setup-bad");
  // `lousho acp --setup` is how Zed runs the terminal method: the same setup.
  Proc p({LOUSHO_BINARY, "acp", "--setup"},
         MinimalEnv(home, {"OPENAI_BASE_URL=" + server.url("/v1")}), home.string(), false);
  p.Send("2\n" + std::string(kKey) + "\n");
  p.CloseInput();
  std::string out = p.ReadUntil("");
  EXPECT_EQ(p.Wait(), 1);
  EXPECT_EQ(server.request_count(), 1);
  EXPECT_EQ(server.request(0).path, "/v1/chat/completions");
  EXPECT_EQ(out.find(kKey), std::string::npos) << out;
  EXPECT_EQ(p.Stderr().find(kKey), std::string::npos) << p.Stderr();
  EXPECT_NE(p.Stderr().find("LOUSHO_PROVIDER_AUTH"), std::string::npos) << p.Stderr();
  EXPECT_FALSE(fs::exists(home / ".config/lousho/credentials.json"));
  fs::remove_all(home);
}

// A check that gets no answer (nothing listens: offline, a proxy in the way) names the host and
// lets the user store the key unchecked.
TEST(SetupTest, UncheckableKeyIsStoredWhenTheUserSaysSo) {
  int port = 0;
  {
    agent::testing::LoopbackServer gone([](int, const httplib::Request&, httplib::Response&) {});
    port = gone.port();
  }
  fs::path home = TempDir("setup-offline");
  Proc p({LOUSHO_BINARY, "setup", "--provider", "gemini"},
         MinimalEnv(home, {"GEMINI_BASE_URL=http://127.0.0.1:" + std::to_string(port) + "/v1beta"}),
         home.string(), false);
  p.Send(std::string(kKey) + "\ny\n");
  p.CloseInput();
  std::string out = p.ReadUntil("");
  EXPECT_EQ(p.Wait(), 0) << out << p.Stderr();
  EXPECT_NE(p.Stderr().find("cannot connect to 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << p.Stderr();
  EXPECT_NE(out.find("Store it unchecked? [y/N]"), std::string::npos) << out;
  EXPECT_EQ(out.find(kKey), std::string::npos);
  auto stored = config::LoadCredentials((home / ".config/lousho/credentials.json").string());
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->env.at("GEMINI_API_KEY"), kKey);
  EXPECT_EQ(stored->model, "gemini/gemini-2.5-pro");
  fs::remove_all(home);
}

TEST(SetupTest, RegistryFormAndEndOfInput) {
  fs::path home = TempDir("setup-eof");
  // The registry replaces the args with the method's: `lousho --setup`.
  Proc p({LOUSHO_BINARY, "--setup"}, MinimalEnv(home), home.string(), false);
  p.CloseInput();
  std::string out = p.ReadUntil("");
  EXPECT_EQ(p.Wait(), 1);
  EXPECT_NE(out.find("Which model provider?"), std::string::npos) << out;
  EXPECT_NE(p.Stderr().find("no provider chosen; nothing stored"), std::string::npos);
  EXPECT_FALSE(fs::exists(home / ".config/lousho/credentials.json"));
  fs::remove_all(home);
}

}  // namespace
}  // namespace lousho
