// RPC door: the command table, reading and writing lines, the current session (opening,
// switching) and its prompts.
#include "rpc_compat/server.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "agent/history.h"
#include "agent/host_tool.h"
#include "agent/mcp/servers.h"
#include "agent/shell_command.h"
#include "host/session_choice.h"
#include "rpc_compat/commands.h"
#include "support/json_util.h"
#include "support/log.h"
#include "support/text.h"

namespace lousho::rpc_compat {
namespace {

Json::Value Obj() { return Json::Value(Json::objectValue); }

constexpr char kBusyPrompt[] =
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the "
    "message.";
constexpr char kBusyEngine[] =
    "Agent is already processing. Use steer() or followUp() to queue messages, or wait for "
    "completion.";

// The host's offers in this dialect's terms (a model the catalogue does not name shows its id).
std::vector<ModelOption> RpcModelsOf(const std::vector<host::ModelOffer>& offers) {
  std::vector<ModelOption> out;
  out.reserve(offers.size());
  for (const auto& o : offers)
    out.push_back({o.option.provider, o.option.model_id,
                   o.catalog_name.empty() ? o.option.model_id : o.catalog_name,
                   o.api == "openai-chat" ? "openai-completions" : o.api, o.base_url, o.reasoning,
                   o.images, o.input_price, o.output_price, o.cache_read_price, o.cache_write_price,
                   o.context_window, o.max_tokens});
  return out;
}

}  // namespace

Server::Server(LineTransport* transport, host::SessionHost* host, ServerOptions options)
    : transport_(transport),
      host_(host),
      agent_(host->agent()),
      view_(agent::ViewOf(*agent_)),
      models_(RpcModelsOf(host->models())),
      options_(std::move(options)) {
  BindCommands();
}

Server::~Server() = default;

template <typename P>
void Server::Bind(const char* command, void (Server::*handler)(const Request&, const P&)) {
  table_[command] = [this, handler](const Request& req, const Json::Value& cmd) {
    Result<P> params = P::FromJson(cmd);
    if (!params.ok())
      return Fail(req, "Invalid " + req.command + " command: " + params.error().message);
    (this->*handler)(req, *params);
  };
}

// The whole RPC surface, one line per command.
void Server::BindCommands() {
  Bind(command::kNegotiateProtocol, &Server::NegotiateProtocol);
  Bind(command::kPrompt, &Server::Prompt);
  Bind(command::kSteer, &Server::Steer);
  Bind(command::kFollowUp, &Server::FollowUp);
  Bind(command::kAbort, &Server::Abort);
  Bind(command::kAbortAndPrompt, &Server::AbortAndPrompt);
  Bind(command::kNewSession, &Server::NewSession);
  Bind(command::kGetState, &Server::GetState);
  Bind(command::kSetTodos, &Server::SetTodos);
  Bind(command::kSetHostTools, &Server::SetHostTools);
  Bind(command::kSetModel, &Server::SetModel);
  Bind(command::kCycleModel, &Server::CycleModel);
  Bind(command::kGetAvailableModels, &Server::GetAvailableModels);
  Bind(command::kSetThinkingLevel, &Server::SetThinkingLevel);
  Bind(command::kCycleThinkingLevel, &Server::CycleThinkingLevel);
  Bind(command::kGetAvailableThinkingLevels, &Server::GetAvailableThinkingLevels);
  Bind(command::kSetSteeringMode, &Server::SetSteeringMode);
  Bind(command::kSetFollowUpMode, &Server::SetFollowUpMode);
  Bind(command::kSetInterruptMode, &Server::SetInterruptMode);
  Bind(command::kCompact, &Server::Compact);
  Bind(command::kSetAutoCompaction, &Server::SetAutoCompaction);
  Bind(command::kSetAutoRetry, &Server::SetAutoRetry);
  Bind(command::kAbortRetry, &Server::AbortRetry);
  Bind(command::kBash, &Server::Bash);
  Bind(command::kAbortBash, &Server::AbortBash);
  Bind(command::kGetSessionStats, &Server::GetSessionStats);
  Bind(command::kExportHtml, &Server::ExportHtml);
  Bind(command::kSwitchSession, &Server::SwitchSession);
  Bind(command::kBranch, &Server::Branch);
  Bind(command::kFork, &Server::Branch);
  Bind(command::kGetBranchMessages, &Server::GetBranchMessages);
  Bind(command::kGetForkMessages, &Server::GetBranchMessages);
  Bind(command::kGetLastAssistantText, &Server::GetLastAssistantText);
  Bind(command::kSetSessionName, &Server::SetSessionName);
  Bind(command::kGetMessages, &Server::GetMessages);
  Bind(command::kGetCommands, &Server::GetCommands);
  Bind(command::kGetAvailableCommands, &Server::GetAvailableCommands);
}

void Server::Run() {
  auto created = CreateSession(options_.start);
  if (created.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    session_ = *created;
  } else {
    log::Error("cannot create the session: " + created.error().message);
  }
  Write(ReadyFrame());
  if (created.ok()) AttachMcpServers(*created, /*wait=*/true);
  for (;;) {
    std::string line;
    size_t size = 0;
    ReadStatus st = transport_->ReadLine(&line, &size);
    if (st == ReadStatus::kEof) break;
    if (st == ReadStatus::kTooLong) {
      Write(ResponseFrame(
          Json::Value(), command::kParse, false, nullptr,
          "Failed to parse command: line too long (" + std::to_string(size) + " bytes)"));
      continue;
    }
    HandleLine(line);
  }
  // Input ended: nothing can answer the host's pending requests any more. Accepted work gets
  // eof_grace_ms to finish (a host that went away never reads its result, and an endless
  // command must not keep lousho alive); a stop signal, or the end of the grace, cancels it.
  channel_.CloseAll();
  bool cancel = options_.stopped && options_.stopped();
  if (!cancel) {
    log::Info("input closed; running work may finish within " +
              std::to_string(options_.eof_grace_ms) + " ms");
    cancel = !DrainWithinGrace();
    if (cancel) log::Warn("input closed; cancelling the work still running");
  }
  if (cancel) {
    log::Info("cancelling the running work");
    std::shared_ptr<agent::Session> session = current();
    if (session) session->Cancel(CancelCause::kShutdown);
    std::lock_guard<std::mutex> lock(mu_);
    if (bash_) bash_->Cancel(CancelCause::kShutdown);
  }
  pool_.Drain();
  std::lock_guard<std::mutex> lock(mu_);
  session_.reset();
}

bool Server::DrainWithinGrace() {
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + std::chrono::milliseconds(std::max(0L, options_.eof_grace_ms));
  // In slices, so that a stop signal during the grace cancels at once.
  constexpr auto kSlice = std::chrono::milliseconds(100);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (pool_.DrainFor(std::clamp(left, std::chrono::milliseconds(0), kSlice))) return true;
    if ((options_.stopped && options_.stopped()) || Clock::now() >= until) return false;
  }
}

