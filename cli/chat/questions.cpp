#include "cli/chat/questions.h"

#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <stop_token>

#include "support/posix.h"

namespace lousho::cli::chat {
namespace {

// A pipe written when a cancel token fires, so that poll wakes up.
class CancelWake {
 public:
  explicit CancelWake(const CancelToken& cancel) {
    if (PipeCloexec(fds_, true) != 0) fds_[0] = fds_[1] = -1;
    const int w = fds_[1];
    callback_.emplace(cancel.stop_token(), [w] {
      char c = 1;
      if (w >= 0) (void)write(w, &c, 1);
    });
  }
  ~CancelWake() {
    callback_.reset();
    for (int fd : fds_)
      if (fd >= 0) close(fd);
  }
  CancelWake(const CancelWake&) = delete;
  CancelWake& operator=(const CancelWake&) = delete;
  int fd() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
  std::optional<std::stop_callback<std::function<void()>>> callback_;
};

// The terminal without line editing or echo while a key is read (signals still arrive).
class KeyMode {
 public:
  explicit KeyMode(int fd) : fd_(fd) {
    if (tcgetattr(fd, &saved_) != 0) return;
    termios t = saved_;
    t.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    active_ = tcsetattr(fd, TCSANOW, &t) == 0;
  }
  ~KeyMode() {
    if (active_) tcsetattr(fd_, TCSANOW, &saved_);
  }
  KeyMode(const KeyMode&) = delete;
  KeyMode& operator=(const KeyMode&) = delete;

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return {};
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

}  // namespace

TtyReader::TtyReader(int fd) : fd_(fd), tty_(isatty(fd) != 0) {}

bool TtyReader::Wait(const CancelToken& cancel) const {
  CancelWake wake(cancel);
  for (;;) {
    if (cancel.cancelled()) return false;
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake.fd(), POLLIN, 0}};
    const int n = poll(fds, wake.fd() >= 0 ? 2 : 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || fds[1].revents != 0) return false;
    if (fds[0].revents != 0) return true;
  }
}

std::optional<char> TtyReader::Key(const CancelToken& cancel) const {
  if (!tty_) {
    auto line = Line(cancel);
    if (!line) return std::nullopt;
    const std::string t = Trim(*line);
    return t.empty() ? '\n' : t[0];
  }
  KeyMode mode(fd_);
  if (!Wait(cancel)) return std::nullopt;
  char c = 0;
  if (read(fd_, &c, 1) != 1) return std::nullopt;
  return c;
}

