// Child sessions for the task tool: the agents a session may start, and one child run.
#include "host/subagents.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <system_error>

#include "agent/rules/rule.h"
#include "agent/session_store.h"
#include "agent/tools/task_tool.h"
#include "support/files.h"
#include "support/log.h"
#include "support/text.h"

namespace lousho::host {
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kMaxAgentFileBytes = uint64_t{256} * 1024;
constexpr auto kTextRefresh = std::chrono::milliseconds(100);  // a child's streamed text

// Tools a child never has: it cannot ask the user, and it runs in the parent's mode.
bool ChildLacks(const std::string& tool) { return tool == "ask" || tool == "switch_mode"; }

bool OffersTask(const agent::AgentConfig& agent) {
  return std::any_of(agent.tools.begin(), agent.tools.end(),
                     [](const auto& t) { return t->name() == "task"; });
}

// The child's agent: the parent's, with the subagent's instructions, model, thinking, tools and
// rules; no commands, skills, hooks or MCP servers of its own.
Result<std::shared_ptr<const agent::AgentConfig>> ChildAgent(const agent::AgentConfig& parent,
                                                             const config::SubagentSpec& spec,
                                                             const std::string& task_tool,
                                                             bool plan_mode) {
  auto a = std::make_shared<agent::AgentConfig>(parent);
  // A parent in plan mode plans: its children may read and search, never change anything.
  if (plan_mode) a->default_mode = agent::PermissionMode::kPlan;
  a->name = parent.name + "/" + spec.name;
  if (!spec.instructions.empty()) a->instructions = spec.instructions;
  if (!spec.model.empty()) {
    const size_t slash = spec.model.find('/');
    if (!parent.resolve_model)
      return MakeError(ErrorCode::kConfigInvalid, spec.source + ": no models to choose from");
    Result<agent::ModelChoice> m =
        parent.resolve_model(spec.model.substr(0, slash), spec.model.substr(slash + 1));
    if (!m.ok()) return m.error();
    m->thinking = parent.model.thinking;
    a->model = std::move(*m);
  }
  if (!spec.thinking.empty()) a->model.thinking = agent::ParseThinkingLevel(spec.thinking);
  a->tools.clear();
  for (const auto& t : parent.tools) {
    const std::string name = t->name();
    if (ChildLacks(name) || name == "task" || name == task_tool) continue;
    if (spec.tools_set && std::find(spec.tools.begin(), spec.tools.end(), name) == spec.tools.end())
      continue;
    a->tools.push_back(t);
  }
  if (!spec.permissions.isNull()) {
    auto rules = agent::ParsePermissionRules(spec.permissions);
    if (!rules.ok())
      return MakeError(ErrorCode::kConfigInvalid,
                       spec.source + ": permissions: " + rules.error().message);
    a->permission_rules = std::move(*rules);
  }
  a->commands.clear();
  a->skills.reset();
  a->hooks = config::HooksSpec{};
  a->hooks.project = false;
  a->mcp_servers.clear();
  return std::shared_ptr<const agent::AgentConfig>(a);
}

// The parent's editor, asked about a child's tool call: the same session, the call named after
// the subagent and tied to the task call.
class ChildPrompter : public agent::PermissionPrompter {
 public:
  ChildPrompter(agent::PermissionPrompter* parent, std::string session_id, std::string agent,
                std::string task_call)
      : parent_(parent),
        session_id_(std::move(session_id)),
        agent_(std::move(agent)),
        task_call_(std::move(task_call)) {}
  agent::PermissionDecision RequestPermission(const std::string& /*child_session*/,
                                              const agent::PermissionRequest& request,
                                              const CancelToken& cancel) override {
    agent::PermissionRequest r = request;
    r.tool_call_id = task_call_ + "/" + request.tool_call_id;
    r.title = agent_ + ": " + request.title;
    r.subagent = agent_;
    r.parent_tool_call_id = task_call_;
    return parent_->RequestPermission(session_id_, r, cancel);
  }

