// One session's kernel sandbox (support/sandbox.h): the policy each command gets in the
// session's permission mode, the notice when the kernel cannot confine, and the escalation of a
// `bash` call that asks to run outside the sandbox ("sandbox": "off").
#pragma once

#include <json/json.h>

#include <array>
#include <memory>
#include <mutex>
#include <string>

#include "agent/permissions.h"
#include "config/sandbox_spec.h"
#include "core/tool.h"
#include "support/sandbox.h"

namespace lousho::agent {

// What a call asking to run outside the sandbox gets.
struct OutsideSandbox {
  bool wanted = false;   // the call asks for it ("sandbox": "off") and the sandbox is on
  bool asks = false;     // the user must be asked ("Run outside the sandbox: …?")
  bool allowed = false;  // an "always" answer for this command prefix allows it without asking
  std::string refusal;   // set: the spec refuses it (escalation: deny); the model's message
  std::string title;     // the permission prompt's title
};

// Thread-safe: the session's worker and parallel look-ups read it; answers are remembered under a
// lock.
class SandboxGuard {
 public:
  SandboxGuard(config::SandboxSpec spec, config::SandboxPlace place);

  // The sandbox of a command started in `mode`; null when commands are not confined. Built once
  // per mode.
  std::shared_ptr<const SandboxPolicy> PolicyFor(PermissionMode mode) const;
  // The policy hooks run in (the spec's base mode); null: none.
  std::shared_ptr<const SandboxPolicy> HookPolicy() const;
  // What the editor is told once per session, before the first command: the kernel cannot
  // confine (or only partly), or nothing ("").
  std::string Notice() const;
  // Notice() the first time, then "" (the session tells it once).
  std::string TakeNotice();

  // A `bash` call's request to run outside the sandbox, in `mode`.
  OutsideSandbox Outside(const Tool& tool, const Json::Value& args, PermissionMode mode) const;
  // "Always for this command prefix": later calls of the prefix run outside without asking.
  void RememberOutside(const Tool& tool, const Json::Value& args);

 private:
  config::SandboxSpec spec_;
  config::SandboxPlace place_;
  mutable std::mutex mu_;
  mutable std::array<std::shared_ptr<const SandboxPolicy>, 4> by_mode_;  // guarded by mu_
  mutable std::array<bool, 4> built_{};                                  // guarded by mu_
  PermissionPolicy remembered_;  // the "always" answers, as allow rules (thread-safe)
  bool told_ = false;            // guarded by mu_
};

// The place of a session's commands: its folder and roots, $HOME, $TMPDIR, lousho setup's
// credentials file.
config::SandboxPlace SandboxPlaceOf(const std::filesystem::path& cwd,
                                    const std::vector<std::filesystem::path>& roots);

}  // namespace lousho::agent
