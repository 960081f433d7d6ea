// MCP tools as session tools.
#include "agent/mcp/mcp_tool.h"

#include <cstdio>

#include "agent/tools/json_schema.h"
#include "agent/tools/tool_util.h"
#include "support/json_util.h"
#include "support/log.h"
#include "support/text.h"

namespace lousho::agent::mcp {
namespace {

bool NameHas(const std::string& lower, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (lower.find(w) != std::string::npos) return true;
  return false;
}

// A short view of the arguments for the title: `key: value` pairs, cut at 80 bytes.
std::string Summary(const Json::Value& args) {
  if (!args.isObject() || args.empty()) return "";
  std::string out;
  for (const auto& key : MemberNames(args)) {
    if (!out.empty()) out += ", ";
    out += key + ": " + WriteJson(MemberOrNull(args, key));
    if (out.size() > 80) break;
  }
  return tools::Shorten(out, 80);
}

std::string Note(const std::string& what) { return "[" + what + "]"; }

// The most content blocks of one result the model gets; the rest are counted in a note.
constexpr size_t kMaxResultBlocks = 256;
// The most image data (base64) of one result the model gets, as much as the read tool takes.
constexpr size_t kMaxResultImageBytes = size_t{10} << 20;

}  // namespace

Json::Value AdaptSchema(const Json::Value& schema) {
  Json::Value s = schema.isObject() ? schema : Json::Value(Json::objectValue);
  s.removeMember("$schema");
  if (StringOr(s, "type") != "object") s["type"] = "object";
  if (!MemberOrNull(s, "properties").isObject()) s["properties"] = Json::Value(Json::objectValue);
  return s;
}

ToolKind KindOf(const ToolInfo& info) {
  if (!info.read_only) return ToolKind::kOther;
  const std::string name = AsciiLower(info.name);
  if (NameHas(name, {"search", "find", "grep", "query", "lookup"})) return ToolKind::kSearch;
  if (NameHas(name, {"fetch", "download", "http", "url", "web", "browse"})) return ToolKind::kFetch;
  return ToolKind::kRead;
}

namespace {

// Reads a CallToolResult's content into a ToolOutput within the limits: text up to
// kMaxToolOutputBytes, kMaxResultBlocks blocks and kMaxResultImageBytes of images; what is left
// out is counted and told in notes at the end.
class ResultReader {
 public:
  ResultReader(ToolOutput* out, tools::SavedOutputs* saved) : out_(out), saved_(saved) {}

  void Block(const Json::Value& b) {
    if (shown_ == kMaxResultBlocks) {
      ++blocks_left_out_;
      return;
    }
    ++shown_;
    const std::string type = StringOr(b, "type");
    if (type == "text") {
      texts_.emplace_back(&MemberOrNull(b, "text"), out_->content.size());
      AddText(StringOr(b, "text"));
    } else if (type == "image") {
      AddImage(StringOr(b, "mimeType"), StringOr(b, "data"));
    } else if (type == "audio") {
      AddText(Note("audio (" + StringOr(b, "mimeType", "unknown type") + ") not shown"));
    } else if (type == "resource_link") {
      ResourceRef r;
      r.uri = StringOr(b, "uri");
      r.name = StringOr(b, "name", r.uri);
      r.mime_type = StringOr(b, "mimeType");
      AddText("[" + r.name + "](" + r.uri + ")");
      out_->resources.push_back(std::move(r));
    } else if (type == "resource") {
      Resource(MemberOrNull(b, "resource"));
    } else {
      AddText(Note("a " + (type.empty() ? std::string("malformed") : type) +
                   " block the client does not show"));
    }
  }

