// The model-provider interface the turn loop streams through.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/content.h"
#include "core/message_view.h"
#include "support/cancel.h"
#include "support/status.h"

namespace lousho::agent {

enum class ThinkingLevel { kOff, kMinimal, kLow, kMedium, kHigh, kXHigh };

// A tool as the model sees it.
struct ToolSchema {
  std::string name;
  std::string description;
  Json::Value parameters;  // JSON schema (object)
};

// The provider's own web search (Anthropic's web search tool, the Responses API's), when the spec
// turns it on: offered to the model beside the tools; APIs without one ignore it.
struct WebSearchSettings {
  bool enabled = false;
  int max_uses = 0;                          // per request; 0: the provider's default
  std::vector<std::string> allowed_domains;  // only these (and their subdomains); empty: any
  std::vector<std::string> blocked_domains;  // never these
};

struct ModelRequest {
  std::string model;   // model id at the provider (no "provider/" prefix)
  std::string system;  // system prompt
  // The conversation so far, not copied: a session's is a snapshot of its branch that appends
  // made while Stream() runs leave unchanged (MessageView).
  MessageView messages;
  std::vector<ToolSchema> tools;
  ThinkingLevel thinking = ThinkingLevel::kOff;
  int max_output_tokens = 0;  // 0: provider/model default
  WebSearchSettings web_search;
};

// One streamed piece of the assistant message being produced. Providers send the content deltas
// (kText, kThinking, kToolCall*); the engine adds the block boundaries (kTextStart/End,
// kThinkingStart/End) as it accumulates them, so every block has a start, deltas and an end.
enum class DeltaKind {
  kText,
  kThinking,
  kToolCallStart,
  kToolCallArgs,
  kToolCallEnd,
  kTextStart,
  kTextEnd,
  kThinkingStart,
  kThinkingEnd,
  // A tool the provider runs itself (its web search): the start carries the call (id, name, the
  // arguments as JSON text), the end its result as JSON text (ServerToolEndText).
  kServerToolStart,
  kServerToolEnd,
};
struct StreamDelta {
  DeltaKind kind = DeltaKind::kText;
  int index = 0;     // content block index within the message being built
  std::string text;  // text / thinking / argument-JSON fragment
  std::string id;    // kToolCallStart: call id
  std::string name;  // kToolCallStart: tool name
};

// Called for every delta before it leaves the provider. Return false to abort the stream at
// once (the provider then returns the partial message with stop reason kCancelled).
using DeltaCallback = std::function<bool(const StreamDelta&)>;

// Provider-side retry notices, so the engine can emit auto_retry_start/end.
struct RetryNotice {
  int attempt = 0;
  int max_attempts = 0;
  long delay_ms = 0;
  std::string error_message;
};
struct RetryHooks {
  bool enabled = true;  // false: a failure is final at once
  CancelToken abort;    // fired while waiting for a retry: the request fails ("Retry cancelled")
  std::function<void(const RetryNotice&)> on_retry_start;
  std::function<void(bool success, int attempt, const std::string& final_error)> on_retry_end;
};

// The finished assistant message (role kAssistant, stop_reason and usage filled in).
struct ModelResponse {
  Message message;
};

// A model client. Implementations must be safe to call from one session worker at a time;
// different sessions may use the same provider object concurrently.
class Provider {
 public:
  virtual ~Provider() = default;
  // Streams one assistant message. Cancellation (token or callback returning false) ends the
  // stream promptly and returns the partial message with stop_reason kCancelled. Failures return
  // an Error with a LOUSHO_PROVIDER_* code.
  virtual Result<ModelResponse> Stream(const ModelRequest& request, const DeltaCallback& on_delta,
                                       const CancelToken& cancel, const RetryHooks& retry) = 0;
  // Whether the model accepts image content.
  virtual bool SupportsImages() const { return false; }
  // The model's context window in tokens; 0 when unknown.
  virtual long long ContextWindow() const { return 0; }
};

}  // namespace lousho::agent
