// Offline scripted provider.
#include "agent/providers/script_provider.h"

#include "support/regex.h"

namespace lousho::agent {
namespace {

// `match:` patterns are case-insensitive; one that does not compile, or that hits a matching
// limit, matches nothing.
bool RegexMatches(const std::string& pattern, const std::string& subject) {
  if (pattern.empty()) return true;
  RegexOptions options;
  options.case_insensitive = true;
  options.jit = false;  // one search over one message: compiling machine code costs more
  auto re = Regex::Compile(pattern, options);
  if (!re.ok()) return false;
  auto hit = re->Search(subject);
  return hit.ok() && *hit;
}

// Splits text into streamed pieces: fixed-size (never inside a UTF-8 sequence) or by words.
std::vector<std::string> Chunks(const std::string& text, int chunk_size) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t end;
    if (chunk_size > 0) {
      end = std::min(text.size(), i + static_cast<size_t>(chunk_size));
      while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
    } else {
      end = text.find(' ', i);
      end = end == std::string::npos ? text.size() : end + 1;
    }
    out.push_back(text.substr(i, end - i));
    i = end;
  }
  return out;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
  return s;
}

long long ApproxTokens(size_t chars) { return static_cast<long long>((chars + 3) / 4); }

}  // namespace

ScriptProvider::ScriptProvider(config::Script script) : script_(std::move(script)) {}

Result<ModelResponse> ScriptProvider::Stream(const ModelRequest& request,
                                             const DeltaCallback& on_delta,
                                             const CancelToken& cancel, const RetryHooks&) {
  // The last user message decides the reply; each model call after it takes the next step.
  size_t last_user = request.messages.size();
  for (size_t i = request.messages.size(); i-- > 0;) {
    if (request.messages[i].role == Role::kUser) {
      last_user = i;
      break;
    }
  }
  std::string input;
  size_t step_index = 0;
  // The system prompt names the workspace path; leaving it out keeps counts reproducible.
  size_t input_chars = 0;
  for (const auto& m : request.messages)
    for (const auto& b : m.content) input_chars += b.text.size() + b.data.size() / 8;
  if (last_user < request.messages.size()) {
    input = request.messages[last_user].TextContent();
    for (size_t i = last_user + 1; i < request.messages.size(); ++i)
      if (request.messages[i].role == Role::kAssistant) ++step_index;
  }

  ModelResponse resp;
  Message& msg = resp.message;
  msg.role = Role::kAssistant;
  msg.provider = "script";
  msg.model = script_.name;

  const config::ScriptReply* reply = nullptr;
  for (const auto& r : script_.replies) {
    if (RegexMatches(r.match, input)) {
      reply = &r;
      break;
    }
  }
  config::ScriptStep step;
  if (reply == nullptr) {
    step.text = "(offline script '" + script_.name + "' has no reply for this prompt)";
  } else if (step_index < reply->steps.size()) {
    step = reply->steps[step_index];
  }
  if (!step.error_code.empty()) return MakeError(step.error_code, step.error_message);

  auto finish_cancelled = [&]() -> Result<ModelResponse> {
    msg.stop_reason = StopReason::kCancelled;
    return resp;
  };
  size_t output_chars = 0;
  auto play = [&](const std::string& text, BlockType type, DeltaKind kind) -> bool {
    if (text.empty()) return true;
    int index = static_cast<int>(msg.content.size());
    msg.content.push_back(type == BlockType::kText ? ContentBlock::Text("")
                                                   : ContentBlock::Thinking(""));
    for (const auto& piece : Chunks(text, step.chunk_size)) {
      if (step.delay_ms > 0 && cancel.WaitFor(step.delay_ms)) return false;
      if (cancel.cancelled()) return false;
      msg.content[index].text += piece;
      output_chars += piece.size();
      StreamDelta d;
      d.kind = kind;
      d.index = index;
      d.text = piece;
      if (!on_delta(d)) return false;
    }
    return true;
  };
  if (!play(Replace(step.thinking, "{{input}}", input), BlockType::kThinking, DeltaKind::kThinking))
    return finish_cancelled();
  if (!play(Replace(step.text, "{{input}}", input), BlockType::kText, DeltaKind::kText))
    return finish_cancelled();
  for (size_t i = 0; i < step.tool_calls.size(); ++i) {
    const auto& tc = step.tool_calls[i];
    if (step.delay_ms > 0 && cancel.WaitFor(step.delay_ms)) return finish_cancelled();
    if (cancel.cancelled()) return finish_cancelled();
    // Unique within the session, since the history only grows.
    std::string id = tc.id.empty() ? "call_" + std::to_string(request.messages.size()) + "_" +
                                         std::to_string(i + 1)
                                   : tc.id;
    int index = static_cast<int>(msg.content.size());
    msg.content.push_back(ContentBlock::ToolCall(id, tc.name, tc.arguments));
    Json::StreamWriterBuilder wb;
    wb["indentation"] = "";
    std::string args = Json::writeString(wb, tc.arguments);
    output_chars += args.size();
    StreamDelta start{DeltaKind::kToolCallStart, index, "", id, tc.name};
    StreamDelta body{DeltaKind::kToolCallArgs, index, args, id, tc.name};
    StreamDelta end{DeltaKind::kToolCallEnd, index, "", id, tc.name};
    if (!on_delta(start) || !on_delta(body) || !on_delta(end)) return finish_cancelled();
  }
  if (step.stop_reason == "max_tokens") {
    msg.stop_reason = StopReason::kMaxTokens;
  } else if (step.stop_reason == "refusal") {
    msg.stop_reason = StopReason::kRefusal;
  } else {
    msg.stop_reason = step.tool_calls.empty() ? StopReason::kEndTurn : StopReason::kToolUse;
  }
  msg.usage.input = ApproxTokens(input_chars);
  msg.usage.output = ApproxTokens(output_chars);
  return resp;
}

}  // namespace lousho::agent
