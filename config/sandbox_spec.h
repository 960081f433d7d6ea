// The spec's `sandbox:` (docs/agent-spec.md, "Sandbox"): a mode name, or a map {mode, network,
// writable, deny_read, modes, required, escalation, mcp}; and the policy a command gets from it.
#pragma once

#include <json/json.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/sandbox.h"
#include "support/status.h"

namespace lousho::config {

// What a `bash` call with `"sandbox": "off"` gets.
enum class SandboxEscalation {
  kAsk,    // always the permission prompt "Run outside the sandbox: …?" (the default)
  kRules,  // the spec's opt-out: the permission rules decide as for any command
  kDeny,   // never run outside the sandbox
};

struct SandboxSpec {
  // Unset: workspace-write where the kernel has Landlock, else off.
  std::optional<SandboxMode> mode;
  bool network = true;
  bool loopback = false;  // `network: loopback`: network off but for the command's own loopback
  // More writable folders (absolute, `~/…`, or relative to the session's working folder).
  std::vector<std::string> writable;
  bool default_caches = true;          // `caches: false` empties the documented list of tool caches
  std::vector<std::string> deny_read;  // added to the documented deny list
  // Per permission mode ("plan", "default", …): its sandbox mode. plan is read-only unless set.
  std::map<std::string, SandboxMode> modes;
  bool required = false;  // no Landlock: refuse to run commands rather than run them unconfined
  SandboxEscalation escalation = SandboxEscalation::kAsk;
  bool mcp = false;  // stdio MCP servers run in the sandbox too
};

// Reads `sandbox:` (a string or an object, as JSON). Errors name the key ("sandbox.network:
// expected on or off").
Result<SandboxSpec> ParseSandboxSpec(const Json::Value& value);

// `--sandbox`: a mode name, optionally with ",network=off" / ",network=on" /
// ",network=loopback".
Status ApplySandboxFlag(std::string_view flag, SandboxSpec* spec);

// What the session runs in, for the policy of one command.
struct SandboxPlace {
  std::string cwd;                 // the session's working folder
  std::vector<std::string> roots;  // its additionalDirectories and the spec's roots
  std::string home;                // $HOME; may be empty
  std::string tmp;                 // $TMPDIR or /tmp
  std::string credentials;         // lousho setup's credentials file; may be empty
};

// The sandbox mode for a permission mode: off when the kernel cannot (and nothing is
// required), the mode's own, else the spec's (workspace-write by default).
SandboxMode SandboxModeFor(const SandboxSpec& spec, std::string_view permission_mode);

// The policy: writable = working folder, roots, tmp, caches and the spec's (workspace-write),
// or tmp alone (read-only); deny_read = the documented list and the spec's.
SandboxPolicy ComposeSandboxPolicy(const SandboxSpec& spec, SandboxMode mode,
                                   const SandboxPlace& place);

// One line on what the sandbox does here, for `lousho acp --print-agent` and the editor's
// notice: the mode and network, or why there is none ("" never).
std::string DescribeSandbox(const SandboxSpec& spec);

}  // namespace lousho::config
