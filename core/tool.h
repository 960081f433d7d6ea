// The built-in tool interface: schema for the model, presentation for the editor, and Run.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/client_services.h"
#include "core/content.h"
#include "support/cancel.h"
#include "support/sandbox.h"
#include "support/status.h"

namespace lousho::agent {

namespace event {
struct SubagentStep;  // core/events.h
}
namespace tools {
class JobTable;      // agent/tools/jobs.h
class SavedOutputs;  // agent/tools/tool_util.h
}  // namespace tools

struct PlanEntry {
  std::string content;
  std::string priority = "medium";  // high | medium | low
  std::string status = "pending";   // pending | in_progress | completed
};

// A session's todo list in phases (a host sets it; the todo tool's plan becomes one phase).
struct TodoTask {
  std::string id;
  std::string content;
  std::string status = "pending";  // pending | in_progress | completed | abandoned | blocked
  std::string blocker;
  bool open() const { return status == "pending" || status == "in_progress"; }
};
struct TodoPhase {
  std::string id;
  std::string name;
  std::vector<TodoTask> tasks;
};

// Everything a tool run may touch. Owned by the session worker for the duration of one call.
struct ToolContext {
  std::string session_id;
  std::string tool_call_id;   // the model's id of this call
  bool plan_mode = false;     // the session is in plan mode: what the call starts changes nothing
  std::filesystem::path cwd;  // absolute session root
  std::vector<std::filesystem::path> roots;  // allowed roots; roots[0] == cwd
  CancelToken cancel;
  ClientServices services;  // what the client offers; each capability may be null
  // Progress for the editor while the tool runs (e.g. a terminal id to embed). May be empty.
  std::function<void(const std::string& terminal_id)> on_terminal;
  // Output so far while the tool runs (bash streams its output), with what is new since the last
  // call (empty when the tool only knows the whole). May be empty.
  std::function<void(const std::string& output, const std::string& delta)> on_output;
  // A progress note while the tool runs ("3/5", an MCP server's progress). May be empty.
  std::function<void(const std::string& note)> on_progress;
  // The session's plan (todo tool). May be null.
  std::vector<PlanEntry>* plan = nullptr;
  // Switches the session's mode by id (switch_mode tool). May be empty.
  std::function<Status(const std::string& mode_id)> set_mode;
  // "About to change path P": called before a file is changed (write, edit, a hook) so that the
  // session's checkpoints keep what it holds now (agent/checkpoints.h). `after`: the content
  // about to be written (null: not known). May be empty.
  std::function<void(const std::filesystem::path& path, const std::string* after)> before_change;
  // The kernel sandbox the call's commands run in (support/sandbox.h); null: not confined.
  std::shared_ptr<const SandboxPolicy> sandbox;
  // A step of a subagent this call runs (the task tool), for the editor. May be empty; may be
  // called from another thread than the one running the tool (never two at once).
  std::function<void(const event::SubagentStep& step)> on_subagent;
  // The session's background jobs (bash `background`, bash_output, bash_kill). May be null.
  tools::JobTable* jobs = nullptr;
  // Where outputs cut for the model are kept whole (tools::SavedOutputs). May be null.
  tools::SavedOutputs* saved_outputs = nullptr;
};

// A resource a tool result points to or embeds (MCP `resource_link` / `resource`), for the
// editor; the model gets it as text in `content`.
struct ResourceRef {
  std::string uri;
  std::string name;
  std::string mime_type;
  bool embedded = false;
  std::optional<std::string> text;  // embedded text
  std::optional<std::string> blob;  // embedded binary, base64
};

// The most of a tool's machine-readable result (ToolOutput::details) that reaches the editor
// (ACP rawOutput, the RPC door's details) and the session file, written as JSON: larger details
// are replaced by DetailsTooLarge() when the call completes. The model's content has its own
// limits.
inline constexpr size_t kMaxToolDetailsBytes = size_t{256} * 1024;
inline Json::Value DetailsTooLarge() {
  Json::Value d(Json::objectValue);
  d["truncated"] = true;
  d["note"] = "The raw result is over " + std::to_string(kMaxToolDetailsBytes / 1024) +
              " KiB and is not kept; the content shows what the model got.";
  return d;
}

// What a tool run produced.
struct ToolOutput {
  std::vector<ContentBlock> content;  // text / image blocks for the model
  bool is_error = false;
  Json::Value details;                 // machine-readable result (ACP rawOutput)
  std::vector<FileDiff> diffs;         // write/edit: what changed
  std::string terminal_id;             // bash via editor terminal
  bool plan_changed = false;           // todo: ctx.plan was updated
  bool ends_turn = false;              // ask: the turn ends; content text is the question
  std::vector<ResourceRef> resources;  // MCP: resources shown to the editor
  Usage usage;  // model calls the tool made (a subagent's); added to the prompt's usage

