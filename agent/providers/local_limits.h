// What a local model server says about the model it serves: its context length, asked of
// llama.cpp (GET /props), Ollama (POST /api/show), LM Studio (GET /api/v0/models) and vLLM or
// any OpenAI-compatible list that carries it (GET {base}/models), so usage, the context meter and
// threshold compaction work for models the catalogue does not know.
#pragma once

#include <string>

#include "config/provider_settings.h"
#include "support/cancel.h"
#include "support/http/http_client.h"
#include "support/json_util.h"

namespace lousho::agent {

// Whether a provider is worth asking: an OpenAI-compatible api at a local server (the
// catalogue's ollama, lmstudio, llamacpp, vllm, the built-in openai-compatible one, or any
// loopback address) whose model has no context window of its own (a spec's wins).
bool AsksServerForLimits(const config::ProviderSettings& settings, const BaseUrl& base,
                         long long known_window);

// The readers of each server's answer; 0 when it does not say.
long long ContextFromLlamaProps(const Json::Value& props);
long long ContextFromOllamaShow(const Json::Value& show);
// An OpenAI-style list ({"data":[...]}, or a bare array): the entry whose id is `model` (or the
// only one): max_model_len (vLLM), loaded_context_length / max_context_length (LM Studio),
// context_length or context_window (others).
long long ContextFromModelList(const Json::Value& list, const std::string& model);

// Asks the server, one endpoint after another until one answers with a length; each request is
// bounded (2 s to connect, 3 s of silence) and `cancel` ends it at once. 0 when none says.
long long AskContextWindow(const config::ProviderSettings& settings, const BaseUrl& base,
                           const std::string& api_key, const std::string& model,
                           const CancelToken& cancel, const ProxySetting& proxy = {});

}  // namespace lousho::agent
