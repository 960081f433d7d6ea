// The bash tool's sandbox argument, denial note and confined terminal command.
#include "agent/tools/sandbox_note.h"

#include <unistd.h>

#include <climits>

#include "support/sandbox.h"

namespace lousho::agent::tools {

Json::Value SandboxOffSchema() {
  Json::Value s(Json::objectValue);
  s["type"] = "string";
  s["enum"].append("off");
  s["description"] =
      "Only when the command failed because the sandbox refused it (the result says so): \"off\" "
      "runs it outside the sandbox, after the user agrees";
  return s;
}

std::string SandboxDenialNote(const ToolContext& ctx, const std::string& output,
                              std::optional<int> exit_code) {
  if (!ctx.sandbox) return "";
  return DescribeSandboxDenial(*ctx.sandbox, output, exit_code);
}

ToolOutput WithSandboxNote(ToolOutput out, const std::string& note) {
  if (note.empty()) return out;
  if (!out.content.empty() && out.content.back().type == BlockType::kText)
    out.content.back().text += "\n\n" + note;
  else
    out.content.push_back(ContentBlock::Text(note));
  return out;
}

void ConfineTerminalRequest(const ToolContext& ctx, TerminalRequest* req) {
  if (!ctx.sandbox || !ctx.sandbox->active()) return;
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {  // never run unconfined in silence
    req->command = "/bin/sh";
    req->args = {
        "-c",
        "echo 'lousho: cannot confine the command: its own binary is not found' >&2; exit 126"};
    return;
  }
  std::vector<std::string> args = SandboxLauncherArgs(*ctx.sandbox);
  args.push_back(req->command);
  args.insert(args.end(), req->args.begin(), req->args.end());
  req->command.assign(self, static_cast<size_t>(n));
  req->args = std::move(args);
}

}  // namespace lousho::agent::tools
