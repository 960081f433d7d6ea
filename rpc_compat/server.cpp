// RPC door: the command table, the current session and its prompts, and the host's services
// (dialogs, permission prompts, host tools) over the same stdin/stdout.
#include "rpc_compat/server.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "agent/history.h"
#include "agent/host_tool.h"
#include "agent/mcp/servers.h"
#include "agent/shell_command.h"
#include "rpc_compat/commands.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::rpc_compat {
namespace {

Json::Value Obj() { return Json::Value(Json::objectValue); }

constexpr char kBusyPrompt[] =
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the "
    "message.";
constexpr char kBusyEngine[] =
    "Agent is already processing. Use steer() or followUp() to queue messages, or wait for "
    "completion.";

// The choices of a permission prompt, in the order shown.
constexpr const char* kAllowOnce = "Allow once";
constexpr const char* kAllowAlways = "Always allow";
constexpr const char* kReject = "Reject";
constexpr const char* kRejectAlways = "Always reject";

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

bool IsOfferedLevel(const std::string& level) {
  const auto& levels = host::SessionHost::ThinkingLevels();
  return std::any_of(levels.begin(), levels.end(), [&](const auto& l) { return l.id == level; });
}

std::string Trim(const std::string& s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
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
  CloseAllPending();
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
  const std::string line = Trim(raw);
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
    return HandleSideChannel(req.command, cmd);
  auto it = table_.find(req.command);
  // The id is echoed here too: the seed's runtime dropped it, and hosts hang on that.
  if (it == table_.end()) return Fail(req, "Unknown command: " + req.command);
  it->second(req, cmd);
}

void Server::HandleSideChannel(const std::string& type, const Json::Value& frame) {
  auto id = AsString(MemberOrNull(frame, "id"));
  if (!id) return;  // nothing to match it to
  std::lock_guard<std::mutex> lock(pending_mu_);
  auto it = pending_.find(*id);
  if (it == pending_.end()) return;  // unknown or already settled: ignored
  if (type == inbound::kHostToolUpdate) {
    it->second->updates.push_back(frame);
  } else if (!it->second->reply) {
    it->second->reply = frame;
  }
  pending_cv_.notify_all();
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
  if (!request.path.empty())
    return host_->Open(std::move(so), options_.cwd / request.path, /*create=*/true);
  auto listed = request.continue_newest ? host_->List(options_.cwd.string())
                                        : std::vector<agent::SessionSummary>();
  if (!listed.empty()) return host_->Open(std::move(so), listed.front().path);
  return host_->New(std::move(so));
}

Result<std::shared_ptr<agent::Session>> Server::CreateSession(const OpenRequest& request) {
  agent::SessionOptions so;
  so.id = host_->NewSessionId();
  so.cwd = options_.cwd;
  so.services.permissions = this;
  so.services.dialogs = this;
  so.services.host_tools = this;
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
  std::vector<agent::HostToolSpec> host_tools;
  {
    std::lock_guard<std::mutex> lock(mu_);
    host_tools = host_tools_;
  }
  for (auto& spec : host_tools) s->tools().Add(agent::MakeHostTool(spec));
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
    f["type"] = frame::kExtensionUiRequest;
    f["id"] = NextId("ui_");
    f["method"] = ui::kNotify;
    f["message"] = w->text;
    f["notifyType"] = w->info ? "info" : "warning";
    Write(f);
    return;
  }
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

std::optional<ModelOption> Server::FindModel(const std::string& provider,
                                             const std::string& id) const {
  for (const auto& m : models_)
    if (m.provider == provider && m.id == id) return m;
  return std::nullopt;
}

ModelOption Server::CurrentModel() const {
  std::shared_ptr<agent::Session> s = current();
  agent::ModelChoice choice = s ? s->selection().model() : agent_->model;
  if (auto m = FindModel(choice.provider_name, choice.model_id)) return *m;
  ModelOption m;
  m.provider = choice.provider_name;
  m.id = choice.model_id;
  m.name = choice.model_id;
  m.api = "unknown";
  return m;
}

void Server::GetState(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  if (!s) return Fail(req, "No session");
  const ModelOption model = CurrentModel();
  const agent::QueueSettings q = s->queues().settings();
  Json::Value data = Obj();
  data["model"] = ModelToJson(model);
  data["thinkingLevel"] = agent::ThinkingLevelId(s->selection().model().thinking);
  {
    std::lock_guard<std::mutex> lock(mu_);
    data["isStreaming"] = running_;
  }
  data["todoPhases"] = TodosToJson(s->todos().phases());
  data["isCompacting"] = false;
  data["steeringMode"] = agent::QueueModeId(q.steering);
  data["followUpMode"] = agent::QueueModeId(q.follow_up);
  data["interruptMode"] = agent::InterruptModeId(q.interrupt);
  data["sessionId"] = s->info().id;
  if (std::string name = s->branches().Name(); !name.empty()) data["sessionName"] = name;
  data["autoCompactionEnabled"] = s->compaction().auto_enabled();
  if (const std::string& file = s->info().session_file; !file.empty()) data["sessionFile"] = file;
  data["messageCount"] = static_cast<Json::UInt64>(s->transcript().Messages().size());
  const auto queued = static_cast<Json::UInt64>(s->queues().Count());
  data["queuedMessageCount"] = queued;
  data["pendingMessageCount"] = queued;  // pi's name for it
  OkData(req, data);
}

void Server::SetTodos(const Request& req, const TodosParams& p) {
  std::shared_ptr<agent::Session> s = current();
  if (!s) return Fail(req, "No session");
  s->todos().Set(p.phases);
  Json::Value data = Obj();
  data["todoPhases"] = TodosToJson(p.phases);
  OkData(req, data);
}

void Server::SetHostTools(const Request& req, const HostToolsParams& p) {
  std::shared_ptr<agent::Session> s = current();
  std::vector<agent::HostToolSpec> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    old.swap(host_tools_);
    host_tools_ = p.tools;
  }
  Json::Value names(Json::arrayValue);
  if (s) {
    // The new set replaces the old one before the next model request.
    for (const auto& t : old) s->tools().Remove(t.name);
    for (const auto& t : p.tools) s->tools().Add(agent::MakeHostTool(t));
  }
  for (const auto& t : p.tools) names.append(t.name);
  Json::Value data = Obj();
  data["toolNames"] = names;
  OkData(req, data);
}

