// Tests of the command line through the built binary: exit codes, stderr lines, --record,
// logging, the input line limit, and exit on stdin EOF.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/json_util.h"

namespace lousho {
namespace {
namespace fs = std::filesystem;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  double seconds = 0;
};

// Runs the binary with `input` on stdin; stdout and stderr captured through files.
RunResult RunLousho(const std::vector<std::string>& args, const std::string& input) {
  fs::path dir = fs::temp_directory_path() / ("lousho-cli-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "in") << input;
  std::string cmd = "LOUSHO_TEST_MODE=1 '" + std::string(LOUSHO_BINARY) + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " <'" + (dir / "in").string() + "' >'" + (dir / "out").string() + "' 2>'" +
         (dir / "err").string() + "'";
  auto start = std::chrono::steady_clock::now();
  int status = std::system(cmd.c_str());
  RunResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::stringstream o, e;
  o << std::ifstream(dir / "out").rdbuf();
  e << std::ifstream(dir / "err").rdbuf();
  r.out = o.str();
  r.err = e.str();
  fs::remove_all(dir);
  return r;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

const std::string kDemo = std::string(LOUSHO_SOURCE_DIR) + "/examples/demo";
const std::string kInit =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}})";

TEST(CliTest, VersionAndHelp) {
  RunResult v = RunLousho({"--version"}, "");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out, std::string("lousho ") + LOUSHO_VERSION + "\n");
  RunResult h = RunLousho({"--help"}, "");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("acp"), std::string::npos);
  EXPECT_NE(h.out.find("validate"), std::string::npos);
}

TEST(CliTest, UsageErrorsExitOneWithACode) {
  RunResult r = RunLousho({"acp"}, "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("LOUSHO_USAGE: ", 0), 0u) << r.err;
  EXPECT_TRUE(r.out.empty());
  RunResult none = RunLousho({}, "");
  EXPECT_EQ(none.exit_code, 1);
}

TEST(CliTest, BadSpecIsOneLineOnStderrAndNothingOnStdout) {
  fs::path p = fs::temp_directory_path() / ("lousho-bad-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(p) << "model: openai/gpt-4o\nmaxStep: 3\n";
  RunResult r = RunLousho({"acp", p.string()}, kInit + "\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(r.err, "LOUSHO_CONFIG_INVALID: " + p.string() +
                       ":2:1: unknown key 'maxStep' (did you mean 'maxSteps'?)\n");
  RunResult v = RunLousho({"validate", p.string()}, "");
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.err, r.err);
  fs::remove(p);
  RunResult missing = RunLousho({"acp", "/no/such/agent.yaml"}, "");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind("LOUSHO_CONFIG_NOT_FOUND: /no/such/agent.yaml", 0), 0u)
      << missing.err;
}

TEST(CliTest, MissingProviderKeyFailsSessionsWithAuthRequired) {
  // A key variable no environment has, so the check runs wherever the test does.
  fs::path p = fs::temp_directory_path() / ("lousho-key-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(p)
      << "model: corp/m1\nproviders:\n  corp:\n    api: openai-chat\n"
         "    baseUrl: http://127.0.0.1:9/v1\n    apiKeyEnv: LOUSHO_TEST_NO_SUCH_KEY\n";
  std::string new_session =
      R"({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}})";
  RunResult r = RunLousho({"acp", p.string()}, kInit + "\n" + new_session + "\n");
  RunResult v = RunLousho({"validate", p.string()}, "");
  fs::remove(p);
  EXPECT_EQ(r.exit_code, 0);
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_TRUE((*ParseJson(lines[0])).isMember("result"));
  Json::Value err = (*ParseJson(lines[1]))["error"];
  EXPECT_EQ(err["code"].asInt(), -32000);
  EXPECT_EQ(err["data"]["code"].asString(), "LOUSHO_PROVIDER_AUTH");
  EXPECT_NE(err["message"].asString().find("LOUSHO_TEST_NO_SUCH_KEY"), std::string::npos);
  EXPECT_NE(r.err.find("LOUSHO_PROVIDER_AUTH"), std::string::npos) << r.err;
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("note: "), std::string::npos);
  RunResult bad = RunLousho({"acp", kDemo, "--model", "nosuch/model"}, "");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("unknown provider 'nosuch'"), std::string::npos) << bad.err;
}