void Server::HandleLine(const std::string& raw) {
  const std::string line = TrimSpace(raw);
  if (line.empty()) return;
  auto parsed = ParseJson(line);
  if (!parsed.ok() || !parsed->isObject()) {
    const std::string why = parsed.ok() ? "expected a JSON object" : parsed.error().message;
    Write(ResponseFrame(Json::Value(), command::kParse, false, nullptr,
                        "Failed to parse command: " + why));
    return;
  }
  const Json::Value& cmd = *parsed;
  Request req;
  req.id = MemberOrNull(cmd, "id");
  auto type = AsString(MemberOrNull(cmd, "type"));
  if (!type) {
    Write(ResponseFrame(req.id, command::kParse, false, nullptr,
                        "Failed to parse command: missing \"type\""));
    return;
  }
  req.command = *type;
  if (req.command == inbound::kExtensionUiResponse || req.command == inbound::kHostToolUpdate ||
      req.command == inbound::kHostToolResult)
    return channel_.Deliver(req.command, cmd);
  auto it = table_.find(req.command);
  // The id is echoed here too: the seed's runtime dropped it, and hosts hang on that.
  if (it == table_.end()) return Fail(req, "Unknown command: " + req.command);
  it->second(req, cmd);
}

// --- writing ---

void Server::Write(const Json::Value& frame) {
  std::string line = WriteJson(frame);
  // The ready frame promises hosts no line longer than this.
  if (line.size() + 1 > static_cast<size_t>(kMaxFrameBytes)) line = WriteJson(FitFrame(frame));
  transport_->WriteLine(line);
}