Result<ModelOption> Server::SwitchModel(const std::string& provider, const std::string& id) {
  std::shared_ptr<agent::Session> s = current();
  std::optional<ModelOption> option = FindModel(provider, id);
  if (!s || !option)
    return MakeError(ErrorCode::kModelUnknown, "Model not found: " + provider + "/" + id);
  auto choice = host_->ResolveModel(provider, id);
  if (!choice.ok())
    return MakeError(ErrorCode::kModelUnknown, "Model not found: " + provider + "/" + id + " (" +
                                                   choice.error().message + ")");
  choice->thinking = s->selection().model().thinking;  // the thinking level is its own choice
  if (Status st = s->selection().SetModel(std::move(*choice)); !st.ok()) return st.error();
  return *option;
}

void Server::SetModel(const Request& req, const SetModelParams& p) {
  auto option = SwitchModel(p.provider, p.model_id);
  if (!option.ok()) return Fail(req, option.error().message);
  OkData(req, ModelToJson(*option));
}

void Server::CycleModel(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  if (!s || models_.size() < 2) return OkData(req, Json::Value());
  const agent::ModelChoice now = s->selection().model();
  size_t next = 0;
  for (size_t i = 0; i < models_.size(); ++i)
    if (models_[i].provider == now.provider_name && models_[i].id == now.model_id)
      next = (i + 1) % models_.size();
  auto option = SwitchModel(models_[next].provider, models_[next].id);
  if (!option.ok()) return Fail(req, option.error().message);
  Json::Value data = Obj();
  data["model"] = ModelToJson(*option);
  data["thinkingLevel"] = agent::ThinkingLevelId(now.thinking);
  data["isScoped"] = false;
  OkData(req, data);
}

