// Anthropic Messages API: request body, stream decoder and provider.
#include "agent/providers/anthropic_messages.h"

#include <algorithm>

#include "agent/providers/request_size.h"
#include "core/server_tool.h"
#include "support/http/provider_errors.h"
#include "support/json_util.h"
#include "support/json_writer.h"

namespace lousho::agent {

long long AnthropicThinkingBudget(ThinkingLevel level) {
  switch (level) {
    case ThinkingLevel::kOff:
      return 0;
    case ThinkingLevel::kMinimal:
      return 1024;  // the API's minimum
    case ThinkingLevel::kLow:
      return 2048;
    case ThinkingLevel::kMedium:
      return 8192;
    case ThinkingLevel::kHigh:
      return 16384;
    case ThinkingLevel::kXHigh:
      return 32000;
  }
  return 0;
}

namespace {

constexpr const char* kAnthropicApi = "anthropic-messages";

// Blocks the API is sent. It rejects empty text blocks; thinking must go back unchanged with its
// signature, so unsigned thinking (from another provider) is dropped.
bool SentInUserMessage(const ContentBlock& b) {
  return (b.type == BlockType::kText && !b.text.empty()) || b.type == BlockType::kImage;
}
bool SentInAssistantMessage(const ContentBlock& b) {
  switch (b.type) {
    case BlockType::kText:
      return !b.text.empty();
    case BlockType::kThinking:
      return b.redacted() || !b.signature().empty();
    case BlockType::kToolCall:
      return true;
    case BlockType::kImage:
      return false;
    case BlockType::kServerTool:
      // Its call and result go back only to the API that ran it, and only once it ended.
      return b.server.has_value() && b.server->api == kAnthropicApi;
  }
  return false;
}

// The block the cache mark goes on: the last one the body sends (a ContentBlock, or the
// tool-result Message its block is made of); null when there is none or it is a thinking block.
// Found from the end, so it costs nothing like the history's length.
const void* CacheMarkTarget(const ModelRequest& request) {
  for (size_t i = request.messages.size(); i-- > 0;) {
    const Message& m = request.messages[i];
    if (m.role == Role::kToolResult) return &m;
    for (size_t k = m.content.size(); k-- > 0;) {
      const ContentBlock& b = m.content[k];
      const bool sent = m.role == Role::kUser ? SentInUserMessage(b) : SentInAssistantMessage(b);
      if (sent)
        return b.type == BlockType::kThinking || b.type == BlockType::kServerTool ? nullptr : &b;
    }
  }
  return nullptr;
}

// The messages of the body, written as they are read, the members of every object in jsoncpp's
// sorted order (the bytes the API was always sent). Tool results are blocks of a user message,
// and user-side messages in a row merge into one, so that every tool_use is answered in the
// very next message: the user message stays open while user-side blocks follow.
class AnthropicMessagesWriter {
 public:
  AnthropicMessagesWriter(JsonWriter* w, const void* cache_mark) : w_(*w), mark_(cache_mark) {}

  void Add(const Message& m) {
    switch (m.role) {
      case Role::kUser:
        for (const auto& b : m.content) {
          if (!SentInUserMessage(b)) continue;
          OpenUser();
          UserBlock(b, &b);
        }
        break;
      case Role::kToolResult:
        OpenUser();
        ToolResult(m);
        break;
      case Role::kAssistant:
        Assistant(m);
        break;
    }
  }
  void Finish() { CloseUser(); }

