// Incremental Server-Sent Events parser.
#include "support/http/sse_parser.h"

#include <cstring>

#include "support/http/provider_errors.h"

namespace lousho::agent {
namespace {
// Where the first line end ("\r" or "\n") at or after `pos` is; npos when there is none. Two
// memchr scans of the line instead of find_first_of's test of every byte against the set (a
// library call a byte: the largest share of the parser's time on a stream of short events).
size_t FindLineEnd(std::string_view bytes, size_t pos) {
  const char* from = bytes.data() + pos;
  const size_t n = bytes.size() - pos;
  const void* lf = std::memchr(from, '\n', n);
  const size_t until = lf ? static_cast<size_t>(static_cast<const char*>(lf) - from) : n;
  const void* cr = std::memchr(from, '\r', until);
  if (cr) return pos + static_cast<size_t>(static_cast<const char*>(cr) - from);
  return lf ? pos + until : std::string_view::npos;
}
}  // namespace

Status SseParser::Fail(const char* what, size_t limit) {
  if (error_.empty()) {
    error_ = std::string("event stream ") + what + " over the limit of " + std::to_string(limit) +
             " bytes";
  }
  // Give the memory back now: the stream is abandoned, and the parser may outlive it a while.
  std::string().swap(line_);
  std::string().swap(data_);
  std::string().swap(event_type_);
  has_data_ = false;
  return MakeError(kProviderBadResponse, error_);
}

Status SseParser::Feed(std::string_view bytes, std::vector<SseEvent>* out) {
  if (failed()) return MakeError(kProviderBadResponse, error_);
  size_t pos = 0;
  if (skip_lf_ && !bytes.empty()) {
    // "\r" ended the previous feed; its "\n" half must not end a second (blank) line.
    if (bytes[0] == '\n') pos = 1;
    skip_lf_ = false;
  }
  while (pos < bytes.size()) {
    size_t end = FindLineEnd(bytes, pos);
    std::string_view piece =
        bytes.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    // Checked before appending, so the buffer never holds more than the cap.
    if (line_.size() + piece.size() > options_.max_line_bytes)
      return Fail("line", options_.max_line_bytes);
    if (end == std::string_view::npos) {
      line_.append(piece);
      break;
    }
    if (!EndLine(piece, out)) return MakeError(kProviderBadResponse, error_);
    pos = SkipLineEnd(bytes, end);
  }
  return Status::Ok();
}

bool SseParser::EndLine(std::string_view piece, std::vector<SseEvent>* out) {
  if (line_.empty()) return ProcessLine(piece, out);
  line_.append(piece);
  std::string line;
  line.swap(line_);
  return ProcessLine(line, out);
}

size_t SseParser::SkipLineEnd(std::string_view bytes, size_t end) {
  size_t pos = end + 1;
  if (bytes[end] != '\r') return pos;
  if (pos >= bytes.size()) {
    skip_lf_ = true;
  } else if (bytes[pos] == '\n') {
    ++pos;
  }
  return pos;
}

bool SseParser::ProcessLine(std::string_view line, std::vector<SseEvent>* out) {
  if (at_start_) {
    at_start_ = false;
    if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  }
  if (line.empty()) {
    DispatchEvent(out);
    return true;
  }
  if (line[0] == ':') return true;  // comment or keep-alive
  std::string_view field = line;
  std::string_view value;
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  return ProcessField(field, value);
}

void SseParser::DispatchEvent(std::vector<SseEvent>* out) {
  if (has_data_) {
    SseEvent ev;
    ev.event = std::move(event_type_);
    ev.data = std::move(data_);
    ev.id = last_event_id_;
    out->push_back(std::move(ev));
  }
  event_type_.clear();
  data_.clear();
  has_data_ = false;
}

bool SseParser::ProcessField(std::string_view field, std::string_view value) {
  // Over a cap: always an error (false); the parser keeps it for Feed to return.
  if (field == "data") {
    size_t grown = data_.size() + (has_data_ ? 1 : 0) + value.size();
    if (grown + event_type_.size() > options_.max_event_bytes)
      return Fail("event", options_.max_event_bytes).ok();
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    if (data_.size() + value.size() > options_.max_event_bytes)
      return Fail("event", options_.max_event_bytes).ok();
    event_type_.assign(value);
  } else if (field == "id") {
    if (value.size() > options_.max_id_bytes) return Fail("id", options_.max_id_bytes).ok();
    if (value.find('\0') == std::string_view::npos) last_event_id_.assign(value);
  } else if (field == "retry") {
    if (!value.empty() && value.size() < 10 &&
        value.find_first_not_of("0123456789") == std::string_view::npos) {
      retry_ms_ = std::stol(std::string(value));
    }
  }
  // Any other field is ignored, as the spec says.
  return true;
}

}  // namespace lousho::agent
