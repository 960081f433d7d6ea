// `lousho run`'s progress on stderr, for a person watching a script: one line per tool call
// (its title and how it ended), retries, compactions, warnings and refusals; on a terminal a
// one-line spinner saying what runs now, cleared before every other line. The answer itself goes
// to stdout (RunPrompt), never here.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>

#include "core/events.h"
#include "local/permission_gate.h"

namespace lousho::local {

// Thread-safe: events come from the session's worker, refusals from tool threads, Tick from the
// thread that waits for the run.
class ProgressPrinter {
 public:
  // `spinner`: stderr is a terminal (a line rewritten in place with a carriage return).
  ProgressPrinter(FILE* err, bool spinner);

  void Event(const agent::Event& event);
  void Refused(const Refusal& refusal);
  // A line of the run's own ("cancelling: Ctrl-C again to exit").
  void Note(const std::string& text);
  // Advances the spinner (no-op without one or while nothing runs).
  void Tick();
  // Clears the spinner for good.
  void Finish();

 private:
  struct Visitor;
  void LineLocked(const std::string& text);
  void ClearLocked();
  void DrawLocked();

  FILE* err_;
  const bool spinner_;
  std::mutex mu_;
  std::string activity_;  // what the spinner says; empty: nothing runs
  size_t frame_ = 0;
  size_t drawn_ = 0;  // characters of the spinner line on screen
  bool finished_ = false;
};

// The one-line summary of a tool call's end ("✓ Read notes.txt", "✗ bash: exit 1: ...").
std::string ToolLine(const std::string& title, bool is_error, const std::string& error_text);

}  // namespace lousho::local
