// The bash tool's side of the kernel sandbox (support/sandbox.h): its `sandbox` argument, the
// note that tells the model what the sandbox refused, and the editor terminal's command wrapped
// in `lousho sandbox-exec`.
#pragma once

#include <json/json.h>

#include <optional>
#include <string>

#include "core/client_services.h"
#include "core/tool.h"

namespace lousho::agent::tools {

// The schema of `"sandbox": "off"` (run outside the sandbox; the user is asked).
Json::Value SandboxOffSchema();

// What the sandbox refused, for the model, when the command ran confined and failed on it; "".
std::string SandboxDenialNote(const ToolContext& ctx, const std::string& output,
                              std::optional<int> exit_code);

// `out` with the note as one more text block (none when the note is empty).
ToolOutput WithSandboxNote(ToolOutput out, const std::string& note);

// A command for the editor's terminal runs through this very binary's `sandbox-exec`, which
// confines itself and then runs the command (nothing when the call is not confined).
void ConfineTerminalRequest(const ToolContext& ctx, TerminalRequest* req);

}  // namespace lousho::agent::tools
