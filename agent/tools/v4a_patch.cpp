// The V4A patch format: parser and update applier.
#include "agent/tools/v4a_patch.h"

#include <algorithm>
#include <functional>

namespace lousho::agent::tools {

// The format in Lark, as the Responses API's custom tools take a grammar.
const char* const kV4aGrammar = R"(start: "*** Begin Patch" NL operation+ "*** End Patch" NL?
operation: add_file | delete_file | update_file
add_file: "*** Add File: " PATH NL added_line+
delete_file: "*** Delete File: " PATH NL
update_file: "*** Update File: " PATH NL move_to? chunk*
move_to: "*** Move to: " PATH NL
chunk: anchor* body_line+ end_of_file?
anchor: "@@" ANCHOR_TEXT? NL
body_line: BODY_TEXT NL
added_line: ADDED_TEXT NL
end_of_file: "*** End of File" NL
PATH: /[^\n]+/
ANCHOR_TEXT: / [^\n]*/
BODY_TEXT: /[ +\-][^\n]*/
ADDED_TEXT: /\+[^\n]*/
NL: "\n"
)";

namespace {

constexpr std::string_view kBegin = "*** Begin Patch";
constexpr std::string_view kEnd = "*** End Patch";
constexpr std::string_view kAdd = "*** Add File: ";
constexpr std::string_view kDelete = "*** Delete File: ";
constexpr std::string_view kUpdate = "*** Update File: ";
constexpr std::string_view kMove = "*** Move to: ";
constexpr std::string_view kEndOfFile = "*** End of File";

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string_view TrimEndView(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// The lines of `text` ('\n'-separated; a final newline makes no extra line).
std::vector<std::string_view> PatchLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    at = nl + 1;
  }
  return lines;
}

Error PatchError(size_t line, const std::string& what) {
  return MakeError(ErrorCode::kToolArgs, "patch line " + std::to_string(line + 1) + ": " + what);
}

bool IsHeader(std::string_view line) {
  return line.starts_with(kAdd) || line.starts_with(kDelete) || line.starts_with(kUpdate) ||
         TrimView(line) == kEnd;
}

// Reads the path after a header's prefix; empty is an error.
Result<std::string> HeaderPath(std::string_view line, std::string_view prefix, size_t at) {
  std::string path(TrimView(line.substr(prefix.size())));
  if (path.empty()) return PatchError(at, std::string(TrimView(prefix)) + " names no file");
  return path;
}

// The parser: one pass over the lines, one hunk at a time.
class PatchParser {
 public:
  explicit PatchParser(std::vector<std::string_view> lines) : lines_(std::move(lines)) {}

  Result<std::vector<FilePatch>> Parse() {
    if (lines_.empty() || TrimView(lines_[0]) != kBegin)
      return PatchError(0, "a patch starts with \"*** Begin Patch\"");
    if (lines_.size() < 2 || TrimView(lines_.back()) != kEnd)
      return PatchError(lines_.size() - 1, "a patch ends with \"*** End Patch\"");
    const size_t last = lines_.size() - 1;
    for (at_ = 1; at_ < last;) {
      Status s = Hunk(last);
      if (!s.ok()) return s.error();
    }
    if (files_.empty()) return PatchError(last, "the patch changes no file");
    return std::move(files_);
  }

 private:
  Status Hunk(size_t last) {
    const std::string_view line = lines_[at_];
    FilePatch f;
    f.line = static_cast<int>(at_ + 1);
    PatchOp op = PatchOp::kUpdate;
    std::string_view prefix = kUpdate;
    if (line.starts_with(kAdd)) {
      op = PatchOp::kAdd;
      prefix = kAdd;
    } else if (line.starts_with(kDelete)) {
      op = PatchOp::kDelete;
      prefix = kDelete;
    } else if (!line.starts_with(kUpdate)) {
      if (TrimView(line).empty()) {
        ++at_;  // a blank line between hunks
        return Status::Ok();
      }
      return PatchError(at_,
                        "expected \"*** Add File: \", \"*** Delete File: \" or "
                        "\"*** Update File: \", got \"" +
                            std::string(line.substr(0, 80)) + "\"");
    }
    auto path = HeaderPath(line, prefix, at_);
    if (!path.ok()) return path.error();
    f.op = op;
    f.path = *path;
    ++at_;
    Status s = Status::Ok();
    if (op == PatchOp::kAdd) s = AddBody(last, &f);
    if (op == PatchOp::kUpdate) s = UpdateBody(last, &f);
    if (!s.ok()) return s;
    files_.push_back(std::move(f));
    return Status::Ok();
  }

