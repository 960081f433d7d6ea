// The prompt of `lousho chat`, with libedit: line editing (emacs keys), the history of inputs
// (kept in a file per user, read at start, written after each input), completion of slash
// commands with Tab, and multi-line input (a line ending in `\` goes on). Ctrl-C ends the read
// as kInterrupted, Ctrl-D on an empty line as kEnd.
#pragma once

#include <histedit.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/chat/term.h"

namespace lousho::cli::chat {

// The history file: $XDG_STATE_HOME/lousho/history, else ~/.local/state/lousho/history; empty
// when there is no home.
std::filesystem::path HistoryFile();

// The completions of `line` (the text before the cursor): the names of `commands` (without '/')
// that start with what follows the '/', when the line is one word starting with '/'.
std::vector<std::string> CompleteCommand(const std::string& line,
                                         const std::vector<std::string>& commands);

class LineInput {
 public:
  enum class Outcome { kLine, kInterrupted, kEnd };
  struct Read {
    Outcome outcome = Outcome::kEnd;
    std::string text;  // kLine: the input, lines joined with '\n'
  };

  // `interrupt_fd`: readable when Ctrl-C was pressed (the chat's SIGINT pipe); drained here.
  LineInput(FILE* in, FILE* out, std::filesystem::path history_file, int interrupt_fd,
            const Terminal& term);
  ~LineInput();
  LineInput(const LineInput&) = delete;
  LineInput& operator=(const LineInput&) = delete;

  void SetCommands(std::vector<std::string> names) { commands_ = std::move(names); }
  Read Get();
  // Adds `text` to the history (and its file).
  void Remember(const std::string& text);

 private:
  static char* PromptOf(EditLine* el);
  static unsigned char Complete(EditLine* el, int ch);
  static int GetChar(EditLine* el, wchar_t* c);
  unsigned char CompleteHere();
  int NextChar(wchar_t* c);

  EditLine* el_ = nullptr;
  History* history_ = nullptr;
  std::filesystem::path history_file_;
  FILE* out_;
  int in_fd_;
  int interrupt_fd_;
  bool interrupted_ = false;
  std::string prompt_;
  std::string first_prompt_, more_prompt_;
  std::vector<std::string> commands_;
};

}  // namespace lousho::cli::chat
