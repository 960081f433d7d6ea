// Hooks: the user's shell commands run at moments of a session (before and after a tool call,
// when a prompt is submitted, when the session starts and ends, when the model stops, before a
// compaction), as Claude Code runs them: JSON on stdin, an exit code and JSON or text back. Each
// runs on the one subprocess runner (its process tree contained and ended), in the session's
// folder, bounded by its timeout and cancelled with the prompt. A hook that fails is told to the
// user once and skipped.
#pragma once

#include <json/json.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/checkpoints.h"
#include "config/hooks_spec.h"
#include "core/content.h"
#include "core/events.h"
#include "support/cancel.h"
#include "support/sandbox.h"

namespace lousho {
class Regex;
}

namespace lousho::agent {

// What PreToolUse hooks decided about a call; the strongest wins (deny, then ask, then allow).
enum class HookDecision { kNone, kAllow, kAsk, kDeny };

// What the hooks of one moment said, together.
struct HookVerdict {
  HookDecision decision = HookDecision::kNone;  // PreToolUse
  // UserPromptSubmit: the prompt is refused; Stop: the model goes on; PostToolUse: the reason
  // is told to the model. Exit code 2 or "decision": "block".
  bool block = false;
  std::string reason;                        // of the deny or the block
  std::optional<Json::Value> updated_input;  // PreToolUse: the call's input rewritten
  std::vector<std::string> context;          // for the model (additionalContext, plain stdout)
  bool stop = false;                         // "continue": false: the prompt ends
  std::string stop_reason;                   // shown to the user
  bool cancelled = false;                    // the prompt was cancelled while a hook ran
};

// Where the session's hooks run.
struct HookPlace {
  std::string session_id;
  std::filesystem::path cwd;  // the hooks' working folder and LOUSHO_PROJECT_DIR
  std::string session_file;   // sent as transcript_path; may be empty
  // [rewind] Where a hook's changes to the working tree are kept (a git snapshot around each
  // hook, as around a command), under the entry `change_entry` names; none: not kept.
  CheckpointStore* checkpoints = nullptr;
  std::function<std::string()> change_entry;
  // [sandbox] The hooks' kernel sandbox; null: not confined.
  std::shared_ptr<const SandboxPolicy> sandbox;
};

// How a hook's failure or message reaches the user (the session's warning event).
using HookTell = std::function<void(const event::Warning&)>;

// The longest additionalContext kept from one hook (the rest is cut, as Claude Code does).
inline constexpr size_t kMaxHookContextChars = 10000;
// The most a hook may write to stdout or stderr; more is a failure.
inline constexpr size_t kMaxHookOutputBytes = size_t{256} << 10;
// SessionEnd hooks run while the session closes: each gets at most this long.
inline constexpr long kSessionEndHookCapMs = 5000;

// Worker only (each method runs its hooks on the calling thread, one after another, in the
// order written: the spec's first, then the project's files).
class HookRunner {
 public:
  // `spec`: the agent's hooks; the project's files in place.cwd are read too unless
  // spec.project is false.
  HookRunner(const config::HooksSpec& spec, HookPlace place, HookTell tell);
  ~HookRunner();
  HookRunner(const HookRunner&) = delete;
  HookRunner& operator=(const HookRunner&) = delete;

  // Whether any hook of `event` matches `subject` (a tool name, a start source, ...).
  bool Has(config::HookEvent event, const std::string& subject) const;

  HookVerdict BeforeTool(const std::string& tool, const std::string& call_id,
                         const Json::Value& input, const CancelToken& cancel);
  HookVerdict AfterTool(const std::string& tool, const std::string& call_id,
                        const Json::Value& input, const Json::Value& response,
                        const CancelToken& cancel);
  HookVerdict PromptSubmitted(const std::string& prompt, const CancelToken& cancel);
  // Once per session (later calls do nothing): `resumed` for a session with a stored history.
  // Also tells the user once what was skipped reading the hook files.
  HookVerdict SessionStarted(bool resumed, const CancelToken& cancel);
  // The model is done: `active` when it goes on because a Stop hook said so before.
  HookVerdict Stopping(bool active, const CancelToken& cancel);
  // Only after SessionStarted; each hook bounded by kSessionEndHookCapMs.
  void SessionEnded(const std::string& reason);
  void BeforeCompact(const std::string& trigger, const std::string& instructions,
                     const CancelToken& cancel);

 private:
  struct Hook;

  HookVerdict Run(config::HookEvent event, const std::string& subject, Json::Value input,
                  const CancelToken& cancel, long cap_ms = 0);
  void RunOne(const Hook& hook, const Json::Value& input, const CancelToken& cancel, long cap_ms,
              HookVerdict& verdict);
  void Interpret(const Hook& hook, const std::string& out, HookVerdict& verdict);
  void ExitedTwo(const Hook& hook, std::string err, HookVerdict& verdict);
  void Fail(const Hook& hook, const std::string& why);
  void AddHooks(std::vector<config::HookGroup> groups);

  HookPlace place_;
  HookTell tell_;
  long default_timeout_ms_;
  std::vector<Hook> hooks_;
  std::vector<std::string> notes_;  // what reading the hooks skipped, told at the start
  std::set<std::string> reported_;  // hooks whose failure the user was told
  bool started_ = false;
};

// The context hooks gave, as the model reads it (a custom message the user is not shown).
Message HookContextMessage(config::HookEvent event, const std::vector<std::string>& context);

}  // namespace lousho::agent
