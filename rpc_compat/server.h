// The legacy RPC door (`lousho --mode rpc`): binds the RPC command table to one session of the
// engine, turns its events into frames, and serves the host's side of ClientServices (dialogs,
// permission prompts and host tools over extension_ui_request / host_tool_call).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/session.h"
#include "host/session_host.h"
#include "rpc_compat/codec.h"
#include "rpc_compat/host_channel.h"
#include "support/cancel.h"
#include "support/transport.h"
#include "support/worker_pool.h"

namespace lousho::rpc_compat {

// How the door's current session opens: at start (the start-up flags), for new_session, for
// switch_session, for branch / fork.
struct OpenRequest {
  enum class Why { kStart, kNew, kSwitch, kFork };
  Why why = Why::kStart;
  std::string path;              // kSwitch, kStart (--session): the session file to open
  std::string parent_session;    // kNew: new_session's parentSession (may be empty)
  std::string leaf;              // kFork: the last entry the new session keeps (empty: none)
  bool continue_newest = false;  // kStart: --continue
};

// The default of ServerOptions::eof_grace_ms (`--eof-grace-ms`, LOUSHO_RPC_EOF_GRACE_MS).
inline constexpr long kDefaultEofGraceMs = 5000;

struct ServerOptions {
  std::string version;
  std::filesystem::path cwd;  // absolute
  // How long a dialog waits for the host before it resolves to its default (0: no limit).
  long ui_timeout_ms = 0;
  bool emit_title = false;  // send setTitle requests (PI_RPC_EMIT_TITLE=1)
  // True when input ended because of a stop signal: running work is cancelled at once.
  std::function<bool()> stopped;
  // After input ends (EOF), how long running work (a prompt, a bash command) may take to finish
  // before it is cancelled and Run() returns. A host that went away never reads the result, and
  // an endless command must not keep lousho and its children alive.
  long eof_grace_ms = kDefaultEofGraceMs;
  OpenRequest start;  // how the first session opens (the start-up flags)
};

// Owns the current session. Run() blocks until input ends, then rejects pending host requests,
// lets the running work finish within eof_grace_ms (or cancels it at once on a stop signal),
// cancels what is still running, waits for it to end and returns. Handlers never
// block the reader thread; the host's services (HostChannel) are thread-safe and block the
// calling worker.
class Server {
 public:
  // `host` (loaded) outlives the server.
  Server(LineTransport* transport, host::SessionHost* host, ServerOptions options);
  ~Server();

  void Run();

 private:
  // What a command answers to: its id (null: none) and type.
  struct Request {
    Json::Value id;
    std::string command;
  };

  // The command table, one line per command.
  void BindCommands();
  template <typename P>
  void Bind(const char* command, void (Server::*handler)(const Request&, const P&));
  void HandleLine(const std::string& line);

  // Writing.
  void Write(const Json::Value& frame);
  void Ok(const Request& req, const Json::Value* data = nullptr);
  void OkData(const Request& req, const Json::Value& data) { Ok(req, &data); }
  void Fail(const Request& req, const std::string& error);

