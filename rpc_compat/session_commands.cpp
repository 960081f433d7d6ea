// RPC door: the commands that read or change the current session's settings and state (models,
// thinking, queue modes, todos, host tools, bash, stats, branches, messages, commands, export,
// compaction).
#include <algorithm>

#include "agent/builtin_commands.h"
#include "agent/history.h"
#include "agent/host_tool.h"
#include "agent/shell_command.h"
#include "rpc_compat/commands.h"
#include "rpc_compat/server.h"
#include "support/json_util.h"
#include "support/log.h"
#include "support/text.h"

namespace lousho::rpc_compat {
namespace {
Json::Value NewFrameObject() { return Json::Value(Json::objectValue); }

bool IsOfferedLevel(const std::string& level) {
  const auto& levels = host::SessionHost::ThinkingLevels();
  return std::any_of(levels.begin(), levels.end(), [&](const auto& l) { return l.id == level; });
}

}  // namespace
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
  Json::Value data = NewFrameObject();
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
  Json::Value data = NewFrameObject();
  data["todoPhases"] = TodosToJson(p.phases);
  OkData(req, data);
}

void Server::SetHostTools(const Request& req, const HostToolsParams& p) {
  std::shared_ptr<agent::Session> s = current();
  const std::vector<agent::HostToolSpec> old = channel_.SwapTools(p.tools);
  Json::Value names(Json::arrayValue);
  if (s) {
    // The new set replaces the old one before the next model request.
    for (const auto& t : old) s->tools().Remove(t.name);
    for (const auto& t : p.tools) s->tools().Add(agent::MakeHostTool(t));
  }
  for (const auto& t : p.tools) names.append(t.name);
  Json::Value data = NewFrameObject();
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
  Json::Value data = NewFrameObject();
  data["model"] = ModelToJson(*option);
  data["thinkingLevel"] = agent::ThinkingLevelId(now.thinking);
  data["isScoped"] = false;
  OkData(req, data);
}

void Server::GetAvailableModels(const Request& req, const NoParams& /*p*/) {
  Json::Value models(Json::arrayValue);
  for (const auto& m : models_) models.append(ModelToJson(m));
  Json::Value data = NewFrameObject();
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
  Json::Value data = NewFrameObject();
  data["level"] = next;
  OkData(req, data);
}

void Server::GetAvailableThinkingLevels(const Request& req, const NoParams& /*p*/) {
  Json::Value levels(Json::arrayValue);
  for (const auto& l : host::SessionHost::ThinkingLevels()) levels.append(l.id);
  Json::Value data = NewFrameObject();
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
      Json::Value f = NewFrameObject();
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
      Json::Value data = NewFrameObject();
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
        if (m.usage().total() > 0) last_assistant = &m;
        for (const auto& b : m.content)
          if (b.type == agent::BlockType::kToolCall) ++tool_calls;
        break;
      case agent::Role::kToolResult:
        ++tool_results;
        break;
    }
  }
  const agent::Usage usage = s->transcript().TotalUsage();
  Json::Value data = NewFrameObject();
  data["sessionId"] = s->info().id;
  if (const std::string& file = s->info().session_file; !file.empty()) data["sessionFile"] = file;
  data["userMessages"] = static_cast<Json::Int64>(user);
  data["assistantMessages"] = static_cast<Json::Int64>(assistant);
  data["toolCalls"] = static_cast<Json::Int64>(tool_calls);
  data["toolResults"] = static_cast<Json::Int64>(tool_results);
  data["totalMessages"] = static_cast<Json::UInt64>(messages.size());
  Json::Value tokens = NewFrameObject();
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
    Json::Value cu = NewFrameObject();
    cu["tokens"] = static_cast<Json::Int64>(last_assistant->usage().total());
    cu["contextWindow"] = static_cast<Json::Int64>(window);
    cu["percent"] =
        100.0 * static_cast<double>(last_assistant->usage().total()) / static_cast<double>(window);
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
  if (p.restore_files) {
    // [rewind] The files first, on a worker: the rewind may ask the host, whose answer comes in
    // on this thread. The old session moves back too, then the new one starts before the message.
    agent::RewindRequest rewind;
    rewind.entry_id = p.entry_id;
    Status st = pool_.Post([this, req, s, rewind, leaf = target.parent_id] {
      auto out = s->branches().Rewind(rewind);
      if (!out.ok()) return Fail(req, out.error().message);
      ForkAt(req, s, leaf, out->text, &*out);
    });
    if (!st.ok()) Fail(req, st.error().message);
    return;
  }
  ForkAt(req, s, target.parent_id, target.message.TextContent(), nullptr);
}

