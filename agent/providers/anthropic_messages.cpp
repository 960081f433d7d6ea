// Anthropic Messages API: the stream decoder and the provider (the body: anthropic_body.cpp).
#include "agent/providers/anthropic_messages.h"

#include <algorithm>

#include "agent/providers/request_size.h"
#include "core/server_tool.h"
#include "support/http/provider_errors.h"
#include "support/json_util.h"
#include "support/json_writer.h"

namespace lousho::agent {
namespace {

void ReadUsage(const Json::Value& u, StreamNumbers* numbers, Usage* usage) {
  if (!u.isObject()) return;
  // message_delta usage is cumulative: take the latest value of every field it carries.
  auto take = [&](const char* key, long long* field) {
    const Json::Value* m = FindMember(u, key);
    if (m == nullptr || m->isNull()) return;
    long long v = numbers->Tokens(u, key);
    if (numbers->ok()) *field = v;
  };
  take("input_tokens", &usage->input);
  take("output_tokens", &usage->output);
  take("cache_read_input_tokens", &usage->cache_read);
  take("cache_creation_input_tokens", &usage->cache_write);
}

// A message_delta: the stop reason and the cumulative usage.
Status ReadMessageDelta(const Json::Value& data, StreamNumbers* numbers, std::string* stop_reason,
                        Usage* usage) {
  if (const Json::Value* delta = FindMember(data, "delta")) {
    std::string reason = StringOr(*delta, "stop_reason");
    if (!reason.empty()) *stop_reason = std::move(reason);
  }
  if (const Json::Value* u = FindMember(data, "usage")) ReadUsage(*u, numbers, usage);
  return numbers->status();
}

// A message_start: the usage of the prompt.
Status ReadMessageStart(const Json::Value& data, StreamNumbers* numbers, Usage* usage) {
  const Json::Value* msg = FindMember(data, "message");
  if (const Json::Value* u = msg ? FindMember(*msg, "usage") : nullptr) {
    ReadUsage(*u, numbers, usage);
  }
  return numbers->status();
}

// The text and thinking deltas, one per streamed token, are most of a stream. When an event's
// bytes are exactly in the form the API writes them, {"type":"content_block_delta","index":N,
// "delta":{"type":"text_delta","text":"..."}} (or thinking_delta / "thinking"), the index and
// text are read here without a Json::Value (strings by ReadJsonStringBody, as ParseJson reads
// them). Anything else (another member order, spaces, a leading zero, an index over
// kMaxBlockIndex) returns false
// and takes the general path, which reads the same event to the same result
// (tests/providers/anthropic_messages_test.cpp compares both).
bool ReadPlainTextDelta(std::string_view data, int* index, bool* thinking, std::string* text) {
  constexpr std::string_view kHead = R"({"type":"content_block_delta","index":)";
  constexpr std::string_view kText = R"(,"delta":{"type":"text_delta","text":")";
  constexpr std::string_view kThinking = R"(,"delta":{"type":"thinking_delta","thinking":")";
  constexpr std::string_view kTail = "}}";
  if (!data.starts_with(kHead) || !data.ends_with(kTail)) return false;
  data.remove_prefix(kHead.size());
  size_t digits = 0;
  while (digits < data.size() && digits < 5 && data[digits] >= '0' && data[digits] <= '9') ++digits;
  if (digits == 0 || digits > 4 || (digits > 1 && data[0] == '0')) return false;
  int n = 0;
  for (size_t i = 0; i < digits; ++i) n = n * 10 + (data[i] - '0');
  if (n > kMaxBlockIndex) return false;
  data.remove_prefix(digits);
  if (data.starts_with(kText)) {
    *thinking = false;
    data.remove_prefix(kText.size());
  } else if (data.starts_with(kThinking)) {
    *thinking = true;
    data.remove_prefix(kThinking.size());
  } else {
    return false;
  }
  text->clear();
  const size_t used = ReadJsonStringBody(data, text);
  if (used == 0 || data.substr(used) != kTail) return false;
  *index = n;
  return true;
}

