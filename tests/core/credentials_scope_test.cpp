// Stored credentials are per provider and per base URL: a key `lousho setup` stored for an
// OpenAI-compatible server never becomes the openai provider's, and the built-in agent reaches
// that server only through the names stored for it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/credentials.h"
#include "config/default_agent.h"

namespace lousho::config {
namespace {

EnvLookup Vars(const std::map<std::string, std::string>& vars) {
  return [vars](const std::string& k) -> std::optional<std::string> {
    auto it = vars.find(k);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(CredentialsScopeTest, AnOlderCompatibleEntryIsReadAsTheServersOwn) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("lousho-creds-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "credentials.json").string();
  std::ofstream(path)
      << R"({"provider":"openai-compatible","model":"openai-compatible/qwen",)"
      << R"("env":{"OPENAI_BASE_URL":"http://127.0.0.1:9/v1","OPENAI_API_KEY":"local-key"}})";
  auto stored = LoadCredentials(path);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->env.count("OPENAI_API_KEY"), 0u);
  EXPECT_EQ(stored->env.count("OPENAI_BASE_URL"), 0u);
  EXPECT_EQ(stored->env.at(kStoredCompatibleKey), "local-key");
  EXPECT_EQ(stored->env.at(kStoredCompatibleBaseUrl), "http://127.0.0.1:9/v1");

  // The openai provider sees no key of the server's.
  EnvLookup layered = WithStoredCredentials(Vars({}), *stored);
  EXPECT_FALSE(layered("OPENAI_API_KEY").has_value());
  // The built-in agent's compatible provider is the stored server, with its key.
  AgentSpec spec = BuiltinAgentSpec("openai-compatible/qwen", layered);
  ASSERT_EQ(spec.providers.count(kCompatibleProvider), 1u);
  const ProviderSettings& p = spec.providers.at(kCompatibleProvider);
  EXPECT_EQ(p.base_url, "http://127.0.0.1:9/v1");
  EXPECT_EQ(p.api_key_env, kStoredCompatibleKey);
  // OPENAI_BASE_URL in the environment names another server: the stored key is not sent there.
  AgentSpec other = BuiltinAgentSpec(
      "openai-compatible/qwen",
      WithStoredCredentials(Vars({{"OPENAI_BASE_URL", "http://10.0.0.2/v1"}}), *stored));
  EXPECT_EQ(other.providers.at(kCompatibleProvider).base_url, "http://10.0.0.2/v1");
  EXPECT_TRUE(other.providers.at(kCompatibleProvider).api_key_env.empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lousho::config