void Server::GetAvailableModels(const Request& req, const NoParams& /*p*/) {
  Json::Value models(Json::arrayValue);
  for (const auto& m : models_) models.append(ModelToJson(m));
  Json::Value data = Obj();
  data["models"] = models;
  OkData(req, data);
}

void Server::SetThinkingLevel(const Request& req, const LevelParams& p) {
  if (!IsOfferedLevel(p.level)) return Fail(req, "Invalid thinking level: " + p.level);
  if (std::shared_ptr<agent::Session> s = current()) {
    if (Status st = s->selection().SetThinking(agent::ParseThinkingLevel(p.level)); !st.ok())
      return Fail(req, st.error().message);
  }
  Ok(req);
}

void Server::CycleThinkingLevel(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  if (!s) return OkData(req, Json::Value());
  const auto& levels = host::SessionHost::ThinkingLevels();
  const std::string now = agent::ThinkingLevelId(s->selection().model().thinking);
  auto it = std::find_if(levels.begin(), levels.end(), [&](const auto& l) { return l.id == now; });
  const std::string next =
      it == levels.end() || it + 1 == levels.end() ? levels.front().id : (it + 1)->id;
  if (Status st = s->selection().SetThinking(agent::ParseThinkingLevel(next)); !st.ok())
    return Fail(req, st.error().message);
  Json::Value data = Obj();
  data["level"] = next;
  OkData(req, data);
}

void Server::GetAvailableThinkingLevels(const Request& req, const NoParams& /*p*/) {
  Json::Value levels(Json::arrayValue);
  for (const auto& l : host::SessionHost::ThinkingLevels()) levels.append(l.id);
  Json::Value data = Obj();
  data["levels"] = levels;
  OkData(req, data);
}

void Server::SetSteeringMode(const Request& req, const ModeParams& p) {
  auto mode = agent::ParseQueueModeId(p.mode);
  std::shared_ptr<agent::Session> s = current();
  if (!mode || !s) return Fail(req, "Invalid steering mode: " + p.mode);
  agent::QueueSettings q = s->queues().settings();
  q.steering = *mode;
  s->queues().SetSettings(q);
  Ok(req);
}

void Server::SetFollowUpMode(const Request& req, const ModeParams& p) {
  auto mode = agent::ParseQueueModeId(p.mode);
  std::shared_ptr<agent::Session> s = current();
  if (!mode || !s) return Fail(req, "Invalid follow-up mode: " + p.mode);
  agent::QueueSettings q = s->queues().settings();
  q.follow_up = *mode;
  s->queues().SetSettings(q);
  Ok(req);
}

void Server::SetInterruptMode(const Request& req, const ModeParams& p) {
  auto mode = agent::ParseInterruptModeId(p.mode);
  std::shared_ptr<agent::Session> s = current();
  if (!mode || !s) return Fail(req, "Invalid interrupt mode: " + p.mode);
  agent::QueueSettings q = s->queues().settings();
  q.interrupt = *mode;
  s->queues().SetSettings(q);
  Ok(req);
}

void Server::SetAutoRetry(const Request& req, const EnabledParams& p) {
  if (std::shared_ptr<agent::Session> s = current()) s->stream().SetAutoRetry(p.enabled);
  Ok(req);
}

void Server::AbortRetry(const Request& req, const NoParams& /*p*/) {
  if (std::shared_ptr<agent::Session> s = current()) s->stream().AbortRetry();
  Ok(req);
}

