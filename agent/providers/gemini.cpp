// Gemini's native API: stream decoder and provider (the request body is in gemini_body.cpp).
#include "agent/providers/gemini.h"

#include <algorithm>

#include "support/http/provider_errors.h"
#include "support/json_util.h"

namespace lousho::agent {

namespace {

// A Google RPC status as the error kind the shared mapping knows.
std::string GeminiErrorKind(const std::string& status) {
  if (status == "RESOURCE_EXHAUSTED") return "rate_limit";
  if (status == "INTERNAL" || status == "DEADLINE_EXCEEDED") return "server_error";
  if (status == "UNAVAILABLE") return "unavailable";
  if (status == "UNAUTHENTICATED") return "authentication";
  if (status == "PERMISSION_DENIED") return "permission";
  if (status == "NOT_FOUND") return "not_found_error";
  if (status == "INVALID_ARGUMENT" || status == "FAILED_PRECONDITION")
    return "invalid_request_error";
  return status;
}

Error GeminiError(const Json::Value& err) {
  std::string message = StringOr(err, "message");
  if (message.empty()) message = "the model's stream failed";
  return ErrorFromStream(GeminiErrorKind(StringOr(err, "status")), message);
}

// usageMetadata's figures: the prompt count includes the cached tokens; thoughts are billed as
// output.
void SetGeminiUsage(long long prompt, long long cached, long long output, long long thoughts,
                    Usage* usage) {
  usage->input = prompt > cached ? prompt - cached : 0;
  usage->cache_read = cached;
  usage->output = output + thoughts;
}

Status ReadGeminiUsage(const Json::Value& u, Usage* usage) {
  StreamNumbers numbers("usageMetadata");
  const long long prompt = numbers.Tokens(u, "promptTokenCount");
  const long long cached = numbers.Tokens(u, "cachedContentTokenCount");
  const long long output = numbers.Tokens(u, "candidatesTokenCount");
  const long long thoughts = numbers.Tokens(u, "thoughtsTokenCount");
  if (!numbers.ok()) return numbers.status();
  SetGeminiUsage(prompt, cached, output, thoughts, usage);
  return Status::Ok();
}

// --- The plain reader of text chunks -----------------------------------------------------------
// Text chunks are most of a stream. A chunk that is exactly an object of `candidates` holding one
// candidate with one text part ([{"content":{"parts":[{"text":"..."}],"role":"model"},
// "index":0}], with or without the API's spaces between tokens), a flat `usageMetadata` of
// integers, and string `modelVersion` / `responseId` members, is read here without a Json::Value.
// Anything else (a thought, a signature, a call, a finish reason, an error, nested usage details)
// returns false and takes the general path, which reads the same chunk to the same result
// (tests/providers/gemini_test.cpp compares both).
struct PlainChunk {
  std::string text;
  std::string response_id;
  bool has_usage = false;
  long long prompt = 0, cached = 0, output = 0, thoughts = 0;
};

bool JsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void SkipSpace(std::string_view data, size_t* i) {
  while (*i < data.size() && JsonSpace(data[*i])) ++*i;
}

// Matches `shape` (compact JSON, no escapes) at data[*i], with whitespace allowed between its
// tokens but not inside its strings; advances *i past it.
bool MatchShape(std::string_view data, size_t* i, std::string_view shape) {
  bool in_string = false;
  for (char c : shape) {
    if (!in_string) SkipSpace(data, i);
    if (*i >= data.size() || data[*i] != c) return false;
    ++*i;
    if (c == '"') in_string = !in_string;
  }
  return true;
}

// A JSON string at data[*i] (after whitespace) into *out.
bool ReadString(std::string_view data, size_t* i, std::string* out) {
  SkipSpace(data, i);
  if (*i >= data.size() || data[*i] != '"') return false;
  out->clear();
  const size_t n = ReadJsonStringBody(data.substr(*i + 1), out);
  if (n == 0) return false;
  *i += 1 + n;
  return true;
}

// A token count: digits only, at most kMaxTokenCount (the general path's bound).
bool ReadCount(std::string_view data, size_t* i, long long* out) {
  SkipSpace(data, i);
  const size_t from = *i;
  long long n = 0;
  while (*i < data.size() && data[*i] >= '0' && data[*i] <= '9' && *i - from < 13) {
    n = n * 10 + (data[*i] - '0');
    ++*i;
  }
  *out = n;
  return *i > from && n <= kMaxTokenCount &&
         (*i >= data.size() || data[*i] < '0' || data[*i] > '9');
}

// usageMetadata as a flat object of counts.
bool ReadPlainUsage(std::string_view data, size_t* i, PlainChunk* c) {
  if (!MatchShape(data, i, "{")) return false;
  std::string key;
  for (;;) {
    long long n = 0;
    if (!ReadString(data, i, &key) || !MatchShape(data, i, ":") || !ReadCount(data, i, &n))
      return false;
    const std::string_view k = key;
    if (k == "promptTokenCount") c->prompt = n;
    if (k == "cachedContentTokenCount") c->cached = n;
    if (k == "candidatesTokenCount") c->output = n;
    if (k == "thoughtsTokenCount") c->thoughts = n;
    SkipSpace(data, i);
    if (*i < data.size() && data[*i] == ',') {
      ++*i;
      continue;
    }
    c->has_usage = true;
    return MatchShape(data, i, "}");
  }
}

// One member's value of the plain chunk.
bool ReadPlainMember(std::string_view key, std::string_view data, size_t* i, PlainChunk* c,
                     bool* text) {
  if (key == "candidates") {
    if (*text) return false;
    *text = true;
    return MatchShape(data, i, R"([{"content":{"parts":[{"text":)") &&
           ReadString(data, i, &c->text) &&
           MatchShape(data, i, R"(}],"role":"model"},"index":0}])");
  }
  if (key == "usageMetadata") return !c->has_usage && ReadPlainUsage(data, i, c);
  std::string ignored;
  if (key == "responseId") return ReadString(data, i, &c->response_id);
  if (key == "modelVersion") return ReadString(data, i, &ignored);
  return false;
}

bool ReadPlainChunk(std::string_view data, PlainChunk* c) {
  size_t i = 0;
  if (!MatchShape(data, &i, "{")) return false;
  bool text = false;
  std::string key;
  for (;;) {
    if (!ReadString(data, &i, &key) || !MatchShape(data, &i, ":") ||
        !ReadPlainMember(key, data, &i, c, &text))
      return false;
    SkipSpace(data, &i);
    if (i < data.size() && data[i] == ',') {
      ++i;
      continue;
    }
    if (!MatchShape(data, &i, "}")) return false;
    SkipSpace(data, &i);
    return i == data.size() && text;
  }
}

bool RefusalFinish(const std::string& reason) {
  static constexpr std::string_view kRefusals[] = {"SAFETY",
                                                   "RECITATION",
                                                   "BLOCKLIST",
                                                   "PROHIBITED_CONTENT",
                                                   "SPII",
                                                   "LANGUAGE",
                                                   "IMAGE_SAFETY",
                                                   "PROMPT_BLOCKED",
                                                   "IMAGE_OTHER",
                                                   "OTHER",
                                                   "IMAGE_PROHIBITED_CONTENT"};
  return std::find(std::begin(kRefusals), std::end(kRefusals), reason) != std::end(kRefusals);
}

}  // namespace

void GeminiDecoder::KeepNextSignature(const std::string& signature, const DeltaCallback& emit) {
  int at = builder_.open_block();
  const auto& content = builder_.message().content;
  if (at < 0 || content[at].type != BlockType::kThinking || !content[at].signature().empty())
    at = builder_.Open(BlockType::kThinking, Forward(emit));
  builder_.AddSignature(at, std::string(kGeminiNextSignature) + signature);
}

void GeminiDecoder::OnCall(const Json::Value& call, const DeltaCallback& emit) {
  const int key = calls_++;
  std::string id = StringOr(call, "id");
  if (id.empty()) id = "call_" + response_id_ + "_" + std::to_string(key);
  if (!Apply(StreamDelta{DeltaKind::kToolCallStart, key, "", id, StringOr(call, "name")}, emit))
    return;
  const Json::Value& args = MemberOrNull(call, "args");
  if (!Apply(StreamDelta{DeltaKind::kToolCallArgs, key, args.isObject() ? WriteJson(args) : "{}",
                         id, ""},
             emit))
    return;
  builder_.EndToolCall(key, Forward(emit));
}

void GeminiDecoder::OnPart(const Json::Value& part, const DeltaCallback& emit) {
  const std::string signature = StringOr(part, "thoughtSignature");
  if (const Json::Value* call = FindMember(part, "functionCall"); call && call->isObject()) {
    if (!signature.empty()) KeepNextSignature(signature, emit);
    OnCall(*call, emit);
    return;
  }
  std::string text = StringOr(part, "text");
  if (!BoolOr(part, "thought", false)) {
    if (!signature.empty()) KeepNextSignature(signature, emit);
    if (!text.empty()) Apply(StreamDelta{DeltaKind::kText, 0, std::move(text), "", ""}, emit);
    return;
  }
  if (!text.empty() && !Apply(StreamDelta{DeltaKind::kThinking, 0, std::move(text), "", ""}, emit))
    return;
  if (signature.empty()) return;
  int at = builder_.open_block();
  const auto& content = builder_.message().content;
  if (at < 0 || content[at].type != BlockType::kThinking || !content[at].signature().empty())
    at = builder_.Open(BlockType::kThinking, Forward(emit));
  builder_.AddSignature(at, std::string(kGeminiThoughtSignature) + signature);
}

Status GeminiDecoder::OnChunk(const Json::Value& chunk, const DeltaCallback& emit) {
  if (const Json::Value* err = FindMember(chunk, "error"); err && err->isObject())
    return GeminiError(*err);
  if (response_id_.empty()) response_id_ = StringOr(chunk, "responseId");
  if (const Json::Value* u = FindMember(chunk, "usageMetadata"); u && u->isObject()) {
    if (Status s = ReadGeminiUsage(*u, &usage_); !s.ok()) return s;
  }
  if (!StringOr(MemberOrNull(chunk, "promptFeedback"), "blockReason").empty())
    finish_reason_ = "PROMPT_BLOCKED";
  const Json::Value& candidate = ElementOrNull(MemberOrNull(chunk, "candidates"), 0);
  for (const Json::Value& part : MemberOrNull(MemberOrNull(candidate, "content"), "parts")) {
    OnPart(part, emit);
    if (aborted_) return Status::Ok();
  }
  const std::string finish = StringOr(candidate, "finishReason");
  if (finish == "MALFORMED_FUNCTION_CALL" || finish == "UNEXPECTED_TOOL_CALL") {
    Error e = MakeError(kProviderBadResponse,
                        "the model wrote a function call it could not finish (" + finish + ")");
    e.retryable = true;  // a new sample usually gets it right
    return e;
  }
  if (!finish.empty() && finish != "FINISH_REASON_UNSPECIFIED") finish_reason_ = finish;
  return Status::Ok();
}

bool GeminiDecoder::ConsumePlain(const std::string& data, const DeltaCallback& emit) {
  PlainChunk c;
  if (!ReadPlainChunk(data, &c)) return false;
  if (response_id_.empty()) response_id_ = std::move(c.response_id);
  if (c.has_usage) SetGeminiUsage(c.prompt, c.cached, c.output, c.thoughts, &usage_);
  if (!c.text.empty()) Apply(StreamDelta{DeltaKind::kText, 0, std::move(c.text), "", ""}, emit);
  return true;
}

Status GeminiDecoder::Consume(const SseEvent& event, const DeltaCallback& emit) {
  if (aborted_) return Status::Ok();
  if (ConsumePlain(event.data, emit)) return Status::Ok();
  auto parsed = ParseJson(event.data);
  if (!parsed.ok() || !parsed->isObject()) {
    return MakeError(kProviderBadResponse, "malformed stream chunk: " + event.data.substr(0, 200));
  }
  return OnChunk(*parsed, emit);
}

Message GeminiDecoder::TakeMessage(bool partial) {
  Message m = builder_.Take(partial);
  const bool has_calls = std::any_of(m.content.begin(), m.content.end(), [](const ContentBlock& b) {
    return b.type == BlockType::kToolCall;
  });
  if (finish_reason_ == "MAX_TOKENS") {
    m.stop_reason = StopReason::kMaxTokens;
  } else if (RefusalFinish(finish_reason_)) {
    m.stop_reason = StopReason::kRefusal;
  } else {
    m.stop_reason = has_calls ? StopReason::kToolUse : StopReason::kEndTurn;
  }
  m.assistant.Edit().usage = usage_;
  return m;
}

// ---------------------------------------------------------------------------------------------
// Provider

HttpPostRequest GeminiProvider::BuildHttpRequest(const ModelRequest& request) const {
  const HttpProviderConfig& c = config();
  GeminiBodyOptions options;
  options.provider_name = c.settings.name;
  options.reasoning_model = c.model.reasoning;
  options.model = request.model.empty() ? c.model.id : request.model;
  HttpPostRequest out;
  out.path = c.base.path_prefix + "/models/" + options.model + ":streamGenerateContent?alt=sse";
  out.body = WriteGeminiBody(request, options);
  out.headers.emplace_back("Accept", "text/event-stream");
  out.headers.emplace_back("User-Agent", std::string("lousho/") + LOUSHO_VERSION);
  if (!c.api_key.empty()) out.headers.emplace_back("x-goog-api-key", c.api_key);
  for (const auto& [k, v] : c.settings.headers) out.headers.emplace_back(k, v);
  return out;
}

}  // namespace lousho::agent
