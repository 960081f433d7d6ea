// Builds the HTTP provider a ProviderSettings entry describes.
#include "agent/providers/factory.h"

#include "agent/providers/anthropic_messages.h"
#include "agent/providers/gemini.h"
#include "agent/providers/openai_chat.h"
#include "agent/providers/openai_responses.h"
#include "config/model_catalog.h"
#include "support/http/provider_errors.h"

namespace lousho::agent {
namespace {
// The key of the provider's api_key_env, else the names the API's own tools also read:
// ANTHROPIC_AUTH_TOKEN (sent as a bearer token), GOOGLE_API_KEY.
void FillApiKey(const config::ProviderSettings& settings,
                const std::function<std::string(const std::string&)>& env, HttpProviderConfig* c) {
  c->api_key = env(settings.api_key_env);
  if (c->api_key.empty() && settings.api == "anthropic-messages") {
    std::string token = env("ANTHROPIC_AUTH_TOKEN");
    if (!token.empty()) {
      c->api_key = token;
      c->settings.auth = "bearer";
    }
  }
  if (c->api_key.empty() && settings.api == "gemini") c->api_key = env("GOOGLE_API_KEY");
}
}  // namespace

Result<std::shared_ptr<Provider>> MakeHttpProvider(const config::ProviderSettings& settings,
                                                   const std::string& model_id,
                                                   const EnvLookup& getenv,
                                                   const ProxySetting& proxy) {
  auto env = [&](const std::string& name) -> std::string {
    if (name.empty() || !getenv) return {};
    return getenv(name).value_or("");
  };
  HttpProviderConfig c;
  c.settings = settings;
  c.proxy = proxy;
  if (!config::KnownApi(settings.api)) {
    return MakeError(kProviderConfig, "provider " + settings.name + ": unknown api '" +
                                          settings.api + "' (expected " + config::kKnownApis + ")");
  }
  std::string base_url = env(settings.base_url_env);
  if (base_url.empty()) base_url = settings.base_url;
  auto base = ParseBaseUrl(base_url);
  if (!base.ok()) {
    Error e = base.error();
    e.message = "provider " + settings.name + ": " + e.message;
    return e;
  }
  c.base = *base;
  if (!settings.api_key_env.empty()) {
    FillApiKey(settings, env, &c);
    if (c.api_key.empty()) {
      return MakeError(kProviderAuth, settings.api_key_env + " is not set (needed by provider " +
                                          settings.name + ")");
    }
  }
  if (const config::ModelInfo* info = config::FindModel(settings, model_id)) {
    c.model = *info;
  } else {
    c.model = config::UnknownModelInfo(model_id);
  }
  std::shared_ptr<Provider> provider;
  // The models only the Responses API serves are spoken to there whatever the api says.
  if (settings.api == "openai-responses" ||
      (settings.api == "openai-chat" && config::ResponsesOnlyModel(settings, model_id))) {
    provider = std::make_shared<OpenAiResponsesProvider>(std::move(c));
  } else if (settings.api == "gemini") {
    provider = std::make_shared<GeminiProvider>(std::move(c));
  } else if (settings.api == "openai-chat") {
    provider = std::make_shared<OpenAiChatProvider>(std::move(c));
  } else {
    provider = std::make_shared<AnthropicMessagesProvider>(std::move(c));
  }
  return provider;
}

}  // namespace lousho::agent