void Server::Bash(const Request& req, const BashParams& p) {
  auto source = std::make_shared<CancelSource>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (bash_) return Fail(req, "A bash command is already running");
    bash_ = source;
  }
  std::shared_ptr<agent::Session> s = current();
  // In the background, so abort_bash (and everything else) can overtake it.
  Status st = pool_.Post([this, req, command = p.command, source, s] {
    auto on_output = [&](std::string_view chunk) {
      Json::Value f = Obj();
      f["type"] = frame::kBashExecutionUpdate;
      if (!req.id.isNull()) f["id"] = req.id;
      f["delta"] = std::string(chunk);
      Write(f);
    };
    auto r = agent::RunShellCommand(command, options_.cwd, on_output, source->token());
    if (r.ok() && s)
      s->queues().AddContext(agent::ShellCommandMessage(command, *r));  // for the next prompt
    // The command is over before its response goes out (a host may start the next one as soon as
    // it reads it); abort_bash answers after it (waiters), so hosts see the two in that order.
    std::vector<std::function<void()>> waiters;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (bash_ == source) bash_.reset();
      waiters.swap(bash_waiters_);
    }
    if (!r.ok()) {
      Fail(req, r.error().message);
    } else {
      Json::Value data = Obj();
      data["output"] = r->output;
      if (r->exit_code) data["exitCode"] = *r->exit_code;
      data["cancelled"] = r->cancelled;
      data["truncated"] = r->truncated;
      data["totalLines"] = static_cast<Json::UInt64>(r->total_lines);
      data["totalBytes"] = static_cast<Json::UInt64>(r->total_bytes);
      data["outputLines"] = static_cast<Json::UInt64>(r->output_lines);
      data["outputBytes"] = static_cast<Json::UInt64>(r->output_bytes);
      data["workingDir"] = r->working_dir;
      OkData(req, data);
    }
    for (auto& w : waiters) w();
  });
  if (!st.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      bash_.reset();
    }
    Fail(req, st.error().message);
  }
}

void Server::AbortBash(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<CancelSource> source;
  {
    std::lock_guard<std::mutex> lock(mu_);
    source = bash_;
    // Answered after the aborted command's own response.
    if (source) bash_waiters_.push_back([this, req] { Ok(req); });
  }
  if (!source) return Ok(req);
  source->Cancel();
}

void Server::GetSessionStats(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  if (!s) return Fail(req, "No session");
  const std::vector<agent::Message> messages = s->transcript().Messages();
  long long user = 0, assistant = 0, tool_calls = 0, tool_results = 0;
  const agent::Message* last_assistant = nullptr;
  for (const auto& m : messages) {
    switch (m.role) {
      case agent::Role::kUser:
        if (!m.is_custom()) ++user;
        break;
      case agent::Role::kAssistant:
        ++assistant;
        if (m.usage.total() > 0) last_assistant = &m;
        for (const auto& b : m.content)
          if (b.type == agent::BlockType::kToolCall) ++tool_calls;
        break;
      case agent::Role::kToolResult:
        ++tool_results;
        break;
    }
  }
  const agent::Usage usage = s->transcript().TotalUsage();
  Json::Value data = Obj();
  data["sessionId"] = s->info().id;
  if (const std::string& file = s->info().session_file; !file.empty()) data["sessionFile"] = file;
  data["userMessages"] = static_cast<Json::Int64>(user);
  data["assistantMessages"] = static_cast<Json::Int64>(assistant);
  data["toolCalls"] = static_cast<Json::Int64>(tool_calls);
  data["toolResults"] = static_cast<Json::Int64>(tool_results);
  data["totalMessages"] = static_cast<Json::UInt64>(messages.size());
  Json::Value tokens = Obj();
  tokens["input"] = static_cast<Json::Int64>(usage.input);
  tokens["output"] = static_cast<Json::Int64>(usage.output);
  tokens["cacheRead"] = static_cast<Json::Int64>(usage.cache_read);
  tokens["cacheWrite"] = static_cast<Json::Int64>(usage.cache_write);
  tokens["total"] = static_cast<Json::Int64>(usage.total());
  data["tokens"] = tokens;
  data["cost"] = usage.cost;
  const agent::ModelChoice model = s->selection().model();
  const long long window = model.provider ? model.provider->ContextWindow() : 0;
  if (last_assistant && window > 0) {
    Json::Value cu = Obj();
    cu["tokens"] = static_cast<Json::Int64>(last_assistant->usage.total());
    cu["contextWindow"] = static_cast<Json::Int64>(window);
    cu["percent"] =
        100.0 * static_cast<double>(last_assistant->usage.total()) / static_cast<double>(window);
    data["contextUsage"] = cu;
  }
  OkData(req, data);
}