void Server::Ok(const Request& req, const Json::Value* data) {
  Write(ResponseFrame(req.id, req.command, true, data, ""));
}

void Server::Fail(const Request& req, const std::string& error) {
  Write(ResponseFrame(req.id, req.command, false, nullptr, error));
}

// --- sessions and prompts ---

Result<std::shared_ptr<agent::Session>> Server::OpenFor(
    const OpenRequest& request, agent::SessionOptions so,
    const std::shared_ptr<agent::Session>& old) {
  using Why = OpenRequest::Why;
  switch (request.why) {
    case Why::kSwitch:
      return host_->Open(std::move(so), options_.cwd / request.path);
    case Why::kFork:  // a new file, beginning with the history before the branch point
      if (old) return host_->Fork(*old, request.leaf, std::move(so));
      return host_->New(std::move(so));
    case Why::kNew:
      return host_->New(std::move(so), request.parent_session);
    case Why::kStart:
      break;
  }
  return host::OpenChosenSession(*host_, std::move(so), options_.cwd,
                                 {request.path, request.continue_newest});
}

Result<std::shared_ptr<agent::Session>> Server::CreateSession(const OpenRequest& request) {
  agent::SessionOptions so;
  so.id = host_->NewSessionId();
  so.cwd = options_.cwd;
  so.services.permissions = &channel_;
  so.services.dialogs = &channel_;
  so.services.host_tools = &channel_;
  so.services.elicitation = &channel_;
  so.pool = &pool_;
  so.sink = [this](const agent::Event& e) { SendEvent(e); };
  // RPC mode's todo defaults, whatever the user's settings elsewhere: reminders and auto-clear.
  so.todos.reminders = true;
  so.todos.max_reminders = 3;
  so.todos.auto_clear = true;
  so.auto_title = false;  // the seed: no automatic session titles on this door
  std::shared_ptr<agent::Session> old = current();
  auto created = OpenFor(request, std::move(so), old);
  if (!created.ok()) return created.error();
  // A new session keeps what the host chose for the old one: the queue settings, and for a new
  // session or a fork the model (recorded only when it differs). A session opened from a file
  // (switch_session) continues with the model its branch recorded, and gains no entry by opening.
  std::shared_ptr<agent::Session> s = *created;
  if (old) {
    const bool keep_model =
        request.why == OpenRequest::Why::kNew || request.why == OpenRequest::Why::kFork;
    const agent::ModelChoice want = old->selection().model();
    const agent::ModelChoice have = s->selection().model();
    // A fresh session: no change can be pending, so neither call fails.
    if (keep_model && (want.provider_name != have.provider_name || want.model_id != have.model_id))
      (void)s->selection().SetModel(want);
    else if (keep_model && want.thinking != have.thinking)
      (void)s->selection().SetThinking(want.thinking);
    s->queues().SetSettings(old->queues().settings());
    s->stream().SetAutoRetry(old->stream().auto_retry());
  }
  for (auto& spec : channel_.List()) s->tools().Add(agent::MakeHostTool(spec));
  // The first session's servers start in Run, after the ready frame.
  if (request.why != OpenRequest::Why::kStart) AttachMcpServers(s, /*wait=*/false);
  return s;
}