// What a provider-run call found, a line per result ("title — url"), or why it failed.
std::string ServerResultSummary(const Json::Value& content, bool* is_error) {
  if (content.isObject()) {
    *is_error = true;
    const std::string code = StringOr(content, "error_code", "unknown");
    return "The search failed (" + code + ")";
  }
  std::string out;
  size_t n = 0;
  if (content.isArray()) {
    for (const auto& r : content) {
      const std::string url = StringOr(r, "url");
      if (url.empty()) continue;
      const std::string title = StringOr(r, "title");
      out += "- " + (title.empty() ? url : title + " — " + url) + "\n";
      ++n;
    }
  }
  if (!out.empty()) out.pop_back();
  return std::to_string(n) + (n == 1 ? " result" : " results") + (n ? ":\n" + out : "");
}

Status StreamError(const Json::Value& data) {
  const Json::Value* err = FindMember(data, "error");
  return ErrorFromStream(err ? StringOr(*err, "type") : std::string(),
                         err ? StringOr(*err, "message") : std::string());
}

}  // namespace

Status AnthropicDecoder::OnBlockStart(const Json::Value& data, int index,
                                      const DeltaCallback& emit) {
  const Json::Value* cb = FindMember(data, "content_block");
  const std::string block_type = cb ? StringOr(*cb, "type") : std::string();
  if (block_type == "text" || block_type == "thinking") {
    const bool thinking = block_type == "thinking";
    const int at = builder_.Open(thinking ? BlockType::kThinking : BlockType::kText, Forward(emit));
    blocks_[index] = at;
    if (thinking) builder_.AddSignature(at, StringOr(*cb, "signature"));
    std::string text = StringOr(*cb, thinking ? "thinking" : "text");
    if (!text.empty()) {
      Apply(StreamDelta{thinking ? DeltaKind::kThinking : DeltaKind::kText, index, std::move(text),
                        "", ""},
            emit);
    }
  } else if (block_type == "redacted_thinking") {
    // Opaque; sent back unchanged, never shown.
    blocks_[index] = builder_.AddRedactedThinking(StringOr(*cb, "data"), Forward(emit));
  } else if (block_type == "tool_use") {
    Apply(StreamDelta{DeltaKind::kToolCallStart, index, "", StringOr(*cb, "id"),
                      StringOr(*cb, "name")},
          emit);
    blocks_[index] = builder_.ToolCallBlock(index);
  } else if (block_type == "server_tool_use") {
    // Shown once its input is whole (at its stop).
    blocks_[index] = -1;
    ServerCall& call = server_calls_[index];
    call.id = StringOr(*cb, "id");
    call.name = StringOr(*cb, "name");
    if (const Json::Value* input = FindMember(*cb, "input");
        input && input->isObject() && input->size() > 0)
      call.input = WriteJson(*input);
  } else if (cb != nullptr && FindMember(*cb, "tool_use_id") != nullptr && block_type.size() > 12 &&
             block_type.ends_with("_tool_result")) {
    // The result of a provider-run call (web_search_tool_result, ...): kept whole to send back.
    blocks_[index] = -1;
    return ServerResult(*cb, emit);
  } else {
    blocks_[index] = -1;  // future kinds: not ours to keep
  }
  return Status::Ok();
}

Status AnthropicDecoder::ServerResult(const Json::Value& block, const DeltaCallback& emit) {
  ServerToolResult r;
  r.api = kAnthropicApi;
  r.result = block;
  r.summary = ServerResultSummary(MemberOrNull(block, "content"), &r.is_error);
  StreamDelta d;
  d.kind = DeltaKind::kServerToolEnd;
  d.id = StringOr(block, "tool_use_id");
  d.text = ServerToolEndText(r);
  Apply(std::move(d), emit);
  return Status::Ok();
}