void Server::Branch(const Request& req, const EntryParams& p) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_) return Fail(req, "Cannot branch while a response is in progress");
  }
  std::shared_ptr<agent::Session> s = current();
  if (!s) return Fail(req, "No session");
  const std::vector<agent::Entry> entries = s->transcript().Entries();
  std::map<std::string, const agent::Entry*> by_id;
  for (const auto& e : entries) by_id[e.id] = &e;
  auto it = by_id.find(p.entry_id);
  if (it == by_id.end()) return Fail(req, "Entry not found: " + p.entry_id);
  const agent::Entry& target = *it->second;
  if (target.kind != agent::EntryKind::kMessage || target.message.role != agent::Role::kUser ||
      target.message.is_custom())
    return Fail(req, "Entry " + p.entry_id + " is not a user message");
  // The new session holds the history before that message; its text goes back to the host's
  // editor.
  OpenRequest fork;
  fork.why = OpenRequest::Why::kFork;
  fork.leaf = target.parent_id;
  auto created = CreateSession(fork);
  if (!created.ok()) return Fail(req, created.error().message);
  {
    std::lock_guard<std::mutex> lock(mu_);
    session_ = *created;
  }
  Json::Value data = Obj();
  data["text"] = target.message.TextContent();
  data["cancelled"] = false;
  // The old session lets go of its file before the answer: the host may switch back to it.
  s->Close([this, req, data] { OkData(req, data); });
}

void Server::GetBranchMessages(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  if (!s) return Fail(req, "No session");
  Json::Value messages(Json::arrayValue);
  for (const agent::Entry& e : s->transcript().BranchEntries()) {
    if (e.kind != agent::EntryKind::kMessage || e.message.role != agent::Role::kUser ||
        e.message.is_custom())
      continue;
    Json::Value m = Obj();
    m["entryId"] = e.id;
    m["text"] = e.message.TextContent();
    messages.append(m);
  }
  Json::Value data = Obj();
  data["messages"] = messages;
  OkData(req, data);
}

void Server::GetLastAssistantText(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  Json::Value data = Obj();
  data["text"] = Json::Value();
  if (s) {
    const std::vector<agent::Message> messages = s->transcript().Messages();
    for (auto m = messages.rbegin(); m != messages.rend(); ++m) {
      if (m->role != agent::Role::kAssistant) continue;
      std::string text = m->TextContent();
      if (text.empty()) continue;
      data["text"] = text;
      break;
    }
  }
  OkData(req, data);
}

void Server::SetSessionName(const Request& req, const NameParams& p) {
  const std::string name = Trim(p.name);
  if (name.empty()) return Fail(req, "Session name cannot be empty");
  std::shared_ptr<agent::Session> s = current();
  if (!s) return Fail(req, "No session");
  if (Status st = s->branches().SetName(name); !st.ok()) return Fail(req, st.error().message);
  Ok(req);
  if (options_.emit_title) {
    Json::Value f = Obj();
    f["type"] = frame::kExtensionUiRequest;
    f["id"] = NextId("ui_");
    f["method"] = ui::kSetTitle;
    f["title"] = name;
    Write(f);
  }
}

