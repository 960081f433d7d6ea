// The `skill` tool: the model sees each skill's name and description (in the tool's
// description, fixed for the session) and reads a skill's instructions, and its other files, on
// demand.
#pragma once

#include <memory>
#include <vector>

#include "agent/skills/discovery.h"
#include "core/tool.h"

namespace lousho::agent::tools {

// At most this many of a skill's files are listed with its instructions.
inline constexpr size_t kMaxSkillFilesListed = 100;

// A tool over these skills (found when the session opened).
std::unique_ptr<Tool> MakeSkillTool(std::vector<skills::Skill> skills);

}  // namespace lousho::agent::tools
