// `lousho chat [SPEC]`: the interactive terminal client on the session engine (cli/chat/,
// docs/chat.md). SPEC is looked up as `lousho acp` and `lousho run` do.
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <csignal>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/chat/chat_loop.h"
#include "cli/command.h"
#include "cli/session_flags.h"
#include "host/session_choice.h"
#include "host/session_host.h"
#include "support/env.h"
#include "support/posix.h"

namespace lousho::cli {
namespace {
namespace fs = std::filesystem;

struct ChatOptions : SessionFlags {
  std::string spec;
};

int g_interrupt_write = -1;

void OnInterrupt(int) {
  const int saved = errno;
  char c = 1;
  if (g_interrupt_write >= 0) (void)write(g_interrupt_write, &c, 1);
  errno = saved;
}

// Ctrl-C (SIGINT), each time, into a pipe the chat reads: it cancels a turn or ends a read.
int InstallInterrupt() {
  int fds[2];
  if (PipeCloexec(fds, true) != 0) return -1;
  g_interrupt_write = fds[1];
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  return fds[0];
}

int RunChatCommand(const ChatOptions& o) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (ec) return Fail(MakeError(ErrorCode::kUsage, "cannot read the working directory"));
  const host::SessionChoice choice{o.session, o.continue_session};
  if (Status st = host::CheckSessionChoice(choice, o.no_session); !st.ok()) return Fail(st.error());
  chat::ChatRequest request;
  request.cwd = cwd;
  request.choice = choice;
  auto mode = ModeFlag(o);
  if (!mode.ok()) return Fail(mode.error());
  request.mode = *mode;
  std::setlocale(LC_CTYPE, "");  // libedit reads UTF-8 input as the terminal sends it
  host::SessionHost host(HostOptionsFor(o, o.spec, cwd));
  if (Status loaded = host.Load(); !loaded.ok()) return Fail(loaded.error());
  request.interrupt_fd = InstallInterrupt();
  return chat::RunChat(host, request);
}

}  // namespace

Subcommand AddChatCommand(CLI::App& app) {
  auto o = std::make_shared<ChatOptions>();
  CLI::App* chat = app.add_subcommand(
      "chat", "talk with the agent in this terminal (interactive; docs/chat.md)");
  chat->add_option("spec", o->spec,
                   "the agent spec (as `lousho acp` takes it; default: the same lookup)");
  chat->add_option("--agent", o->spec, "the agent spec, as the positional argument");
  AddSessionFlags(chat, *o);
  return {chat, [o] { return RunChatCommand(*o); }, 2};
}

}  // namespace lousho::cli
