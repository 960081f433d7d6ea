// The agent lookup order of `lousho acp` and the built-in coding agent.
#include "config/default_agent.h"

#include <filesystem>

#include "config/credentials.h"

namespace lousho::config {
namespace fs = std::filesystem;

namespace {

bool Set(const EnvLookup& getenv, const char* name) {
  if (!getenv) return false;
  auto v = getenv(name);
  return v && !v->empty();
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

constexpr char kBuiltinInstructions[] =
    "You are lousho, a coding agent working inside the user's project through their editor.\n"
    "Look before you act: read the relevant files and search the code before changing it.\n"
    "Make the smallest change that does what was asked, keep the project's style, and run the\n"
    "project's own checks when there are any. Say briefly what you changed and why, and say\n"
    "plainly when something is unclear or did not work.";

}  // namespace

const char* AgentSourceName(AgentSource source) {
  switch (source) {
    case AgentSource::kArgument:
      return "argument";
    case AgentSource::kEnvVar:
      return "LOUSHO_AGENT";
    case AgentSource::kProject:
      return "project";
    case AgentSource::kUser:
      return "user";
    case AgentSource::kBuiltin:
      return "built-in";
  }
  return "?";
}

AgentChoice ChooseAgent(const std::string& argument, const EnvLookup& getenv,
                        const std::string& cwd) {
  AgentChoice c;
  if (!argument.empty()) {
    c.source = AgentSource::kArgument;
    c.path = argument;
    c.reason = "named on the command line";
    return c;
  }
  if (auto env = getenv ? getenv("LOUSHO_AGENT") : std::nullopt; env && !env->empty()) {
    c.source = AgentSource::kEnvVar;
    c.path = *env;
    c.reason = "LOUSHO_AGENT is set";
    return c;
  }
  if (!cwd.empty()) {
    std::string project = cwd + "/.lousho/agent.yaml";
    if (Exists(project)) {
      c.source = AgentSource::kProject;
      c.path = project;
      c.reason = "found in the project folder";
      return c;
    }
  }
  if (std::string home = ConfigHome(getenv); !home.empty()) {
    std::string user = home + "/lousho/agent.yaml";
    if (Exists(user)) {
      c.source = AgentSource::kUser;
      c.path = user;
      c.reason = "found in the user's config folder";
      return c;
    }
  }
  c.source = AgentSource::kBuiltin;
  c.reason = "no spec argument, no LOUSHO_AGENT, no .lousho/agent.yaml in " +
             (cwd.empty() ? std::string("the current folder") : cwd) + ", no " +
             (ConfigHome(getenv).empty() ? std::string("user config folder")
                                         : ConfigHome(getenv) + "/lousho/agent.yaml");
  return c;
}

std::string NoCredentialsMessage() {
  return "no model credentials found: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or "
         "GEMINI_API_KEY, or OPENAI_BASE_URL and LOUSHO_MODEL for an OpenAI-compatible server) in "
         "the agent's environment, or run `lousho setup` in a terminal";
}

DefaultModel ChooseDefaultModel(const EnvLookup& process_env, const StoredCredentials& stored) {
  DefaultModel d;
  if (auto m = process_env ? process_env("LOUSHO_MODEL") : std::nullopt; m && !m->empty()) {
    d.model = *m;
    d.reason = "LOUSHO_MODEL is set";
    return d;
  }
  if (Set(process_env, "ANTHROPIC_API_KEY") || Set(process_env, "ANTHROPIC_AUTH_TOKEN")) {
    d.model = "anthropic/claude-sonnet-4-5";
    d.reason = "ANTHROPIC_API_KEY is set";
    return d;
  }
  const bool base_url = Set(process_env, "OPENAI_BASE_URL");
  if (Set(process_env, "OPENAI_API_KEY")) {
    // With OPENAI_BASE_URL too, the openai provider at that address (as OpenAI's SDKs and Codex
    // read them).
    d.model = "openai/gpt-4.1";
    d.reason = base_url ? "OPENAI_API_KEY and OPENAI_BASE_URL are set" : "OPENAI_API_KEY is set";
    return d;
  }
  if (Set(process_env, "GEMINI_API_KEY") || Set(process_env, "GOOGLE_API_KEY")) {
    d.model = "gemini/gemini-2.5-pro";
    d.reason =
        Set(process_env, "GEMINI_API_KEY") ? "GEMINI_API_KEY is set" : "GOOGLE_API_KEY is set";
    return d;
  }
  const std::string compatible_prefix = std::string(kCompatibleProvider) + "/";
  if (base_url) {
    // The stored model of a compatible server, when it is the server named.
    const auto stored_base = stored.env.find(kStoredCompatibleBaseUrl);
    if (stored.model.starts_with(compatible_prefix) && stored_base != stored.env.end() &&
        process_env("OPENAI_BASE_URL") == stored_base->second) {
      d.model = stored.model;
      d.reason = "OPENAI_BASE_URL is set; model stored by `lousho setup` for that server";
      return d;
    }
    d.model = compatible_prefix;
    d.reason = "OPENAI_BASE_URL is set";
    d.missing =
        "OPENAI_BASE_URL is set but no model is named: set LOUSHO_MODEL=" + compatible_prefix +
        "<model id> (or OPENAI_API_KEY, for the openai provider at that address) in the agent's "
        "environment, or run `lousho setup` in a terminal";
    return d;
  }
  if (!stored.model.empty()) {
    d.model = stored.model;
    d.reason = "stored by `lousho setup`";
    return d;
  }
  d.model = "anthropic/claude-sonnet-4-5";
  d.reason = "no credentials found";
  d.missing = NoCredentialsMessage();
  return d;
}

AgentSpec BuiltinAgentSpec(const std::string& model, const EnvLookup& getenv) {
  AgentSpec spec;
  spec.source = "built-in agent";
  spec.name = "lousho";
  spec.description = "lousho's built-in coding agent";
  spec.model = model;
  spec.instructions = kBuiltinInstructions;
  spec.thinking = "off";
  spec.default_mode = "default";
  // An OpenAI-compatible server: the one OPENAI_BASE_URL names (its key OPENAI_API_KEY), else
  // the one `lousho setup` stored (with the key stored for it).
  const bool from_env = Set(getenv, "OPENAI_BASE_URL");
  const char* url_var = from_env ? "OPENAI_BASE_URL" : kStoredCompatibleBaseUrl;
  const char* key_var = from_env ? "OPENAI_API_KEY" : kStoredCompatibleKey;
  if (Set(getenv, url_var)) {
    ProviderSettings p;
    p.name = kCompatibleProvider;
    p.api = "openai-chat";
    p.base_url = *getenv(url_var);
    p.base_url_env = url_var;
    // Local servers need no key; a key, when given, is sent.
    if (Set(getenv, key_var)) p.api_key_env = key_var;
    p.idle_timeout_s = 300;
    spec.providers[p.name] = p;
  }
  return spec;
}

}  // namespace lousho::config