void Server::ForkAt(const Request& req, const std::shared_ptr<agent::Session>& s,
                    const std::string& leaf, const std::string& text,
                    const agent::RewindOutcome* rewound) {
  // The new session holds the history before that message; its text goes back to the host's
  // editor.
  OpenRequest fork;
  fork.why = OpenRequest::Why::kFork;
  fork.leaf = leaf;
  auto created = CreateSession(fork);
  if (!created.ok()) return Fail(req, created.error().message);
  {
    std::lock_guard<std::mutex> lock(mu_);
    session_ = *created;
  }
  Json::Value data = NewFrameObject();
  data["text"] = text;
  data["cancelled"] = false;
  if (rewound) {  // [rewind] lousho's members: what the restore did
    Json::Value restored(Json::arrayValue), kept(Json::arrayValue), notes(Json::arrayValue);
    for (const std::string& f : rewound->restored) restored.append(f);
    for (const std::string& f : rewound->kept) kept.append(f);
    for (const std::string& n : rewound->notes) notes.append(n);
    data["restoredFiles"] = restored;
    data["keptFiles"] = kept;
    data["notes"] = notes;
  }
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
    Json::Value m = NewFrameObject();
    m["entryId"] = e.id;
    m["text"] = e.message.TextContent();
    messages.append(m);
  }
  Json::Value data = NewFrameObject();
  data["messages"] = messages;
  OkData(req, data);
}

void Server::GetLastAssistantText(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  Json::Value data = NewFrameObject();
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
  const std::string name = TrimSpace(p.name);
  if (name.empty()) return Fail(req, "Session name cannot be empty");
  std::shared_ptr<agent::Session> s = current();
  if (!s) return Fail(req, "No session");
  if (Status st = s->branches().SetName(name); !st.ok()) return Fail(req, st.error().message);
  Ok(req);
  if (options_.emit_title) {
    Json::Value f = NewFrameObject();
    f["method"] = ui::kSetTitle;
    f["title"] = name;
    channel_.Tell(std::move(f));
  }
}

void Server::GetMessages(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  Json::Value data = NewFrameObject();
  data["messages"] = s ? MessagesToRpc(s->transcript().Messages()) : Json::Value(Json::arrayValue);
  OkData(req, data);
}

namespace {
// Prompt commands as get_commands (source "prompt") and get_available_commands (source
// "custom", with the input hint) list them.
Json::Value CommandsData(const std::vector<config::SlashCommand>& list, bool available) {
  Json::Value commands(Json::arrayValue);
  for (const auto& c : list) {
    Json::Value item = NewFrameObject();
    item["name"] = c.name;
    if (!c.description.empty()) item["description"] = c.description;
    if (available && !c.hint.empty()) item["input"]["hint"] = c.hint;
    item["source"] = available ? "custom" : "prompt";
    commands.append(item);
  }
  Json::Value data = NewFrameObject();
  data["commands"] = commands;
  return data;
}
}  // namespace

// The current session's prompt commands (the spec's, those from files, its MCP servers'
// prompts: OfferedCommands), else the spec's.
void Server::GetCommands(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  OkData(req, CommandsData(s ? agent::OfferedCommands(s->info().commands, s->tools().Commands())
                             : view_.commands,
                           false));
}

void Server::GetAvailableCommands(const Request& req, const NoParams& /*p*/) {
  std::shared_ptr<agent::Session> s = current();
  OkData(req, CommandsData(s ? agent::OfferedCommands(s->info().commands, s->tools().Commands())
                             : view_.commands,
                           true));
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
  Json::Value data = NewFrameObject();
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
    Json::Value data = NewFrameObject();
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

}  // namespace lousho::rpc_compat
