// Offline scripted provider.
#include "agent/providers/script_provider.h"

#include <span>

#include "core/message_builder.h"
#include "support/json_util.h"
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

// What the conversation asks of the script.
struct Prompt {
  std::string input;       // the last user message's text: it decides the reply
  size_t step_index = 0;   // model calls after it so far: each takes the next step
  size_t input_chars = 0;  // the size of the conversation, for the usage figures
};

Prompt ReadPrompt(const MessageView& messages) {
  Prompt p;
  size_t last_user = messages.size();
  for (size_t i = messages.size(); i-- > 0;) {
    if (messages[i].role == Role::kUser) {
      last_user = i;
      break;
    }
  }
  // The system prompt names the workspace path; leaving it out keeps counts reproducible.
  for (const auto& m : messages)
    for (const auto& b : m.content) p.input_chars += b.text.size() + b.data().size() / 8;
  if (last_user < messages.size()) {
    p.input = messages[last_user].TextContent();
    for (size_t i = last_user + 1; i < messages.size(); ++i)
      if (messages[i].role == Role::kAssistant) ++p.step_index;
  }
  return p;
}

// The step of the first reply whose pattern matches the input (a note when none does; an empty
// step when the reply has fewer steps).
config::ScriptStep StepFor(const config::Script& script, const Prompt& prompt) {
  for (const auto& r : script.replies) {
    if (!RegexMatches(r.match, prompt.input)) continue;
    return prompt.step_index < r.steps.size() ? r.steps[prompt.step_index] : config::ScriptStep{};
  }
  config::ScriptStep note;
  note.text = "(offline script '" + script.name + "' has no reply for this prompt)";
  return note;
}

// Plays one scripted step as a stream: its deltas go to on_delta (block boundaries aside) and
// into the message, paced by the step's delay. Each Play returns false once cancelled or once
// on_delta refused a delta.
class StepPlayer {
 public:
  StepPlayer(const config::ScriptStep& step, const DeltaCallback& on_delta,
             const CancelToken& cancel)
      : step_(step), on_delta_(on_delta), cancel_(cancel), forward_([this](const StreamDelta& d) {
          if (refused_ || IsBlockBoundary(d.kind)) return;
          if (!on_delta_(d)) refused_ = true;
        }) {}
  StepPlayer(const StepPlayer&) = delete;
  StepPlayer& operator=(const StepPlayer&) = delete;

  // Text or thinking, in the step's chunks.
  bool PlayText(const std::string& text, DeltaKind kind) {
    if (text.empty()) return true;
    for (auto& piece : Chunks(text, step_.chunk_size)) {
      if (!Pace()) return false;
      output_chars_ += piece.size();
      if (!Send(StreamDelta{kind, 0, std::move(piece), "", ""})) return false;
    }
    return true;
  }

  // Tool call `index` of the step, its arguments as one delta; `id` unless the script names one.
  bool PlayToolCall(const config::ScriptToolCall& tc, size_t index, const std::string& id) {
    if (!Pace()) return false;
    const int key = static_cast<int>(index);
    std::string args = WriteJson(tc.arguments);
    output_chars_ += args.size();
    return Send(StreamDelta{DeltaKind::kToolCallStart, key, "", id, tc.name}) &&
           Send(StreamDelta{DeltaKind::kToolCallArgs, key, std::move(args), id, tc.name}) &&
           Send(StreamDelta{DeltaKind::kToolCallEnd, key, "", id, tc.name});
  }

  Message Take(bool partial) { return builder_.Take(partial); }
  size_t output_chars() const { return output_chars_; }

 private:
  // The step's pause before a chunk; false when cancelled.
  bool Pace() {
    if (step_.delay_ms > 0 && cancel_.WaitFor(step_.delay_ms)) return false;
    return !cancel_.cancelled();
  }

  bool Send(StreamDelta d) {
    builder_.Apply(std::move(d), forward_);
    return !refused_;
  }

  const config::ScriptStep& step_;
  const DeltaCallback& on_delta_;
  const CancelToken& cancel_;
  const MessageBuilder::Emit forward_;  // to on_delta_, block boundaries aside
  MessageBuilder builder_;              // the message is built from the very deltas the engine sees
  bool refused_ = false;
  size_t output_chars_ = 0;
};

// How a played step ends: tool use when it calls tools, else the end of the turn, unless the
// script says max_tokens or refusal.
StopReason StepStopReason(const config::ScriptStep& step) {
  if (step.stop_reason == "max_tokens") return StopReason::kMaxTokens;
  if (step.stop_reason == "refusal") return StopReason::kRefusal;
  return step.tool_calls.empty() ? StopReason::kEndTurn : StopReason::kToolUse;
}

}  // namespace

ScriptProvider::ScriptProvider(config::Script script) : script_(std::move(script)) {}

Result<ModelResponse> ScriptProvider::Stream(const ModelRequest& request,
                                             const DeltaCallback& on_delta,
                                             const CancelToken& cancel, const RetryHooks&) {
  const Prompt prompt = ReadPrompt(request.messages);
  const std::string& input = prompt.input;
  const config::ScriptStep step = StepFor(script_, prompt);
  if (step.error_code) return MakeError(*step.error_code, step.error_message);

  StepPlayer player(step, on_delta, cancel);
  auto finish = [&](StopReason stop) {
    ModelResponse resp;
    resp.message = player.Take(/*partial=*/stop == StopReason::kCancelled);
    resp.message.assistant.Edit().provider = "script";
    resp.message.assistant.Edit().model = script_.name;
    resp.message.stop_reason = stop;
    return resp;
  };
  if (!player.PlayText(Replace(step.thinking, "{{input}}", input), DeltaKind::kThinking) ||
      !player.PlayText(Replace(step.text, "{{input}}", input), DeltaKind::kText)) {
    return finish(StopReason::kCancelled);
  }
  for (size_t i = 0; i < step.tool_calls.size(); ++i) {
    const auto& tc = step.tool_calls[i];
    // Unique within the session, since the history only grows.
    const std::string id = tc.id.empty() ? "call_" + std::to_string(request.messages.size()) + "_" +
                                               std::to_string(i + 1)
                                         : tc.id;
    if (!player.PlayToolCall(tc, i, id)) return finish(StopReason::kCancelled);
  }
  ModelResponse resp = finish(StepStopReason(step));
  resp.message.assistant.Edit().usage.input = ApproxTokens(prompt.input_chars);
  resp.message.assistant.Edit().usage.output = ApproxTokens(player.output_chars());
  return resp;
}

}  // namespace lousho::agent
