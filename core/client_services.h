// What the engine asks of the editor or host: one small interface per capability, each optional.
#pragma once

#include <json/json.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/content.h"
#include "support/cancel.h"
#include "support/status.h"

namespace lousho::agent {

// What a permission request shows: the tool call as the editor already knows it.
struct PermissionRequest {
  std::string tool_call_id;
  std::string tool_name;
  std::string title;
  ToolKind kind = ToolKind::kOther;
  Json::Value raw_input;
  std::vector<ToolLocation> locations;
  std::vector<FileDiff> diffs;
  // A subagent's call: its name and the parent's `task` call it runs under (empty: none).
  std::string subagent;
  std::string parent_tool_call_id;
};

enum class PermissionDecision { kAllowOnce, kAllowAlways, kRejectOnce, kRejectAlways, kCancelled };

struct TerminalRequest {
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string cwd;                  // absolute
  long long output_byte_limit = 0;  // 0: none
};

struct TerminalExit {
  std::optional<int> exit_code;
  std::optional<std::string> signal;
};

struct TerminalOutput {
  std::string output;
  bool truncated = false;
  std::optional<TerminalExit> exit;
};

// What the engine may ask of the outside world, as separate capabilities: a door implements the
// ones its client has and leaves the others null. A missing capability never becomes a protocol
// error: the engine does the work itself (files on disk, commands in a local process) or the
// feature is unavailable (no prompt: calls the policy asks about run; no dialog: the tool says so).
// Every call may block until the client answers, the token is cancelled (then it returns promptly
// with an error or kCancelled), or the connection closes. Thread-safe: called from session workers
// and tool threads.

// Asks the user whether a tool call may run.
class PermissionPrompter {
 public:
  virtual ~PermissionPrompter() = default;
  virtual PermissionDecision RequestPermission(const std::string& session_id,
                                               const PermissionRequest& request,
                                               const CancelToken& cancel) = 0;
};

// The editor's view of files (unsaved buffers included).
class FileAccess {
 public:
  virtual ~FileAccess() = default;
  virtual bool CanReadTextFile() const = 0;
  virtual bool CanWriteTextFile() const = 0;
  // `line` (1-based) and `limit` 0 mean the whole file.
  virtual Result<std::string> ReadTextFile(const std::string& session_id, const std::string& path,
                                           int line, int limit, const CancelToken& cancel) = 0;
  virtual Status WriteTextFile(const std::string& session_id, const std::string& path,
                               const std::string& content, const CancelToken& cancel) = 0;
};

// Terminals the client runs and shows.
class Terminals {
 public:
  virtual ~Terminals() = default;
  virtual Result<std::string> CreateTerminal(const std::string& session_id,
                                             const TerminalRequest& request,
                                             const CancelToken& cancel) = 0;
  virtual Result<TerminalOutput> GetTerminalOutput(const std::string& session_id,
                                                   const std::string& terminal_id) = 0;
  // Blocks until the command exits or `cancel` fires (then returns an error).
  virtual Result<TerminalExit> WaitForTerminalExit(const std::string& session_id,
                                                   const std::string& terminal_id,
                                                   const CancelToken& cancel) = 0;
  virtual Status KillTerminal(const std::string& session_id, const std::string& terminal_id) = 0;
  virtual Status ReleaseTerminal(const std::string& session_id, const std::string& terminal_id) = 0;
};

// Questions a host shows its user (select / confirm / input / editor). nullopt: dismissed.
class Dialogs {
 public:
  virtual ~Dialogs() = default;
  virtual Result<std::optional<std::string>> Select(const std::string& session_id,
                                                    const std::string& title,
                                                    const std::vector<std::string>& options,
                                                    const CancelToken& cancel) = 0;
  virtual Result<std::optional<bool>> Confirm(const std::string& session_id,
                                              const std::string& title, const std::string& message,
                                              const CancelToken& cancel) = 0;
  virtual Result<std::optional<std::string>> Input(const std::string& session_id,
                                                   const std::string& title,
                                                   const std::string& placeholder,
                                                   const CancelToken& cancel) = 0;
  virtual Result<std::optional<std::string>> Editor(const std::string& session_id,
                                                    const std::string& title,
                                                    const std::string& prefill,
                                                    const CancelToken& cancel) = 0;
  // Puts text in the user's input editor (a rewound message, to edit); no answer. Default: none.
  virtual void SetEditorText(const std::string& session_id, const std::string& text) {
    (void)session_id;
    (void)text;
  }
};

// A tool the host runs (its schema comes with it); the result is what the model sees.
struct HostToolSpec {
  std::string name;
  std::string description;
  Json::Value parameters;  // JSON schema
};
struct HostToolResult {
  std::vector<ContentBlock> content;
  bool is_error = false;
  Json::Value details;
};
class HostTools {
 public:
  virtual ~HostTools() = default;
  virtual std::vector<HostToolSpec> List() const = 0;
  // Blocks until the host answers or `cancel` fires (the host is told; an error returns).
  // `on_update` (may be empty) gets the host's partial results while it works.
  virtual Result<HostToolResult> Call(
      const std::string& session_id, const std::string& tool_call_id, const std::string& name,
      const Json::Value& args, const CancelToken& cancel,
      const std::function<void(const HostToolResult& partial)>& on_update) = 0;
};

// Structured questions and browser steps (ACP `elicitation/create`). A form asks for a few
// fields at once; a URL step sends the user to a page (a login) and waits for it to finish.
enum class ElicitationAction { kAccept, kDecline, kCancel };

// One choice of a form field: the value answered and the text shown.
struct FormChoice {
  std::string value;
  std::string title;
};
struct FormField {
  enum class Kind { kText, kChoice, kMultiChoice };
  std::string name;  // the key of its answer
  std::string title;
  std::string description;
  Kind kind = Kind::kText;
  std::vector<FormChoice> choices;  // kChoice, kMultiChoice
  bool required = true;
};
struct FormRequest {
  std::string message;       // what is asked, shown above the fields
  std::string tool_call_id;  // the tool call asking (may be empty)
  std::vector<FormField> fields;
};
// kAccept with each field's answer: a string (kText, kChoice) or the chosen values in order
// (kMultiChoice); a field the user left empty is absent. Values the door checked: a choice is
// always one of the field's choices.
struct FormReply {
  ElicitationAction action = ElicitationAction::kCancel;
  std::map<std::string, std::vector<std::string>> answers;
};
// A step the user takes in a browser (a login): `url` to open, `message` why.
struct UrlRequest {
  std::string elicitation_id;  // unique among the session's URL steps
  std::string url;
  std::string message;
  std::string tool_call_id;  // may be empty
};

class Elicitation {
 public:
  virtual ~Elicitation() = default;
  virtual bool CanAskForm() const = 0;
  virtual bool CanOpenUrl() const = 0;
  // Shows the form; returns what the user did. An error when the client failed or `cancel`
  // fired (kCancelled).
  virtual Result<FormReply> AskForm(const std::string& session_id, const FormRequest& request,
                                    const CancelToken& cancel) = 0;
  // Asks the user to open `request.url` and waits for the step to finish: kAccept once `done`
  // fires (the caller saw it finish, e.g. its login redirect arrived; the client is told) or the
  // user says it is finished (where the client can only ask); kDecline or kCancel when the user
  // refuses or dismisses it. An error when `cancel` fires or the client failed.
  virtual Result<ElicitationAction> OpenUrl(const std::string& session_id,
                                            const UrlRequest& request, const CancelToken& done,
                                            const CancelToken& cancel) = 0;
};

// The capabilities one session may use; each null when its client lacks it. Plain value; the
// pointed-to objects outlive the session.
struct ClientServices {
  PermissionPrompter* permissions = nullptr;
  FileAccess* files = nullptr;
  Terminals* terminals = nullptr;
  Dialogs* dialogs = nullptr;
  HostTools* host_tools = nullptr;
  Elicitation* elicitation = nullptr;
};

}  // namespace lousho::agent
