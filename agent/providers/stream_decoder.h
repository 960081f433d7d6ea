// The interface the HTTP driver uses to turn one provider's SSE events into deltas and a message.
#pragma once

#include "core/content.h"
#include "core/message_builder.h"
#include "core/provider.h"
#include "support/http/sse_parser.h"
#include "support/status.h"

namespace lousho::agent {

// Decodes one response stream. Pure (no I/O), so it is tested on byte-exact captures.
// Not thread-safe; one decoder per attempt.
class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  // Consumes one SSE event and emits the deltas it carries. Returns an error for malformed data
  // or an error event inside the stream. When `emit` returns false decoding stops: aborted()
  // turns true and further events are ignored.
  virtual Status Consume(const SseEvent& event, const DeltaCallback& emit) = 0;
  // The end marker arrived ([DONE], message_stop): nothing more is needed from the connection.
  virtual bool done() const = 0;
  // The stream got far enough to be a valid answer if the connection closes now (a finish or
  // stop reason was seen even if the end marker is missing).
  virtual bool complete() const = 0;
  bool aborted() const { return aborted_; }
  // Builds the assistant message from what was decoded. With `partial`, tool calls whose
  // arguments did not finish are left out (they must never run).
  virtual Message TakeMessage(bool partial) = 0;

 protected:
  // Where the builder's deltas go: on to `emit` until it refuses one (which marks the decoder
  // aborted), all but the block boundaries, which the engine adds itself.
  MessageBuilder::Emit Forward(const DeltaCallback& emit) {
    return [this, &emit](const StreamDelta& d) {
      if (aborted_ || IsBlockBoundary(d.kind)) return;
      if (!emit(d)) aborted_ = true;
    };
  }
  // Applies one delta to the message and passes it on; false once the decoder is aborted.
  bool Apply(StreamDelta d, const DeltaCallback& emit) {
    builder_.Apply(std::move(d), Forward(emit));
    return !aborted_;
  }

  // The message being decoded: the same accumulator the engine uses.
  MessageBuilder builder_;
  bool aborted_ = false;
};

}  // namespace lousho::agent
