#include "cli/chat/term.h"

#include <sys/ioctl.h>
#include <term.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

namespace lousho::cli::chat {
namespace {

// terminfo keeps the loaded terminal and tparm's result in globals.
std::mutex& TermMutex() {
  static std::mutex mu;
  return mu;
}

std::string* g_sink = nullptr;  // where Emit writes, under TermMutex
int Emit(int c) {
  g_sink->push_back(static_cast<char>(c));
  return c;
}

// tigetstr's answer names a string: not null (absent) nor (char*)-1 (no such capability).
bool Present(const char* s) { return s != nullptr && reinterpret_cast<std::intptr_t>(s) != -1; }

// A capability string as the terminal wants it sent (padding applied by tputs); empty when the
// terminal has none. Under TermMutex.
std::string Expand(const char* text) {
  if (!Present(text)) return {};
  std::string out;
  g_sink = &out;
  tputs(text, 1, Emit);
  g_sink = nullptr;
  return out;
}

std::string Cap(const char* name) { return Expand(tigetstr(const_cast<char*>(name))); }

std::string Raw(const char* name) {
  const char* s = tigetstr(const_cast<char*>(name));
  return Present(s) ? std::string(s) : std::string();
}

// A parameterised capability with one number (tparm with nine parameters: the form every
// curses has, macOS's older one included). Under TermMutex.
const char* Param(const std::string& cap, long n) {
  return tparm(const_cast<char*>(cap.c_str()), n, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L);
}

int TtyWidth(int fd) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

}  // namespace

Terminal Terminal::Plain(int width) {
  Terminal t;
  t.width_ = width;
  return t;
}

Terminal Terminal::Named(const std::string& term, int width) {
  std::lock_guard<std::mutex> lock(TermMutex());
  int err = 0;
  if (term.empty() || setupterm(term.c_str(), STDOUT_FILENO, &err) != 0) return Plain(width);
  Terminal t;
  t.width_ = width;
  t.bold_ = Cap("bold");
  t.dim_ = Cap("dim");
  t.italic_ = Cap("sitm");
  t.underline_ = Cap("smul");
  t.reset_ = Cap("sgr0");
  t.setaf_ = Raw("setaf");
  t.cr_ = Cap("cr");
  t.cuu_ = Raw("cuu");
  t.cuu1_ = Cap("cuu1");
  t.ed_ = Cap("ed");
  // Without a way to turn styles off or to go back up, the terminal gets plain lines.
  t.styled_ = !t.reset_.empty() && !t.cr_.empty() && !t.ed_.empty() &&
              (!t.cuu_.empty() || !t.cuu1_.empty());
  if (!t.styled_) return Plain(width);
  return t;
}

Terminal Terminal::ForFd(int fd) {
  const int tty_width = isatty(fd) != 0 ? TtyWidth(fd) : 0;
  if (isatty(fd) == 0) return Plain(80);
  const char* term = std::getenv("TERM");
  Terminal t = Named(term != nullptr ? term : "", tty_width > 0 ? tty_width : 80);
  if (tty_width == 0 && t.styled_) {
    std::lock_guard<std::mutex> lock(TermMutex());
    const int cols = tigetnum(const_cast<char*>("cols"));
    if (cols > 0) t.width_ = cols;
  }
  return t;
}

void Terminal::RefreshWidth(int fd) {
  if (const int w = TtyWidth(fd); w > 0) width_ = w;
}

std::string Terminal::color(Color c) const {
  if (!styled_ || setaf_.empty() || c == Color::kDefault) return {};
  static constexpr int kNumbers[] = {0, 1, 2, 3, 4, 5, 6, 8};
  int n = kNumbers[static_cast<int>(c)];
  std::lock_guard<std::mutex> lock(TermMutex());
  if (c == Color::kGray && tigetnum(const_cast<char*>("colors")) < 16) n = 7;
  return Expand(Param(setaf_, n));
}

std::string Terminal::EraseUp(int rows) const {
  if (!styled_) return {};
  std::string out = cr_;
  if (rows > 0) {
    if (!cuu_.empty()) {
      std::lock_guard<std::mutex> lock(TermMutex());
      out += Expand(Param(cuu_, rows));
    } else {
      for (int i = 0; i < rows; ++i) out += cuu1_;
    }
  }
  return out + ed_;
}

int DisplayWidth(std::string_view text) {
  int w = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0x1b) {  // an escape sequence: CSI up to its final byte, else the next byte
      if (i + 1 < text.size() && text[i + 1] == '[') {
        i += 2;
        while (i < text.size() && (static_cast<unsigned char>(text[i]) < 0x40 ||
                                   static_cast<unsigned char>(text[i]) > 0x7e))
          ++i;
      } else if (i + 1 < text.size() &&
                 std::string_view("()*+").find(text[i + 1]) != std::string_view::npos) {
        i += 2;  // a character set choice: ESC ( B
      } else {
        ++i;
      }
      continue;
    }
    if ((c & 0xC0) != 0x80 && c >= 0x20) ++w;
  }
  return w;
}

}  // namespace lousho::cli::chat