  Status AddBody(size_t last, FilePatch* f) {
    for (; at_ < last && !IsHeader(lines_[at_]); ++at_) {
      const std::string_view line = lines_[at_];
      if (!line.starts_with('+'))
        return PatchError(at_, "every line of \"*** Add File: " + f->path + "\" starts with '+'");
      f->contents.append(line.substr(1));
      f->contents.push_back('\n');
    }
    return Status::Ok();
  }

  // One line of an update's body into the chunk being read.
  Status ChunkLine(std::string_view line, FilePatch* f, PatchChunk* chunk) {
    if (line == "@@" || line.starts_with("@@ ")) {
      if (!chunk->old_lines.empty() || !chunk->new_lines.empty()) {
        f->chunks.push_back(std::move(*chunk));
        *chunk = PatchChunk();
      }
      std::string_view anchor = TrimView(line.substr(2));
      if (!anchor.empty()) chunk->anchors.emplace_back(anchor);
      return Status::Ok();
    }
    const char kind = line.empty() ? ' ' : line[0];
    const std::string text(line.empty() ? line : line.substr(1));
    if (kind == ' ') chunk->context.push_back(static_cast<int>(chunk->old_lines.size()));
    if (kind == '+') chunk->context.push_back(-1);
    if (kind == ' ' || kind == '-') chunk->old_lines.push_back(text);
    if (kind == ' ' || kind == '+') chunk->new_lines.push_back(text);
    if (kind == ' ' || kind == '-' || kind == '+') return Status::Ok();
    return PatchError(at_, "in \"*** Update File: " + f->path +
                               "\" a line starts with ' ', '-', '+' or \"@@\", got \"" +
                               std::string(line.substr(0, 80)) + "\"");
  }

  Status UpdateBody(size_t last, FilePatch* f) {
    if (at_ < last && lines_[at_].starts_with(kMove)) {
      auto to = HeaderPath(lines_[at_], kMove, at_);
      if (!to.ok()) return to.error();
      f->move_to = *to;
      ++at_;
    }
    PatchChunk chunk;
    for (; at_ < last && !IsHeader(lines_[at_]); ++at_) {
      const std::string_view line = lines_[at_];
      if (TrimView(line) == kEndOfFile) {
        chunk.at_end = true;
        f->chunks.push_back(std::move(chunk));
        chunk = PatchChunk();
        continue;
      }
      Status s = ChunkLine(line, f, &chunk);
      if (!s.ok()) return s;
    }
    if (!chunk.old_lines.empty() || !chunk.new_lines.empty()) f->chunks.push_back(chunk);
    if (f->chunks.empty() && f->move_to.empty())
      return PatchError(static_cast<size_t>(f->line - 1),
                        "\"*** Update File: " + f->path + "\" changes nothing");
    return Status::Ok();
  }

  std::vector<std::string_view> lines_;
  std::vector<FilePatch> files_;
  size_t at_ = 0;
};

using LineEq = std::function<bool(std::string_view, std::string_view)>;

// The comparisons tried in turn: exact, then without trailing whitespace, then trimmed.
const std::vector<LineEq>& Comparisons() {
  static const std::vector<LineEq> kAll = {
      [](std::string_view a, std::string_view b) { return a == b; },
      [](std::string_view a, std::string_view b) { return TrimEndView(a) == TrimEndView(b); },
      [](std::string_view a, std::string_view b) { return TrimView(a) == TrimView(b); },
  };
  return kAll;
}

bool MatchesAt(const std::vector<std::string>& file, size_t at,
               const std::vector<std::string>& want, const LineEq& eq) {
  if (at + want.size() > file.size()) return false;
  for (size_t i = 0; i < want.size(); ++i)
    if (!eq(file[at + i], want[i])) return false;
  return true;
}

// Where `want` is found at or after `from` (at the end of the file first when `at_end`), or npos.
size_t FindLines(const std::vector<std::string>& file, size_t from,
                 const std::vector<std::string>& want, bool at_end) {
  for (const LineEq& eq : Comparisons()) {
    if (at_end && file.size() >= want.size() && file.size() - want.size() >= from &&
        MatchesAt(file, file.size() - want.size(), want, eq))
      return file.size() - want.size();
    for (size_t at = from; at + want.size() <= file.size(); ++at)
      if (MatchesAt(file, at, want, eq)) return at;
  }
  return std::string::npos;
}

