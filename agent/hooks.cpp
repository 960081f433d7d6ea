// Running hooks: matching, the command on the subprocess runner, and what its answer means.
#include "agent/hooks.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "agent/git_snapshot.h"
#include "support/json_util.h"
#include "support/log.h"
#include "support/regex.h"
#include "support/subprocess.h"

namespace lousho::agent {

using config::HookEvent;

// One command with its compiled matcher.
struct HookRunner::Hook {
  HookEvent event = HookEvent::kPreToolUse;
  config::HookCommand command;
  bool always = true;                  // no matcher, "" or "*"
  std::vector<std::string> names;      // exact names (compared ignoring case)
  std::shared_ptr<const Regex> regex;  // else a pattern, searched ignoring case

  bool Matches(const std::string& subject) const {
    if (always || subject.empty()) return true;
    if (regex) {
      Result<bool> hit = regex->Search(subject);
      return hit.ok() && *hit;
    }
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return n.size() == subject.size() &&
             std::equal(n.begin(), n.end(), subject.begin(), [](char a, char b) {
               return std::tolower(static_cast<unsigned char>(a)) ==
                      std::tolower(static_cast<unsigned char>(b));
             });
    });
  }
};

namespace {

std::string TrimHookText(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// Names only (letters, digits, _ - space , |): a list of exact names; anything else a pattern.
bool IsNameList(const std::string& m) {
  return std::all_of(m.begin(), m.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == ' ' ||
           c == ',' || c == '|';
  });
}

std::vector<std::string> SplitNames(const std::string& m) {
  std::vector<std::string> names;
  std::string cur;
  for (char c : m + "|") {
    if (c == '|' || c == ',') {
      cur = TrimHookText(cur);
      if (!cur.empty()) names.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return names;
}

std::string ShortCommand(const std::string& command) {
  std::string one = command.substr(0, command.find('\n'));
  if (one.size() > 80 || one.size() < command.size()) one = one.substr(0, 77) + "...";
  return one;
}

std::string CutContext(std::string text) {
  if (text.size() > kMaxHookContextChars)
    text = text.substr(0, kMaxHookContextChars) + "\n[cut: hook context is limited to " +
           std::to_string(kMaxHookContextChars) + " characters]";
  return text;
}

std::string DurationText(long ms) {
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

HookDecision ParseHookDecision(const std::string& s) {
  if (s == "allow" || s == "approve") return HookDecision::kAllow;
  if (s == "ask") return HookDecision::kAsk;
  if (s == "deny" || s == "block") return HookDecision::kDeny;
  return HookDecision::kNone;
}

}  // namespace

HookRunner::HookRunner(const config::HooksSpec& spec, HookPlace place, HookTell tell)
    : place_(std::move(place)),
      tell_(std::move(tell)),
      default_timeout_ms_(spec.default_timeout_ms) {
  AddHooks(spec.groups);
  if (!spec.project) return;
  config::ParsedHooks project = config::LoadProjectHooks(place_.cwd);
  AddHooks(std::move(project.groups));
  for (std::string& s : project.skipped) notes_.push_back(std::move(s));
}

HookRunner::~HookRunner() = default;

void HookRunner::AddHooks(std::vector<config::HookGroup> groups) {
  for (config::HookGroup& g : groups) {
    Hook proto;
    proto.event = g.event;
    const std::string m = TrimHookText(g.matcher);
    proto.always = m.empty() || m == "*";
    if (!proto.always && IsNameList(m)) {
      proto.names = SplitNames(m);
    } else if (!proto.always) {
      RegexOptions ro;
      ro.case_insensitive = true;
      Result<Regex> re = Regex::Compile(m, ro);
      if (!re.ok()) {
        notes_.push_back(std::string(config::HookEventName(g.event)) + " matcher '" + m +
                         "': " + re.error().message + "; its hooks skipped");
        continue;
      }
      proto.regex = std::make_shared<const Regex>(std::move(*re));
    }
    for (config::HookCommand& c : g.hooks) {
      Hook h = proto;
      h.command = std::move(c);
      hooks_.push_back(std::move(h));
    }
  }
}

bool HookRunner::Has(HookEvent event, const std::string& subject) const {
  return std::any_of(hooks_.begin(), hooks_.end(),
                     [&](const Hook& h) { return h.event == event && h.Matches(subject); });
}

HookVerdict HookRunner::BeforeTool(const std::string& tool, const std::string& call_id,
                                   const Json::Value& input, const CancelToken& cancel) {
  Json::Value in(Json::objectValue);
  in["tool_name"] = tool;
  in["tool_input"] = input;
  in["tool_use_id"] = call_id;
  return Run(HookEvent::kPreToolUse, tool, std::move(in), cancel);
}

HookVerdict HookRunner::AfterTool(const std::string& tool, const std::string& call_id,
                                  const Json::Value& input, const Json::Value& response,
                                  const CancelToken& cancel) {
  Json::Value in(Json::objectValue);
  in["tool_name"] = tool;
  in["tool_input"] = input;
  in["tool_response"] = response;
  in["tool_use_id"] = call_id;
  return Run(HookEvent::kPostToolUse, tool, std::move(in), cancel);
}

HookVerdict HookRunner::PromptSubmitted(const std::string& prompt, const CancelToken& cancel) {
  Json::Value in(Json::objectValue);
  in["prompt"] = prompt;
  return Run(HookEvent::kUserPromptSubmit, "", std::move(in), cancel);
}

HookVerdict HookRunner::SessionStarted(bool resumed, const CancelToken& cancel) {
  if (started_) return {};
  started_ = true;
  if (!notes_.empty()) {
    std::string text = "Some hooks were not loaded:";
    for (const std::string& n : notes_) text += "\n- " + n;
    if (tell_) tell_(event::Warning{"hooks", std::move(text), "Hooks skipped", true});
    notes_.clear();
  }
  const std::string source = resumed ? "resume" : "startup";
  Json::Value in(Json::objectValue);
  in["source"] = source;
  return Run(HookEvent::kSessionStart, source, std::move(in), cancel);
}

HookVerdict HookRunner::Stopping(bool active, const CancelToken& cancel) {
  Json::Value in(Json::objectValue);
  in["stop_hook_active"] = active;
  return Run(HookEvent::kStop, "", std::move(in), cancel);
}

void HookRunner::SessionEnded(const std::string& reason) {
  if (!started_) return;
  Json::Value in(Json::objectValue);
  in["reason"] = reason;
  (void)Run(HookEvent::kSessionEnd, reason, std::move(in), CancelToken(), kSessionEndHookCapMs);
}

void HookRunner::BeforeCompact(const std::string& trigger, const std::string& instructions,
                               const CancelToken& cancel) {
  Json::Value in(Json::objectValue);
  in["trigger"] = trigger;
  in["custom_instructions"] = instructions;
  (void)Run(HookEvent::kPreCompact, trigger, std::move(in), cancel);
}

HookVerdict HookRunner::Run(HookEvent event, const std::string& subject, Json::Value input,
                            const CancelToken& cancel, long cap_ms) {
  HookVerdict verdict;
  input["session_id"] = place_.session_id;
  input["transcript_path"] = place_.session_file;
  input["cwd"] = place_.cwd.string();
  input["hook_event_name"] = config::HookEventName(event);
  for (const Hook& h : hooks_) {
    if (h.event != event || !h.Matches(subject)) continue;
    if (cancel.cancelled()) {
      verdict.cancelled = true;
      break;
    }
    // A later hook sees the input as the earlier ones rewrote it.
    if (verdict.updated_input) input["tool_input"] = *verdict.updated_input;
    RunOne(h, input, cancel, cap_ms, verdict);
    if (verdict.cancelled || verdict.decision == HookDecision::kDeny || verdict.block ||
        verdict.stop)
      break;
  }
  return verdict;
}

void HookRunner::RunOne(const Hook& hook, const Json::Value& input, const CancelToken& cancel,
                        long cap_ms, HookVerdict& verdict) {
  const std::string cwd = place_.cwd.string();
  SubprocessOptions so;
  so.argv = {"/bin/bash", "-c", hook.command.command};
  so.cwd = cwd;
  so.env = {{"LOUSHO_PROJECT_DIR", cwd},
            {"CLAUDE_PROJECT_DIR", cwd},
            {"LOUSHO_SESSION_ID", place_.session_id},
            {"LOUSHO_HOOK_EVENT", config::HookEventName(hook.event)}};
  so.input = WriteJson(input) + "\n";
  so.separate_stderr = true;
  so.max_output_bytes = kMaxHookOutputBytes;
  so.timeout_ms = hook.command.timeout_ms > 0 ? hook.command.timeout_ms : default_timeout_ms_;
  if (cap_ms > 0) so.timeout_ms = std::min(so.timeout_ms, cap_ms);
  so.cancel = cancel;
  so.sandbox = place_.sandbox;
  // [rewind] What the hook changes in a git work tree is kept like a command's.
  CommandSnapshot snapshot =
      place_.checkpoints != nullptr && place_.change_entry
          ? CommandSnapshot::Begin(place_.checkpoints, place_.change_entry(), place_.cwd)
          : CommandSnapshot();
  Result<SubprocessResult> r = RunSubprocess(so);
  snapshot.End();
  if (!r.ok()) return Fail(hook, r.error().message);
  if (r->cancelled) {
    verdict.cancelled = true;
    return;
  }
  if (r->timed_out)
    return Fail(hook, "it did not finish within " + DurationText(so.timeout_ms) +
                          " (its processes were ended)");
  if (r->truncated)
    return Fail(hook, "it wrote more than " + std::to_string(kMaxHookOutputBytes >> 10) + " KiB");
  if (!r->exit_code)
    return Fail(hook, "it was ended by signal " + std::to_string(r->signal.value_or(0)));
  if (*r->exit_code == 2) return ExitedTwo(hook, TrimHookText(r->error_output), verdict);
  if (*r->exit_code != 0) {
    const std::string err = TrimHookText(r->error_output);
    return Fail(hook, "it exited with code " + std::to_string(*r->exit_code) +
                          (err.empty() ? "" : ": " + err.substr(0, 500)));
  }
  Interpret(hook, TrimHookText(r->output), verdict);
}

// Exit code 2: a blocking answer whose reason is stderr.
void HookRunner::ExitedTwo(const Hook& hook, std::string err, HookVerdict& verdict) {
  const std::string name = config::HookEventName(hook.event);
  if (err.empty()) err = "(the " + name + " hook gave no reason)";
  switch (hook.event) {
    case HookEvent::kPreToolUse:
      verdict.decision = HookDecision::kDeny;
      verdict.reason = std::move(err);
      return;
    case HookEvent::kPostToolUse:
      verdict.context.push_back(CutContext(std::move(err)));
      return;
    case HookEvent::kUserPromptSubmit:
    case HookEvent::kStop:
      verdict.block = true;
      verdict.reason = std::move(err);
      return;
    case HookEvent::kSessionStart:
    case HookEvent::kSessionEnd:
    case HookEvent::kPreCompact:
      if (tell_) tell_(event::Warning{"hooks", std::move(err), "The " + name + " hook says", true});
      return;
  }
}

// Exit code 0: JSON (an object) or, for the prompt and the start, text for the model.
void HookRunner::Interpret(const Hook& hook, const std::string& out, HookVerdict& verdict) {
  if (out.empty()) return;
  const HookEvent event = hook.event;
  if (out[0] != '{') {
    if (event == HookEvent::kUserPromptSubmit || event == HookEvent::kSessionStart)
      verdict.context.push_back(CutContext(out));
    return;
  }
  Result<Json::Value> parsed = ParseJson(out);
  if (!parsed.ok() || !parsed->isObject())
    return Fail(hook, "it printed invalid JSON (" +
                          (parsed.ok() ? std::string("not an object") : parsed.error().message) +
                          ")");
  const Json::Value& j = *parsed;
  if (std::optional<bool> go = AsBool(MemberOrNull(j, "continue")); go && !*go) {
    verdict.stop = true;
    verdict.stop_reason = StringOr(j, "stopReason");
  }
  if (std::string m = StringOr(j, "systemMessage"); !m.empty() && tell_)
    tell_(event::Warning{"hooks", std::move(m),
                         std::string("The ") + config::HookEventName(event) + " hook says", true});
  const Json::Value& specific = MemberOrNull(j, "hookSpecificOutput");
  const std::string decision = StringOr(j, "decision");
  if (event == HookEvent::kPreToolUse) {
    // permissionDecision, or the older top-level decision (approve / block).
    std::string said = StringOr(specific, "permissionDecision", decision);
    const HookDecision d = ParseHookDecision(said);
    if (!said.empty() && d == HookDecision::kNone)
      return Fail(hook, "unknown permissionDecision '" + said + "' (allow, deny or ask)");
    if (d > verdict.decision) {
      verdict.decision = d;
      verdict.reason = StringOr(specific, "permissionDecisionReason", StringOr(j, "reason"));
    }
    if (const Json::Value& upd = MemberOrNull(specific, "updatedInput"); upd.isObject())
      verdict.updated_input = upd;
  } else if (decision == "block") {
    verdict.block = true;
    verdict.reason = StringOr(j, "reason");
  }
  if (std::string c = StringOr(specific, "additionalContext"); !c.empty())
    verdict.context.push_back(CutContext(std::move(c)));
}

void HookRunner::Fail(const Hook& hook, const std::string& why) {
  const std::string name = config::HookEventName(hook.event);
  const std::string text = "The " + name + " hook `" + ShortCommand(hook.command.command) +
                           "` (from " + hook.command.source + ") failed: " + why + ".";
  const std::string key = name + "\n" + hook.command.source + "\n" + hook.command.command;
  if (!reported_.insert(key).second || !tell_) {
    log::Warn(text);
    return;
  }
  tell_(event::Warning{"hooks",
                       text + " It was skipped; later failures of this hook are not shown again.",
                       "A hook failed", false});
}

Message HookContextMessage(HookEvent event, const std::vector<std::string>& context) {
  std::string text = std::string(config::HookEventName(event)) + " hook additional context:";
  for (const std::string& c : context) text += "\n" + c;
  return Message::Custom("hookContext", std::move(text), false);
}

}  // namespace lousho::agent
