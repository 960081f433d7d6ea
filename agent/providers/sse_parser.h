// Incremental Server-Sent Events parser: bytes in (split anywhere), whole events out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lousho::agent {

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
  // Appends the events completed by `bytes` to `out`.
  void Feed(std::string_view bytes, std::vector<SseEvent>* out);
  // The bytes of an unfinished line or event are dropped at end of stream, as the spec says;
  // this tells whether any were pending (a truncated stream).
  bool HasPendingData() const { return !line_.empty() || has_data_; }
  // Suggested reconnection delay from a `retry:` field, -1 when none was sent.
  long retry_ms() const { return retry_ms_; }

 private:
  void ProcessLine(std::string_view line, std::vector<SseEvent>* out);

  std::string line_;           // the current, unfinished line
  bool skip_lf_ = false;       // the previous byte was "\r": a following "\n" ends nothing
  bool at_start_ = true;       // a UTF-8 BOM is only skipped at the very start
  bool has_data_ = false;      // the pending event has at least one data line
  std::string event_type_;     // pending event name
  std::string data_;           // pending data (lines joined with "\n")
  std::string last_event_id_;  // sticky across events
  long retry_ms_ = -1;
};

}  // namespace lousho::agent
