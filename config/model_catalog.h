// The built-in catalogue of providers and models (endpoints, key variables, prices, limits).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/provider_settings.h"

namespace lousho::config {

// The built-in settings for `name` ("openai", "anthropic", "ollama", "openrouter", "lmstudio",
// "llamacpp", "vllm"), or nullptr. The pointer stays valid for the program's life.
const ProviderSettings* FindBuiltinProvider(std::string_view name);

// All built-in provider names, in a stable order.
std::vector<std::string> BuiltinProviderNames();

// The model `id` from `settings.models`, else from the built-in entry of the same provider name,
// else nullptr.
const ModelInfo* FindModel(const ProviderSettings& settings, std::string_view id);

// Whether `id` is one of the openai provider's models that only the Responses API serves (the
// codex and pro models): that provider talks to them there, and agents get apply_patch for them.
bool ResponsesOnlyModel(const ProviderSettings& settings, std::string_view id);

// The info used for a model that no catalogue knows: its id, unknown limits, prices 0, and no
// image or reasoning support (so nothing is sent that the model might reject).
ModelInfo UnknownModelInfo(std::string_view id);

// The wire formats a provider can speak, as a spec's `api:` names them.
inline constexpr const char* kKnownApis =
    "openai-chat, openai-responses, anthropic-messages or gemini";
bool KnownApi(std::string_view api);

}  // namespace lousho::config