// The spec's MCP servers, started for each session. At start-up (after `ready`, before stdin is
// read) the door
// waits for them, at most the start timeout, so the host's first prompt sees their tools; for a
// session made later (new_session, switch_session, fork, possibly on the reader thread) they start
// on a worker and their tools join before the first model request after they connect. A server
// that did not start is reported as an extension_error frame and in the log.
void Server::AttachMcpServers(const std::shared_ptr<agent::Session>& session, bool wait) {
  if (view_.mcp_servers.empty()) return;
  agent::mcp::StartOptions mo;
  mo.cwd = options_.cwd;
  mo.roots = {options_.cwd};
  mo.client_version = options_.version;
  mo.settings = view_.mcp;
  // The servers' questions are asked through the dialogs.
  mo.login.dialogs = &channel_;
  // A server waiting for a login shows under a status key of its own until the login ends.
  mo.login.on_login = [this](const std::string& server, bool waiting, const std::string& msg) {
    Json::Value f = Obj();
    f["method"] = ui::kSetStatus;
    f["statusKey"] = "mcp:" + server;
    f["statusText"] = waiting ? msg : "";
    channel_.Tell(std::move(f));
  };
  auto attach = [this, session, mo] {
    for (const auto& status : host::AttachMcpServers(*session, view_.mcp_servers, mo)) {
      const std::string msg = agent::mcp::FailureMessage(status);
      if (msg.empty()) continue;
      log::Warn(msg);
      Json::Value err = Obj();
      err["type"] = frame::kExtensionError;
      err["extensionPath"] = "mcp:" + status.name;
      err["event"] = "session_start";
      err["error"] = msg;
      Write(err);
    }
  };
  if (wait) return attach();
  Status st = pool_.Post(attach);
  if (!st.ok()) log::Warn("MCP servers not started: " + st.error().message);
}

std::shared_ptr<agent::Session> Server::current() const {
  std::lock_guard<std::mutex> lock(mu_);
  return session_;
}

void Server::SendEvent(const agent::Event& e) {
  // Every delta of a reply: its line written without a DOM (a line over the limit is fitted by
  // Write, from the DOM, as any other frame).
  if (auto line = MessageUpdateLine(e); line && line->size() + 1 <= kMaxFrameBytes) {
    transport_->WriteLine(std::move(*line));
    return;
  }
  // What the user should know (a stream rule switched off, saving failed or works again): a
  // notify the host shows (fire-and-forget; a reply to it is ignored as any unknown one is).
  if (const auto* w = std::get_if<agent::event::Warning>(&e)) {
    Json::Value f = Obj();
    f["method"] = ui::kNotify;
    f["message"] = w->text;
    f["notifyType"] = w->info ? "info" : "warning";
    channel_.Tell(std::move(f));
    return;
  }
  // What lasts (a compaction in progress, a state the engine names): the host's status line.
  if (auto status = StatusRequestFromEvent(e)) channel_.Tell(std::move(*status));
  for (const Json::Value& f : FramesFromEvent(e)) Write(f);
}

void Server::StartPrompt(const Request& req, std::vector<agent::ContentBlock> content, bool acked) {
  auto fail = [&](const std::string& error) {
    // After an ack this is the second response the dialect allows for a prompt.
    Fail(req, error);
  };
  std::shared_ptr<agent::Session> s = current();
  if (!s) return fail("No session");
  if (!s->selection().model().provider) {
    return fail(view_.provider_error ? view_.provider_error->message
                                     : std::string("No model available"));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_) return fail(kBusyEngine);
    running_ = true;
  }
  if (!acked) Ok(req);
  Status st = s->Prompt(std::move(content), [this](Result<agent::TurnResult> r) {
    if (!r.ok()) log::Warn("prompt failed: " + r.error().message);
    OnPromptDone(r.ok() && r->stop == agent::TurnStop::kCancelled);
  });
  if (st.ok()) return;
  fail(st.error().code == ErrorCode::kSessionBusy ? kBusyEngine : st.error().message);
  std::vector<std::function<void()>> waiters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = false;
    waiters.swap(idle_waiters_);
  }
  for (auto& w : waiters) w();
}

