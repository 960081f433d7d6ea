// What `lousho chat` shows of the engine's events: the assistant's Markdown as it streams (the
// growing block redrawn in a live area under what is final), thinking dimmed (collapsed to one
// line once it ends, unless /thinking shows it whole), tool calls with their status and diffs,
// retries, compactions, warnings; and what the status line says (model, context, cost).
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cli/chat/markdown.h"
#include "cli/chat/term.h"
#include "core/events.h"

namespace lousho::cli::chat {

// Thread-safe: events arrive on the session's worker, notes and questions from other threads.
class ChatView {
 public:
  ChatView(Terminal term, FILE* out);

  const Terminal& term() const { return term_; }
  void Event(const agent::Event& event);
  // Rows of the chat's own, made final.
  void Print(const std::vector<std::string>& rows);
  void Note(const std::string& text);  // one dim row (wrapped)
  // Ends what streams (a cancelled turn's message) and shows the status line.
  void EndTurn();
  // The status line: model, context use, cost.
  std::string Status() const;
  void SetModel(const std::string& model);
  // /thinking: whole thoughts from now on (and the last one shown now), or one line each.
  bool ToggleThinking();
  // Holds the screen for a question: the live area is cleared and nothing else draws until the
  // lock is released (then Redraw()).
  std::unique_lock<std::mutex> Hold();
  void RedrawLocked();
  // Rows made final while the screen is held.
  void PrintLocked(const std::vector<std::string>& rows) { CommitLocked(rows); }
  // A file's changes: its path, then the changed lines (+ / -), a row each.
  std::vector<std::string> DiffRows(const agent::FileDiff& diff) const;

 private:
  struct Visitor;
  void SetLiveLocked(std::vector<std::string> rows);
  void CommitLocked(const std::vector<std::string>& rows);
  void EraseLiveLocked();
  void DrawLiveLocked();
  void UpdateLiveLocked();
  void EndThinkingLocked();
  void EndMessageLocked(const agent::Message* message);
  std::vector<std::string> ThinkingRowsLocked(bool whole) const;
  std::vector<std::string> Wrap(const std::string& text, const std::string& style) const;

  Terminal term_;
  FILE* out_;
  mutable std::mutex mu_;
  std::vector<std::string> live_;  // rows drawn under the final ones (styled terminals only)
  std::unique_ptr<MarkdownStream> message_;
  std::string thinking_;       // the thinking of the message streaming
  std::string last_thinking_;  // the last whole thought (for /thinking)
  bool thinking_whole_ = false;
  std::map<std::string, std::string> running_;  // tool call id -> its row
  std::string model_;
  long long context_used_ = 0, context_size_ = 0;
  double cost_ = 0;
};

}  // namespace lousho::cli::chat