void Server::GetMessages(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  Json::Value data = Obj();
  data["messages"] = s ? MessagesToRpc(s->transcript().Messages()) : Json::Value(Json::arrayValue);
  OkData(req, data);
}

namespace {
// Prompt commands as get_commands (source "prompt") and get_available_commands (source
// "custom", with the input hint) list them.
Json::Value CommandsData(const std::vector<config::SlashCommand>& list, bool available) {
  Json::Value commands(Json::arrayValue);
  for (const auto& c : list) {
    Json::Value item = Obj();
    item["name"] = c.name;
    if (!c.description.empty()) item["description"] = c.description;
    if (available && !c.hint.empty()) item["input"]["hint"] = c.hint;
    item["source"] = available ? "custom" : "prompt";
    commands.append(item);
  }
  Json::Value data = Obj();
  data["commands"] = commands;
  return data;
}
}  // namespace

// The current session's prompt commands (the spec's and those from files), else the spec's.
void Server::GetCommands(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  OkData(req, CommandsData(s ? s->info().commands : view_.commands, false));
}

void Server::GetAvailableCommands(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  OkData(req, CommandsData(s ? s->info().commands : view_.commands, true));
}

void Server::SwitchSession(const Request& req, const PathParams& p) {
  if (p.path.empty()) return Fail(req, "Invalid switch_session command: sessionPath: required");
  OpenRequest request;
  request.why = OpenRequest::Why::kSwitch;
  request.path = p.path;
  ReplaceSessionWhenIdle(req, std::move(request));
}

void Server::ExportHtml(const Request& req, const PathParams& p) {
  std::shared_ptr<agent::Session> s = current();
  if (!s) return Fail(req, "No session");
  auto path = s->transcript().ExportHtml(p.path);
  if (!path.ok()) return Fail(req, path.error().message);
  Json::Value data = Obj();
  data["path"] = path->string();
  OkData(req, data);
}

void Server::Compact(const Request& req, const PathParams& p) {
  std::shared_ptr<agent::Session> s = current();
  if (!s) return Fail(req, "No session");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_) return Fail(req, "Cannot compact while a response is in progress");
  }
  // The answer comes from the engine's callback: the reader thread goes on reading meanwhile.
  Status st = s->compaction().Compact(p.path, [this, req](Result<agent::CompactionResult> r) {
    if (!r.ok()) return Fail(req, r.error().message);
    Json::Value data = Obj();
    data["summary"] = r->summary;
    data["firstKeptEntryId"] = r->first_kept_id;
    data["tokensBefore"] = static_cast<Json::Int64>(r->tokens_before);
    OkData(req, data);
  });
  if (!st.ok()) Fail(req, st.error().message);
}

void Server::SetAutoCompaction(const Request& req, const EnabledParams& p) {
  std::shared_ptr<agent::Session> s = current();
  if (!s) return Fail(req, "No session");
  s->compaction().SetAuto(p.enabled);
  Ok(req);
}

// --- requests to the host ---

std::string Server::NextId(const char* prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  return prefix + std::to_string(++next_id_);
}

