// The V4A patch format (the edit format OpenAI's codex models are trained on): parsing a patch
// into file operations, and applying an update's chunks to a file's text. Pure (no I/O).
//
//   *** Begin Patch
//   *** Add File: path        then the new file's lines, each starting with '+'
//   *** Delete File: path
//   *** Update File: path     then optionally "*** Move to: new/path", then chunks:
//   @@ optional anchor line   (a line the chunk comes after; "@@" alone starts a chunk)
//    context line             (' ' context, '-' removed, '+' added)
//   *** End of File           (the chunk ends the file)
//   *** End Patch
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace lousho::agent::tools {

// One chunk of an update: the lines it replaces (context and removed, in order) and what
// replaces them (context and added).
struct PatchChunk {
  std::vector<std::string> anchors;  // "@@ text" lines before it, each found in turn
  std::vector<std::string> old_lines;
  std::vector<std::string> new_lines;
  // Per new line: the old line it repeats (a context line), or -1 (added). Context lines keep
  // the file's own text when they matched loosely.
  std::vector<int> context;
  bool at_end = false;  // "*** End of File": the old lines end the file
};

enum class PatchOp { kAdd, kDelete, kUpdate };

struct FilePatch {
  PatchOp op = PatchOp::kUpdate;
  std::string path;
  std::string move_to;             // kUpdate: the new path, or empty
  std::string contents;            // kAdd: the file's text
  std::vector<PatchChunk> chunks;  // kUpdate
  int line = 0;                    // 1-based line of its header in the patch
};

// The Lark grammar of the format, for APIs that constrain a freeform tool's input.
extern const char* const kV4aGrammar;

// Parses a patch. Errors (LOUSHO_TOOL_INVALID_ARGS) name the patch line and what was expected.
// Lenient where models slip: surrounding blank lines, a missing final newline, an empty line
// inside a chunk taken as an empty context line.
Result<std::vector<FilePatch>> ParseV4aPatch(std::string_view patch);

// Applies an update's chunks to `text` (LF line ends), in order, each after the one before;
// lines match exactly, else ignoring trailing whitespace, else ignoring surrounding whitespace.
// The result ends with a newline. An error names the chunk, the file and the lines not found.
Result<std::string> ApplyV4aChunks(std::string_view text, const std::vector<PatchChunk>& chunks,
                                   const std::string& shown_path);

}  // namespace lousho::agent::tools
