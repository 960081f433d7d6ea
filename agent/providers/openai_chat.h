// OpenAI Chat Completions (and compatible servers: Ollama, vLLM, llama.cpp, LM Studio,
// OpenRouter): request building, the pure stream decoder, and the provider.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/providers/http_provider.h"
#include "agent/providers/stream_decoder.h"

namespace lousho::agent {

namespace json {
class Numbers;
}  // namespace json

// OpenAI's reasoning effort for a thinking level ("low", "medium", "high"), or null for off.
const char* OpenAiReasoningEffort(ThinkingLevel level);
// The headers of every OpenAI request (SSE, our User-Agent, the bearer key, the spec's headers).
void AddOpenAiHeaders(const HttpProviderConfig& c, HttpPostRequest* out);

struct OpenAiChatBodyOptions {
  std::string provider_name;     // reasoning text is echoed back only to the provider it came from
  bool reasoning_model = false;  // send reasoning_effort
  // OpenAI's own API wants max_completion_tokens; compatible servers know max_tokens.
  bool use_max_completion_tokens = false;
  long long default_max_tokens = 0;  // used when the request leaves it 0 (0: omit)
  std::string model;                 // the model id when the request names none
};

// The JSON body of POST {base}/chat/completions for `request` (stream on, usage requested), as
// one line: written straight into the string by the JsonWriter (no DOM of the conversation),
// members in jsoncpp's sorted order (tests/providers/openai_chat_test.cpp, OpenAiBody*).
std::string WriteOpenAiChatBody(const ModelRequest& request, const OpenAiChatBodyOptions& options);

// Decodes a Chat Completions SSE stream. Text, reasoning (`reasoning_content` or `reasoning`)
// and tool-call fragments (keyed by `index`) become content blocks in arrival order; tool calls
// end (kToolCallEnd, arguments parsed) when the finish reason or [DONE] arrives.
class OpenAiChatDecoder : public StreamDecoder {
 public:
  Status Consume(const SseEvent& event, const DeltaCallback& emit) override;
  bool done() const override { return done_; }
  bool complete() const override { return done_ || finish_seen_; }
  Message TakeMessage(bool partial) override;

 private:
  // The steps of one chunk; each returns false (or Ok) early once the decoder is aborted.
  Status ConsumeChoice(const Json::Value& choice, StreamNumbers* numbers,
                       const DeltaCallback& emit);
  bool ConsumeText(const Json::Value& delta, const DeltaCallback& emit);
  bool AppendText(DeltaKind kind, std::string text, const char* field, const DeltaCallback& emit);
  Status ConsumeToolCall(const Json::Value& tc, StreamNumbers* numbers, const DeltaCallback& emit);
  Status ToolCallKey(const Json::Value& tc, const std::string& id, StreamNumbers* numbers,
                     int* key) const;
  bool EndToolCalls(const DeltaCallback& emit);

  int last_call_key_ = -1;  // the highest tool-call index seen (calls are keyed by it)
  std::string finish_reason_;
  std::string plain_text_;  // scratch for the plain text-chunk reader
  bool finish_seen_ = false;
  bool done_ = false;
  Usage usage_;
};

// The Chat Completions provider. Immutable; Stream() may run concurrently.
class OpenAiChatProvider : public HttpStreamingProvider {
 public:
  explicit OpenAiChatProvider(HttpProviderConfig config)
      : HttpStreamingProvider(std::move(config)) {}
  HttpPostRequest BuildHttpRequest(const ModelRequest& request) const override;
  std::unique_ptr<StreamDecoder> NewDecoder() const override {
    return std::make_unique<OpenAiChatDecoder>();
  }
};

}  // namespace lousho::agent
