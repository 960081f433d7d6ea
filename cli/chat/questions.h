// The questions the engine asks the person at the terminal: permission to run a tool call (allow
// once / always / reject) and the `ask` tool's dialogs (select, confirm, input). Each holds the
// screen (ChatView::Hold) while it waits for a key or a line; a cancelled turn ends the wait.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/chat/view.h"
#include "core/client_services.h"
#include "support/cancel.h"

namespace lousho::cli::chat {

// Reads keys and lines from the terminal (or from a pipe, a line at a time).
class TtyReader {
 public:
  explicit TtyReader(int fd);
  // One key (without Enter on a terminal); nullopt at end of input or when `cancel` fires.
  std::optional<char> Key(const CancelToken& cancel) const;
  // One line, without its newline; nullopt at end of input or when `cancel` fires.
  std::optional<std::string> Line(const CancelToken& cancel) const;

 private:
  // Waits until `fd_` is readable; false when `cancel` fired first.
  bool Wait(const CancelToken& cancel) const;
  int fd_;
  bool tty_;
};

class ChatQuestions : public agent::PermissionPrompter, public agent::Dialogs {
 public:
  ChatQuestions(ChatView& view, int in_fd) : view_(view), reader_(in_fd) {}

  agent::PermissionDecision RequestPermission(const std::string& session_id,
                                              const agent::PermissionRequest& request,
                                              const CancelToken& cancel) override;
  Result<std::optional<std::string>> Select(const std::string& session_id, const std::string& title,
                                            const std::vector<std::string>& options,
                                            const CancelToken& cancel) override;
  Result<std::optional<bool>> Confirm(const std::string& session_id, const std::string& title,
                                      const std::string& message,
                                      const CancelToken& cancel) override;
  Result<std::optional<std::string>> Input(const std::string& session_id, const std::string& title,
                                           const std::string& placeholder,
                                           const CancelToken& cancel) override;
  Result<std::optional<std::string>> Editor(const std::string& session_id, const std::string& title,
                                            const std::string& prefill,
                                            const CancelToken& cancel) override;

  // A choice among `options` outside a turn (/resume): the index, or nullopt.
  std::optional<size_t> Pick(const std::string& title, const std::vector<std::string>& options);

 private:
  // Shows `rows` and reads a line, holding the screen.
  std::optional<std::string> AskLine(const std::vector<std::string>& rows,
                                     const CancelToken& cancel);
  ChatView& view_;
  TtyReader reader_;
};

}  // namespace lousho::cli::chat
