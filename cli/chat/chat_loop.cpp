#include "cli/chat/chat_loop.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <mutex>
#include <utility>
#include <vector>

#include "agent/builtin_commands.h"
#include "agent/mcp/servers.h"
#include "cli/chat/input.h"
#include "cli/chat/questions.h"
#include "cli/chat/view.h"
#include "support/posix.h"
#include "support/worker_pool.h"

namespace lousho::cli::chat {
namespace {

// The chat's own commands, answered here; every other slash command goes to the session.
struct OwnCommand {
  const char* name;
  const char* description;
};
constexpr OwnCommand kOwnCommands[] = {
    {"help", "List the commands and keys"},
    {"thinking", "Show thoughts whole, or collapsed to one line (toggles)"},
    {"resume", "Pick a saved session of this folder to continue"},
    {"new", "Start a new session"},
    {"exit", "Leave (also Ctrl-D, or Ctrl-C twice at an empty prompt)"},
};

std::string FormatTime(long long ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

// Drains the interrupt pipe; true when something was in it.
bool Drain(int fd) {
  char buf[16];
  return fd >= 0 && read(fd, buf, sizeof buf) > 0;
}

class ChatLoop {
 public:
  ChatLoop(host::SessionHost& host, const ChatRequest& request, ChatView& view,
           ChatQuestions& questions, LineInput& input)
      : host_(host), request_(request), view_(view), questions_(questions), input_(input) {}
  ~ChatLoop() {
    Close();
    pool_.Drain();
  }
  ChatLoop(const ChatLoop&) = delete;
  ChatLoop& operator=(const ChatLoop&) = delete;

  int Run() {
    if (Status st = Open(request_.choice); !st.ok()) {
      std::fprintf(stderr, "error: %s\n", st.error().message.c_str());
      return 1;
    }
    const Terminal& t = view_.term();
    view_.Print({t.bold() + "lousho chat" + t.reset() + " · " + host_.agent()->name});
    view_.Note(
        "Enter sends; a line ending in \\ goes on; Tab completes /commands; Ctrl-C "
        "cancels a turn; Ctrl-D leaves. /help lists the commands.");
    ShowLastExchange();
    bool interrupted_at_empty = false;
    while (!quit_) {
      view_.Print({t.dim() + view_.Status() + t.reset()});
      LineInput::Read r = input_.Get();
      if (r.outcome == LineInput::Outcome::kEnd) break;
      if (r.outcome == LineInput::Outcome::kInterrupted) {
        if (interrupted_at_empty) break;
        interrupted_at_empty = true;
        view_.Note("(Ctrl-C again to leave)");
        continue;
      }
      interrupted_at_empty = false;
      if (r.text.find_first_not_of(" \t\n") == std::string::npos) continue;
      input_.Remember(r.text);
      if (!OwnCommandRun(r.text)) Turn(r.text);
    }
    return 0;
  }

 private:
  Status Open(const host::SessionChoice& choice) {
    agent::SessionOptions so;
    so.id = host_.NewSessionId();
    so.cwd = request_.cwd;
    so.services.permissions = &questions_;
    so.services.dialogs = &questions_;
    so.pool = &pool_;
    so.sink = [this](const agent::Event& e) { view_.Event(e); };
    auto opened = host::OpenChosenSession(host_, std::move(so), request_.cwd, choice);
    if (!opened.ok()) return opened.error();
    session_ = std::move(*opened);
    if (request_.mode)
      if (Status st = session_->selection().SetMode(*request_.mode); !st.ok()) return st;
    const agent::ModelChoice model = session_->selection().model();
    view_.SetModel(model.provider_name + "/" + model.model_id);
    StartMcp();
    RefreshCommands();
    return Status::Ok();
  }

  void Close() {
    if (!session_) return;
    session_->Close([] {});
    session_->WaitIdle();
    session_.reset();
  }

  // The spec's MCP servers, before the first prompt (their tools and prompts are then offered).
  void StartMcp() {
    const agent::AgentView agent_view = agent::ViewOf(*host_.agent());
    if (agent_view.mcp_servers.empty()) return;
    agent::mcp::StartOptions mo;
    mo.cwd = request_.cwd;
    mo.roots = {request_.cwd};
    mo.client_version = LOUSHO_VERSION;
    mo.settings = agent_view.mcp;
    mo.login.on_login = [this](const std::string& server, bool waiting, const std::string& msg) {
      if (waiting) view_.Note("MCP server " + server + ": " + msg);
    };
    for (const auto& status : host::AttachMcpServers(*session_, agent_view.mcp_servers, mo)) {
      const std::string msg = agent::mcp::FailureMessage(status);
      if (!msg.empty()) view_.Note("warning: " + msg);
    }
  }

  // What Tab completes: the chat's commands, the built-in ones, then the session's (spec, files,
  // MCP prompts), as the ACP door lists them.
  void RefreshCommands() {
    std::vector<std::string> names;
    for (const auto& c : kOwnCommands) names.emplace_back(c.name);
    for (const auto& c : agent::kBuiltinCommands) names.emplace_back(c.name);
    for (const auto& c :
         agent::OfferedCommands(session_->info().commands, session_->tools().Commands()))
      names.push_back(c.name);
    input_.SetCommands(std::move(names));
  }

  void Turn(const std::string& text) {
    int done[2];
    if (PipeCloexec(done, false) != 0) return view_.Note("error: cannot create a pipe");
    std::mutex mu;
    std::optional<Result<agent::TurnResult>> result;
    const int done_write = done[1];
    Status st = session_->Prompt({agent::ContentBlock::Text(text)},
                                 [&mu, &result, done_write](Result<agent::TurnResult> r) {
                                   {
                                     std::lock_guard<std::mutex> lock(mu);
                                     result = std::move(r);
                                   }
                                   char c = 1;
                                   (void)write(done_write, &c, 1);
                                 });
    if (st.ok()) WaitForTurn(done[0]);
    session_->WaitIdle();
    close(done[0]);
    close(done[1]);
    view_.EndTurn();
    RefreshCommands();  // MCP servers may have changed their prompts
    std::lock_guard<std::mutex> lock(mu);
    if (!st.ok()) return view_.Note("error: " + st.error().message);
    if (result && !result->ok()) view_.Note("error: " + result->error().message);
  }

  // Until the turn ends; each Ctrl-C cancels it through the engine.
  void WaitForTurn(int done_fd) {
    bool told = false;
    for (;;) {
      pollfd fds[2] = {{done_fd, POLLIN, 0}, {request_.interrupt_fd, POLLIN, 0}};
      const int n = poll(fds, request_.interrupt_fd >= 0 ? 2 : 1, -1);
      if (n < 0 && errno != EINTR) return;
      if (n <= 0) continue;
      if (fds[0].revents != 0) return;
      if (Drain(request_.interrupt_fd)) {
        if (!told) view_.Note("cancelling the turn…");
        told = true;
        session_->Cancel(CancelCause::kUser);
      }
    }
  }

  // The chat's own commands; false when `text` is none of them.
  bool OwnCommandRun(const std::string& text) {
    if (text[0] != '/') return false;
    const std::string name = text.substr(1, text.find_first_of(" \t\n") - 1);
    if (name == "exit" || name == "quit") {
      quit_ = true;
    } else if (name == "help") {
      Help();
    } else if (name == "thinking") {
      view_.Note(view_.ToggleThinking() ? "thoughts are shown whole"
                                        : "thoughts are collapsed to one line");
    } else if (name == "resume") {
      Resume();
    } else if (name == "new") {
      Switch({});
    } else {
      return false;
    }
    return true;
  }

  void Help() {
    const Terminal& t = view_.term();
    std::vector<std::string> rows;
    auto row = [&](const std::string& name, const std::string& what) {
      rows.push_back("  " + t.bold() + "/" + name + t.reset() + "  " + what);
    };
    for (const auto& c : kOwnCommands) row(c.name, c.description);
    for (const auto& c : agent::kBuiltinCommands) row(c.name, c.description);
    for (const auto& c :
         agent::OfferedCommands(session_->info().commands, session_->tools().Commands()))
      row(c.name, c.description.empty() ? "(the agent's command)" : c.description);
    view_.Print(rows);
  }

  void Resume() {
    const std::vector<agent::SessionSummary> saved = host_.List(request_.cwd.string());
    std::vector<std::string> options;
    for (const auto& s : saved) {
      if (options.size() == 20) break;
      options.push_back((s.title.empty() ? "(untitled)" : s.title) + "  " +
                        FormatTime(s.updated_ms) + "  " + s.id);
    }
    if (options.empty()) return view_.Note("no saved sessions in this folder");
    const auto picked = questions_.Pick("Resume which session? (a number; empty: none)", options);
    if (!picked) return view_.Note("resume: nothing picked");
    Switch({saved[*picked].id, false});
  }

  // Leaves the session for the one `choice` names (a new one when empty).
  void Switch(const host::SessionChoice& choice) {
    const std::string previous = session_ ? session_->info().id : "";
    Close();
    if (Status st = Open(choice); !st.ok()) {
      view_.Note("error: " + st.error().message);
      if (Status back = Open({previous, false}); !back.ok()) quit_ = true;
      return;
    }
    view_.Note("session " + session_->info().id);
    ShowLastExchange();
  }

  // A continued session's last question and answer, so the user sees where it stands.
  void ShowLastExchange() {
    const std::vector<agent::Message> messages = session_->transcript().Messages();
    const agent::Message* user = nullptr;
    const agent::Message* answer = nullptr;
    for (auto it = messages.rbegin(); it != messages.rend() && user == nullptr; ++it) {
      if (it->role == agent::Role::kAssistant && answer == nullptr && !it->TextContent().empty())
        answer = &*it;
      if (it->role == agent::Role::kUser && !it->is_custom()) user = &*it;
    }
    if (user == nullptr) return;
    view_.Note("resumed (" + std::to_string(messages.size()) +
               " messages); last asked: " + user->TextContent().substr(0, 200));
    if (answer != nullptr) view_.Print(RenderMarkdown(answer->TextContent(), view_.term()));
  }

  host::SessionHost& host_;
  const ChatRequest& request_;
  ChatView& view_;
  ChatQuestions& questions_;
  LineInput& input_;
  WorkerPool pool_;  // before the session: destroyed after it
  std::shared_ptr<agent::Session> session_;
  bool quit_ = false;
};

}  // namespace

int RunChat(host::SessionHost& host, const ChatRequest& request) {
  if (host.agent()->provider_error) {
    std::fprintf(stderr, "error: %s\n", host.agent()->provider_error->ToString().c_str());
    return 1;
  }
  ChatView view(Terminal::ForFd(STDOUT_FILENO), stdout);
  ChatQuestions questions(view, STDIN_FILENO);
  LineInput input(stdin, stdout, HistoryFile(), request.interrupt_fd, view.term());
  ChatLoop loop(host, request, view, questions, input);
  return loop.Run();
}

}  // namespace lousho::cli::chat
