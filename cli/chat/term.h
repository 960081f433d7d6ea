// The terminal `lousho chat` draws on, through terminfo (ncurses' tinfo: setupterm, tigetstr,
// tparm): the capability strings for bold, dim, italic, underline, colour and cursor moves, and
// the width. Plain when stdout is no terminal or the terminal lacks them: every style is then
// the empty string, so the same drawing code writes plain lines.
#pragma once

#include <string>
#include <string_view>

namespace lousho::cli::chat {

enum class Color { kDefault, kRed, kGreen, kYellow, kBlue, kMagenta, kCyan, kGray };

class Terminal {
 public:
  // No styles, `width` columns.
  static Terminal Plain(int width = 80);
  // The terminal on `fd` (TERM from the environment; width from the tty, else terminfo's cols,
  // else 80); Plain when `fd` is no terminal or TERM has no entry.
  static Terminal ForFd(int fd);
  // `term`'s capabilities at `width` columns, whatever the descriptors are (tests); Plain when
  // terminfo has no entry for it.
  static Terminal Named(const std::string& term, int width);

  bool styled() const { return styled_; }
  int width() const { return width_; }
  void set_width(int width) { width_ = width; }
  // Reads the width again from the tty (after SIGWINCH); keeps it otherwise.
  void RefreshWidth(int fd);

  const std::string& bold() const { return bold_; }
  const std::string& dim() const { return dim_; }
  const std::string& italic() const { return italic_; }
  const std::string& underline() const { return underline_; }
  const std::string& reset() const { return reset_; }  // every attribute off
  std::string color(Color c) const;
  // To column 0 of the line `rows` above (0: this one), then clear to the end of the screen.
  std::string EraseUp(int rows) const;

 private:
  bool styled_ = false;
  int width_ = 80;
  std::string bold_, dim_, italic_, underline_, reset_;
  std::string setaf_;  // the colour template (tparm)
  std::string cr_, cuu_, cuu1_, ed_;
};

// Columns `text` takes (UTF-8: one per code point, escape sequences none).
int DisplayWidth(std::string_view text);

}  // namespace lousho::cli::chat