std::optional<std::string> TtyReader::Line(const CancelToken& cancel) const {
  std::string line;
  for (;;) {
    if (!Wait(cancel)) return std::nullopt;
    char c = 0;
    const ssize_t n = read(fd_, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return line.empty() ? std::nullopt : std::optional<std::string>(line);
    if (c == '\n') return line;
    line += c;
  }
}

agent::PermissionDecision ChatQuestions::RequestPermission(const std::string& session_id,
                                                           const agent::PermissionRequest& request,
                                                           const CancelToken& cancel) {
  (void)session_id;
  const Terminal& t = view_.term();
  std::vector<std::string> rows;
  rows.push_back(t.bold() + t.color(Color::kYellow) + "Allow " +
                 (request.title.empty() ? request.tool_name : request.title) + "?" + t.reset());
  if (!request.subagent.empty())
    rows.push_back(t.dim() + "  (subagent " + request.subagent + ")" + t.reset());
  for (const auto& diff : request.diffs)
    for (auto& r : view_.DiffRows(diff)) rows.push_back(std::move(r));
  rows.push_back("  " + t.bold() + "y" + t.reset() + " allow once   " + t.bold() + "a" + t.reset() +
                 " always   " + t.bold() + "n" + t.reset() + " reject   " + t.bold() + "r" +
                 t.reset() + " reject always");
  auto hold = view_.Hold();
  view_.PrintLocked(rows);
  agent::PermissionDecision decision = agent::PermissionDecision::kCancelled;
  std::string said = "cancelled";
  for (;;) {
    const auto key = reader_.Key(cancel);
    if (!key) break;
    const char k = static_cast<char>(std::tolower(static_cast<unsigned char>(*key)));
    if (k == 'y') {
      decision = agent::PermissionDecision::kAllowOnce, said = "allowed once";
    } else if (k == 'a') {
      decision = agent::PermissionDecision::kAllowAlways, said = "allowed always";
    } else if (k == 'n' || k == 27) {
      decision = agent::PermissionDecision::kRejectOnce, said = "rejected";
    } else if (k == 'r') {
      decision = agent::PermissionDecision::kRejectAlways, said = "rejected always";
    } else {
      continue;
    }
    break;
  }
  view_.PrintLocked({t.dim() + "  → " + said + t.reset()});
  view_.RedrawLocked();
  return decision;
}

std::optional<std::string> ChatQuestions::AskLine(const std::vector<std::string>& rows,
                                                  const CancelToken& cancel) {
  auto hold = view_.Hold();
  view_.PrintLocked(rows);
  std::fputs("> ", stdout);
  std::fflush(stdout);
  auto line = reader_.Line(cancel);
  if (!line) std::fputc('\n', stdout);
  view_.RedrawLocked();
  return line;
}

Result<std::optional<std::string>> ChatQuestions::Select(const std::string& session_id,
                                                         const std::string& title,
                                                         const std::vector<std::string>& options,
                                                         const CancelToken& cancel) {
  (void)session_id;
  const Terminal& t = view_.term();
  std::vector<std::string> rows{t.bold() + title + t.reset()};
  for (size_t i = 0; i < options.size(); ++i)
    rows.push_back("  " + std::to_string(i + 1) + ". " + options[i]);
  rows.push_back(t.dim() + "  a number or the text; an empty line dismisses" + t.reset());
  auto line = AskLine(rows, cancel);
  if (cancel.cancelled()) return MakeError(ErrorCode::kCancelled, "cancelled");
  if (!line) return std::optional<std::string>();
  const std::string answer = Trim(*line);
  if (answer.empty()) return std::optional<std::string>();
  char* end = nullptr;
  const long n = std::strtol(answer.c_str(), &end, 10);
  if (end != nullptr && *end == '\0' && n >= 1 && static_cast<size_t>(n) <= options.size())
    return std::optional<std::string>(options[static_cast<size_t>(n - 1)]);
  return std::optional<std::string>(answer);
}

Result<std::optional<bool>> ChatQuestions::Confirm(const std::string& session_id,
                                                   const std::string& title,
                                                   const std::string& message,
                                                   const CancelToken& cancel) {
  (void)session_id;
  const Terminal& t = view_.term();
  auto hold = view_.Hold();
  view_.PrintLocked({t.bold() + title + t.reset(), "  " + message, "  y / n"});
  std::optional<bool> answer;
  for (;;) {
    const auto key = reader_.Key(cancel);
    if (!key) break;
    const char k = static_cast<char>(std::tolower(static_cast<unsigned char>(*key)));
    if (k == 'y' || k == 'n') {
      answer = k == 'y';
      break;
    }
    if (k == 27) break;
  }
  view_.PrintLocked(
      {t.dim() + "  → " + (answer ? (*answer ? "yes" : "no") : "dismissed") + t.reset()});
  view_.RedrawLocked();
  if (cancel.cancelled()) return MakeError(ErrorCode::kCancelled, "cancelled");
  return answer;
}

Result<std::optional<std::string>> ChatQuestions::Input(const std::string& session_id,
                                                        const std::string& title,
                                                        const std::string& placeholder,
                                                        const CancelToken& cancel) {
  (void)session_id;
  const Terminal& t = view_.term();
  std::vector<std::string> rows{t.bold() + title + t.reset()};
  if (!placeholder.empty()) rows.push_back(t.dim() + "  (" + placeholder + ")" + t.reset());
  auto line = AskLine(rows, cancel);
  if (cancel.cancelled()) return MakeError(ErrorCode::kCancelled, "cancelled");
  return line;
}

Result<std::optional<std::string>> ChatQuestions::Editor(const std::string& session_id,
                                                         const std::string& title,
                                                         const std::string& prefill,
                                                         const CancelToken& cancel) {
  return Input(session_id, title, prefill, cancel);
}

std::optional<size_t> ChatQuestions::Pick(const std::string& title,
                                          const std::vector<std::string>& options) {
  CancelSource never;
  std::vector<std::string> rows{view_.term().bold() + title + view_.term().reset()};
  for (size_t i = 0; i < options.size(); ++i)
    rows.push_back("  " + std::to_string(i + 1) + ". " + options[i]);
  auto line = AskLine(rows, never.token());
  if (!line) return std::nullopt;
  char* end = nullptr;
  const std::string answer = Trim(*line);
  const long n = std::strtol(answer.c_str(), &end, 10);
  if (answer.empty() || *end != '\0' || n < 1 || static_cast<size_t>(n) > options.size())
    return std::nullopt;
  return static_cast<size_t>(n - 1);
}

}  // namespace lousho::cli::chat
