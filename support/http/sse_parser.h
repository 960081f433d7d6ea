// Incremental Server-Sent Events parser: bytes in (split anywhere), whole events out.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace lousho::agent {

// The most a stream may make the parser hold. Real provider events are a few KB (a large tool
// call's arguments arrive in many small events), so these only stop a broken or hostile server
// from growing memory without end; they are documented in docs/architecture.md.
inline constexpr size_t kSseMaxLineBytes = size_t{16} << 20;   // one line, without its end
inline constexpr size_t kSseMaxEventBytes = size_t{16} << 20;  // one event's data and name
// The sticky event id is copied into every event, so it gets a small cap of its own.
inline constexpr size_t kSseMaxIdBytes = 1024;

struct SseParserOptions {
  size_t max_line_bytes = kSseMaxLineBytes;
  size_t max_event_bytes = kSseMaxEventBytes;
  size_t max_id_bytes = kSseMaxIdBytes;
};

// One dispatched SSE event. `event` is empty when the stream sent no `event:` line.
struct SseEvent {
  std::string event;
  std::string data;  // the `data:` lines joined with "\n"
  std::string id;    // the last event id seen so far (sticky, as the SSE spec says)
};

// Follows the WHATWG event-stream rules: lines end in "\n", "\r\n" or "\r" (also when the "\r"
// and "\n" arrive in different feeds), ":" lines are comments, one space after the colon is
// dropped, an event is dispatched at a blank line and only if it had a data line. Bytes are
// buffered until a line is complete, so UTF-8 sequences split across feeds stay intact.
// Not thread-safe; one parser per stream.
class SseParser {
 public:
  SseParser() = default;
  explicit SseParser(SseParserOptions options) : options_(options) {}

  // Appends the events completed by `bytes` to `out`. A line, event or id over its cap fails
  // with LOUSHO_PROVIDER_BAD_RESPONSE (not retryable: the same server would send it again):
  // everything buffered is released at once and every later feed fails the same way. Events
  // completed before the offending bytes are still appended.
  Status Feed(std::string_view bytes, std::vector<SseEvent>* out);
  // The bytes of an unfinished line or event are dropped at end of stream, as the spec says;
  // this tells whether any were pending (a truncated stream).
  bool HasPendingData() const { return !line_.empty() || has_data_; }
  // Suggested reconnection delay from a `retry:` field, -1 when none was sent.
  long retry_ms() const { return retry_ms_; }
  // What the parser holds between feeds (unfinished line, pending event, sticky id).
  size_t buffered_bytes() const {
    return line_.size() + data_.size() + event_type_.size() + last_event_id_.size();
  }
  bool failed() const { return !error_.empty(); }

 private:
  // A line ended in this feed: `piece` completes the buffered start of it, if any.
  bool EndLine(std::string_view piece, std::vector<SseEvent>* out);
  // Past the line end at bytes[end] ("\n", "\r" or "\r\n"); a "\r" at the end of the feed sets
  // skip_lf_.
  size_t SkipLineEnd(std::string_view bytes, size_t end);
  bool ProcessLine(std::string_view line, std::vector<SseEvent>* out);
  // The blank line: the pending event, if it has data, goes out.
  void DispatchEvent(std::vector<SseEvent>* out);
  // One "field: value" line; false when it takes the event or the id over its cap.
  bool ProcessField(std::string_view field, std::string_view value);
  // Records the first failure ("line", "event" or "id" over `limit`) and drops the buffers.
  Status Fail(const char* what, size_t limit);

  SseParserOptions options_;
  std::string line_;           // the current, unfinished line
  bool skip_lf_ = false;       // the previous byte was "\r": a following "\n" ends nothing
  bool at_start_ = true;       // a UTF-8 BOM is only skipped at the very start
  bool has_data_ = false;      // the pending event has at least one data line
  std::string event_type_;     // pending event name
  std::string data_;           // pending data (lines joined with "\n")
  std::string last_event_id_;  // sticky across events
  long retry_ms_ = -1;
  std::string error_;  // set once a cap was exceeded; the parser stays failed
};

}  // namespace lousho::agent