  // The structured result as indented JSON (the model reads JSON, the user reads it in the
  // call's content): in place of the text block that carries it (servers should send both),
  // else added. Checked against the tool's output schema: a mismatch is noted, not fatal.
  void Structured(const Json::Value& structured, const Json::Value& schema, bool is_error) {
    if (structured.isNull()) {
      if (schema.isObject() && !is_error)
        AddText(Note("the tool declares an output schema but returned no structured result"));
      return;
    }
    std::string pretty = WriteJsonPretty(structured);
    if (!ReplaceCarrier(structured, pretty)) AddText("Structured result:\n" + pretty);
    if (!schema.isObject()) return;
    std::string why;
    for (const auto& m : tools::SchemaMismatches(schema, structured)) why += "\n" + m;
    if (why.empty()) return;
    log::Warn("an MCP tool's structured result does not fit its output schema:" + why);
    AddText(Note("the structured result does not fit the tool's output schema:" + why));
  }

  void Finish() {
    // The whole text is kept for the model to read or grep (tool_util.h, SavedOutputs).
    const std::string path = cut_ && saved_ ? saved_->Save("mcp", whole_) : "";
    if (cut_)
      out_->content.push_back(ContentBlock::Text(
          "\n[Output cut at " + std::to_string(tools::kMaxToolOutputBytes / 1024) +
          " KiB: the tool returned more" +
          (path.empty() ? "" : "; the whole text is saved in " + path) + ".]"));
    if (blocks_left_out_ > 0)
      out_->content.push_back(ContentBlock::Text(Note(
          std::to_string(blocks_left_out_) + " more content blocks not shown: a result shows " +
          std::to_string(kMaxResultBlocks))));
    if (out_->content.empty()) out_->content.push_back(ContentBlock::Text("(no output)"));
  }

 private:
  void AddText(std::string text) {
    if (saved_) whole_ += text + "\n";
    if (cut_) return;
    if (text_bytes_ + text.size() > tools::kMaxToolOutputBytes) {
      size_t room = tools::kMaxToolOutputBytes - text_bytes_;
      text = text.substr(0, tools::Utf8Prefix(text, room));
      cut_ = true;
    }
    text_bytes_ += text.size();
    out_->content.push_back(ContentBlock::Text(std::move(text)));
  }

  void AddImage(const std::string& mime_type, std::string data) {
    if (image_bytes_ + data.size() > kMaxResultImageBytes) {
      AddText(Note("image (" + (mime_type.empty() ? std::string("unknown type") : mime_type) +
                   ", " + ByteSize(data.size()) + ") not shown: a result shows " +
                   ByteSize(kMaxResultImageBytes) + " of images"));
      return;
    }
    image_bytes_ += data.size();
    out_->content.push_back(ContentBlock::Image(mime_type, std::move(data)));
  }

  void Resource(const Json::Value& res) {
    ResourceRef r;
    r.embedded = true;
    r.uri = StringOr(res, "uri");
    r.name = r.uri;
    r.mime_type = StringOr(res, "mimeType");
    r.text = AsString(MemberOrNull(res, "text"));
    r.blob = AsString(MemberOrNull(res, "blob"));
    if (r.text) {
      AddText("Contents of " + r.uri + ":\n" + *r.text);
    } else if (r.blob && r.mime_type.rfind("image/", 0) == 0) {
      AddImage(r.mime_type, *r.blob);
    } else {
      AddText(Note("binary resource " + r.uri +
                   (r.mime_type.empty() ? "" : " (" + r.mime_type + ")") + " not shown"));
    }
    // The editor gets the reference; embedded text or data past the limit stays with the server.
    if ((r.text && r.text->size() > kMaxToolDetailsBytes) ||
        (r.blob && r.blob->size() > kMaxToolDetailsBytes)) {
      r.embedded = false;
      r.text.reset();
      r.blob.reset();
    }
    out_->resources.push_back(std::move(r));
  }

