// The `edit` tool: exact, unique text replacements applied all-or-nothing.
#include <algorithm>
#include <dtl/dtl.hpp>
#include <sstream>
#include <system_error>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/tool_util.h"
#include "core/paths.h"

namespace lousho::agent::tools {
namespace {

namespace fs = std::filesystem;

struct Replacement {
  std::string old_text;
  std::string new_text;
  std::string label;  // "oldText" or "edits[2].oldText", for messages
};

struct EditPlan {
  ResolvedPath path;
  std::string shown;
  std::string before;  // the file as read
  std::string after;   // the file to write
  int first_line = 0;  // 1-based line of the first change
};

std::string ToLf(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') continue;
    out += s[i];
  }
  return out;
}

std::string ToCrlf(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 16);
  for (char c : s) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

size_t CountOf(std::string_view hay, std::string_view needle, size_t* first) {
  size_t count = 0;
  *first = std::string_view::npos;
  for (size_t pos = hay.find(needle); pos != std::string_view::npos;
       pos = hay.find(needle, pos + 1)) {
    if (count == 0) *first = pos;
    ++count;
  }
  return count;
}

// Reads {oldText,newText} or {edits:[...]} (old_string/new_string accepted too).
std::string ReadReplacements(const Json::Value& args, std::vector<Replacement>* out) {
  Args a(args);
  auto read_pair = [](const Json::Value& obj, const std::string& prefix, Replacement* r) {
    Args e(obj);
    auto o = e.String("oldText", false);
    if (!o) o = e.String("old_string", false);
    auto n = e.String("newText", false);
    if (!n) n = e.String("new_string", false);
    if (!e.ok()) return prefix + e.error();
    if (!o) return prefix + "oldText: required";
    if (!n) return prefix + "newText: required";
    r->old_text = *o;
    r->new_text = *n;
    r->label = prefix + "oldText";
    return std::string();
  };
  const Json::Value* edits = a.Array("edits", false);
  if (!a.ok()) return a.error();
  if (edits) {
    if (edits->empty()) return "edits: must not be empty";
    for (Json::ArrayIndex i = 0; i < edits->size(); ++i) {
      Replacement r;
      std::string prefix = "edits[" + std::to_string(i) + "].";
      const Json::Value& edit = ElementOrNull(*edits, i);
      if (!edit.isObject()) return prefix.substr(0, prefix.size() - 1) + ": expected object";
      std::string err = read_pair(edit, prefix, &r);
      if (!err.empty()) return err;
      out->push_back(std::move(r));
    }
    return {};
  }
  Replacement r;
  std::string err = read_pair(args, "", &r);
  if (!err.empty()) return err;
  out->push_back(std::move(r));
  return {};
}

std::string TooLargeMessage(const std::string& shown, const std::string& size) {
  return shown + " is " + size + "; edit loads files of at most " + ByteSize(kMaxTextFileBytes) +
         ". Use bash (for example sed -i) on files this large";
}

// Resolves the path and loads the file into plan->before, checking that edit may change it;
// returns an error message or "".
std::string LoadEditTarget(const std::string& path_arg, ToolContext& ctx, EditPlan* plan) {
  auto resolved = ResolveToolPath(ctx, path_arg);
  if (!resolved.ok()) return resolved.error().message;
  plan->path = *resolved;
  plan->shown = DisplayPath(ctx.cwd, plan->path.abs);
  std::error_code ec;
  fs::file_status st = fs::status(plan->path.real, ec);
  if (fs::is_directory(st)) return plan->shown + " is a directory";
  if (std::string special = SpecialFileMessage(plan->path.real, plan->shown); !special.empty())
    return special + "; edit only changes regular files";
  bool via_client = ctx.services.files && ctx.services.files->CanReadTextFile();
  if (!fs::exists(st) && !via_client)
    return "file not found: " + plan->shown + " (use write to create a file)";
  // Checked before loading anything: the whole file is held (twice) while editing.
  if (fs::is_regular_file(st)) {
    uintmax_t size = fs::file_size(plan->path.real, ec);
    if (!ec && size > kMaxTextFileBytes) return TooLargeMessage(plan->shown, ByteSize(size));
  }
  auto text = ReadTextForTool(ctx, plan->path);
  if (!text.ok()) {
    // The file grew since it was looked at, or the editor's buffer is the big one.
    if (text.error().code == ErrorCode::kToolTooLarge)
      return TooLargeMessage(plan->shown, "more than " + ByteSize(kMaxTextFileBytes));
    return "cannot read " + plan->shown + ": " + text.error().message;
  }
  plan->before = std::move(*text);
  return {};
}

// Where one replacement applies in the text.
struct EditHit {
  size_t pos;
  size_t len;
  std::string replacement;
  std::string label;
};

// Finds each replacement's one place in `content` (LF text; `crlf`: the replacements are
// converted to LF first), in text order; returns an error message (none found, several, two
// that overlap) or "".
std::string LocateEdits(const std::string& content, bool crlf, const std::vector<Replacement>& reps,
                        const std::string& shown, std::vector<EditHit>* hits) {
  for (const auto& r : reps) {
    std::string old_text = crlf ? ToLf(r.old_text) : r.old_text;
    std::string new_text = crlf ? ToLf(r.new_text) : r.new_text;
    if (old_text.empty()) return r.label + " is empty";
    if (old_text == new_text) return r.label + " and its newText are identical; nothing to change";
    size_t first = 0;
    size_t count = CountOf(content, old_text, &first);
    if (count == 0)
      return r.label + " not found in " + shown +
             " (it must match exactly, including whitespace and indentation)";
    if (count > 1)
      return r.label + " matches " + std::to_string(count) + " times in " + shown +
             "; make it unique by including more surrounding lines";
    hits->push_back({first, old_text.size(), std::move(new_text), r.label});
  }
  std::sort(hits->begin(), hits->end(),
            [](const EditHit& x, const EditHit& y) { return x.pos < y.pos; });
  const std::vector<EditHit>& h = *hits;
  for (size_t i = 1; i < h.size(); ++i)
    if (h[i].pos < h[i - 1].pos + h[i - 1].len)
      return h[i - 1].label + " and " + h[i].label + " overlap in " + shown +
             "; merge them into one edit";
  return {};
}

// `content` with the hits (in text order, not overlapping) replaced.
std::string ApplyEdits(const std::string& content, const std::vector<EditHit>& hits) {
  std::string result;
  size_t at = 0;
  for (const auto& h : hits) {
    result.append(content, at, h.pos - at);
    result += h.replacement;
    at = h.pos + h.len;
  }
  result.append(content, at, std::string::npos);
  return result;
}

// Computes the edited text; returns an error message or "".
std::string PlanEdit(const Json::Value& args, ToolContext& ctx, EditPlan* plan) {
  Args a(args);
  auto path_arg = a.String("path", true);
  if (!a.ok()) return "edit: " + a.error();
  std::vector<Replacement> reps;
  std::string err = ReadReplacements(args, &reps);
  if (!err.empty()) return "edit: " + err;
  err = LoadEditTarget(*path_arg, ctx, plan);
  if (!err.empty()) return err;

  // Matching happens on LF text without a BOM; both are restored when writing, so models that
  // never see '\r' can still edit CRLF files.
  std::string_view body = plan->before;
  std::string bom;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") {
    bom = "\xEF\xBB\xBF";
    body.remove_prefix(3);
  }
  const bool crlf = body.find("\r\n") != std::string_view::npos;
  std::string content = crlf ? ToLf(body) : std::string(body);

