#include "cli/chat/input.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cwchar>

namespace lousho::cli::chat {
namespace fs = std::filesystem;

fs::path HistoryFile() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state == '/')
    return fs::path(state) / "lousho" / "history";
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') return {};
  return fs::path(home) / ".local" / "state" / "lousho" / "history";
}

std::vector<std::string> CompleteCommand(const std::string& line,
                                         const std::vector<std::string>& commands) {
  std::vector<std::string> out;
  if (line.empty() || line[0] != '/' || line.find_first_of(" \t\n") != std::string::npos)
    return out;
  const std::string prefix = line.substr(1);
  for (const auto& c : commands)
    if (c.compare(0, prefix.size(), prefix) == 0) out.push_back(c);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

LineInput::LineInput(FILE* in, FILE* out, fs::path history_file, int interrupt_fd,
                     const Terminal& term)
    : history_file_(std::move(history_file)),
      out_(out),
      in_fd_(fileno(in)),
      interrupt_fd_(interrupt_fd) {
  // The prompt's styles between \1 marks: libedit does not count them as columns.
  first_prompt_ = term.styled() ? "\1" + term.bold() + "\1› \1" + term.reset() + "\1" : "> ";
  more_prompt_ = "… ";
  el_ = el_init("lousho", in, out, stderr);
  el_set(el_, EL_CLIENTDATA, this);
  el_set(el_, EL_EDITOR, "emacs");
  el_set(el_, EL_PROMPT_ESC, &LineInput::PromptOf, '\1');
  el_set(el_, EL_GETCFN, &LineInput::GetChar);
  el_set(el_, EL_ADDFN, "lousho-complete", "complete a slash command", &LineInput::Complete);
  el_set(el_, EL_BIND, "^I", "lousho-complete", nullptr);
  history_ = history_init();
  HistEvent ev;
  history(history_, &ev, H_SETSIZE, 1000);
  history(history_, &ev, H_SETUNIQUE, 1);
  if (!history_file_.empty()) history(history_, &ev, H_LOAD, history_file_.c_str());
  el_set(el_, EL_HIST, history, history_);
}

LineInput::~LineInput() {
  el_end(el_);
  history_end(history_);
}

char* LineInput::PromptOf(EditLine* el) {
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  return const_cast<char*>(static_cast<LineInput*>(data)->prompt_.c_str());
}

unsigned char LineInput::Complete(EditLine* el, int ch) {
  (void)ch;
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  return static_cast<LineInput*>(data)->CompleteHere();
}

int LineInput::GetChar(EditLine* el, wchar_t* c) {
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  return static_cast<LineInput*>(data)->NextChar(c);
}

// One character of input, decoded from UTF-8; -1 when Ctrl-C arrived (as a signal, through the
// chat's pipe, or as a byte where the terminal does not make it one).
int LineInput::NextChar(wchar_t* c) {
  std::mbstate_t state{};
  for (;;) {
    pollfd fds[2] = {{in_fd_, POLLIN, 0}, {interrupt_fd_, POLLIN, 0}};
    const int n = poll(fds, interrupt_fd_ >= 0 ? 2 : 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (interrupt_fd_ >= 0 && fds[1].revents != 0) {
      char buf[16];
      (void)read(interrupt_fd_, buf, sizeof buf);
      interrupted_ = true;
      errno = EINTR;
      return -1;
    }
    char byte = 0;
    const ssize_t got = read(in_fd_, &byte, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 0;
    if (byte == '\x03') {
      interrupted_ = true;
      errno = EINTR;
      return -1;
    }
    const size_t r = std::mbrtowc(c, &byte, 1, &state);
    if (r == static_cast<size_t>(-2)) continue;  // more bytes of this character
    if (r == static_cast<size_t>(-1)) {
      state = {};
      *c = static_cast<unsigned char>(byte);
    }
    return 1;
  }
}

unsigned char LineInput::CompleteHere() {
  const LineInfo* li = el_line(el_);
  const std::string before(li->buffer, li->cursor);
  const std::vector<std::string> found = CompleteCommand(before, commands_);
  if (found.empty()) return CC_REFRESH_BEEP;
  const std::string typed = before.substr(1);
  if (found.size() == 1) {
    el_insertstr(el_, (found[0].substr(typed.size()) + " ").c_str());
    return CC_REFRESH;
  }
  // The longest prefix the matches share, then the list of them.
  std::string common = found[0];
  for (const auto& f : found) {
    size_t i = 0;
    while (i < common.size() && i < f.size() && common[i] == f[i]) ++i;
    common.resize(i);
  }
  if (common.size() > typed.size()) {
    el_insertstr(el_, common.substr(typed.size()).c_str());
    return CC_REFRESH;
  }
  std::fputc('\n', out_);
  for (const auto& f : found) std::fprintf(out_, "  /%s\n", f.c_str());
  return CC_REDISPLAY;
}

LineInput::Read LineInput::Get() {
  Read r;
  prompt_ = first_prompt_;
  interrupted_ = false;
  for (;;) {
    int count = 0;
    const char* line = el_gets(el_, &count);
    if (interrupted_) {
      std::fputc('\n', out_);
      std::fflush(out_);
      r.outcome = Outcome::kInterrupted;
      r.text.clear();
      return r;
    }
    if (line == nullptr || count <= 0) {
      r.outcome = r.text.empty() ? Outcome::kEnd : Outcome::kLine;
      return r;
    }
    std::string text(line, static_cast<size_t>(count));
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (!text.empty() && text.back() == '\\') {  // goes on in the next line
      text.pop_back();
      r.text += text + "\n";
      prompt_ = more_prompt_;
      continue;
    }
    r.text += text;
    r.outcome = Outcome::kLine;
    return r;
  }
}

void LineInput::Remember(const std::string& text) {
  HistEvent ev;
  history(history_, &ev, H_ENTER, text.c_str());
  if (history_file_.empty()) return;
  std::error_code ec;
  fs::create_directories(history_file_.parent_path(), ec);
  history(history_, &ev, H_SAVE, history_file_.c_str());
}

}  // namespace lousho::cli::chat