void Server::OnPromptDone(bool aborted) {
  std::vector<std::function<void()>> waiters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = false;  // before agent_settled: a host may prompt again as soon as it reads it
    waiters.swap(idle_waiters_);
  }
  // After the final agent_end: hosts of the newer dialect end the turn here.
  Json::Value settled = Obj();
  settled["type"] = frame::kAgentSettled;
  settled["aborted"] = aborted;
  Write(settled);
  for (auto& w : waiters) w();
}

void Server::WhenIdle(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_) {
      idle_waiters_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

void Server::NegotiateProtocol(const Request& req, const NegotiateParams& p) {
  if (p.version != kProtocolVersion)
    return Fail(req, "Unsupported RPC protocol version: " + std::to_string(p.version));
  Json::Value data = Obj();
  data["protocolVersion"] = kProtocolVersion;
  OkData(req, data);
}

void Server::Prompt(const Request& req, const PromptParams& p) {
  bool running;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running = running_;
  }
  if (!running) return StartPrompt(req, p.content, /*acked=*/false);
  if (p.streaming_behavior.empty()) return Fail(req, kBusyPrompt);
  const agent::QueueKind kind =
      p.streaming_behavior == "steer" ? agent::QueueKind::kSteering : agent::QueueKind::kFollowUp;
  std::shared_ptr<agent::Session> s = current();
  if (s && s->queues().Enqueue(kind, p.content)) return Ok(req);
  // The run is ending and takes no more messages: this one starts the next run.
  Ok(req);
  WhenIdle([this, req, content = p.content] { StartPrompt(req, content, /*acked=*/true); });
}

void Server::Steer(const Request& req, const PromptParams& p) {
  PromptParams queued = p;
  queued.streaming_behavior = "steer";
  Prompt(req, queued);
}

void Server::FollowUp(const Request& req, const PromptParams& p) {
  PromptParams queued = p;
  queued.streaming_behavior = "followUp";
  Prompt(req, queued);
}

void Server::Abort(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  if (s) {
    s->queues().Clear();
    s->Cancel();
  }
  // Answered after the aborted run's agent_end.
  WhenIdle([this, req] { Ok(req); });
}

void Server::AbortAndPrompt(const Request& req, const PromptParams& p) {
  Ok(req);
  std::shared_ptr<agent::Session> s = current();
  if (s) {
    s->queues().Clear();
    s->Cancel();
  }
  WhenIdle([this, req, content = p.content] { StartPrompt(req, content, /*acked=*/true); });
}

void Server::NewSession(const Request& req, const NewSessionParams& p) {
  OpenRequest request;
  request.why = OpenRequest::Why::kNew;
  request.parent_session = p.parent_session;
  ReplaceSessionWhenIdle(req, std::move(request));
}

void Server::ReplaceSessionWhenIdle(const Request& req, OpenRequest request) {
  std::shared_ptr<agent::Session> s = current();
  if (s) {
    s->queues().Clear();
    s->Cancel();
  }
  WhenIdle([this, req, request = std::move(request)] {
    std::shared_ptr<agent::Session> old = current();
    std::error_code ec;
    const std::string own = old ? old->info().session_file : "";
    if (request.why == OpenRequest::Why::kSwitch && !own.empty() &&
        std::filesystem::equivalent(options_.cwd / request.path, own, ec)) {
      // Switching to the session's own file reads it again: the session lets go of it (its
      // lock) first, or opening it would find it locked.
      return old->Close([this, req, request] { SwapSession(req, request, /*close_old=*/false); });
    }
    SwapSession(req, request, /*close_old=*/true);
  });
}

void Server::SwapSession(const Request& req, const OpenRequest& request, bool close_old) {
  auto created = CreateSession(request);
  if (!created.ok()) return Fail(req, created.error().message);
  std::shared_ptr<agent::Session> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    old = std::exchange(session_, *created);
  }
  Json::Value data = Obj();
  data["cancelled"] = false;
  if (!old || !close_old) return OkData(req, data);
  // The old session lets go of its file before the answer: the host may switch back to it.
  old->Close([this, req, data] { OkData(req, data); });
}

}  // namespace lousho::rpc_compat