 private:
  void OpenUser() {
    if (user_open_) return;
    user_open_ = true;
    w_.ObjectBegin();
    w_.AttributeBegin("content");
    w_.ArrayBegin();
  }
  void CloseUser() {
    if (!user_open_) return;
    user_open_ = false;
    EndMessage("user");
  }
  void EndMessage(const char* role) {
    w_.ArrayEnd();
    w_.AttributeEnd();
    w_.Attribute("role", role);
    w_.ObjectEnd();
  }
  // Opens a block; `id` is what CacheMarkTarget finds for it (null inside a tool result).
  // "cache_control" sorts before every other member of every block.
  void BlockBegin(const void* id) {
    w_.ObjectBegin();
    if (id == nullptr || id != mark_) return;
    w_.AttributeBegin("cache_control");
    w_.ObjectBegin();
    w_.Attribute("type", "ephemeral");
    w_.ObjectEnd();
    w_.AttributeEnd();
  }
  void TextMembers(std::string_view text) {
    w_.Attribute("text", text);
    w_.Attribute("type", "text");
  }
  // A text or image block of a user message, or of a tool result's content.
  void UserBlock(const ContentBlock& b, const void* id) {
    BlockBegin(id);
    if (b.type == BlockType::kImage) {
      w_.AttributeBegin("source");
      w_.ObjectBegin();
      w_.Attribute("data", b.data());
      w_.Attribute("media_type", b.mime_type());
      w_.Attribute("type", "base64");
      w_.ObjectEnd();
      w_.AttributeEnd();
      w_.Attribute("type", "image");
    } else {
      TextMembers(b.text);
    }
    w_.ObjectEnd();
  }
  void ToolResult(const Message& m) {
    BlockBegin(&m);
    w_.AttributeBegin("content");
    w_.ArrayBegin();
    bool any = false;
    for (const auto& b : m.content) {
      if (!SentInUserMessage(b)) continue;
      UserBlock(b, nullptr);
      any = true;
    }
    if (!any) {
      w_.ObjectBegin();
      TextMembers(m.is_error ? "(error)" : "(no output)");
      w_.ObjectEnd();
    }
    w_.ArrayEnd();
    w_.AttributeEnd();
    if (m.is_error) w_.Attribute("is_error", true);
    w_.Attribute("tool_use_id", m.tool_call_id);
    w_.Attribute("type", "tool_result");
    w_.ObjectEnd();
  }
  void Assistant(const Message& m) {
    // e.g. a turn cancelled before any output
    if (std::none_of(m.content.begin(), m.content.end(), SentInAssistantMessage)) return;
    CloseUser();
    w_.ObjectBegin();
    w_.AttributeBegin("content");
    w_.ArrayBegin();
    for (const auto& b : m.content)
      if (SentInAssistantMessage(b)) AssistantBlock(b);
    EndMessage("assistant");
  }
  void AssistantBlock(const ContentBlock& b) {
    BlockBegin(&b);
    switch (b.type) {
      case BlockType::kText:
        TextMembers(b.text);
        break;
      case BlockType::kThinking:
        if (b.redacted()) {
          w_.Attribute("data", b.text);
          w_.Attribute("type", "redacted_thinking");
        } else {
          w_.Attribute("signature", b.signature());
          w_.Attribute("thinking", b.text);
          w_.Attribute("type", "thinking");
        }
        break;
      case BlockType::kToolCall:
        w_.Attribute("id", b.id());
        w_.AttributeBegin("input");
        WriteObjectOrEmpty(b.arguments(), &w_);
        w_.AttributeEnd();
        w_.Attribute("name", b.name());
        w_.Attribute("type", "tool_use");
        break;
      case BlockType::kImage:
        break;
      case BlockType::kServerTool:
        ServerToolUse(b);
        break;
    }
    w_.ObjectEnd();
    // A provider-run call is answered by its result block, as the API sent it.
    if (b.type == BlockType::kServerTool) w_.Value(b.server->result);
  }
  void ServerToolUse(const ContentBlock& b) {
    w_.Attribute("id", b.id());
    w_.AttributeBegin("input");
    WriteObjectOrEmpty(b.arguments(), &w_);
    w_.AttributeEnd();
    w_.Attribute("name", b.name());
    w_.Attribute("type", "server_tool_use");
  }