std::string Quoted(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size() && i < 5; ++i) out += "\n  " + lines[i];
  if (lines.size() > 5) out += "\n  ...";
  return out;
}

struct LineEdit {
  size_t at;
  size_t removed;
  const PatchChunk* chunk;
};

// Finds one chunk's place at or after *cursor; returns an error message or "".
std::string LocateChunk(const std::vector<std::string>& file, const PatchChunk& c, size_t n,
                        const std::string& shown, size_t* cursor, std::vector<LineEdit>* edits) {
  const std::string where = "chunk " + std::to_string(n + 1) + " of " + shown;
  for (const std::string& anchor : c.anchors) {
    const size_t at = FindLines(file, *cursor, {anchor}, false);
    if (at == std::string::npos)
      return where + ": the @@ line \"" + anchor + "\" was not found" +
             (*cursor > 0 ? " after line " + std::to_string(*cursor) : "");
    *cursor = at + 1;
  }
  if (c.old_lines.empty()) {  // only additions: after the anchor, else at the end
    const size_t at = c.anchors.empty() ? file.size() : *cursor;
    edits->push_back({at, 0, &c});
    *cursor = at;
    return {};
  }
  std::vector<std::string> old = c.old_lines;
  size_t at = FindLines(file, *cursor, old, c.at_end);
  // Models often end a chunk with a blank context line the file does not have there.
  while (at == std::string::npos && old.size() > 1 && TrimView(old.back()).empty()) {
    old.pop_back();
    at = FindLines(file, *cursor, old, c.at_end);
  }
  if (at == std::string::npos)
    return where + ": these lines were not found" +
           (*cursor > 0 ? " after line " + std::to_string(*cursor) : "") + ":" +
           Quoted(c.old_lines) + "\n(context and '-' lines must match the file; read it again)";
  edits->push_back({at, old.size(), &c});
  *cursor = at + old.size();
  return {};
}

}  // namespace

Result<std::vector<FilePatch>> ParseV4aPatch(std::string_view patch) {
  std::vector<std::string_view> lines = PatchLines(patch);
  while (!lines.empty() && TrimView(lines.front()).empty()) lines.erase(lines.begin());
  while (!lines.empty() && TrimView(lines.back()).empty()) lines.pop_back();
  return PatchParser(std::move(lines)).Parse();
}

Result<std::string> ApplyV4aChunks(std::string_view text, const std::vector<PatchChunk>& chunks,
                                   const std::string& shown_path) {
  // Lines match without the BOM and '\r'; both come back in the result.
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  const bool bom = text.starts_with(kBom);
  if (bom) text.remove_prefix(kBom.size());
  const std::string_view eol = text.find("\r\n") != std::string_view::npos ? "\r\n" : "\n";
  std::vector<std::string> file;
  for (std::string_view l : PatchLines(text)) file.emplace_back(l);
  std::vector<LineEdit> edits;
  size_t cursor = 0;
  for (size_t n = 0; n < chunks.size(); ++n) {
    std::string err = LocateChunk(file, chunks[n], n, shown_path, &cursor, &edits);
    if (!err.empty()) return MakeError(ErrorCode::kToolArgs, err);
  }
  std::string out(bom ? kBom : std::string_view());
  out.reserve(text.size() + 64);
  size_t at = 0;
  auto keep_until = [&](size_t end) {
    for (; at < end; ++at) out.append(file[at]).append(eol);
  };
  for (const LineEdit& e : edits) {
    keep_until(e.at);
    const PatchChunk& c = *e.chunk;
    for (size_t i = 0; i < c.new_lines.size(); ++i) {
      // A context line is the file's own line (it may differ in whitespace from the patch's);
      // one past the lines matched was a trailing blank the file lacks, and goes.
      const int old = i < c.context.size() ? c.context[i] : -1;
      if (old >= 0 && static_cast<size_t>(old) >= e.removed) continue;
      out.append(old >= 0 ? file[e.at + static_cast<size_t>(old)] : c.new_lines[i]).append(eol);
    }
    at = e.at + e.removed;
  }
  keep_until(file.size());
  return out;
}

}  // namespace lousho::agent::tools
