// The one accumulator of a streamed assistant message: builds the message from the providers'
// deltas and adds the block boundaries (start / delta / end for text and thinking).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/content.h"
#include "core/provider.h"

namespace lousho::agent {

// The boundary kinds a builder adds itself (a provider never sends them).
inline bool IsBlockBoundary(DeltaKind kind) {
  return kind == DeltaKind::kTextStart || kind == DeltaKind::kTextEnd ||
         kind == DeltaKind::kThinkingStart || kind == DeltaKind::kThinkingEnd;
}

// Used by the engine on the deltas a provider streams, and by every provider to build the
// message it returns, so both see the same blocks at the same indices. Tool calls are keyed by
// the provider's index (any int that tells the calls of one message apart); deltas leave with
// the content index. Not thread-safe; one per streamed message.
class MessageBuilder {
 public:
  using Emit = std::function<void(const StreamDelta&)>;

  MessageBuilder();

  // Applies one provider delta to the message, then passes it on through `emit`, preceded by the
  // boundary deltas it implies (the end of the previous text/thinking block, the start of a new
  // one). `emit` sees the message with the delta applied.
  void Apply(StreamDelta delta, const Emit& emit);
  // Ends the open text or thinking block, if any (emitting its end).
  void Close(const Emit& emit);

  const Message& message() const { return message_; }
  // The id the message is known by (its history entry's, given before the first delta).
  void SetId(std::string id) { id_ = std::move(id); }
  const std::string& id() const { return id_; }
  // The message so far for the history: with `partial`, tool calls whose arguments did not end
  // are left out (they must never run).
  Message Take(bool partial);

  // ---- What a provider knows beyond the deltas (the engine needs none of these).

  // Starts a new, empty text or thinking block, ending the open one, so the block exists even
  // when no delta follows (thinking that only carries a signature). Returns its content index;
  // deltas of its type go to it until another block starts.
  int Open(BlockType type, const Emit& emit);
  // Adds a finished thinking block the model redacted: `data` is opaque, sent back unchanged and
  // never shown, so nothing is emitted but the end of the open block. Returns its content index.
  int AddRedactedThinking(std::string data, const Emit& emit);
  // Appends to the signature of the thinking block at content index `index`.
  void AddSignature(int index, std::string_view signature);
  // The content index of the text/thinking block receiving deltas, or -1.
  int open_block() const { return open_; }

  // Names tool call `provider_index` if it has no name yet (some servers send it late).
  void NameToolCall(int provider_index, const std::string& name);
  // Ends tool call `provider_index` with the argument fragments applied so far ({} when none, a
  // raw string when they do not parse) and emits kToolCallEnd carrying the arguments as compact
  // JSON text (or that raw string). Unknown or already ended calls are left alone.
  void EndToolCall(int provider_index, const Emit& emit);
  // The provider indices of the tool calls not ended yet, ascending.
  std::vector<int> UnendedToolCalls() const;
  bool ToolCallEnded(int provider_index) const;
  // The content index of tool call `provider_index`, or -1.
  int ToolCallBlock(int provider_index) const;

 private:
  void SetArguments(int at, const std::string& text);

  Message message_;
  std::string id_;
  int open_ = -1;                    // text/thinking block still receiving deltas
  std::map<int, int> calls_;         // provider index -> content index (tool calls)
  std::map<int, std::string> args_;  // content index -> argument fragments so far
  std::map<int, bool> ended_;        // content index -> the tool call's arguments ended
};

}  // namespace lousho::agent