TEST(CliTest, ValidateAcceptsTheExamples) {
  RunResult r = RunLousho({"validate", kDemo}, "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": ok (agent 'demo', model script/demo, 9 tools)"), std::string::npos)
      << r.out;
}

TEST(CliTest, RecordMirrorsEveryLineBothWays) {
  fs::path rec = fs::temp_directory_path() / ("lousho-rec-" + std::to_string(getpid()) + ".txt");
  RunResult r = RunLousho({"acp", kDemo, "--record", rec.string()}, kInit + "\nnot json\n");
  EXPECT_EQ(r.exit_code, 0);
  std::stringstream ss;
  ss << std::ifstream(rec).rdbuf();
  fs::remove(rec);
  auto out_lines = Lines(r.out);
  ASSERT_EQ(out_lines.size(), 2u);
  EXPECT_EQ(Lines(ss.str()), (std::vector<std::string>{"> " + kInit, "< " + out_lines[0],
                                                       "> not json", "< " + out_lines[1]}));
}

TEST(CliTest, LogsGoToStderrOrTheLogFileNeverStdout) {
  RunResult r = RunLousho({"--log-level", "debug", "acp", kDemo}, kInit + "\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("lousho debug: request initialize"), std::string::npos) << r.err;
  for (const auto& l : Lines(r.out)) EXPECT_TRUE(ParseJson(l).ok()) << l;
  fs::path log = fs::temp_directory_path() / ("lousho-log-" + std::to_string(getpid()) + ".txt");
  RunResult f =
      RunLousho({"--log-level", "info", "--log-file", log.string(), "acp", kDemo}, kInit + "\n");
  std::stringstream ss;
  ss << std::ifstream(log).rdbuf();
  fs::remove(log);
  EXPECT_TRUE(f.err.empty()) << f.err;
  EXPECT_NE(ss.str().find("serving agent 'demo'"), std::string::npos) << ss.str();
}

TEST(CliTest, OverlongLineIsRefusedAndTheServerCarriesOn) {
  std::string big = R"({"jsonrpc":"2.0","id":9,"method":"initialize","params":{"x":")" +
                    std::string(5000, 'a') + "\"}}";
  RunResult r = RunLousho({"acp", kDemo, "--max-line-bytes", "1000"}, big + "\n" + kInit + "\n");
  EXPECT_EQ(r.exit_code, 0);
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  auto first = ParseJson(lines[0]);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)["error"]["code"].asInt(), -32600);
  EXPECT_TRUE((*first)["id"].isNull());
  EXPECT_NE((*first)["error"]["message"].asString().find("exceeds"), std::string::npos);
  EXPECT_EQ((*ParseJson(lines[1]))["id"].asInt(), 1);
}

TEST(CliTest, StdinEofDuringATurnCancelsItAndExitsPromptly) {
  std::string input =
      kInit + "\n" +
      R"({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}})" +
      "\n" +
      R"({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"slow please"}]}})" +
      "\n";
  RunResult r = RunLousho({"acp", kDemo}, input);
  EXPECT_EQ(r.exit_code, 0);
  auto lines = Lines(r.out);
  ASSERT_FALSE(lines.empty());
  auto last = ParseJson(lines.back());
  ASSERT_TRUE(last.ok());
  EXPECT_EQ((*last)["id"].asInt(), 3);
  EXPECT_EQ((*last)["result"]["stopReason"].asString(), "cancelled");
  // The slow reply alone would take seconds; a generous bound still catches a missed cancel.
  EXPECT_LT(r.seconds, 3.0);
}

}  // namespace
}  // namespace lousho