Server::Wait Server::Await(const std::string& id, const CancelToken& cancel, long timeout_ms,
                           const std::function<void(const Json::Value&)>& on_update,
                           Json::Value* reply) {
  std::shared_ptr<Pending> p;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return Wait::kClosed;
    p = it->second;
  }
  // Declared before the lock, so it is destroyed after the lock is released.
  ScopedCancelCallback wake(cancel, [this] {
    std::lock_guard<std::mutex> lock(pending_mu_);
    pending_cv_.notify_all();
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::unique_lock<std::mutex> lock(pending_mu_);
  auto settle = [&](Wait w) {
    pending_.erase(id);
    return w;
  };
  for (;;) {
    if (!p->updates.empty()) {
      // Handled on this (the session's) thread, so its events stay in order.
      std::vector<Json::Value> updates;
      updates.swap(p->updates);
      lock.unlock();
      if (on_update)
        for (const auto& u : updates) on_update(u);
      lock.lock();
      continue;
    }
    if (p->reply) {
      *reply = *p->reply;
      return settle(Wait::kReply);
    }
    if (p->closed) return settle(Wait::kClosed);
    if (cancel.cancelled()) return settle(Wait::kCancelled);
    if (timeout_ms <= 0) {
      pending_cv_.wait(lock);
    } else if (pending_cv_.wait_until(lock, deadline) == std::cv_status::timeout && !p->reply &&
               p->updates.empty() && !p->closed && !cancel.cancelled()) {
      return settle(Wait::kTimeout);
    }
  }
}

void Server::CloseAllPending() {
  std::lock_guard<std::mutex> lock(pending_mu_);
  input_closed_ = true;
  for (auto& [id, p] : pending_) p->closed = true;
  pending_cv_.notify_all();
}

Result<std::optional<UiResponse>> Server::Dialog(Json::Value request, const CancelToken& cancel) {
  const std::string id = NextId("ui_");
  request["type"] = frame::kExtensionUiRequest;
  request["id"] = id;
  if (options_.ui_timeout_ms > 0)
    request["timeout"] = static_cast<Json::Int64>(options_.ui_timeout_ms);
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    if (input_closed_) return MakeError(ErrorCode::kClientError, "the host closed its input");
    pending_[id] = std::make_shared<Pending>();
  }
  Write(request);
  Json::Value reply;
  switch (Await(id, cancel, options_.ui_timeout_ms, nullptr, &reply)) {
    case Wait::kReply:
      break;
    case Wait::kTimeout:
      return std::optional<UiResponse>();  // resolves to the dialog's default
    case Wait::kCancelled:
      return MakeError(ErrorCode::kCancelled, "cancelled");
    case Wait::kClosed:
      return MakeError(ErrorCode::kClientError, "the host closed its input");
  }
  auto parsed = UiResponse::FromJson(reply);
  if (!parsed.ok()) {
    Json::Value err = Obj();
    err["type"] = frame::kExtensionError;
    err["extensionPath"] = "extension-ui";
    err["event"] = inbound::kExtensionUiResponse;
    err["error"] = "malformed extension_ui_response " + id + ": " + parsed.error().message;
    Write(err);
    return std::optional<UiResponse>();
  }
  return std::optional<UiResponse>(std::move(*parsed));
}

namespace {
// The text a select, input or editor dialog answered; nullopt when dismissed or timed out.
Result<std::optional<std::string>> TextAnswer(const Result<std::optional<UiResponse>>& answer) {
  if (!answer.ok()) return answer.error();
  if (!*answer || (*answer)->cancelled || !(*answer)->value) return std::optional<std::string>();
  return (*answer)->value;
}
}  // namespace

Result<std::optional<std::string>> Server::Select(const std::string& /*session_id*/,
                                                  const std::string& title,
                                                  const std::vector<std::string>& options,
                                                  const CancelToken& cancel) {
  Json::Value r = Obj();
  r["method"] = ui::kSelect;
  r["title"] = title;
  r["options"] = Json::Value(Json::arrayValue);
  for (const auto& o : options) r["options"].append(o);
  return TextAnswer(Dialog(std::move(r), cancel));
}

Result<std::optional<bool>> Server::Confirm(const std::string& /*session_id*/,
                                            const std::string& title, const std::string& message,
                                            const CancelToken& cancel) {
  Json::Value r = Obj();
  r["method"] = ui::kConfirm;
  r["title"] = title;
  r["message"] = message;
  auto answer = Dialog(std::move(r), cancel);
  if (!answer.ok()) return answer.error();
  if (!*answer || (*answer)->cancelled || !(*answer)->confirmed) return std::optional<bool>();
  return (*answer)->confirmed;
}

