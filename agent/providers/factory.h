// Builds the HTTP provider a ProviderSettings entry describes.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "config/provider_settings.h"
#include "core/provider.h"
#include "support/env.h"
#include "support/http/proxy.h"
#include "support/status.h"

namespace lousho::agent {

// Kept for callers that name it so; the lookup is support/env.h's.
using GetEnvFn = EnvLookup;

// Resolves the base URL (settings.base_url_env overrides base_url when set and non-empty), the
// API key (from settings.api_key_env; a missing key is a LOUSHO_PROVIDER_AUTH error such as
// "OPENAI_API_KEY is not set", returned before any request; no key is needed when api_key_env is
// empty) and the model info (settings.models, then the built-in catalogue, else defaults with
// prices 0), and returns an OpenAiChatProvider ("openai-chat"; an OpenAiResponsesProvider for the
// catalogue's Responses-only models), OpenAiResponsesProvider ("openai-responses") or
// AnthropicMessagesProvider ("anthropic-messages") or GeminiProvider ("gemini"). Other api
// values are a LOUSHO_PROVIDER_CONFIG error.
// For anthropic-messages, ANTHROPIC_AUTH_TOKEN (sent as a Bearer token) stands in for a
// missing ANTHROPIC_API_KEY, as the official SDK does; for gemini, GOOGLE_API_KEY stands in for
// a missing GEMINI_API_KEY. `proxy`: the agent's `proxy:`; unset: the environment's.
Result<std::shared_ptr<Provider>> MakeHttpProvider(const config::ProviderSettings& settings,
                                                   const std::string& model_id,
                                                   const GetEnvFn& getenv,
                                                   const ProxySetting& proxy = {});

using lousho::ProcessEnv;

}  // namespace lousho::agent