  ToolOutput* out_;
  tools::SavedOutputs* saved_;
  std::string whole_;  // every text, uncut (with saved_ only)
  size_t text_bytes_ = 0;
  size_t image_bytes_ = 0;
  size_t shown_ = 0;
  size_t blocks_left_out_ = 0;
  // The text block (of the result, and its place in the output) whose JSON is `structured`,
  // given `pretty` for text; false when none is, or it was cut.
  bool ReplaceCarrier(const Json::Value& structured, std::string& pretty) {
    for (const auto& [t, at] : texts_) {
      auto text = AsString(*t);
      if (!text || at >= out_->content.size() || out_->content[at].text != *text) continue;
      auto parsed = ParseJson(*text);
      if (!parsed.ok() || *parsed != structured) continue;
      if (text_bytes_ - text->size() + pretty.size() > tools::kMaxToolOutputBytes) return true;
      text_bytes_ = text_bytes_ - text->size() + pretty.size();
      out_->content[at].text = std::move(pretty);
      return true;
    }
    return false;
  }

  bool cut_ = false;
  // The text blocks and where each went in the output, for Structured.
  std::vector<std::pair<const Json::Value*, size_t>> texts_;
};

}  // namespace

ToolOutput OutputFromResult(const Json::Value& result, tools::SavedOutputs* saved,
                            const Json::Value& output_schema) {
  ToolOutput out;
  // The raw result for the editor, unless it is too large to send (CompleteCall would drop it).
  out.details = JsonFitsIn(result, kMaxToolDetailsBytes) ? result : DetailsTooLarge();
  out.is_error = BoolOr(result, "isError", false);
  ResultReader reader(&out, saved);
  const Json::Value& content = MemberOrNull(result, "content");
  for (Json::ArrayIndex i = 0; content.isArray() && i < content.size(); ++i)
    reader.Block(ElementOrNull(content, i));
  reader.Structured(MemberOrNull(result, "structuredContent"), output_schema, out.is_error);
  reader.Finish();
  return out;
}

McpTool::McpTool(std::shared_ptr<Client> client, ToolInfo info, std::string model_name)
    : client_(std::move(client)),
      info_(std::move(info)),
      model_name_(std::move(model_name)),
      schema_(AdaptSchema(info_.input_schema)),
      kind_(KindOf(info_)) {}

McpTool::McpTool(const McpTool& other, std::string model_name)
    : client_(other.client_),
      info_(other.info_),
      model_name_(std::move(model_name)),
      schema_(other.schema_),
      kind_(other.kind_) {}

std::string McpTool::description() const {
  std::string d = info_.description.empty() ? info_.title : info_.description;
  return d.empty() ? "Tool " + info_.name + " of the MCP server " + client_->name() : d;
}

std::string McpTool::Title(const Json::Value& args, const ToolContext&) const {
  std::string title = client_->name() + ": " + info_.name;
  std::string summary = Summary(args);
  return summary.empty() ? title : title + " (" + summary + ")";
}

std::string McpTool::PermissionSubject(const Json::Value&) const {
  // Rules name MCP tools as a whole ("mcp__github__*"); their arguments are no path or command.
  return "";
}

ToolOutput McpTool::Run(const Json::Value& args, ToolContext& ctx) {
  auto on_progress = [&](const Progress& p) {
    if (!ctx.on_progress) return;
    char buf[64];
    if (p.total) {
      std::snprintf(buf, sizeof buf, "%g/%g", p.progress, *p.total);
    } else {
      std::snprintf(buf, sizeof buf, "%g", p.progress);
    }
    ctx.on_progress(p.message.empty() ? std::string(buf) : std::string(buf) + ": " + p.message);
  };
  auto res = client_->CallTool(info_.name, args, on_progress, ctx.cancel);
  if (!res.ok()) {
    if (res.error().code == ErrorCode::kCancelled)
      return ToolOutput::Error("Cancelled by the user.");
    return ToolOutput::Error(res.error().message);
  }
  return OutputFromResult(*res, ctx.saved_outputs, info_.output_schema);
}

}  // namespace lousho::agent::mcp
