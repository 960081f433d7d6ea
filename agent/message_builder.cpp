// Accumulates streamed deltas into the assistant message.
#include "agent/message_builder.h"

#include "support/json_util.h"

namespace lousho::agent {

MessageBuilder::MessageBuilder() { message_.role = Role::kAssistant; }

int MessageBuilder::Block(int provider_index) const {
  auto it = calls_.find(provider_index);
  return it == calls_.end() ? -1 : it->second;
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

void MessageBuilder::Apply(StreamDelta d, const Emit& emit) {
  switch (d.kind) {
    case DeltaKind::kText:
    case DeltaKind::kThinking: {
      const BlockType type = d.kind == DeltaKind::kText ? BlockType::kText : BlockType::kThinking;
      if (open_ >= 0 && message_.content[open_].type != type) Close(emit);
      if (open_ < 0) {
        open_ = static_cast<int>(message_.content.size());
        message_.content.push_back(type == BlockType::kText ? ContentBlock::Text("")
                                                            : ContentBlock::Thinking(""));
        StreamDelta start;
        start.kind = type == BlockType::kText ? DeltaKind::kTextStart : DeltaKind::kThinkingStart;
        start.index = open_;
        emit(start);
      }
      ContentBlock& b = message_.content[open_];
      b.text += d.text;
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
      const int at = Block(d.index);
      if (at < 0) return;  // a fragment of a call that never started: nothing to show
      if (d.kind == DeltaKind::kToolCallArgs) {
        args_[at] += d.text;
      } else {
        // The end carries the whole argument text; unparsable arguments stay a raw string so
        // the engine can tell the model what it sent.
        const std::string& text = d.text.empty() ? args_[at] : d.text;
        auto parsed = ParseJson(text.empty() ? "{}" : text);
        message_.content[at].arguments = parsed.ok() ? *parsed : Json::Value(text);
        ended_[at] = true;
      }
      d.index = at;
      emit(d);
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
  return out;
}

}  // namespace lousho::agent
