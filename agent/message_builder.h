// The one accumulator of a streamed assistant message: builds the message from the providers'
// deltas and adds the block boundaries (start / delta / end for text and thinking).
#pragma once

#include <functional>
#include <map>
#include <string>

#include "agent/content.h"
#include "agent/provider.h"

namespace lousho::agent {

// Not thread-safe; one per streamed message.
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
  // The message so far for the history: with `partial`, tool calls whose arguments did not end
  // are left out (they must never run).
  Message Take(bool partial);

 private:
  // Index in message_.content of the block a provider index refers to, or -1.
  int Block(int provider_index) const;

  Message message_;
  int open_ = -1;                    // text/thinking block still receiving deltas
  std::map<int, int> calls_;         // provider index -> content index (tool calls)
  std::map<int, std::string> args_;  // content index -> argument fragments so far
  std::map<int, bool> ended_;        // content index -> the tool call's arguments ended
};

}  // namespace lousho::agent