  std::vector<EditHit> hits;
  err = LocateEdits(content, crlf, reps, plan->shown, &hits);
  if (!err.empty()) return err;
  const std::string result = ApplyEdits(content, hits);
  plan->first_line =
      1 + static_cast<int>(std::count(content.begin(), content.begin() + hits[0].pos, '\n'));
  plan->after = bom + (crlf ? ToCrlf(result) : result);
  return {};
}

// A small unified diff for the model and rawOutput.
std::string UnifiedDiff(const std::string& before, const std::string& after) {
  std::vector<std::string> a = SplitLineStrings(before), b = SplitLineStrings(after);
  dtl::Diff<std::string> d(a, b);
  d.compose();
  d.composeUnifiedHunks();
  std::ostringstream os;
  d.printUnifiedFormat(os);
  return os.str();
}

class EditTool : public Tool {
 public:
  std::string name() const override { return "edit"; }
  std::string description() const override {
    return "Edit a file by exact text replacement. oldText must match the file exactly "
           "(whitespace included) and exactly once; include enough surrounding lines to make it "
           "unique. For several changes to one file pass edits: [{oldText, newText}, ...]; each "
           "is matched against the original file, and either all apply or none. Files of at most "
           "10 MiB only.";
  }
  Json::Value parameters() const override {
    Json::Value edit = ObjectSchema({{"oldText", PropSchema("string", "Exact text to replace")},
                                     {"newText", PropSchema("string", "Replacement text")}},
                                    {"oldText", "newText"});
    Json::Value edits(Json::objectValue);
    edits["type"] = "array";
    edits["description"] = "Several replacements in the same file, applied atomically";
    edits["items"] = edit;
    Json::Value s = ObjectSchema(
        {{"path", PropSchema("string",
                             "Path to the file, relative to the working directory or "
                             "absolute")},
         {"oldText", PropSchema("string", "Exact text to replace (must be unique in the file)")},
         {"newText", PropSchema("string", "Replacement text")},
         {"edits", edits}},
        {"path"});
    return s;
  }
  ToolKind kind() const override { return ToolKind::kEdit; }
  bool read_only() const override { return false; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    return "Edit " + PathSubject(args);
  }
  std::vector<ToolLocation> Locations(const Json::Value& args,
                                      const ToolContext& ctx) const override {
    std::string path = StringOr(args, "path");
    if (path.empty()) return {};
    ToolContext copy = ctx;
    EditPlan plan;
    int line = PlanEdit(args, copy, &plan).empty() ? plan.first_line : 0;
    return {ToolLocation{AbsolutePath(ctx.cwd, path).string(), line}};
  }
  std::string PermissionSubject(const Json::Value& args) const override {
    return PathSubject(args);
  }
  std::vector<FileDiff> Preview(const Json::Value& args, const ToolContext& ctx) const override {
    ToolContext copy = ctx;
    EditPlan plan;
    if (!PlanEdit(args, copy, &plan).empty()) return {};
    return {FileDiff{plan.path.abs.string(), plan.before, plan.after}};
  }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    EditPlan plan;
    std::string err = PlanEdit(args, ctx, &plan);
    if (!err.empty()) return ToolOutput::Error(err);
    Status st = WriteTextForTool(ctx, plan.path, plan.after);
    if (!st.ok())
      return ToolOutput::Error("cannot write " + plan.shown + ": " + st.error().message);
    std::string diff = UnifiedDiff(plan.before, plan.after);
    ToolOutput out = ToolOutput::Text("Edited " + plan.shown + " (first change at line " +
                                      std::to_string(plan.first_line) + ")\n" + diff);
    out.diffs.push_back(FileDiff{plan.path.abs.string(), plan.before, plan.after});
    out.details["path"] = plan.path.abs.string();
    out.details["firstChangedLine"] = plan.first_line;
    out.details["diff"] = diff;
    return out;
  }
};

}  // namespace

std::unique_ptr<Tool> MakeEditTool() { return std::make_unique<EditTool>(); }

}  // namespace lousho::agent::tools