Status AnthropicDecoder::OnBlockDelta(const Json::Value& data, int index,
                                      const DeltaCallback& emit) {
  auto it = blocks_.find(index);
  if (it == blocks_.end()) {
    return MakeError(kProviderBadResponse,
                     "content_block_delta for unknown block " + std::to_string(index));
  }
  const int at = it->second;
  const Json::Value* delta = FindMember(data, "delta");
  if (delta == nullptr) return Status::Ok();
  const std::string dtype = StringOr(*delta, "type");
  if (auto call = server_calls_.find(index); call != server_calls_.end()) {
    if (dtype == "input_json_delta" && !call->second.shown)
      call->second.input += StringOr(*delta, "partial_json");
    return Status::Ok();
  }
  if (at < 0) return Status::Ok();
  if (dtype == "signature_delta") {
    builder_.AddSignature(at, StringOr(*delta, "signature"));
    return Status::Ok();
  }
  const ContentBlock& b = builder_.message().content[at];
  StreamDelta d;
  if (dtype == "input_json_delta") {
    // Fragments after the block's stop, or for a block that is no tool call, change nothing.
    if (builder_.ToolCallBlock(index) != at || builder_.ToolCallEnded(index)) return Status::Ok();
    d = StreamDelta{DeltaKind::kToolCallArgs, index, StringOr(*delta, "partial_json"), b.id(), ""};
  } else if (dtype == "text_delta" || dtype == "thinking_delta") {
    const bool thinking = dtype == "thinking_delta";
    return OnTextDelta(index, thinking, StringOr(*delta, thinking ? "thinking" : "text"), emit);
  } else {
    return Status::Ok();  // citations_delta and future kinds
  }
  if (!d.text.empty()) Apply(std::move(d), emit);
  return Status::Ok();
}

Status AnthropicDecoder::OnTextDelta(int index, bool thinking, std::string text,
                                     const DeltaCallback& emit) {
  auto it = blocks_.find(index);
  if (it == blocks_.end()) {
    return MakeError(kProviderBadResponse,
                     "content_block_delta for unknown block " + std::to_string(index));
  }
  const int at = it->second;
  if (at < 0) return Status::Ok();
  const ContentBlock& b = builder_.message().content[at];
  // Blocks stream one after another: text for any other block than the one streaming now
  // would land in the wrong place.
  if (at != builder_.open_block() ||
      b.type != (thinking ? BlockType::kThinking : BlockType::kText)) {
    const std::string dtype = thinking ? "thinking_delta" : "text_delta";
    return MakeError(kProviderBadResponse, dtype + " for block " + std::to_string(index) +
                                               ", which is not the text or thinking block "
                                               "being streamed");
  }
  if (!text.empty()) {
    Apply(StreamDelta{thinking ? DeltaKind::kThinking : DeltaKind::kText, index, std::move(text),
                      "", ""},
          emit);
  }
  return Status::Ok();
}

void AnthropicDecoder::OnBlockStop(int index, const DeltaCallback& emit) {
  if (auto call = server_calls_.find(index); call != server_calls_.end() && !call->second.shown) {
    call->second.shown = true;
    StreamDelta d;
    d.kind = DeltaKind::kServerToolStart;
    d.index = index;
    d.id = call->second.id;
    d.name = call->second.name;
    d.text = call->second.input.empty() ? "{}" : call->second.input;
    Apply(std::move(d), emit);
    return;
  }
  auto it = blocks_.find(index);
  if (it == blocks_.end() || it->second < 0) return;
  // A text or thinking block stays open: the next block's start ends it.
  if (builder_.ToolCallBlock(index) == it->second) builder_.EndToolCall(index, Forward(emit));
}