  static ToolOutput Error(std::string message) {
    ToolOutput o;
    o.is_error = true;
    o.content.push_back(ContentBlock::Text(std::move(message)));
    return o;
  }
  static ToolOutput Text(std::string text) {
    ToolOutput o;
    o.content.push_back(ContentBlock::Text(std::move(text)));
    return o;
  }
};

// One path a call changes, decided by the permission rules on its own (see
// Tool::PermissionTargets).
struct PermissionTarget {
  std::string subject;   // the path, as PermissionSubject gives one (relative to cwd or absolute)
  std::string rules_of;  // the tool whose rules decide it too: "write" (created) or "edit"
};

// A built-in tool. Stateless apart from configuration; Run may be called from several session
// workers at once.
class Tool {
 public:
  virtual ~Tool() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual Json::Value parameters() const = 0;  // JSON schema of the arguments
  virtual ToolKind kind() const = 0;
  // Read-only tools may run in parallel and are allowed in plan mode.
  virtual bool read_only() const = 0;
  // A human title for the editor, e.g. "Read src/main.cpp:10-40".
  virtual std::string Title(const Json::Value& args, const ToolContext& ctx) const = 0;
  virtual std::vector<ToolLocation> Locations(const Json::Value& /*args*/,
                                              const ToolContext& /*ctx*/) const {
    return {};
  }
  // The string permission patterns match against (bash: the command; file tools: the path
  // relative to cwd).
  virtual std::string PermissionSubject(const Json::Value& args) const = 0;
  // Every path the call changes, each decided by the rules as its own call would be (apply_patch:
  // a new file as `write`, a changed, deleted or moved file as `edit`); empty: the call has the
  // one PermissionSubject. One denied path denies the call; the user is asked once for the rest.
  virtual std::vector<PermissionTarget> PermissionTargets(const Json::Value& /*args*/) const {
    return {};
  }
  // Why the call cannot run, found before the user is asked about it (a patch naming a path
  // outside the workspace, a hunk that does not apply); "" when it may run.
  virtual std::string CheckBeforeAsking(const Json::Value& /*args*/,
                                        const ToolContext& /*ctx*/) const {
    return {};
  }
  // Diffs to preview in a permission request (write/edit), computed without writing.
  virtual std::vector<FileDiff> Preview(const Json::Value& /*args*/,
                                        const ToolContext& /*ctx*/) const {
    return {};
  }
  virtual ToolOutput Run(const Json::Value& args, ToolContext& ctx) = 0;
  // True for tools from outside (MCP): without a rule that allows them, they are asked about
  // even when read-only (their read-only hint is the server's word, not ours).
  virtual bool asks_by_default() const { return false; }
  // Offered to the model in plan mode. Built-in tools always are (the policy explains a denial);
  // outside tools only when read-only.
  virtual bool offered_in_plan_mode() const { return true; }
  // How many calls of this tool in one message may run side by side (a subagent each); 0: only
  // read-only look-ups run side by side.
  virtual int max_parallel() const { return 0; }
};

// Tools that may change while a session runs (an MCP server's list changes, a server comes
// back). The session asks for the current set before each model request, on its worker.
class ToolSource {
 public:
  virtual ~ToolSource() = default;
  // The tools now; may refresh them first (bounded by the source's timeouts and `cancel`).
  virtual std::vector<std::shared_ptr<Tool>> CurrentTools(const CancelToken& cancel) = 0;
  // The session is closing: release what the tools hold (stop servers). Called once, on the
  // session's worker after its last turn.
  virtual void Close() = 0;
};

// Creates the built-in tool of that name, or null.
std::unique_ptr<Tool> MakeBuiltinTool(const std::string& name);
// The built-in tools an agent has when its spec lists none, in a stable order.
const std::vector<std::string>& BuiltinToolNames();
// Every built-in tool name a spec may list: those and the ones that are off unless listed
// (fetch).
const std::vector<std::string>& KnownToolNames();

}  // namespace lousho::agent
