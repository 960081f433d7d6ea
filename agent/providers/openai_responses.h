// OpenAI Responses API (POST {base}/responses): request body, the pure stream decoder and the
// provider. Stateless: every request carries the whole conversation (store: false, never a
// previous_response_id); the model's encrypted reasoning comes back in each reasoning item and is
// sent back with the next request.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "agent/providers/http_provider.h"
#include "agent/providers/stream_decoder.h"

namespace lousho::agent {

// A thinking block's signature holds this prefix and the reasoning item's encrypted_content: the
// reasoning goes back as a reasoning item only to the provider it came from.
inline constexpr std::string_view kResponsesReasoningPrefix = "openai-responses:";

struct OpenAiResponsesBodyOptions {
  std::string provider_name;     // reasoning items go back only to the provider they came from
  bool reasoning_model = false;  // send reasoning {effort, summary} and ask for encrypted reasoning
  std::string model;             // the model id when the request names none
};

// The JSON body of POST {base}/responses for `request`, written straight into the string by the
// JsonWriter: instructions, input items (messages, reasoning, function / custom tool calls and
// their outputs), function and custom (freeform) tools, stream on, store off.
std::string WriteOpenAiResponsesBody(const ModelRequest& request,
                                     const OpenAiResponsesBodyOptions& options);

// Decodes a Responses SSE stream (events named by their `type`). Output items become blocks in
// output order: reasoning summaries as thinking (its encrypted content kept as the block's
// signature), message text as text, function and custom tool calls as tool calls (a custom
// call's raw input as the argument "input"). response.completed / incomplete end the stream with
// usage; response.failed and error events are errors.
class OpenAiResponsesDecoder : public StreamDecoder {
 public:
  Status Consume(const SseEvent& event, const DeltaCallback& emit) override;
  bool done() const override { return done_; }
  bool complete() const override { return done_; }
  Message TakeMessage(bool partial) override;

 private:
  // What one output item became.
  struct Item {
    std::string type;         // reasoning | message | function_call | custom_tool_call | ...
    int block = -1;           // thinking block's content index (reasoning)
    int summary = -1;         // the last summary part seen (reasoning)
    bool streamed = false;    // deltas came (else the done item's own text is used)
    long long text_mark = 0;  // message: text deltas counted before it began
  };
  Status Dispatch(const std::string& type, const Json::Value& data, const DeltaCallback& emit);
  Status OnItemAdded(const Json::Value& data, const DeltaCallback& emit);
  Status OnItemDone(const Json::Value& data, const DeltaCallback& emit);
  void OnReasoningDone(Item& item, const Json::Value& json, const DeltaCallback& emit);
  void OnCallDone(int key, Item& item, const Json::Value& json, const DeltaCallback& emit);
  void OnWebSearchDone(int key, const Json::Value& json, const DeltaCallback& emit);
  Status OnDelta(const std::string& type, const Json::Value& data, const DeltaCallback& emit);
  bool ReasoningText(int key, long long summary, std::string text, const DeltaCallback& emit);
  bool CallFragment(int key, const std::string& text, bool custom, const DeltaCallback& emit);
  Status OnEnd(const std::string& type, const Json::Value& data);
  Status OutputIndex(const Json::Value& data, int* key) const;

  std::map<int, Item> items_;  // by output_index (also the tool-call key)
  std::string status_;         // completed | incomplete
  std::string incomplete_reason_;
  std::string plain_text_;     // scratch for the plain text-delta reader
  long long text_deltas_ = 0;  // text deltas so far (a message item's done text is a fallback)
  bool done_ = false;
  Usage usage_;
};

// The Responses provider. Immutable; Stream() may run concurrently.
class OpenAiResponsesProvider : public HttpStreamingProvider {
 public:
  explicit OpenAiResponsesProvider(HttpProviderConfig config)
      : HttpStreamingProvider(std::move(config)) {}
  HttpPostRequest BuildHttpRequest(const ModelRequest& request) const override;
  std::unique_ptr<StreamDecoder> NewDecoder() const override {
    return std::make_unique<OpenAiResponsesDecoder>();
  }
};

}  // namespace lousho::agent
