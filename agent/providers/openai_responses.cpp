// OpenAI Responses API: stream decoder and provider (the request body is in
// openai_responses_body.cpp).
#include "agent/providers/openai_responses.h"

#include <algorithm>

#include "agent/providers/openai_chat.h"
#include "core/server_tool.h"
#include "support/http/provider_errors.h"
#include "support/json_util.h"
#include "support/json_writer.h"

namespace lousho::agent {

namespace {

// Text deltas are most of a stream. An event whose bytes are exactly an object of plain scalar
// members (type, sequence_number, item_id, output_index, content_index, delta, obfuscation... as
// the API sends them, no spaces), with the type response.output_text.delta and an optional empty
// "logprobs":[], is read here without a Json::Value: its text is the delta. Anything else returns
// false and takes the general path, which reads the same event to the same result
// (tests/providers/openai_responses_test.cpp compares both).
constexpr std::string_view kTextDeltaType = "response.output_text.delta";

// The length of member `key`'s value at the start of `rest` as the plain reader takes it, or 0.
size_t PlainResponsesMember(std::string_view key, std::string_view rest, bool* is_text,
                            bool* has_delta, std::string* text) {
  if (key == "logprobs") return rest.starts_with("[]") ? 2 : 0;
  if (key == "type") {
    std::string type;
    const size_t n = rest.starts_with('"') ? ReadJsonStringBody(rest.substr(1), &type) : 0;
    *is_text = n > 0 && type == kTextDeltaType;
    return n == 0 ? 0 : n + 1;
  }
  if (key == "output_index") {
    // The general path checks it: only a plain index in range is taken here.
    size_t n = 0;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
    if (n == 0 || n > 4 || (n > 1 && rest[0] == '0')) return 0;
    return std::stoi(std::string(rest.substr(0, n))) <= kMaxBlockIndex ? n : 0;
  }
  if (key != "delta") return SkipJsonScalar(rest);
  if (*has_delta || !rest.starts_with('"')) return 0;
  *has_delta = true;
  text->clear();
  const size_t n = ReadJsonStringBody(rest.substr(1), text);
  return n == 0 ? 0 : n + 1;
}

bool ReadPlainResponsesDelta(std::string_view data, std::string* text) {
  if (!data.starts_with('{')) return false;
  bool is_text = false;
  bool has_delta = false;
  std::string key;
  for (size_t i = 1;;) {
    if (i >= data.size() || data[i] != '"') return false;
    key.clear();
    const size_t k = ReadJsonStringBody(data.substr(i + 1), &key);
    if (k == 0) return false;
    i += 1 + k;
    if (i >= data.size() || data[i] != ':') return false;
    ++i;
    const size_t v = PlainResponsesMember(key, data.substr(i), &is_text, &has_delta, text);
    if (v == 0) return false;
    i += v;
    if (i >= data.size()) return false;
    if (data[i] == ',') {
      ++i;
      continue;
    }
    return data[i] == '}' && i + 1 == data.size() && is_text && has_delta;
  }
}

// An error event's (or a failed response's) error object as an error.
Error ErrorOf(const Json::Value& err) {
  std::string code = StringOr(err, "code");
  if (code.empty()) code = StringOr(err, "type");
  std::string message = StringOr(err, "message");
  if (message.empty()) message = "the response failed";
  return ErrorFromStream(code, message);
}

// The response's usage (input tokens include the cached ones).
Status ReadResponseUsage(const Json::Value& response, Usage* usage) {
  const Json::Value* u = FindMember(response, "usage");
  if (u == nullptr || !u->isObject()) return Status::Ok();
  StreamNumbers numbers("response usage");
  const long long input = numbers.Tokens(*u, "input_tokens");
  long long cached = 0;
  if (const Json::Value* d = FindMember(*u, "input_tokens_details"); d && d->isObject())
    cached = numbers.Tokens(*d, "cached_tokens");
  const long long output = numbers.Tokens(*u, "output_tokens");
  if (!numbers.ok()) return numbers.status();
  usage->input = input - cached > 0 ? input - cached : 0;
  usage->cache_read = cached;
  usage->output = output;
  return Status::Ok();
}

// A string as JSON string content (without the quotes): a custom call's raw input streamed as
// the fragments of {"input":"..."}.
std::string JsonStringBody(std::string_view s) {
  std::string quoted;
  AppendJsonString(s, &quoted);
  return quoted.substr(1, quoted.size() - 2);
}

// The text of a message item's content parts (output_text and refusal).
std::string MessageItemText(const Json::Value& item) {
  std::string text;
  const Json::Value* content = FindMember(item, "content");
  if (content == nullptr || !content->isArray()) return text;
  for (const Json::Value& part : *content) {
    const std::string type = StringOr(part, "type");
    if (type == "output_text") text += StringOr(part, "text");
    if (type == "refusal") text += StringOr(part, "refusal");
  }
  return text;
}

}  // namespace

Status OpenAiResponsesDecoder::OutputIndex(const Json::Value& data, int* key) const {
  StreamNumbers numbers("response event");
  *key = static_cast<int>(numbers.Index(data, "output_index"));
  return numbers.status();
}

Status OpenAiResponsesDecoder::OnItemAdded(const Json::Value& data, const DeltaCallback& emit) {
  int key = 0;
  if (Status s = OutputIndex(data, &key); !s.ok()) return s;
  const Json::Value& json = MemberOrNull(data, "item");
  Item& item = items_[key];
  item.type = StringOr(json, "type");
  item.text_mark = text_deltas_;
  if (item.type == "reasoning") {
    item.block = builder_.Open(BlockType::kThinking, Forward(emit));
    return Status::Ok();
  }
  if (item.type != "function_call" && item.type != "custom_tool_call") return Status::Ok();
  std::string id = StringOr(json, "call_id");
  if (id.empty()) id = StringOr(json, "id");
  if (id.empty()) id = "call_" + std::to_string(key);
  if (!Apply(StreamDelta{DeltaKind::kToolCallStart, key, "", id, StringOr(json, "name")}, emit))
    return Status::Ok();
  if (item.type == "custom_tool_call") CallFragment(key, "{\"input\":\"", false, emit);
  return Status::Ok();
}

bool OpenAiResponsesDecoder::CallFragment(int key, const std::string& text, bool custom,
                                          const DeltaCallback& emit) {
  const int at = builder_.ToolCallBlock(key);
  if (at < 0 || builder_.ToolCallEnded(key) || text.empty()) return !aborted_;
  const std::string& call_id = builder_.message().content[at].id();
  return Apply(
      StreamDelta{DeltaKind::kToolCallArgs, key, custom ? JsonStringBody(text) : text, call_id, ""},
      emit);
}

bool OpenAiResponsesDecoder::ReasoningText(int key, long long summary, std::string text,
                                           const DeltaCallback& emit) {
  auto it = items_.find(key);
  if (it == items_.end() || it->second.type != "reasoning" || text.empty()) return !aborted_;
  Item& item = it->second;
  if (builder_.open_block() != item.block) return !aborted_;  // items stream one after another
  // The parts of a summary are paragraphs of one thought.
  if (item.summary >= 0 && summary != item.summary) text.insert(0, "\n\n");
  item.summary = static_cast<int>(summary);
  item.streamed = true;
  return Apply(StreamDelta{DeltaKind::kThinking, key, std::move(text), "", ""}, emit);
}

Status OpenAiResponsesDecoder::OnDelta(const std::string& type, const Json::Value& data,
                                       const DeltaCallback& emit) {
  int key = 0;
  if (Status s = OutputIndex(data, &key); !s.ok()) return s;
  std::string delta = StringOr(data, "delta");
  if (type == "response.output_text.delta" || type == "response.refusal.delta") {
    ++text_deltas_;
    if (!delta.empty()) Apply(StreamDelta{DeltaKind::kText, key, std::move(delta), "", ""}, emit);
    return Status::Ok();
  }
  if (type == "response.reasoning_summary_text.delta" || type == "response.reasoning_text.delta") {
    StreamNumbers numbers(type);
    const long long part = numbers.Index(
        data, type == "response.reasoning_text.delta" ? "content_index" : "summary_index");
    if (!numbers.ok()) return numbers.status();
    ReasoningText(key, part, std::move(delta), emit);
    return Status::Ok();
  }
  const bool custom = type == "response.custom_tool_call_input.delta";
  if (custom || type == "response.function_call_arguments.delta") {
    if (auto it = items_.find(key); it != items_.end()) it->second.streamed = true;
    CallFragment(key, delta, custom, emit);
  }
  return Status::Ok();
}

void OpenAiResponsesDecoder::OnReasoningDone(Item& item, const Json::Value& json,
                                             const DeltaCallback& emit) {
  if (!item.streamed && builder_.open_block() == item.block) {
    // A summary that came whole with the item.
    std::string text;
    for (const Json::Value& part : MemberOrNull(json, "summary")) {
      if (!text.empty()) text += "\n\n";
      text += StringOr(part, "text");
    }
    if (!text.empty()) Apply(StreamDelta{DeltaKind::kThinking, 0, std::move(text), "", ""}, emit);
  }
  const std::string encrypted = StringOr(json, "encrypted_content");
  if (!encrypted.empty() && item.block >= 0) {
    builder_.AddSignature(item.block, std::string(kResponsesReasoningPrefix) + encrypted);
  }
}

void OpenAiResponsesDecoder::OnCallDone(int key, Item& item, const Json::Value& json,
                                        const DeltaCallback& emit) {
  const bool custom = item.type == "custom_tool_call";
  if (!item.streamed) {
    if (!CallFragment(key, StringOr(json, custom ? "input" : "arguments"), custom, emit)) return;
  }
  if (custom && !CallFragment(key, "\"}", false, emit)) return;
  builder_.EndToolCall(key, Forward(emit));
}

Status OpenAiResponsesDecoder::OnItemDone(const Json::Value& data, const DeltaCallback& emit) {
  int key = 0;
  if (Status s = OutputIndex(data, &key); !s.ok()) return s;
  if (items_.find(key) == items_.end()) {  // no output_item.added came for it
    if (Status s = OnItemAdded(data, emit); !s.ok() || aborted_) return s;
  }
  const Json::Value& json = MemberOrNull(data, "item");
  Item& item = items_[key];
  if (item.type == "reasoning") {
    OnReasoningDone(item, json, emit);
  } else if (item.type == "message") {
    std::string text = item.text_mark != text_deltas_ ? std::string() : MessageItemText(json);
    if (!text.empty()) Apply(StreamDelta{DeltaKind::kText, key, std::move(text), "", ""}, emit);
  } else if (item.type == "function_call" || item.type == "custom_tool_call") {
    if (builder_.ToolCallBlock(key) >= 0) OnCallDone(key, item, json, emit);
  } else if (item.type == "web_search_call") {
    OnWebSearchDone(key, json, emit);
  }
  return Status::Ok();
}

// A search the API ran: shown whole when it is done (its query comes with the done item).
void OpenAiResponsesDecoder::OnWebSearchDone(int key, const Json::Value& json,
                                             const DeltaCallback& emit) {
  const Json::Value& action = MemberOrNull(json, "action");
  std::string id = StringOr(json, "id");
  if (id.empty()) id = "ws_" + std::to_string(key);
  Json::Value args(Json::objectValue);
  if (const std::string query = StringOr(action, "query"); !query.empty()) args["query"] = query;
  if (!Apply(StreamDelta{DeltaKind::kServerToolStart, key, WriteJson(args), id, "web_search"},
             emit))
    return;
  ServerToolResult r;
  r.api = "openai-responses";
  r.result = json;
  r.is_error = StringOr(json, "status") == "failed";
  std::string sources;
  size_t n = 0;
  for (const Json::Value& src : MemberOrNull(action, "sources")) {
    const std::string url = StringOr(src, "url");
    if (url.empty()) continue;
    sources += "\n- " + url;
    ++n;
  }
  r.summary = r.is_error ? std::string("The search failed")
              : n        ? std::to_string(n) + (n == 1 ? " source:" : " sources:") + sources
                         : std::string("Searched");
  Apply(StreamDelta{DeltaKind::kServerToolEnd, key, ServerToolEndText(r), id, ""}, emit);
}

Status OpenAiResponsesDecoder::OnEnd(const std::string& type, const Json::Value& data) {
  const Json::Value& response = MemberOrNull(data, "response");
  if (type == "response.failed") {
    const Json::Value& err = MemberOrNull(response, "error");
    return err.isObject() ? ErrorOf(err) : ErrorOf(Json::Value(Json::objectValue));
  }
  if (Status s = ReadResponseUsage(response, &usage_); !s.ok()) return s;
  status_ = type == "response.incomplete" ? "incomplete" : "completed";
  incomplete_reason_ = StringOr(MemberOrNull(response, "incomplete_details"), "reason");
  done_ = true;
  return Status::Ok();
}

Status OpenAiResponsesDecoder::Dispatch(const std::string& type, const Json::Value& data,
                                        const DeltaCallback& emit) {
  if (type == "error") {
    const Json::Value& nested = MemberOrNull(data, "error");
    return ErrorOf(nested.isObject() ? nested : data);
  }
  if (type == "response.completed" || type == "response.incomplete" || type == "response.failed") {
    return OnEnd(type, data);
  }
  if (type == "response.output_item.added") return OnItemAdded(data, emit);
  if (type == "response.output_item.done") return OnItemDone(data, emit);
  if (type.ends_with(".delta")) return OnDelta(type, data, emit);
  return Status::Ok();  // created, in_progress, *.done of parts and texts, future kinds
}

Status OpenAiResponsesDecoder::Consume(const SseEvent& event, const DeltaCallback& emit) {
  if (aborted_ || done_) return Status::Ok();
  if (ReadPlainResponsesDelta(event.data, &plain_text_)) {
    ++text_deltas_;
    if (!plain_text_.empty()) Apply(StreamDelta{DeltaKind::kText, 0, plain_text_, "", ""}, emit);
    return Status::Ok();
  }
  auto parsed = ParseJson(event.data);
  if (!parsed.ok() || !parsed->isObject()) {
    return MakeError(kProviderBadResponse,
                     "malformed stream event " + event.event + ": " + event.data.substr(0, 200));
  }
  std::string type = StringOr(*parsed, "type");
  if (type.empty()) type = event.event;
  return Dispatch(type, *parsed, emit);
}

Message OpenAiResponsesDecoder::TakeMessage(bool partial) {
  Message m = builder_.Take(partial);
  const bool has_calls = std::any_of(m.content.begin(), m.content.end(), [](const ContentBlock& b) {
    return b.type == BlockType::kToolCall;
  });
  if (status_ == "incomplete" && incomplete_reason_ == "content_filter") {
    m.stop_reason = StopReason::kRefusal;
  } else if (status_ == "incomplete") {
    m.stop_reason = StopReason::kMaxTokens;  // max_output_tokens
  } else {
    m.stop_reason = has_calls ? StopReason::kToolUse : StopReason::kEndTurn;
  }
  m.assistant.Edit().usage = usage_;
  return m;
}

// ---------------------------------------------------------------------------------------------
// Provider

HttpPostRequest OpenAiResponsesProvider::BuildHttpRequest(const ModelRequest& request) const {
  const HttpProviderConfig& c = config();
  OpenAiResponsesBodyOptions options;
  options.provider_name = c.settings.name;
  options.reasoning_model = c.model.reasoning;
  options.model = c.model.id;
  HttpPostRequest out;
  out.path = c.base.path_prefix + "/responses";
  out.body = WriteOpenAiResponsesBody(request, options);
  AddOpenAiHeaders(c, &out);
  return out;
}

}  // namespace lousho::agent
