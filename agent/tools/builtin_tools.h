// Factories of the built-in tools (the registry maps names to these).
#pragma once

#include <cstddef>
#include <memory>

#include "core/tool.h"
#include "support/http/proxy.h"

namespace lousho::agent::tools {

struct BashOptions {
  long default_timeout_s = 0;                   // 0: none unless the model asks for one
  size_t max_output_bytes = size_t{50} * 1024;  // tail kept
  size_t max_output_lines = 2000;               // tail kept
  long kill_grace_ms = 2000;                    // SIGTERM -> SIGKILL after a timeout
};

std::unique_ptr<Tool> MakeReadTool();
std::unique_ptr<Tool> MakeWriteTool();
std::unique_ptr<Tool> MakeEditTool();
std::unique_ptr<Tool> MakeBashTool(BashOptions options = {});
std::unique_ptr<Tool> MakeGrepTool();
std::unique_ptr<Tool> MakeFindTool();
std::unique_ptr<Tool> MakeLsTool();
std::unique_ptr<Tool> MakeTodoTool();
std::unique_ptr<Tool> MakeAskTool();
std::unique_ptr<Tool> MakeSwitchModeTool();
std::unique_ptr<Tool> MakeBashOutputTool();
std::unique_ptr<Tool> MakeBashKillTool();
// `proxy`: the agent's `proxy:` setting (support/http/proxy.h); unset: the environment's.
std::unique_ptr<Tool> MakeFetchTool(const ProxySetting& proxy = {});
std::unique_ptr<Tool> MakeApplyPatchTool();

}  // namespace lousho::agent::tools