  JsonWriter& w_;
  const void* mark_;
  bool user_open_ = false;
};

struct AnthropicLimits {
  long long max_tokens = 0;
  long long budget = 0;  // the thinking budget; sent only when at least 1024
};

// max_tokens, and the thinking budget when the model thinks.
AnthropicLimits TokenLimits(const ModelRequest& request, const AnthropicBodyOptions& options) {
  AnthropicLimits l;
  l.max_tokens = request.max_output_tokens > 0  ? request.max_output_tokens
                 : options.model_max_output > 0 ? options.model_max_output
                                                : kAnthropicDefaultMaxTokens;
  l.budget = options.reasoning_model ? AnthropicThinkingBudget(request.thinking) : 0;
  if (l.budget > 0) {
    // max_tokens counts the thinking too and must exceed the budget.
    if (l.max_tokens <= l.budget) l.max_tokens = l.budget + 4096;
    if (options.model_max_output > 0 && l.max_tokens > options.model_max_output) {
      l.max_tokens = options.model_max_output;
      l.budget = std::min(l.budget, l.max_tokens - 1024);
    }
  }
  return l;
}

// The system prompt: one text block marked cacheable, or a plain string.
void WriteSystem(const std::string& system, bool prompt_caching, JsonWriter* w) {
  w->AttributeBegin("system");
  if (prompt_caching) {
    w->ArrayBegin();
    w->ObjectBegin();
    w->AttributeBegin("cache_control");
    w->ObjectBegin();
    w->Attribute("type", "ephemeral");
    w->ObjectEnd();
    w->AttributeEnd();
    w->Attribute("text", system);
    w->Attribute("type", "text");
    w->ObjectEnd();
    w->ArrayEnd();
  } else {
    w->Value(system);
  }
  w->AttributeEnd();
}

// The API's own web search tool (members in sorted order).
void WriteWebSearchTool(const WebSearchSettings& s, JsonWriter* w) {
  auto domains = [&](const char* key, const std::vector<std::string>& list) {
    if (list.empty()) return;
    w->AttributeBegin(key);
    w->ArrayBegin();
    for (const auto& d : list) w->Value(d);
    w->ArrayEnd();
    w->AttributeEnd();
  };
  w->ObjectBegin();
  domains("allowed_domains", s.allowed_domains);
  domains("blocked_domains", s.blocked_domains);
  if (s.max_uses > 0) w->Attribute("max_uses", s.max_uses);
  w->Attribute("name", "web_search");
  w->Attribute("type", "web_search_20250305");
  w->ObjectEnd();
}

void WriteTools(const std::vector<ToolSchema>& tools, const WebSearchSettings& web_search,
                JsonWriter* w) {
  w->AttributeBegin("tools");
  w->ArrayBegin();
  if (web_search.enabled) WriteWebSearchTool(web_search, w);
  for (const ToolSchema& t : tools) {
    w->ObjectBegin();
    w->Attribute("description", t.description);
    w->AttributeBegin("input_schema");
    WriteToolSchema(t.parameters, w);
    w->AttributeEnd();
    w->Attribute("name", t.name);
    w->ObjectEnd();
  }
  w->ArrayEnd();
  w->AttributeEnd();
}

}  // namespace

std::string WriteAnthropicBody(const ModelRequest& request, const AnthropicBodyOptions& options) {
  const AnthropicLimits limits = TokenLimits(request, options);
  std::string out;
  out.reserve(RequestBodySizeHint(request));
  // Members in jsoncpp's sorted order.
  JsonWriter w(&out);
  w.ObjectBegin();
  w.Attribute("max_tokens", limits.max_tokens);
  w.AttributeBegin("messages");
  w.ArrayBegin();
  AnthropicMessagesWriter messages(&w, options.prompt_caching ? CacheMarkTarget(request) : nullptr);
  for (const Message& m : request.messages) messages.Add(m);
  messages.Finish();
  w.ArrayEnd();
  w.AttributeEnd();
  w.Attribute("model", request.model.empty() ? options.model : request.model);
  w.Attribute("stream", true);
  if (!request.system.empty()) WriteSystem(request.system, options.prompt_caching, &w);
  if (limits.budget >= 1024) {
    w.AttributeBegin("thinking");
    w.ObjectBegin();
    w.Attribute("budget_tokens", limits.budget);
    w.Attribute("type", "enabled");
    w.ObjectEnd();
    w.AttributeEnd();
  }
  if (!request.tools.empty() || request.web_search.enabled)
    WriteTools(request.tools, request.web_search, &w);
  w.ObjectEnd();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Decoder

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
