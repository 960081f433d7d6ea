// OpenAI Chat Completions: request body, stream decoder and provider.
#include "agent/providers/openai_chat.h"

#include <algorithm>

#include "agent/providers/request_size.h"
#include "support/http/provider_errors.h"
#include "support/json_util.h"
#include "support/json_writer.h"

namespace lousho::agent {

const char* OpenAiReasoningEffort(ThinkingLevel level) {
  switch (level) {
    case ThinkingLevel::kOff:
      return nullptr;
    case ThinkingLevel::kMinimal:
    case ThinkingLevel::kLow:
      return "low";
    case ThinkingLevel::kMedium:
      return "medium";
    case ThinkingLevel::kHigh:
    case ThinkingLevel::kXHigh:
      return "high";
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Decoder

namespace {

// A mid-stream error object (`{"error": ...}`), or Ok.
Status StreamError(const Json::Value& chunk) {
  const Json::Value* err = FindMember(chunk, "error");
  if (err == nullptr || err->isNull()) return Status::Ok();
  std::string type = StringOr(*err, "code");
  if (type.empty()) type = StringOr(*err, "type");
  std::string message = AsString(*err).value_or(StringOr(*err, "message"));
  return ErrorFromStream(type, message);
}

// Text chunks are most of a stream. A chunk whose bytes are exactly an object of plain scalar
// members (id, object, created, model, system_fingerprint... as servers send them, no spaces)
// and one choices member of exactly [{"index":0,"delta":{"content":"..."},"logprobs":null,
// "finish_reason":null}] is read here without a Json::Value: its text is the content. Anything
// else (an error or usage member, other choices, nested values, spaces) returns false and takes the
// general path, which reads the same chunk to the same result (tests/providers/openai_chat_test.cpp
// compares both).
constexpr std::string_view kPlainChoiceHead = R"([{"index":0,"delta":{"content":")";
constexpr std::string_view kPlainChoiceTail = R"(},"logprobs":null,"finish_reason":null}])";

// The length of member `key`'s value at the start of `rest` as the plain reader takes it (the
// one content-only choices member, its text into *text; any other scalar), or 0 when it does not.
size_t PlainMemberValue(std::string_view key, std::string_view rest, bool* choices,
                        std::string* text) {
  if (key == "error" || key == "usage") return 0;
  if (key != "choices") return SkipJsonScalar(rest);
  if (*choices || !rest.starts_with(kPlainChoiceHead)) return 0;
  *choices = true;
  text->clear();
  const size_t n = ReadJsonStringBody(rest.substr(kPlainChoiceHead.size()), text);
  if (n == 0 || !rest.substr(kPlainChoiceHead.size() + n).starts_with(kPlainChoiceTail)) return 0;
  return kPlainChoiceHead.size() + n + kPlainChoiceTail.size();
}

bool ReadPlainContentChunk(std::string_view data, std::string* text) {
  if (!data.starts_with('{')) return false;
  bool choices = false;
  std::string key;
  for (size_t i = 1;;) {
    if (i >= data.size() || data[i] != '"') return false;
    key.clear();
    const size_t k = ReadJsonStringBody(data.substr(i + 1), &key);
    if (k == 0) return false;
    i += 1 + k;
    if (i >= data.size() || data[i] != ':') return false;
    ++i;
    const size_t v = PlainMemberValue(key, data.substr(i), &choices, text);
    if (v == 0) return false;
    i += v;
    if (i >= data.size()) return false;
    if (data[i] == ',') {
      ++i;
      continue;
    }
    return data[i] == '}' && i + 1 == data.size() && choices;
  }
}

// The usage chunk's figures (prompt tokens include the cached ones).
Status ReadUsage(const Json::Value& chunk, StreamNumbers* numbers, Usage* usage) {
  const Json::Value* u = FindMember(chunk, "usage");
  if (u == nullptr || !u->isObject()) return Status::Ok();
  long long prompt = numbers->Tokens(*u, "prompt_tokens");
  long long cached = 0;
  if (const Json::Value* d = FindMember(*u, "prompt_tokens_details")) {
    cached = numbers->Tokens(*d, "cached_tokens");
  }
  long long output = numbers->Tokens(*u, "completion_tokens");
  if (!numbers->ok()) return numbers->status();
  usage->input = prompt - cached > 0 ? prompt - cached : 0;
  usage->cache_read = cached;
  usage->output = output;
  return Status::Ok();
}

// The argument text of one tool-call fragment. Ollama's native shape sends an object; it is taken
// as the whole argument text.
std::string ArgumentFragment(const Json::Value* fn) {
  const Json::Value* a = fn ? FindMember(*fn, "arguments") : nullptr;
  if (a == nullptr) return {};
  if (a->isString() || a->isObject()) return StringOrJson(*a);
  return {};
}

}  // namespace

bool OpenAiChatDecoder::AppendText(DeltaKind kind, std::string text, const char* field,
                                   const DeltaCallback& emit) {
  StreamDelta d;
  d.kind = kind;
  d.text = std::move(text);
  const bool go_on = Apply(std::move(d), emit);
  if (kind == DeltaKind::kThinking) {
    // The field the server used is remembered so that only that server gets the text back.
    const int at = builder_.open_block();
    if (at >= 0 && builder_.message().content[at].signature().empty()) {
      builder_.AddSignature(at, field);
    }
  }
  return go_on;
}

bool OpenAiChatDecoder::EndToolCalls(const DeltaCallback& emit) {
  for (int key : builder_.UnendedToolCalls()) {
    builder_.EndToolCall(key, Forward(emit));
    if (aborted_) return false;
  }
  return true;
}

bool OpenAiChatDecoder::ConsumeText(const Json::Value& delta, const DeltaCallback& emit) {
  for (const char* field : {"reasoning_content", "reasoning"}) {
    std::string r = StringOr(delta, field);
    if (r.empty()) continue;
    if (!AppendText(DeltaKind::kThinking, std::move(r), field, emit)) return false;
    break;  // servers in transition send both names with the same text
  }
  for (const char* field : {"content", "refusal"}) {
    std::string text = StringOr(delta, field);
    if (!text.empty() && !AppendText(DeltaKind::kText, std::move(text), field, emit)) return false;
  }
  return true;
}

Status OpenAiChatDecoder::ToolCallKey(const Json::Value& tc, const std::string& id,
                                      StreamNumbers* numbers, int* key) const {
  if (const Json::Value* idx = FindMember(tc, "index"); idx && !idx->isNull()) {
    *key = static_cast<int>(numbers->Index(tc, "index"));
    return numbers->status();
  }
  // A server that omits the index sends whole calls, told apart by their ids.
  const int last = builder_.ToolCallBlock(last_call_key_);
  const bool new_id = !id.empty() && last >= 0 && builder_.message().content[last].id() != id;
  *key = last_call_key_ < 0 || new_id ? last_call_key_ + 1 : last_call_key_;
  if (*key > kMaxBlockIndex) {
    return MakeError(kProviderBadResponse, "more than " + std::to_string(kMaxBlockIndex + 1) +
                                               " tool calls in one response");
  }
  return Status::Ok();
}

Status OpenAiChatDecoder::ConsumeToolCall(const Json::Value& tc, StreamNumbers* numbers,
                                          const DeltaCallback& emit) {
  std::string id = StringOr(tc, "id");
  const Json::Value* fn = FindMember(tc, "function");
  std::string name = fn ? StringOr(*fn, "name") : std::string();
  int key = 0;
  if (Status s = ToolCallKey(tc, id, numbers, &key); !s.ok()) return s;
  if (builder_.ToolCallBlock(key) < 0) {
    if (id.empty()) id = "call_" + std::to_string(key);
    if (!Apply(StreamDelta{DeltaKind::kToolCallStart, key, "", id, name}, emit)) {
      return Status::Ok();
    }
  } else if (!name.empty()) {
    builder_.NameToolCall(key, name);
  }
  last_call_key_ = std::max(last_call_key_, key);
  std::string fragment = ArgumentFragment(fn);
  if (fragment.empty() || builder_.ToolCallEnded(key)) return Status::Ok();
  const std::string& call_id = builder_.message().content[builder_.ToolCallBlock(key)].id();
  Apply(StreamDelta{DeltaKind::kToolCallArgs, key, std::move(fragment), call_id, ""}, emit);
  return Status::Ok();
}

Status OpenAiChatDecoder::ConsumeChoice(const Json::Value& choice, StreamNumbers* numbers,
                                        const DeltaCallback& emit) {
  const long long choice_index = numbers->Index(choice, "index");
  if (!numbers->ok()) return numbers->status();
  if (choice_index != 0) return Status::Ok();  // we never ask for n > 1
  if (const Json::Value* delta = FindMember(choice, "delta"); delta && delta->isObject()) {
    if (!ConsumeText(*delta, emit)) return Status::Ok();
    const Json::Value* tool_calls = FindMember(*delta, "tool_calls");
    if (tool_calls && tool_calls->isArray()) {
      for (const Json::Value& tc : *tool_calls) {
        Status s = ConsumeToolCall(tc, numbers, emit);
        if (!s.ok() || aborted_) return s;
      }
    }
  }
  if (auto fr = AsString(MemberOrNull(choice, "finish_reason"))) {
    finish_reason_ = *fr;
    finish_seen_ = true;
    EndToolCalls(emit);
  }
  return Status::Ok();
}

Status OpenAiChatDecoder::Consume(const SseEvent& event, const DeltaCallback& emit) {
  if (aborted_ || done_) return Status::Ok();
  if (event.data == "[DONE]") {
    done_ = true;
    EndToolCalls(emit);
    return Status::Ok();
  }
  if (ReadPlainContentChunk(event.data, &plain_text_)) {
    if (!plain_text_.empty()) AppendText(DeltaKind::kText, plain_text_, "content", emit);
    return Status::Ok();
  }
  auto parsed = ParseJson(event.data);
  if (!parsed.ok() || !parsed->isObject()) {
    return MakeError(kProviderBadResponse, "malformed stream chunk: " + event.data.substr(0, 200));
  }
  const Json::Value& chunk = *parsed;
  if (Status s = StreamError(chunk); !s.ok()) return s;
  // Every number is checked before use; one out of range fails the response as malformed.
  StreamNumbers numbers("chat completion chunk");
  if (Status s = ReadUsage(chunk, &numbers, &usage_); !s.ok()) return s;
  const Json::Value* choices = FindMember(chunk, "choices");
  if (!choices || !choices->isArray()) return Status::Ok();  // null or missing: usage chunk
  for (const Json::Value& choice : *choices) {
    Status s = ConsumeChoice(choice, &numbers, emit);
    if (!s.ok() || aborted_) return s;
  }
  return Status::Ok();
}

Message OpenAiChatDecoder::TakeMessage(bool partial) {
  if (!partial) {
    // The stream ended well without closing some calls: their arguments are whole.
    const MessageBuilder::Emit nowhere = [](const StreamDelta&) {};
    for (int key : builder_.UnendedToolCalls()) builder_.EndToolCall(key, nowhere);
  }
  Message m = builder_.Take(partial);
  const bool has_calls = std::any_of(m.content.begin(), m.content.end(), [](const ContentBlock& b) {
    return b.type == BlockType::kToolCall;
  });
  if (finish_reason_ == "length") {
    m.stop_reason = StopReason::kMaxTokens;
  } else if (finish_reason_ == "content_filter") {
    m.stop_reason = StopReason::kRefusal;
  } else {
    // Several servers say "stop" after streaming tool calls: the calls decide.
    m.stop_reason = has_calls ? StopReason::kToolUse : StopReason::kEndTurn;
  }
  m.assistant.Edit().usage = usage_;
  return m;
}

// ---------------------------------------------------------------------------------------------
// Provider

namespace {

// The text blocks joined: a view of the one text block's text when there is one (the usual
// case), else joined into *scratch.
std::string_view JoinedText(const std::vector<ContentBlock>& blocks, std::string* scratch) {
  const ContentBlock* only = nullptr;
  size_t count = 0;
  for (const auto& b : blocks) {
    if (b.type != BlockType::kText) continue;
    only = &b;
    ++count;
  }
  if (count == 1) return only->text;
  scratch->clear();
  for (const auto& b : blocks)
    if (b.type == BlockType::kText) *scratch += b.text;
  return *scratch;
}

// The messages of the body, written as they are read, the members of every object in jsoncpp's
// sorted order (the bytes servers were always sent).
class OpenAiMessagesWriter {
 public:
  OpenAiMessagesWriter(JsonWriter* w, const OpenAiChatBodyOptions& options)
      : w_(*w), options_(options) {}

  void System(const std::string& text) { TextMessage("system", text); }
  void Add(const Message& m) {
    switch (m.role) {
      case Role::kUser:
        FlushImages();
        w_.ObjectBegin();
        w_.AttributeBegin("content");
        UserContent(m.content);
        w_.AttributeEnd();
        w_.Attribute("role", "user");
        w_.ObjectEnd();
        break;
      case Role::kAssistant:
        FlushImages();
        Assistant(m);
        break;
      case Role::kToolResult:
        ToolResult(m);
        break;
    }
  }
  // Tool messages cannot hold images: the images of a run of tool results go in one user
  // message after the run (one between two tool messages would break the call/result pairing).
  void FlushImages() {
    if (pending_images_.empty()) return;
    w_.ObjectBegin();
    w_.AttributeBegin("content");
    w_.ArrayBegin();
    TextPart("Images from the tool results above:");
    for (const ContentBlock* img : pending_images_) ImagePart(*img);
    pending_images_.clear();
    w_.ArrayEnd();
    w_.AttributeEnd();
    w_.Attribute("role", "user");
    w_.ObjectEnd();
  }

 private:
  void TextMessage(const char* role, std::string_view text) {
    w_.ObjectBegin();
    w_.Attribute("content", text);
    w_.Attribute("role", role);
    w_.ObjectEnd();
  }
  void TextPart(std::string_view text) {
    w_.ObjectBegin();
    w_.Attribute("text", text);
    w_.Attribute("type", "text");
    w_.ObjectEnd();
  }
  void ImagePart(const ContentBlock& b) {
    w_.ObjectBegin();
    w_.AttributeBegin("image_url");
    w_.ObjectBegin();
    w_.Attribute("url", "data:" + b.mime_type() + ";base64," + b.data());
    w_.ObjectEnd();
    w_.AttributeEnd();
    w_.Attribute("type", "image_url");
    w_.ObjectEnd();
  }
  // User content: a plain string when it is text only (what every compatible server accepts),
  // otherwise an array of parts (empty text left out).
  void UserContent(const std::vector<ContentBlock>& blocks) {
    const bool has_image = std::any_of(blocks.begin(), blocks.end(), [](const ContentBlock& b) {
      return b.type == BlockType::kImage;
    });
    if (!has_image) return w_.Value(JoinedText(blocks, &scratch_));
    w_.ArrayBegin();
    for (const auto& b : blocks) {
      if (b.type == BlockType::kText && !b.text.empty()) TextPart(b.text);
      if (b.type == BlockType::kImage) ImagePart(b);
    }
    w_.ArrayEnd();
  }
  void ToolResult(const Message& m) {
    for (const auto& b : m.content)
      if (b.type == BlockType::kImage) pending_images_.push_back(&b);
    w_.ObjectBegin();
    w_.Attribute("content", JoinedText(m.content, &scratch_));
    w_.Attribute("role", "tool");
    w_.Attribute("tool_call_id", m.tool_call_id);
    w_.ObjectEnd();
  }
  // The reasoning text echoed back and the field it goes in: only to the provider it came from,
  // in the field that server used (the decoder keeps it as the block's signature).
  const std::string* Reasoning(const Message& m, std::string* text) const {
    const std::string* field = nullptr;
    for (const auto& b : m.content) {
      if (b.type != BlockType::kThinking || b.redacted()) continue;
      if (b.signature() != "reasoning_content" && b.signature() != "reasoning") continue;
      *text += b.text;
      field = &b.signature();
    }
    if (text->empty() || m.provider() != options_.provider_name) return nullptr;
    return field;
  }
  void Assistant(const Message& m) {
    const bool calls = std::any_of(m.content.begin(), m.content.end(), [](const ContentBlock& b) {
      return b.type == BlockType::kToolCall;
    });
    const std::string_view text = JoinedText(m.content, &scratch_);
    w_.ObjectBegin();
    if (!calls || !text.empty()) {
      w_.Attribute("content", text);
    } else {
      w_.Attribute("content", nullptr);
    }
    std::string reasoning;
    if (const std::string* field = Reasoning(m, &reasoning)) w_.Attribute(*field, reasoning);
    w_.Attribute("role", "assistant");
    if (calls) ToolCalls(m);
    w_.ObjectEnd();
  }
  void ToolCalls(const Message& m) {
    w_.AttributeBegin("tool_calls");
    w_.ArrayBegin();
    for (const auto& b : m.content) {
      if (b.type != BlockType::kToolCall) continue;
      w_.ObjectBegin();
      w_.AttributeBegin("function");
      w_.ObjectBegin();
      // Arguments travel as a JSON string; a raw unparsable string is sent back as it came.
      w_.Attribute("arguments",
                   b.arguments().isNull() ? std::string("{}") : StringOrJson(b.arguments()));
      w_.Attribute("name", b.name());
      w_.ObjectEnd();
      w_.AttributeEnd();
      w_.Attribute("id", b.id());
      w_.Attribute("type", "function");
      w_.ObjectEnd();
    }
    w_.ArrayEnd();
    w_.AttributeEnd();
  }

  JsonWriter& w_;
  const OpenAiChatBodyOptions& options_;
  std::vector<const ContentBlock*> pending_images_;
  std::string scratch_;
};

void WriteOpenAiTools(const std::vector<ToolSchema>& tools, JsonWriter* w) {
  w->AttributeBegin("tools");
  w->ArrayBegin();
  for (const ToolSchema& t : tools) {
    w->ObjectBegin();
    w->AttributeBegin("function");
    w->ObjectBegin();
    w->Attribute("description", t.description);
    w->Attribute("name", t.name);
    w->AttributeBegin("parameters");
    WriteToolSchema(t.parameters, w);
    w->AttributeEnd();
    w->ObjectEnd();
    w->AttributeEnd();
    w->Attribute("type", "function");
    w->ObjectEnd();
  }
  w->ArrayEnd();
  w->AttributeEnd();
}

}  // namespace

std::string WriteOpenAiChatBody(const ModelRequest& request, const OpenAiChatBodyOptions& options) {
  std::string out;
  out.reserve(RequestBodySizeHint(request));
  // Members in jsoncpp's sorted order.
  JsonWriter w(&out);
  w.ObjectBegin();
  const long long max_tokens =
      request.max_output_tokens > 0 ? request.max_output_tokens : options.default_max_tokens;
  if (max_tokens > 0)
    w.Attribute(options.use_max_completion_tokens ? "max_completion_tokens" : "max_tokens",
                max_tokens);
  w.AttributeBegin("messages");
  w.ArrayBegin();
  OpenAiMessagesWriter messages(&w, options);
  if (!request.system.empty()) messages.System(request.system);
  for (const Message& m : request.messages) messages.Add(m);
  messages.FlushImages();
  w.ArrayEnd();
  w.AttributeEnd();
  w.Attribute("model", request.model.empty() ? options.model : request.model);
  if (options.reasoning_model)
    if (const char* effort = OpenAiReasoningEffort(request.thinking))
      w.Attribute("reasoning_effort", effort);
  w.Attribute("stream", true);
  w.AttributeBegin("stream_options");
  w.ObjectBegin();
  w.Attribute("include_usage", true);
  w.ObjectEnd();
  w.AttributeEnd();
  if (!request.tools.empty()) WriteOpenAiTools(request.tools, &w);
  w.ObjectEnd();
  return out;
}

HttpPostRequest OpenAiChatProvider::BuildHttpRequest(const ModelRequest& request) const {
  const HttpProviderConfig& c = config();
  OpenAiChatBodyOptions options;
  options.provider_name = c.settings.name;
  options.reasoning_model = c.model.reasoning;
  options.use_max_completion_tokens =
      c.settings.name == "openai" || c.base.host == "api.openai.com";
  options.model = c.model.id;
  HttpPostRequest out;
  out.path = c.base.path_prefix + "/chat/completions";
  out.body = WriteOpenAiChatBody(request, options);
  AddOpenAiHeaders(c, &out);
  return out;
}

void AddOpenAiHeaders(const HttpProviderConfig& c, HttpPostRequest* out) {
  out->headers.emplace_back("Accept", "text/event-stream");
  out->headers.emplace_back("User-Agent", std::string("lousho/") + LOUSHO_VERSION);
  if (!c.api_key.empty()) out->headers.emplace_back("Authorization", "Bearer " + c.api_key);
  for (const auto& [k, v] : c.settings.headers) out->headers.emplace_back(k, v);
}

}  // namespace lousho::agent
