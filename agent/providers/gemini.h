// Google Gemini's native API (POST {base}/models/{model}:streamGenerateContent?alt=sse): request
// body, the pure stream decoder and the provider. Thinking comes back as thought parts; the
// thought signatures the model attaches to its parts are kept in thinking blocks and sent back
// on the same parts with the next request, so the model keeps its reasoning across tool calls.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "agent/providers/http_provider.h"
#include "agent/providers/stream_decoder.h"

namespace lousho::agent {

// A thinking block's signature names the part the thought signature came on: the thought part
// itself, or the part that follows the block (a function call, text, or an empty closing part).
inline constexpr std::string_view kGeminiThoughtSignature = "gemini-thought:";
inline constexpr std::string_view kGeminiNextSignature = "gemini-next:";

struct GeminiBodyOptions {
  std::string provider_name;     // signatures go back only to the provider they came from
  bool reasoning_model = false;  // send a thinkingConfig
  std::string model;             // the model id (decides budget or level)
};

// Gemini 3 models take a thinking level, earlier ones a token budget.
bool GeminiThinkingByLevel(std::string_view model_id);

// The JSON body of streamGenerateContent for `request`: contents (user / model turns, function
// calls and responses, thought signatures), systemInstruction, function declarations and
// generationConfig (maxOutputTokens, thinkingConfig).
std::string WriteGeminiBody(const ModelRequest& request, const GeminiBodyOptions& options);

// Decodes the SSE stream of GenerateContentResponse chunks: thought parts as thinking, text as
// text, each functionCall part as one whole tool call, thoughtSignature kept as described above.
// The stream has no end marker: a finishReason makes it complete; usage is the last chunk's
// usageMetadata (cached tokens split out of the prompt, thoughts counted as output).
class GeminiDecoder : public StreamDecoder {
 public:
  Status Consume(const SseEvent& event, const DeltaCallback& emit) override;
  bool done() const override { return false; }
  bool complete() const override { return !finish_reason_.empty(); }
  Message TakeMessage(bool partial) override;

 private:
  Status OnChunk(const Json::Value& chunk, const DeltaCallback& emit);
  void OnPart(const Json::Value& part, const DeltaCallback& emit);
  void OnCall(const Json::Value& call, const DeltaCallback& emit);
  void KeepNextSignature(const std::string& signature, const DeltaCallback& emit);
  // A plain text chunk read without a Json::Value (see gemini.cpp); false: take the general path.
  bool ConsumePlain(const std::string& data, const DeltaCallback& emit);

  std::string response_id_;
  std::string finish_reason_;
  int calls_ = 0;
  Usage usage_;
};

// The Gemini provider. Immutable; Stream() may run concurrently.
class GeminiProvider : public HttpStreamingProvider {
 public:
  explicit GeminiProvider(HttpProviderConfig config) : HttpStreamingProvider(std::move(config)) {}
  HttpPostRequest BuildHttpRequest(const ModelRequest& request) const override;
  std::unique_ptr<StreamDecoder> NewDecoder() const override {
    return std::make_unique<GeminiDecoder>();
  }
};

}  // namespace lousho::agent