Status AnthropicDecoder::Consume(const SseEvent& event, const DeltaCallback& emit) {
  if (aborted_ || done_) return Status::Ok();
  int plain_index = 0;
  bool plain_thinking = false;
  if (ReadPlainTextDelta(event.data, &plain_index, &plain_thinking, &plain_text_))
    return OnTextDelta(plain_index, plain_thinking, plain_text_, emit);
  auto parsed = ParseJson(event.data);
  if (!parsed.ok() || !parsed->isObject()) {
    return MakeError(kProviderBadResponse,
                     "malformed stream event " + event.event + ": " + event.data.substr(0, 200));
  }
  const Json::Value& data = *parsed;
  std::string type = StringOr(data, "type");
  if (type.empty()) type = event.event;
  // Every number is checked before use; one out of range fails the response as malformed.
  StreamNumbers numbers(type.c_str());
  if (type == "message_start") return ReadMessageStart(data, &numbers, &usage_);
  if (type == "message_delta") return ReadMessageDelta(data, &numbers, &stop_reason_, &usage_);
  if (type == "message_stop") {
    done_ = true;
    return Status::Ok();
  }
  if (type == "error") return StreamError(data);
  if (type.rfind("content_block_", 0) != 0) return Status::Ok();  // "ping" and unknown types
  const int index = static_cast<int>(numbers.Index(data, "index"));
  if (!numbers.ok()) return numbers.status();
  if (type == "content_block_start") return OnBlockStart(data, index, emit);
  if (type == "content_block_delta") return OnBlockDelta(data, index, emit);
  if (type == "content_block_stop") OnBlockStop(index, emit);
  return Status::Ok();
}

Message AnthropicDecoder::TakeMessage(bool partial) {
  // Without `partial`, a call whose block never stopped keeps empty arguments.
  Message m = builder_.Take(partial);
  const bool has_calls = std::any_of(m.content.begin(), m.content.end(), [](const ContentBlock& b) {
    return b.type == BlockType::kToolCall;
  });
  if (stop_reason_ == "tool_use") {
    m.stop_reason = StopReason::kToolUse;
  } else if (stop_reason_ == "max_tokens" || stop_reason_ == "model_context_window_exceeded") {
    m.stop_reason = StopReason::kMaxTokens;
  } else if (stop_reason_ == "refusal") {
    m.stop_reason = StopReason::kRefusal;
  } else if (stop_reason_ == "pause_turn" && !has_calls) {
    m.stop_reason = StopReason::kPaused;
  } else {
    // end_turn, stop_sequence: the turn ended; tool calls, if any, decide.
    m.stop_reason = has_calls ? StopReason::kToolUse : StopReason::kEndTurn;
  }
  m.assistant.Edit().usage = usage_;
  return m;
}

// ---------------------------------------------------------------------------------------------
// Provider

HttpPostRequest AnthropicMessagesProvider::BuildHttpRequest(const ModelRequest& request) const {
  const HttpProviderConfig& c = config();
  AnthropicBodyOptions options;
  options.reasoning_model = c.model.reasoning;
  options.model_max_output = c.model.max_output;
  options.model = c.model.id;
  HttpPostRequest out;
  // ANTHROPIC_BASE_URL has no /v1; tolerate one that does.
  const std::string& prefix = c.base.path_prefix;
  bool has_v1 = prefix.size() >= 3 && prefix.compare(prefix.size() - 3, 3, "/v1") == 0;
  out.path = prefix + (has_v1 ? "/messages" : "/v1/messages");
  out.body = WriteAnthropicBody(request, options);
  out.headers.emplace_back("Accept", "text/event-stream");
  out.headers.emplace_back("User-Agent", std::string("lousho/") + LOUSHO_VERSION);
  out.headers.emplace_back("anthropic-version", kAnthropicVersion);
  if (!c.api_key.empty()) {
    if (c.settings.auth == "bearer") {
      out.headers.emplace_back("Authorization", "Bearer " + c.api_key);
    } else {
      out.headers.emplace_back("x-api-key", c.api_key);
    }
  }
  for (const auto& [k, v] : c.settings.headers) out.headers.emplace_back(k, v);
  return out;
}

}  // namespace lousho::agent
