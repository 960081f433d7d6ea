// The built-in provider and model catalogue. Prices are the public list prices in USD per
// million tokens (input, output, cache read, cache write); limits are the documented ones.
#include "config/model_catalog.h"

namespace lousho::config {

namespace {

ModelInfo M(const char* id, const char* name, long long context, long long max_output, double in,
            double out, double cache_read, double cache_write, bool images, bool reasoning) {
  ModelInfo m;
  m.id = id;
  m.name = name;
  m.context_window = context;
  m.max_output = max_output;
  m.input_price = in;
  m.output_price = out;
  m.cache_read_price = cache_read;
  m.cache_write_price = cache_write;
  m.images = images;
  m.reasoning = reasoning;
  return m;
}

// The openai models only the Responses API serves: the codex and pro models.
constexpr std::string_view kResponsesOnly[] = {"gpt-5-codex",       "gpt-5.1-codex",
                                               "gpt-5.1-codex-max", "gpt-5.1-codex-mini",
                                               "gpt-5-pro",         "o3-pro"};

ProviderSettings P(const char* name, const char* api, const char* base_url, const char* key_env,
                   const char* base_env) {
  ProviderSettings p;
  p.name = name;
  p.api = api;
  p.base_url = base_url;
  p.api_key_env = key_env;
  p.base_url_env = base_env;
  return p;
}

std::vector<ProviderSettings> MakeCatalogue() {
  std::vector<ProviderSettings> all;

  ProviderSettings openai =
      P("openai", "openai-chat", "https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL");
  // OpenAI bills cached input at a discount and has no separate cache-write price.
  openai.models = {
      M("gpt-4o", "GPT-4o", 128000, 16384, 2.50, 10.00, 1.25, 0, true, false),
      M("gpt-4o-mini", "GPT-4o mini", 128000, 16384, 0.15, 0.60, 0.075, 0, true, false),
      M("gpt-4.1", "GPT-4.1", 1047576, 32768, 2.00, 8.00, 0.50, 0, true, false),
      M("gpt-4.1-mini", "GPT-4.1 mini", 1047576, 32768, 0.40, 1.60, 0.10, 0, true, false),
      M("gpt-4.1-nano", "GPT-4.1 nano", 1047576, 32768, 0.10, 0.40, 0.025, 0, true, false),
      M("o3", "o3", 200000, 100000, 2.00, 8.00, 0.50, 0, true, true),
      M("o3-mini", "o3-mini", 200000, 100000, 1.10, 4.40, 0.55, 0, false, true),
      M("o4-mini", "o4-mini", 200000, 100000, 1.10, 4.40, 0.275, 0, true, true),
      M("gpt-5", "GPT-5", 400000, 128000, 1.25, 10.00, 0.125, 0, true, true),
      M("gpt-5-mini", "GPT-5 mini", 400000, 128000, 0.25, 2.00, 0.025, 0, true, true),
      M("gpt-5-nano", "GPT-5 nano", 400000, 128000, 0.05, 0.40, 0.005, 0, true, true),
      M("gpt-5.1", "GPT-5.1", 400000, 128000, 1.25, 10.00, 0.125, 0, true, true),
      // Responses API only (kResponsesOnly): the openai provider talks to these there.
      M("gpt-5-codex", "GPT-5-Codex", 400000, 128000, 1.25, 10.00, 0.125, 0, true, true),
      M("gpt-5.1-codex", "GPT-5.1-Codex", 400000, 128000, 1.25, 10.00, 0.125, 0, true, true),
      M("gpt-5.1-codex-max", "GPT-5.1-Codex-Max", 400000, 128000, 1.25, 10.00, 0.125, 0, true,
        true),
      M("gpt-5.1-codex-mini", "GPT-5.1-Codex mini", 400000, 128000, 0.25, 2.00, 0.025, 0, true,
        true),
      // The pro models have no cached-input discount.
      M("gpt-5-pro", "GPT-5 pro", 400000, 272000, 15.00, 120.00, 15.00, 0, true, true),
      M("o3-pro", "o3-pro", 200000, 100000, 20.00, 80.00, 20.00, 0, true, true),
  };
  all.push_back(openai);

  ProviderSettings anthropic = P("anthropic", "anthropic-messages", "https://api.anthropic.com",
                                 "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL");
  anthropic.auth = "x-api-key";
  // Cache writes (5-minute TTL) cost 1.25x input, cache reads 0.1x input.
  anthropic.models = {
      M("claude-sonnet-4-5", "Claude Sonnet 4.5", 200000, 64000, 3.00, 15.00, 0.30, 3.75, true,
        true),
      M("claude-opus-4-5", "Claude Opus 4.5", 200000, 64000, 5.00, 25.00, 0.50, 6.25, true, true),
      M("claude-opus-4-1", "Claude Opus 4.1", 200000, 32000, 15.00, 75.00, 1.50, 18.75, true, true),
      M("claude-haiku-4-5", "Claude Haiku 4.5", 200000, 64000, 1.00, 5.00, 0.10, 1.25, true, true),
      M("claude-sonnet-4-0", "Claude Sonnet 4", 200000, 64000, 3.00, 15.00, 0.30, 3.75, true, true),
      M("claude-opus-4-0", "Claude Opus 4", 200000, 32000, 15.00, 75.00, 1.50, 18.75, true, true),
      M("claude-3-7-sonnet-latest", "Claude Sonnet 3.7", 200000, 64000, 3.00, 15.00, 0.30, 3.75,
        true, true),
      M("claude-3-5-haiku-latest", "Claude Haiku 3.5", 200000, 8192, 0.80, 4.00, 0.08, 1.00, true,
        false),
  };
  all.push_back(anthropic);

  ProviderSettings gemini =
      P("gemini", "gemini", "https://generativelanguage.googleapis.com/v1beta", "GEMINI_API_KEY",
        "GEMINI_BASE_URL");
  // Prices of prompts up to 200k tokens; implicit cache hits bill at the cache-read price
  // (explicit caches also bill storage by the hour, which is not counted here).
  gemini.models = {
      M("gemini-3-pro-preview", "Gemini 3 Pro", 1048576, 65536, 2.00, 12.00, 0.20, 0, true, true),
      M("gemini-3-flash-preview", "Gemini 3 Flash", 1048576, 65536, 0.50, 3.00, 0.05, 0, true,
        true),
      M("gemini-2.5-pro", "Gemini 2.5 Pro", 1048576, 65536, 1.25, 10.00, 0.125, 0, true, true),
      M("gemini-2.5-flash", "Gemini 2.5 Flash", 1048576, 65536, 0.30, 2.50, 0.03, 0, true, true),
      M("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", 1048576, 65536, 0.10, 0.40, 0.01, 0, true,
        true),
  };
  all.push_back(gemini);

  all.push_back(P("openrouter", "openai-chat", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY",
                  "OPENROUTER_BASE_URL"));
  // Local OpenAI-compatible servers need no key and serve whatever model they loaded.
  // Reasoning models pause long before the first token on modest hardware.
  for (ProviderSettings local : {
           P("ollama", "openai-chat", "http://127.0.0.1:11434/v1", "", "OLLAMA_BASE_URL"),
           P("lmstudio", "openai-chat", "http://127.0.0.1:1234/v1", "", "LMSTUDIO_BASE_URL"),
           P("llamacpp", "openai-chat", "http://127.0.0.1:8080/v1", "", "LLAMACPP_BASE_URL"),
           P("vllm", "openai-chat", "http://127.0.0.1:8000/v1", "", "VLLM_BASE_URL"),
       }) {
    local.idle_timeout_s = 300;
    all.push_back(local);
  }
  return all;
}

const std::vector<ProviderSettings>& Catalogue() {
  static const std::vector<ProviderSettings>* all =
      new std::vector<ProviderSettings>(MakeCatalogue());
  return *all;
}

}  // namespace

const ProviderSettings* FindBuiltinProvider(std::string_view name) {
  for (const ProviderSettings& p : Catalogue()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> BuiltinProviderNames() {
  std::vector<std::string> names;
  for (const ProviderSettings& p : Catalogue()) names.push_back(p.name);
  return names;
}

const ModelInfo* FindModel(const ProviderSettings& settings, std::string_view id) {
  for (const ModelInfo& m : settings.models) {
    if (m.id == id) return &m;
  }
  if (const ProviderSettings* builtin = FindBuiltinProvider(settings.name)) {
    for (const ModelInfo& m : builtin->models) {
      if (m.id == id) return &m;
    }
  }
  return nullptr;
}

bool ResponsesOnlyModel(const ProviderSettings& settings, std::string_view id) {
  if (settings.name != "openai") return false;
  for (std::string_view m : kResponsesOnly)
    if (m == id) return true;
  return false;
}

bool KnownApi(std::string_view api) {
  return api == "openai-chat" || api == "openai-responses" || api == "anthropic-messages" ||
         api == "gemini";
}

ModelInfo UnknownModelInfo(std::string_view id) {
  ModelInfo m;
  m.id = std::string(id);
  m.name = std::string(id);
  return m;
}

}  // namespace lousho::config
