// Markdown to terminal lines for `lousho chat`: cmark parses, the renderer walks its tree and
// wraps each block at the terminal's width (code blocks kept as written, cut where too long),
// with terminfo's styles (bold, italic, dim, colour) or, on a plain terminal, none at all.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/chat/term.h"

namespace lousho::cli::chat {

// The whole of `markdown`, one string per screen row (no newline), blocks separated by a blank
// row; no row is wider than term.width() - 1 columns.
std::vector<std::string> RenderMarkdown(std::string_view markdown, const Terminal& term);

// A message as it streams in: the blocks that are complete (another block began after them)
// are rendered once and handed out; the block still growing is rendered anew on demand.
class MarkdownStream {
 public:
  explicit MarkdownStream(const Terminal& term) : term_(term) {}
  void Append(std::string_view text);
  // The rows of blocks completed since the last call (a blank row before each but the first).
  std::vector<std::string> TakeCompleted();
  // The rows of the block still growing (as they would look if it ended now).
  std::vector<std::string> Tail() const;
  // Ends the message: the rows not handed out yet.
  std::vector<std::string> Finish();
  bool empty() const { return source_.empty() && !emitted_any_; }

 private:
  const Terminal& term_;
  std::string source_;  // from the first block not handed out yet
  bool emitted_any_ = false;
};

}  // namespace lousho::cli::chat
