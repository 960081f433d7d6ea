// A command's output as the editor is shown it: the capped tail, and the throttled live view.
#include "agent/tools/live_output.h"

#include <utility>

namespace lousho::agent::tools {
namespace {

// How many bytes at the end of s begin a UTF-8 sequence that is not complete yet (0 to 3).
size_t IncompleteUtf8Suffix(std::string_view s) {
  for (size_t back = 1; back <= 4 && back <= s.size(); ++back) {
    const auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    size_t need = 1;
    if ((c & 0xE0) == 0xC0) {
      need = 2;
    } else if ((c & 0xF0) == 0xE0) {
      need = 3;
    } else if ((c & 0xF8) == 0xF0) {
      need = 4;
    }
    return back < need ? back : 0;
  }
  return 0;
}

// Drops the head of *s past 2 × keep bytes, keeping its last `keep` (never splitting a UTF-8
// sequence); returns how many bytes went. The factor 2 keeps the copying linear.
size_t KeepTail(std::string* s, size_t keep) {
  if (s->size() <= 2 * keep) return 0;
  const size_t start = Utf8SuffixStart(*s, keep);
  s->erase(0, start);
  return start;
}

}  // namespace

std::string CappedOutput(const std::string& output, bool dropped_before, OutputCap cap, bool* cut) {
  size_t kept = 0, total = 0;
  std::string text = TailLines(output, cap, &kept, &total);
  const bool was_cut = dropped_before || kept < total;
  if (cut) *cut = was_cut;
  std::string body;
  if (was_cut) {
    body = "[Output truncated: showing the last " + std::to_string(kept) + " lines" +
           (dropped_before ? "" : " of " + std::to_string(total)) + "]\n";
  }
  body += text.empty() && !was_cut ? "(no output)" : text;
  return body;
}

LiveOutput::LiveOutput(OutputCap cap, std::chrono::milliseconds interval, Sink sink)
    : cap_(cap), interval_(interval), sink_(std::move(sink)) {}

bool LiveOutput::Due(Clock::time_point now) const { return !last_ || now - *last_ >= interval_; }

void LiveOutput::Append(std::string_view chunk, Clock::time_point now) {
  if (chunk.empty()) return;
  tail_.append(chunk);
  if (KeepTail(&tail_, cap_.max_bytes) > 0) tail_dropped_ = true;
  delta_.append(chunk);
  delta_dropped_ += KeepTail(&delta_, cap_.max_bytes);
  Tick(now);
}

void LiveOutput::Tick(Clock::time_point now) {
  const size_t ready = delta_.size() - IncompleteUtf8Suffix(delta_);
  if (ready > 0 && Due(now)) Emit(ready, now);
}

void LiveOutput::Flush() {
  if (!delta_.empty()) Emit(delta_.size(), std::nullopt);
}

void LiveOutput::Emit(size_t delta_bytes, std::optional<Clock::time_point> now) {
  std::string delta;
  if (delta_dropped_ > 0) {
    // The bytes in between were too many to show: their tail, and how much is left out.
    const size_t start =
        Utf8SuffixStart(std::string_view(delta_).substr(0, delta_bytes), cap_.max_bytes);
    delta = "[… " + std::to_string(delta_dropped_ + start) + " bytes of output not shown …]\n";
    delta.append(delta_, start, delta_bytes - start);
  } else {
    delta = delta_.substr(0, delta_bytes);
  }
  delta_.erase(0, delta_bytes);
  delta_dropped_ = 0;
  // What is shown ends where the delta does: a split UTF-8 sequence waits for its end.
  const std::string shown =
      CappedOutput(tail_.substr(0, tail_.size() - delta_.size()), tail_dropped_, cap_, nullptr);
  if (now) last_ = now;
  sink_(shown, delta);
}

}  // namespace lousho::agent::tools