 private:
  agent::PermissionPrompter* parent_;
  std::string session_id_, agent_, task_call_;
};

// The parent's editor buffers, read and written under the parent's session (the editor knows
// no other).
class ChildFiles : public agent::FileAccess {
 public:
  ChildFiles(agent::FileAccess* parent, std::string session_id)
      : parent_(parent), session_id_(std::move(session_id)) {}
  bool CanReadTextFile() const override { return parent_->CanReadTextFile(); }
  bool CanWriteTextFile() const override { return parent_->CanWriteTextFile(); }
  Result<std::string> ReadTextFile(const std::string& /*child*/, const std::string& path, int line,
                                   int limit, const CancelToken& cancel) override {
    return parent_->ReadTextFile(session_id_, path, line, limit, cancel);
  }
  Status WriteTextFile(const std::string& /*child*/, const std::string& path,
                       const std::string& content, const CancelToken& cancel) override {
    return parent_->WriteTextFile(session_id_, path, content, cancel);
  }

 private:
  agent::FileAccess* parent_;
  std::string session_id_;
};

// One child's run: its summary for the editor, its answer, and the end of its turn.
struct ChildRun {
  agent::event::SubagentStep step;
  std::function<void(const agent::event::SubagentStep&)> show;
  std::chrono::steady_clock::time_point shown_at{};
  std::string answer;
  int tool_calls = 0;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::optional<Result<agent::TurnResult>> result;

  // The child's sink (its worker, one event at a time).
  void OnEvent(const agent::Event& e) {
    step.refresh = Summarize(e);
    if (step.refresh) shown_at = std::chrono::steady_clock::now();
    step.event = &e;
    if (show) show(step);
    step.event = nullptr;
  }
  // Updates the summary; true when it should be shown again.
  bool Summarize(const agent::Event& e) {
    namespace ev = agent::event;
    if (const auto* s = std::get_if<ev::ToolExecutionStart>(&e)) {
      if (!s->call) return false;
      ++tool_calls;
      step.calls.push_back({s->call->id, s->call->title, "in_progress"});
      return true;
    }
    if (const auto* end = std::get_if<ev::ToolExecutionEnd>(&e)) {
      for (auto& c : step.calls)
        if (end->call && c.id == end->call->id) c.status = end->is_error ? "failed" : "completed";
      return true;
    }
    if (const auto* u = std::get_if<ev::MessageUpdate>(&e)) {
      if (!u->partial || !u->delta || u->delta->kind != agent::DeltaKind::kText) return false;
      step.text = u->partial->TextContent();
      return std::chrono::steady_clock::now() - shown_at >= kTextRefresh;
    }
    if (const auto* m = std::get_if<ev::MessageEnd>(&e)) {
      if (!m->message || m->message->role != agent::Role::kAssistant) return false;
      step.text = m->message->TextContent();
      if (!step.text.empty()) answer = step.text;
      return true;
    }
    return false;
  }
  void Finish(Result<agent::TurnResult> r) {
    std::lock_guard<std::mutex> lock(mu);
    result = std::move(r);
    done = true;
    cv.notify_all();
  }
  Result<agent::TurnResult> Wait() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return done; });  // the child ends: the parent's cancel cancels it
    return *result;
  }
};

// The answer as the parent gets it: at most `max` bytes, cut on a character boundary.
std::string CappedAnswer(std::string text, size_t max, const std::string& file) {
  if (text.size() <= max) return text;
  const size_t more = text.size() - max;
  text.resize(max);
  text.resize(max - IncompleteUtf8Tail(text));
  text += "\n\n[The answer is cut here: " + std::to_string(more) + " more bytes" +
          (file.empty() ? "" : "; the whole is in " + file) + "]";
  return text;
}

// A file-name-safe form of a tool call id.
std::string SafeId(const std::string& id) {
  std::string out;
  for (char c : id)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out.empty() ? "task" : out.substr(0, 64);
}

void Close(agent::Session& child) {
  std::mutex mu;
  std::condition_variable cv;
  bool closed = false;
  child.Close([&] {
    std::lock_guard<std::mutex> lock(mu);
    closed = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return closed; });
  lock.unlock();
  child.WaitIdle();
}

}  // namespace

