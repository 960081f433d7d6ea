// A command's output as the editor is shown it: cut to the tail the result keeps, and, while the
// command runs, handed on at most once per interval with the bytes that are new since.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "agent/tools/tool_util.h"

namespace lousho::agent::tools {

// `output` cut to `cap`, its tail kept, after a first line saying so when anything was cut
// ("[Output truncated: showing the last N lines of M]"; without "of M" when `dropped_before`:
// bytes were dropped before `output` begins, so the total is not known). "(no output)" for no
// output at all. *cut (may be null) says whether anything was cut.
std::string CappedOutput(const std::string& output, bool dropped_before, OutputCap cap, bool* cut);

// How often a running command's output reaches the editor at most: 10 updates a second.
inline constexpr std::chrono::milliseconds kLiveOutputInterval{100};

// Collects the output of a running command and hands it to `sink` at most once per `interval`:
// the first piece at once, later ones when the interval since the last hand-off has passed
// (Append, or Tick when no output comes), and what still waits at the end (Flush). Each
// hand-off gets the output so far as the result would show it (CappedOutput) and the bytes new
// since the last hand-off (`delta`; when more than cap.max_bytes came in between, their tail,
// after a line saying how many bytes were left out). A UTF-8 sequence split between two pieces
// waits for its end. Memory stays within a few times cap.max_bytes whatever the command writes.
// Not thread-safe: one command's reader calls it.
class LiveOutput {
 public:
  using Clock = std::chrono::steady_clock;
  using Sink = std::function<void(const std::string& shown, const std::string& delta)>;

  LiveOutput(OutputCap cap, std::chrono::milliseconds interval, Sink sink);

  // A piece of output arrived at `now`.
  void Append(std::string_view chunk, Clock::time_point now);
  // Time passed without output: hands on what waits once the interval is over.
  void Tick(Clock::time_point now);
  // The command ended: hands on whatever still waits.
  void Flush();

 private:
  void Emit(size_t delta_bytes, std::optional<Clock::time_point> now);
  bool Due(Clock::time_point now) const;

  OutputCap cap_;
  std::chrono::milliseconds interval_;
  Sink sink_;
  std::string tail_;           // the last bytes of the output (at most 2 × cap.max_bytes)
  bool tail_dropped_ = false;  // bytes before tail_ were dropped
  std::string delta_;          // not handed on yet (its tail, at most 2 × cap.max_bytes)
  size_t delta_dropped_ = 0;   // bytes dropped from before delta_ since the last hand-off
  std::optional<Clock::time_point> last_;  // the last hand-off
};

}  // namespace lousho::agent::tools
