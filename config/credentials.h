// Stored model credentials (what `lousho setup` saves) and the lookup that layers them under the
// process environment.
#pragma once

#include <map>
#include <string>

#include "support/env.h"
#include "support/status.h"

namespace lousho::config {

// ~/.config/lousho/credentials.json, created 0600:
//   {"provider": "anthropic", "model": "anthropic/claude-sonnet-4-5",
//    "env": {"ANTHROPIC_API_KEY": "sk-..."}}
// `env` holds values of the variables lousho reads (keys, base URLs); `model` is the default
// agent's model when the environment names none.
struct StoredCredentials {
  std::string provider;  // informational: what setup chose
  std::string model;     // "provider/model"; may be empty
  std::map<std::string, std::string> env;
};

// $XDG_CONFIG_HOME/lousho/credentials.json (or ~/.config/...); "" when no home is known.
std::string CredentialsPath(const EnvLookup& getenv);

// The stored credentials; an absent file gives empty ones. A file that is not valid JSON, or
// not an object, is LOUSHO_CONFIG_INVALID (the message never quotes its content).
Result<StoredCredentials> LoadCredentials(const std::string& path);

// Writes them to `path`, 0600 from creation, replacing the old file in one step.
Status SaveCredentials(const std::string& path, const StoredCredentials& credentials);

// Removes the stored credentials (`lousho logout`, ACP `logout`): true when a file was removed,
// false when there was none. The environment's variables are untouched.
Result<bool> ForgetCredentials(const std::string& path);

// Where `lousho setup` stores an OpenAI-compatible server's address and key: names of their own,
// so a key stored for a local server never reaches the `openai` provider (which reads
// OPENAI_API_KEY and OPENAI_BASE_URL). Files written before these names existed are read into
// them.
inline constexpr char kStoredCompatibleBaseUrl[] = "LOUSHO_COMPATIBLE_BASE_URL";
inline constexpr char kStoredCompatibleKey[] = "LOUSHO_COMPATIBLE_API_KEY";

// A lookup where the process environment wins and the stored values fill the gaps.
EnvLookup WithStoredCredentials(EnvLookup process_env, StoredCredentials stored);

}  // namespace lousho::config