Result<std::optional<std::string>> Server::Input(const std::string& /*session_id*/,
                                                 const std::string& title,
                                                 const std::string& placeholder,
                                                 const CancelToken& cancel) {
  Json::Value r = Obj();
  r["method"] = ui::kInput;
  r["title"] = title;
  if (!placeholder.empty()) r["placeholder"] = placeholder;
  return TextAnswer(Dialog(std::move(r), cancel));
}

Result<std::optional<std::string>> Server::Editor(const std::string& /*session_id*/,
                                                  const std::string& title,
                                                  const std::string& prefill,
                                                  const CancelToken& cancel) {
  Json::Value r = Obj();
  r["method"] = ui::kEditor;
  r["title"] = title;
  if (!prefill.empty()) r["prefill"] = prefill;
  return TextAnswer(Dialog(std::move(r), cancel));
}

agent::PermissionDecision Server::RequestPermission(const std::string& session_id,
                                                    const agent::PermissionRequest& request,
                                                    const CancelToken& cancel) {
  auto answer = Select(session_id, "Allow " + request.title + "?",
                       {kAllowOnce, kAllowAlways, kReject, kRejectAlways}, cancel);
  if (!answer.ok()) return agent::PermissionDecision::kCancelled;
  // Dismissed or timed out: the safe default.
  if (!*answer) return agent::PermissionDecision::kRejectOnce;
  const std::string& v = **answer;
  if (v == kAllowOnce) return agent::PermissionDecision::kAllowOnce;
  if (v == kAllowAlways) return agent::PermissionDecision::kAllowAlways;
  if (v == kRejectAlways) return agent::PermissionDecision::kRejectAlways;
  return agent::PermissionDecision::kRejectOnce;
}

std::vector<agent::HostToolSpec> Server::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  return host_tools_;
}

Result<agent::HostToolResult> Server::Call(
    const std::string& /*session_id*/, const std::string& tool_call_id, const std::string& name,
    const Json::Value& args, const CancelToken& cancel,
    const std::function<void(const agent::HostToolResult& partial)>& on_update) {
  const std::string id = NextId("host_");
  Json::Value call = Obj();
  call["type"] = frame::kHostToolCall;
  call["id"] = id;
  call["toolCallId"] = tool_call_id;
  call["toolName"] = name;
  call["arguments"] = args;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    if (input_closed_) return MakeError(ErrorCode::kClientError, "the host closed its input");
    pending_[id] = std::make_shared<Pending>();
  }
  auto extension_error = [&](const std::string& event, const std::string& error) {
    Json::Value err = Obj();
    err["type"] = frame::kExtensionError;
    err["extensionPath"] = "host-tool:" + name;
    err["event"] = event;
    err["error"] = error;
    Write(err);
  };
  Write(call);
  auto handle_update = [&](const Json::Value& frame) {
    auto update = HostToolReply::FromJson(frame, /*final=*/false);
    if (!update.ok()) return extension_error(inbound::kHostToolUpdate, update.error().message);
    if (on_update) on_update(update->result);
  };
  Json::Value reply;
  switch (Await(id, cancel, 0, handle_update, &reply)) {
    case Wait::kReply:
      break;
    case Wait::kTimeout:
    case Wait::kCancelled: {
      Json::Value c = Obj();
      c["type"] = frame::kHostToolCancel;
      c["id"] = NextId("host_cancel_");
      c["targetId"] = id;
      Write(c);
      return MakeError(ErrorCode::kCancelled, "cancelled");
    }
    case Wait::kClosed:
      return MakeError(ErrorCode::kClientError, "the host closed its input");
  }
  auto result = HostToolReply::FromJson(reply, /*final=*/true);
  if (!result.ok()) {
    extension_error(inbound::kHostToolResult, result.error().message);
    return MakeError(ErrorCode::kClientError,
                     "the host sent a malformed result: " + result.error().message);
  }
  return std::move(result->result);
}

}  // namespace lousho::rpc_compat
