// Accumulates streamed deltas into the assistant message.
#include "core/message_builder.h"

#include "core/server_tool.h"
#include "support/json_util.h"

namespace lousho::agent {

MessageBuilder::MessageBuilder() { message_.role = Role::kAssistant; }

int MessageBuilder::ToolCallBlock(int provider_index) const {
  auto it = calls_.find(provider_index);
  return it == calls_.end() ? -1 : it->second;
}

bool MessageBuilder::ToolCallEnded(int provider_index) const {
  auto it = ended_.find(ToolCallBlock(provider_index));
  return it != ended_.end() && it->second;
}

std::vector<int> MessageBuilder::UnendedToolCalls() const {
  std::vector<int> out;
  for (const auto& [provider_index, at] : calls_) {
    auto it = ended_.find(at);
    if (it == ended_.end() || !it->second) out.push_back(provider_index);
  }
  return out;
}

void MessageBuilder::Close(const Emit& emit) {
  if (open_ < 0) return;
  StreamDelta end;
  end.kind = message_.content[open_].type == BlockType::kThinking ? DeltaKind::kThinkingEnd
                                                                  : DeltaKind::kTextEnd;
  end.index = open_;
  open_ = -1;
  emit(end);
}

int MessageBuilder::Open(BlockType type, const Emit& emit) {
  Close(emit);
  const bool thinking = type == BlockType::kThinking;
  open_ = static_cast<int>(message_.content.size());
  message_.content.push_back(thinking ? ContentBlock::Thinking("") : ContentBlock::Text(""));
  StreamDelta start;
  start.kind = thinking ? DeltaKind::kThinkingStart : DeltaKind::kTextStart;
  start.index = open_;
  emit(start);
  return open_;
}

int MessageBuilder::AddRedactedThinking(std::string data, const Emit& emit) {
  Close(emit);
  ContentBlock b = ContentBlock::Thinking(std::move(data));
  b.more.Edit().redacted = true;
  message_.content.push_back(std::move(b));
  return static_cast<int>(message_.content.size()) - 1;
}

void MessageBuilder::AddSignature(int index, std::string_view signature) {
  if (index < 0 || index >= static_cast<int>(message_.content.size())) return;
  message_.content[index].more.Edit().signature += signature;
}

void MessageBuilder::NameToolCall(int provider_index, const std::string& name) {
  const int at = ToolCallBlock(provider_index);
  if (at >= 0 && message_.content[at].name().empty()) message_.content[at].more.Edit().name = name;
}

void MessageBuilder::SetArguments(int at, const std::string& text) {
  // Unparsable arguments stay a raw string so the engine can tell the model what it sent.
  auto parsed = ParseJson(text.empty() ? "{}" : text);
  message_.content[at].more.Edit().arguments = parsed.ok() ? *parsed : Json::Value(text);
  ended_[at] = true;
}

void MessageBuilder::EndToolCall(int provider_index, const Emit& emit) {
  const int at = ToolCallBlock(provider_index);
  if (at < 0 || ToolCallEnded(provider_index)) return;
  auto fragments = args_.find(at);
  SetArguments(at, fragments == args_.end() ? std::string() : fragments->second);
  const ContentBlock& b = message_.content[at];
  StreamDelta end;
  end.kind = DeltaKind::kToolCallEnd;
  end.index = at;
  end.id = b.id();
  end.name = b.name();
  end.text = StringOrJson(b.arguments());
  emit(end);
}

void MessageBuilder::Apply(StreamDelta d, const Emit& emit) {
  switch (d.kind) {
    case DeltaKind::kText:
    case DeltaKind::kThinking: {
      const BlockType type = d.kind == DeltaKind::kText ? BlockType::kText : BlockType::kThinking;
      if (open_ < 0 || message_.content[open_].type != type) Open(type, emit);
      message_.content[open_].text += d.text;
      d.index = open_;
      emit(d);
      return;
    }
    case DeltaKind::kToolCallStart: {
      Close(emit);
      const int at = static_cast<int>(message_.content.size());
      message_.content.push_back(
          ContentBlock::ToolCall(d.id, d.name, Json::Value(Json::objectValue)));
      calls_[d.index] = at;
      d.index = at;
      emit(d);
      return;
    }
    case DeltaKind::kToolCallArgs:
    case DeltaKind::kToolCallEnd: {
      const int at = ToolCallBlock(d.index);
      if (at < 0) return;  // a fragment of a call that never started: nothing to show
      if (d.kind == DeltaKind::kToolCallArgs) {
        args_[at] += d.text;
      } else {
        // The end carries the whole argument text (or none: the fragments are the whole).
        SetArguments(at, d.text.empty() ? args_[at] : d.text);
      }
      d.index = at;
      emit(d);
      return;
    }
    case DeltaKind::kServerToolStart: {
      Close(emit);
      auto args = ParseJson(d.text);
      message_.content.push_back(ContentBlock::ServerTool(
          d.id, d.name, args.ok() && args->isObject() ? *args : Json::Value(Json::objectValue)));
      d.index = static_cast<int>(message_.content.size()) - 1;
      emit(d);
      return;
    }
    case DeltaKind::kServerToolEnd: {
      // The call it ends: the last provider-run call of that id (an end without one shows nothing).
      for (size_t i = message_.content.size(); i-- > 0;) {
        ContentBlock& b = message_.content[i];
        if (b.type != BlockType::kServerTool || b.id() != d.id) continue;
        b.server.Set(ParseServerToolEnd(d.text));
        d.index = static_cast<int>(i);
        emit(d);
        return;
      }
      return;
    }
    case DeltaKind::kTextStart:
    case DeltaKind::kTextEnd:
    case DeltaKind::kThinkingStart:
    case DeltaKind::kThinkingEnd:
      return;  // boundaries are the builder's own
  }
}

Message MessageBuilder::Take(bool partial) {
  Message out = message_;
  if (partial) {
    std::vector<ContentBlock> kept;
    for (size_t i = 0; i < out.content.size(); ++i) {
      if (out.content[i].type == BlockType::kToolCall && !ended_[static_cast<int>(i)]) continue;
      kept.push_back(std::move(out.content[i]));
    }
    out.content = std::move(kept);
  }
  // A provider-run call that never got its result has nothing to show or send back.
  std::erase_if(out.content, [](const ContentBlock& b) {
    return b.type == BlockType::kServerTool && !b.server.has_value();
  });
  return out;
}

}  // namespace lousho::agent
