// `lousho setup` (also `lousho acp --setup`, `lousho --setup`): the interactive terminal setup of
// model access. Picks a provider, reads a key without echo, checks it with one small request and
// stores it in ~/.config/lousho/credentials.json (0600). The key is never printed or logged.
#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "agent/providers/factory.h"
#include "cli/command.h"
#include "config/credentials.h"
#include "config/default_agent.h"
#include "config/model_catalog.h"
#include "support/env.h"
#include "support/log.h"
#include "support/text.h"

namespace lousho::cli {
namespace {

// Prompts go to stdout: setup runs in a terminal of its own, never on a protocol stream.
void Say(const std::string& s) {
  std::fputs(s.c_str(), stdout);
  std::fflush(stdout);
}

std::optional<std::string> ReadLine() {
  std::string line;
  if (!std::getline(std::cin, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
    line.pop_back();
  size_t start = line.find_first_not_of(" \t");
  return start == std::string::npos ? std::string() : line.substr(start);
}

// Shows `prompt` and reads a line with the terminal's echo off (when stdin is a terminal), so
// the key never shows. Echo goes off before the prompt appears, so nothing typed after it is
// echoed; TCSANOW, not TCSAFLUSH, so nothing already typed is thrown away.
std::optional<std::string> ReadSecret(const std::string& prompt) {
  termios saved{};
  const bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
  if (tty) {
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    quiet.c_lflag |= ECHONL;  // the Enter still moves to the next line
    tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
  }
  Say(prompt);
  auto line = ReadLine();
  if (tty) tcsetattr(STDIN_FILENO, TCSANOW, &saved);
  if (!tty) Say("\n");
  return line;
}

std::string Scrub(std::string text, const std::string& secret) {
  if (secret.size() < 4) return text;
  for (size_t p = text.find(secret); p != std::string::npos; p = text.find(secret, p))
    text.replace(p, secret.size(), "***");
  return text;
}

struct ProviderChoice {
  std::string name;      // anthropic | openai | openai-compatible
  std::string key_env;   // where the key goes
  std::string model;     // "provider/model"
  std::string base_url;  // openai-compatible only
};

std::optional<std::string> AskProvider() {
  Say("Which model provider?\n"
      "  1) Anthropic (ANTHROPIC_API_KEY)\n"
      "  2) OpenAI (OPENAI_API_KEY)\n"
      "  3) An OpenAI-compatible server (a base URL such as http://127.0.0.1:11434/v1)\n"
      "  4) Google Gemini (GEMINI_API_KEY)\n"
      "Choose 1, 2, 3 or 4: ");
  for (int tries = 0; tries < 3; ++tries) {
    auto line = ReadLine();
    if (!line) return std::nullopt;
    const std::string a = AsciiLower(*line);
    if (a == "1" || a == "anthropic") return "anthropic";
    if (a == "2" || a == "openai") return "openai";
    if (a == "3" || a == config::kCompatibleProvider) return config::kCompatibleProvider;
    if (a == "4" || a == "gemini") return "gemini";
    Say("Please answer 1, 2, 3 or 4: ");
  }
  return std::nullopt;
}

// One request of a few tokens through the same provider code the agent uses: if it is
// accepted, the key, URL and model work. Stops at the first streamed byte of the answer.
Status CheckAccess(const ProviderChoice& p, const std::string& key) {
  config::ProviderSettings settings;
  if (p.name == config::kCompatibleProvider) {
    settings.name = p.name;
    settings.api = "openai-chat";
    settings.base_url = p.base_url;
    settings.api_key_env = key.empty() ? "" : "OPENAI_API_KEY";
  } else {
    settings = *config::FindBuiltinProvider(p.name);
  }
  settings.max_retries = 0;
  settings.idle_timeout_s = 60;
  const std::string base_env = settings.base_url_env;
  // The key being checked first; the process environment only for the base URL override
  // (ANTHROPIC_BASE_URL, OPENAI_BASE_URL), as the agent will see it.
  EnvLookup getenv = [&](const std::string& name) -> std::optional<std::string> {
    if (name == settings.api_key_env) return key;
    if (name == base_env && p.name != config::kCompatibleProvider) return ProcessEnv(name);
    return std::nullopt;
  };
  const std::string model_id = p.model.substr(p.model.find('/') + 1);
  auto provider = agent::MakeHttpProvider(settings, model_id, getenv);
  if (!provider.ok()) return provider.error();
  agent::Message hello;
  hello.content.push_back(agent::ContentBlock::Text("Reply with the word OK."));
  agent::ModelRequest request;
  request.model = model_id;
  request.messages = std::span<const agent::Message>(&hello, 1);
  request.max_output_tokens = 16;
  auto answer = (*provider)->Stream(request, [](const agent::StreamDelta&) { return false; },
                                    CancelToken(), {});
  if (!answer.ok()) return answer.error();
  return Status::Ok();
}

// Tells the user that nothing was stored, and why (a usage error); false.
bool NothingStored(const char* what) {
  std::fprintf(stderr, "%s: %s; nothing stored\n", ErrorCodeName(ErrorCode::kUsage), what);
  return false;
}

// The server's base URL and model of an OpenAI-compatible provider, from the options or asked
// for; false (told on stderr) when one is not given.
bool AskCompatibleServer(const SetupOptions& options, ProviderChoice* p) {
  // Names of its own: a key stored for this server never reaches the openai provider.
  p->key_env = config::kStoredCompatibleKey;
  p->base_url = options.base_url;
  if (p->base_url.empty()) {
    Say("Base URL of the server (e.g. http://127.0.0.1:11434/v1): ");
    p->base_url = ReadLine().value_or("");
  }
  if (p->base_url.empty()) return NothingStored("no base URL given");
  std::string model = options.model;
  if (model.empty()) {
    Say("Model id, as the server names it (e.g. qwen2.5-coder:7b): ");
    model = ReadLine().value_or("");
  }
  if (model.empty()) return NothingStored("no model given");
  p->model = std::string(config::kCompatibleProvider) + "/" + model;
  return true;
}

// The provider to store a key for, its key variable and model: from the options, else asked
// for. Nullopt (told on stderr) when none is chosen or it is unknown.
std::optional<ProviderChoice> ChooseProvider(const SetupOptions& options) {
  ProviderChoice p;
  if (!options.provider.empty()) {
    p.name = options.provider;
  } else {
    auto chosen = AskProvider();
    if (!chosen) {
      NothingStored("no provider chosen");
      return std::nullopt;
    }
    p.name = *chosen;
  }
  if (p.name == "anthropic") {
    p.key_env = "ANTHROPIC_API_KEY";
    p.model = "anthropic/claude-sonnet-4-5";
  } else if (p.name == "openai") {
    p.key_env = "OPENAI_API_KEY";
    p.model = "openai/gpt-4.1";
  } else if (p.name == "gemini") {
    p.key_env = "GEMINI_API_KEY";
    p.model = "gemini/gemini-2.5-pro";
  } else if (p.name == config::kCompatibleProvider) {
    if (!AskCompatibleServer(options, &p)) return std::nullopt;
  } else {
    std::fprintf(stderr, "%s: unknown provider '%s' (anthropic, openai, gemini or %s)\n",
                 ErrorCodeName(ErrorCode::kUsage), p.name.c_str(), config::kCompatibleProvider);
    return std::nullopt;
  }
  if (!options.model.empty() && p.name != config::kCompatibleProvider)
    p.model = p.name + "/" + options.model;
  return p;
}

// Whether a failed check is the network's (no answer: offline, a proxy in the way), not the
// key's or the model's.
bool NetworkFailure(const Error& e) {
  return e.code == ErrorCode::kProviderUnavailable || e.code == ErrorCode::kProviderTimeout;
}

// Checks the key with one request; when the network, not the key, failed (or --no-check), the
// key may still be stored after the user is told so. True to store it.
bool CheckOrConfirm(const SetupOptions& options, const ProviderChoice& p, const std::string& key) {
  if (options.no_check) {
    Say("Not checked (--no-check): the key is stored as given.\n");
    return true;
  }
  Say("Checking with one short request to " + p.model + " ... ");
  Status checked = CheckAccess(p, key);
  if (checked.ok()) {
    Say("ok\n");
    return true;
  }
  Say("failed\n");
  const Error& e = checked.error();
  std::fprintf(stderr, "%s: %s\n", ErrorCodeName(e.code), Scrub(e.message, key).c_str());
  if (NetworkFailure(e)) {
    Say("The key could not be checked (no answer from the provider). Store it unchecked? "
        "[y/N]: ");
    const std::string a = AsciiLower(ReadLine().value_or(""));
    if (a == "y" || a == "yes") {
      Say("Stored unchecked: the first request will tell whether it works.\n");
      return true;
    }
  }
  std::fprintf(stderr, "Nothing was stored; run `lousho setup` again.\n");
  return false;
}

int Setup(const SetupOptions& options) {
  // The check's failure is reported once, below; the provider's own warning would repeat it.
  log::Configure(log::Level::kError, "");
  Say("lousho setup: model access for lousho (stored in your config folder, readable by you "
      "only)\n");
  const std::string path = config::CredentialsPath(ProcessEnv);
  if (path.empty()) {
    std::fprintf(stderr, "%s: neither HOME nor XDG_CONFIG_HOME is set; nowhere to store a key\n",
                 ErrorCodeName(ErrorCode::kConfigNotFound));
    return 1;
  }
  auto chosen = ChooseProvider(options);
  if (!chosen) return 1;
  ProviderChoice p = std::move(*chosen);

  const bool optional_key = p.name == config::kCompatibleProvider;
  auto key = ReadSecret(std::string("Paste your ") +
                        (optional_key ? "API key (empty if the server needs none)" : p.key_env) +
                        " (it is not shown): ");
  if (!key || (key->empty() && !optional_key)) {
    std::fprintf(stderr, "%s: no key given; nothing stored\n", ErrorCodeName(ErrorCode::kUsage));
    return 1;
  }
  if (!CheckOrConfirm(options, p, *key)) return 1;
  config::StoredCredentials creds;
  creds.provider = p.name;
  creds.model = p.model;
  if (!key->empty()) creds.env[p.key_env] = *key;
  if (!p.base_url.empty()) creds.env[config::kStoredCompatibleBaseUrl] = p.base_url;
  if (Status saved = config::SaveCredentials(path, creds); !saved.ok()) {
    std::fprintf(stderr, "%s: %s\n", ErrorCodeName(saved.error().code),
                 saved.error().message.c_str());
    return 1;
  }
  Say("Stored in " + path + " (mode 0600). The built-in agent now uses " + p.model +
      ".\nA key set in the agent's environment takes precedence over the stored one.\n");
  return 0;
}

}  // namespace

int RunSetup(const SetupOptions& options) { return Setup(options); }

Subcommand AddSetupCommand(CLI::App& app) {
  auto o = std::make_shared<SetupOptions>();
  CLI::App* setup = app.add_subcommand(
      "setup", "set up model access: pick a provider, paste a key, check and store it");
  setup->add_option("--provider", o->provider, "anthropic, openai, gemini or openai-compatible");
  setup->add_option("--base-url", o->base_url, "the OpenAI-compatible server's base URL");
  setup->add_option("--model", o->model, "model id at the provider (default: lousho's choice)");
  setup->add_flag("--no-check", o->no_check,
                  "store the key without checking it (offline, or behind a proxy that blocks the "
                  "check)");
  // The ACP registry's terminal auth runs the agent's command with its args replaced by the
  // method's (`lousho --setup`); Zed appends them instead (`lousho acp --setup`, acp_command).
  app.add_flag_callback(
         "--setup", [] { std::exit(RunSetup(SetupOptions{})); },
         "run `lousho setup` (for editors that launch the setup this way)")
      ->group("");
  return {setup, [o] { return RunSetup(*o); }};
}

}  // namespace lousho::cli