std::vector<config::SubagentSpec> LoadSubagentFiles(const fs::path& dir,
                                                    std::vector<std::string>* warnings) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".md" && it->is_regular_file(ec)) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  std::vector<config::SubagentSpec> out;
  for (const fs::path& f : files) {
    Result<std::string> text = ReadDiskFile(f, kMaxAgentFileBytes);
    Result<config::SubagentSpec> a =
        text.ok() ? [&] {
          const agent::rules::FrontMatter fm = agent::rules::ParseFrontMatter(*text);
          return config::SubagentFromFields(f.stem().string(), fm.fields, fm.body, f.string(), {});
        }()
                  : Result<config::SubagentSpec>(text.error());
    if (a.ok()) {
      out.push_back(std::move(*a));
    } else if (warnings) {
      warnings->push_back("agent file skipped: " + a.error().message);
    }
  }
  return out;
}

config::SubagentsSpec SubagentsFor(const config::AgentSpec* spec, const fs::path& cwd,
                                   std::vector<std::string>* warnings) {
  config::SubagentsSpec out = spec ? spec->agents : config::SubagentsSpec{};
  std::vector<std::string> shadowed;
  if (spec && !spec->dir.empty())
    config::AddSubagents(out.agents, LoadSubagentFiles(fs::path(spec->dir) / "agents", warnings),
                         &shadowed);
  config::AddSubagents(out.agents, LoadSubagentFiles(cwd / ".lousho" / "agents", warnings),
                       &shadowed);
  const fs::path root = RepositoryRoot(cwd);
  if (!root.empty() && root != cwd)
    config::AddSubagents(out.agents, LoadSubagentFiles(root / ".lousho" / "agents", warnings),
                         &shadowed);
  if (out.general_purpose)
    config::AddSubagents(out.agents, {config::GeneralPurposeAgent()}, &shadowed);
  if (warnings)
    for (const std::string& s : shadowed) warnings->push_back("agent shadowed: " + s);
  return out;
}

SubagentRunner::SubagentRunner(SubagentPlace place) : place_(std::move(place)) {}

std::vector<agent::SubagentInfo> SubagentRunner::List() const {
  std::vector<agent::SubagentInfo> out;
  for (const auto& a : place_.agents->agents) out.push_back({a.name, a.description});
  return out;
}

const config::SubagentSpec* SubagentRunner::Find(const std::string& name) const {
  const std::string wanted = name.empty() ? "general-purpose" : name;
  for (const auto& a : place_.agents->agents)
    if (a.name == wanted) return &a;
  return nullptr;
}

fs::path SubagentFolder(const fs::path& session_file) {
  return session_file.parent_path() / (session_file.stem().string() + ".tasks");
}

void RemoveSubagentFiles(const fs::path& session_file) {
  std::error_code ec;
  fs::remove_all(SubagentFolder(session_file), ec);
  if (ec) log::Warn("cannot remove " + SubagentFolder(session_file).string() + ": " + ec.message());
}

fs::path SubagentRunner::ChildFile(const std::string& child_id) const {
  return SubagentFolder(place_.parent_file) / (child_id + ".jsonl");
}

