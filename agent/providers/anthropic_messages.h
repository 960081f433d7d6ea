// Anthropic Messages API: request building, the pure stream decoder, and the provider.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "agent/providers/http_provider.h"
#include "agent/providers/stream_decoder.h"

namespace lousho::agent {

// The API name a provider-run call of this API carries (ServerToolResult::api).
inline constexpr char kAnthropicApi[] = "anthropic-messages";

inline constexpr char kAnthropicVersion[] = "2023-06-01";
inline constexpr long long kAnthropicDefaultMaxTokens = 8192;

struct AnthropicBodyOptions {
  bool reasoning_model = false;    // may enable extended thinking
  long long model_max_output = 0;  // 0: unknown
  bool prompt_caching = true;      // mark the system prompt and last message cacheable
  std::string model;               // the model id when the request names none
};

// Thinking budget (tokens) for a level; 0 for kOff.
long long AnthropicThinkingBudget(ThinkingLevel level);

// The JSON body of POST {base}/v1/messages for `request`, as one line: written straight into the
// string by the JsonWriter (no DOM of the conversation), members in jsoncpp's sorted order
// (tests/providers/anthropic_messages_test.cpp, AnthropicBody*).
std::string WriteAnthropicBody(const ModelRequest& request, const AnthropicBodyOptions& options);

// Decodes a Messages SSE stream: message_start usage, content_block_start/delta/stop (text,
// thinking with signature, redacted_thinking, tool_use with input_json_delta), message_delta
// stop reason and cumulative usage, message_stop, ping, and mid-stream error events.
class AnthropicDecoder : public StreamDecoder {
 public:
  Status Consume(const SseEvent& event, const DeltaCallback& emit) override;
  bool done() const override { return done_; }
  bool complete() const override { return done_ || !stop_reason_.empty(); }
  Message TakeMessage(bool partial) override;

 private:
  // The steps of the content_block_* events; `index` is the stream's block index.
  Status OnBlockStart(const Json::Value& data, int index, const DeltaCallback& emit);
  Status OnBlockDelta(const Json::Value& data, int index, const DeltaCallback& emit);
  // A text_delta or thinking_delta for block `index` (both the general and the plain path).
  Status OnTextDelta(int index, bool thinking, std::string text, const DeltaCallback& emit);
  void OnBlockStop(int index, const DeltaCallback& emit);
  // The result block of a provider-run call (its web search): ends the call it names.
  Status ServerResult(const Json::Value& block, const DeltaCallback& emit);

  // A provider-run call (server_tool_use) by the stream's block index: shown when its block
  // stops, with the input its deltas gave.
  struct ServerCall {
    std::string id, name, input;
    bool shown = false;
  };
  std::map<int, ServerCall> server_calls_;

  // The stream's block index -> our content index; -1 for blocks we do not keep (server tools).
  // Tool calls are keyed in the builder by the stream's index.
  std::map<int, int> blocks_;
  std::string plain_text_;  // scratch for the plain text-delta reader
  std::string stop_reason_;
  bool done_ = false;
  Usage usage_;
};

// The Messages provider. Immutable; Stream() may run concurrently.
class AnthropicMessagesProvider : public HttpStreamingProvider {
 public:
  explicit AnthropicMessagesProvider(HttpProviderConfig config)
      : HttpStreamingProvider(std::move(config)) {}
  HttpPostRequest BuildHttpRequest(const ModelRequest& request) const override;
  std::unique_ptr<StreamDecoder> NewDecoder() const override {
    return std::make_unique<AnthropicDecoder>();
  }
};

}  // namespace lousho::agent