  // Commands.
  void NegotiateProtocol(const Request& req, const NegotiateParams& p);
  void Prompt(const Request& req, const PromptParams& p);
  void Steer(const Request& req, const PromptParams& p);
  void FollowUp(const Request& req, const PromptParams& p);
  void Abort(const Request& req, const NoParams& p);
  void AbortAndPrompt(const Request& req, const PromptParams& p);
  void NewSession(const Request& req, const NewSessionParams& p);
  void GetState(const Request& req, const NoParams& p);
  void SetTodos(const Request& req, const TodosParams& p);
  void SetHostTools(const Request& req, const HostToolsParams& p);
  void SetModel(const Request& req, const SetModelParams& p);
  void CycleModel(const Request& req, const NoParams& p);
  void GetAvailableModels(const Request& req, const NoParams& p);
  void SetThinkingLevel(const Request& req, const LevelParams& p);
  void CycleThinkingLevel(const Request& req, const NoParams& p);
  void GetAvailableThinkingLevels(const Request& req, const NoParams& p);
  void SetSteeringMode(const Request& req, const ModeParams& p);
  void SetFollowUpMode(const Request& req, const ModeParams& p);
  void SetInterruptMode(const Request& req, const ModeParams& p);
  void SetAutoRetry(const Request& req, const EnabledParams& p);
  void AbortRetry(const Request& req, const NoParams& p);
  void Bash(const Request& req, const BashParams& p);
  void AbortBash(const Request& req, const NoParams& p);
  void GetSessionStats(const Request& req, const NoParams& p);
  void Branch(const Request& req, const EntryParams& p);
  // The new session of a branch: the history up to `leaf`; `rewound` (may be null) what the
  // files' restore did.
  void ForkAt(const Request& req, const std::shared_ptr<agent::Session>& s, const std::string& leaf,
              const std::string& text, const agent::RewindOutcome* rewound);
  void GetBranchMessages(const Request& req, const NoParams& p);
  void GetLastAssistantText(const Request& req, const NoParams& p);
  void SetSessionName(const Request& req, const NameParams& p);
  void GetMessages(const Request& req, const NoParams& p);
  void GetCommands(const Request& req, const NoParams& p);
  void GetAvailableCommands(const Request& req, const NoParams& p);
  // Session files and compaction.
  void SwitchSession(const Request& req, const PathParams& p);
  void ExportHtml(const Request& req, const PathParams& p);
  void Compact(const Request& req, const PathParams& p);
  void SetAutoCompaction(const Request& req, const EnabledParams& p);

  // Sessions and prompts.
  void AttachMcpServers(const std::shared_ptr<agent::Session>& session, bool wait);
  Result<std::shared_ptr<agent::Session>> CreateSession(const OpenRequest& request);
  Result<std::shared_ptr<agent::Session>> OpenFor(const OpenRequest& request,
                                                  agent::SessionOptions so,
                                                  const std::shared_ptr<agent::Session>& old);
  // Replaces the current session once no prompt runs, then answers `req` with {cancelled:false}.
  void ReplaceSessionWhenIdle(const Request& req, OpenRequest request);
  // Opens the session `request` names, makes it current and answers; the old one is closed first
  // unless it already is.
  void SwapSession(const Request& req, const OpenRequest& request, bool close_old);
  std::shared_ptr<agent::Session> current() const;
  // Starts a prompt; the ack is written first unless `acked`. A failure after the ack is a second
  // response with the same id.
  void StartPrompt(const Request& req, std::vector<agent::ContentBlock> content, bool acked);
  void OnPromptDone(bool aborted);
  // Runs `fn` once no prompt runs (at once when none does), on the thread that ends it.
  void WhenIdle(std::function<void()> fn);
  void SendEvent(const agent::Event& e);
  std::optional<ModelOption> FindModel(const std::string& provider, const std::string& id) const;
  ModelOption CurrentModel() const;
  // Switches the current session to an offered model; returns the error to answer, if any.
  Result<ModelOption> SwitchModel(const std::string& provider, const std::string& id);

  // After EOF: waits up to eof_grace_ms for the accepted work, returning early on a stop signal.
  // True when all of it finished.
  bool DrainWithinGrace();

  // Declared first: destroyed last, after every session that runs on it.
  WorkerPool pool_;
  LineTransport* transport_;
  host::SessionHost* host_;
  std::shared_ptr<const agent::AgentConfig> agent_;
  agent::AgentView view_;
  std::vector<ModelOption> models_;  // the host's offers in this dialect's terms
  ServerOptions options_;
  std::map<std::string, std::function<void(const Request&, const Json::Value&)>> table_;

  mutable std::mutex mu_;
  std::shared_ptr<agent::Session> session_;
  bool running_ = false;  // a prompt of the current session runs
  std::vector<std::function<void()>> idle_waiters_;
  std::shared_ptr<CancelSource> bash_;               // the running bash command's
  std::vector<std::function<void()>> bash_waiters_;  // run once it has answered
  // The sessions' services: dialogs, permission prompts and host tools.
  HostChannel channel_{[this](const Json::Value& frame) { Write(frame); }, options_.ui_timeout_ms};
};

}  // namespace lousho::rpc_compat