Result<agent::SubagentAnswer> SubagentRunner::Run(const agent::SubagentTask& task,
                                                  const agent::ToolContext& ctx) {
  const config::SubagentSpec* spec = Find(task.agent);
  if (spec == nullptr) {
    std::vector<std::string> names;
    for (const auto& a : place_.agents->agents) names.push_back(a.name);
    return MakeError(ErrorCode::kInvalidParams, "no agent named '" + task.agent +
                                                    "' (agents: " + JoinStrings(names, ", ") + ")");
  }
  auto child_agent = ChildAgent(*place_.agent, *spec, place_.agents->tool_name, ctx.plan_mode);
  if (!child_agent.ok()) return child_agent.error();

  ChildPrompter prompter(place_.services.permissions, ctx.session_id, spec->name, ctx.tool_call_id);
  std::optional<ChildFiles> files;
  if (place_.services.files) files.emplace(place_.services.files, ctx.session_id);
  auto run = std::make_shared<ChildRun>();
  run->step.agent = spec->name;
  run->step.depth = place_.depth;
  run->show = ctx.on_subagent;

  agent::SessionOptions o;
  o.id = ctx.session_id + "-" + SafeId(ctx.tool_call_id);
  o.cwd = ctx.cwd;
  if (ctx.roots.size() > 1) o.additional_roots.assign(ctx.roots.begin() + 1, ctx.roots.end());
  o.services.permissions = place_.services.permissions ? &prompter : nullptr;
  o.services.files = files ? &*files : nullptr;
  o.pool = place_.pool;
  o.auto_title = false;
  o.sink = [run](const agent::Event& e) { run->OnEvent(e); };
  if (!place_.parent_file.empty()) {
    fs::path file = ChildFile(o.id);
    for (int n = 2; fs::exists(file); ++n) file = ChildFile(o.id + "-" + std::to_string(n));
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    agent::SessionHeader header;
    header.id = file.stem().string();
    header.timestamp_ms = agent::NowMs();
    header.cwd = o.cwd.string();
    header.agent = (*child_agent)->name;
    header.parent_session = place_.parent_file;
    o.id = header.id;
    o.session_file = file.string();
    o.recorder = agent::SessionWriter::ForNew(file, std::move(header));
  }
  run->step.session_id = o.id;
  const bool nested = place_.depth < place_.agents->max_depth;
  SubagentPlace inner = place_;
  inner.agent = *child_agent;
  inner.parent_file = o.session_file;
  ++inner.depth;
  Result<std::shared_ptr<agent::Session>> child =
      agent::Session::Create(*child_agent, std::move(o));
  if (!child.ok()) return child.error();
  std::shared_ptr<agent::Session> session = *child;
  if (nested) {
    agent::tools::TaskToolOptions t;
    t.name = place_.agents->tool_name;
    t.agents = List();
    t.max_parallel = place_.agents->max_parallel;
    t.runner = std::make_shared<SubagentRunner>(std::move(inner));
    session->tools().Add(agent::tools::MakeTaskTool(std::move(t)));
  }

  Result<agent::TurnResult> result = MakeError(ErrorCode::kCancelled, "cancelled");
  Status started =
      session->Prompt({agent::ContentBlock::Text(task.prompt)},
                      [run](Result<agent::TurnResult> r) { run->Finish(std::move(r)); });
  if (started.ok()) {
    // The parent's cancel reaches the child at once, from whichever thread cancels (at once
    // here when it came before).
    ScopedCancelCallback on_cancel(ctx.cancel, [session] { session->Cancel(CancelCause::kUser); });
    result = run->Wait();
  } else {
    result = started.error();
  }
  Close(*session);

  agent::SubagentAnswer answer;
  answer.agent = spec->name;
  answer.session_id = session->info().id;
  answer.session_file = session->info().session_file;
  answer.tool_calls = run->tool_calls;
  if (!result.ok()) {
    answer.is_error = true;
    answer.cancelled = ctx.cancel.cancelled();
    answer.stop_reason = answer.cancelled ? "cancelled" : "error";
    answer.text = answer.cancelled ? "Cancelled by the user."
                                   : "The subagent failed: " + result.error().message;
    return answer;
  }
  answer.usage = result->usage;
  answer.stop_reason = agent::TurnStopName(result->stop);
  answer.cancelled = result->stop == agent::TurnStop::kCancelled;
  answer.is_error = answer.cancelled;
  std::string text = answer.cancelled ? "Cancelled by the user." : run->answer;
  if (text.empty()) text = "(The subagent gave no answer.)";
  answer.text = CappedAnswer(std::move(text), place_.agents->max_result_bytes, answer.session_file);
  return answer;
}

void AttachSubagents(agent::Session& session, const config::AgentSpec* spec, SubagentPlace place) {
  if (!place.agent || !OffersTask(*place.agent)) return;
  std::vector<std::string> warnings;
  auto agents =
      std::make_shared<config::SubagentsSpec>(SubagentsFor(spec, session.info().cwd, &warnings));
  if (agents->max_depth < place.depth || agents->agents.empty()) {  // no subagents at all
    session.tools().Remove("task");
    return;
  }
  for (const std::string& w : warnings) log::Warn(w);
  place.agents = agents;
  place.parent_file = session.info().session_file;
  agent::tools::TaskToolOptions t;
  t.name = agents->tool_name;
  t.max_parallel = agents->max_parallel;
  auto runner = std::make_shared<SubagentRunner>(std::move(place));
  t.agents = runner->List();
  t.runner = std::move(runner);
  if (t.name != "task") session.tools().Remove("task");
  session.tools().Add(agent::tools::MakeTaskTool(std::move(t)));
}

}  // namespace lousho::host
