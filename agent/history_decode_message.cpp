// The history's codec, reading a message (docs/session-format.md): its members, its content
// blocks, the usage and the tool display it carries. A message's or a block's members come in any
// order; which of them count (and which are required) is decided by its role or type once read.
#include "agent/history_decode.h"

namespace lousho::agent::history_decode {
namespace {
const At kNowhere{nullptr, ""};  // where the lenient readers read (they report no error)
}  // namespace

struct LineDecoder::BlockFields {
  std::string type, text, thinking, signature, id, name, data, mime;
  bool has_type = false, has_text = false, has_thinking = false, has_id = false, has_name = false,
       has_data = false, has_mime = false, redacted = false;
  Json::Value args;
  ServerToolResult server;  // serverToolCall: api, summary, result, isError
};

void LineDecoder::BlockMember(std::string_view k, const At& m, BlockFields* x) {
  if (k == "type") {
    x->has_type = Str(m, &x->type);
  } else if (k == "text") {
    x->has_text = Str(m, &x->text);
  } else if (k == "thinking") {
    x->has_thinking = Str(m, &x->thinking);
  } else if (k == "thinkingSignature") {
    Str(m, &x->signature);
  } else if (k == "redacted") {
    Bool(m, &x->redacted);
  } else if (k == "id") {
    x->has_id = Str(m, &x->id);
  } else if (k == "name") {
    x->has_name = Str(m, &x->name);
  } else if (k == "arguments") {
    c_.Value(&x->args);
  } else if (k == "data") {
    x->has_data = Str(m, &x->data);
  } else if (k == "mimeType") {
    x->has_mime = Str(m, &x->mime);
  } else if (k == "api") {
    Str(m, &x->server.api);
  } else if (k == "summary") {
    Str(m, &x->server.summary);
  } else if (k == "result") {
    c_.Value(&x->server.result);
  } else if (k == "isError") {
    Bool(m, &x->server.is_error);
  } else {
    c_.Skip();
  }
}

// A call block: the model's (toolCall) or one the provider ran, with its result (serverToolCall).
bool LineDecoder::AssembleCall(const At& at, BlockFields& x, ContentBlock* b) {
  if (!x.has_id) return Fail(at.Member("id"), "required");
  if (!x.has_name) return Fail(at.Member("name"), "required");
  Json::Value args = x.args.isNull() ? Json::Value(Json::objectValue) : std::move(x.args);
  if (x.type == "toolCall") {
    *b = ContentBlock::ToolCall(std::move(x.id), std::move(x.name), std::move(args));
  } else {
    *b = ContentBlock::ServerTool(std::move(x.id), std::move(x.name), std::move(args));
    b->server.Set(std::move(x.server));
  }
  return true;
}

bool LineDecoder::AssembleBlock(const At& at, BlockFields& x, ContentBlock* b) {
  auto need = [&](bool has, const char* key) { return has || Fail(at.Member(key), "required"); };
  if (!need(x.has_type, "type")) return false;
  if (x.type == "text") {
    if (!need(x.has_text, "text")) return false;
    *b = ContentBlock::Text(std::move(x.text));
  } else if (x.type == "thinking") {
    if (!need(x.has_thinking, "thinking")) return false;
    *b = ContentBlock::Thinking(std::move(x.thinking), std::move(x.signature));
    if (x.redacted) b->more.Edit().redacted = true;
  } else if (x.type == "toolCall" || x.type == "serverToolCall") {
    return AssembleCall(at, x, b);
  } else if (x.type == "image") {
    if (!need(x.has_data, "data") || !need(x.has_mime, "mimeType")) return false;
    *b = ContentBlock::Image(std::move(x.mime), std::move(x.data));
  } else {
    return Fail(at.Member("type"), ("unknown block type '" + x.type + "'").c_str());
  }
  return true;
}

bool LineDecoder::Block(const At& at, ContentBlock* b) {
  BlockFields x;
  if (!Object(at, [&](std::string_view k, const At& m) { BlockMember(k, m, &x); }))
    return ok() ? Fail(at, "expected object") : false;
  return AssembleBlock(at, x, b);
}

bool LineDecoder::Content(const At& at, std::vector<ContentBlock>* out) {
  out->clear();
  switch (c_.Peek()) {
    case JsonCursor::Kind::kNull:
      c_.Null();
      return true;
    case JsonCursor::Kind::kString: {
      std::string text;
      c_.String(&text);
      out->push_back(ContentBlock::Text(std::move(text)));
      return ok();
    }
    case JsonCursor::Kind::kArray: {
      const bool read = Array(at, [&](const At& e) {
        ContentBlock b;
        if (Block(e, &b)) out->push_back(std::move(b));
      });
      // Held as long as the session: no room left over from growing (3 blocks would keep 4).
      out->shrink_to_fit();
      return read;
    }
    case JsonCursor::Kind::kObject:
    case JsonCursor::Kind::kNumber:
    case JsonCursor::Kind::kBool:
    case JsonCursor::Kind::kNone:
      break;
  }
  c_.Skip();
  return Fail(at, "expected string or array");
}

void LineDecoder::Usage(lousho::agent::Usage* u) {
  Object(kNowhere, [&](std::string_view k, const At&) {
    if (k == "input") {
      IntOr(&u->input);
    } else if (k == "output") {
      IntOr(&u->output);
    } else if (k == "cacheRead") {
      IntOr(&u->cache_read);
    } else if (k == "cacheWrite") {
      IntOr(&u->cache_write);
    } else if (k == "cost" && c_.Peek() == JsonCursor::Kind::kObject) {
      Object(kNowhere, [&](std::string_view ck, const At&) {
        if (ck == "total")
          DoubleOr(&u->cost);
        else
          c_.Skip();
      });
    } else {
      c_.Skip();
    }
  });
}

void LineDecoder::Location(ToolDisplay* t) {
  if (c_.Peek() != JsonCursor::Kind::kObject) {
    c_.Skip();
    return;
  }
  ToolLocation loc;
  long long line = 0;
  Object(kNowhere, [&](std::string_view k, const At&) {
    if (k == "path")
      StrOr(&loc.path);
    else if (k == "line")
      IntOr(&line);
    else
      c_.Skip();
  });
  loc.line = line > 0 && line < (1LL << 31) ? static_cast<int>(line) : 0;
  if (!loc.path.empty()) t->locations.push_back(std::move(loc));
}

void LineDecoder::Diff(ToolDisplay* t) {
  if (c_.Peek() != JsonCursor::Kind::kObject) {
    c_.Skip();
    return;
  }
  FileDiff diff;
  Object(kNowhere, [&](std::string_view k, const At&) {
    if (k == "path") {
      StrOr(&diff.path);
    } else if (k == "newText") {
      StrOr(&diff.new_text);
    } else if (k == "oldText" && c_.Peek() == JsonCursor::Kind::kString) {
      diff.old_text.emplace();
      c_.String(&*diff.old_text);
    } else {
      c_.Skip();
    }
  });
  t->diffs.push_back(std::move(diff));
}

void LineDecoder::Display(ToolDisplay* t) {
  std::string kind = "other";
  Object(kNowhere, [&](std::string_view k, const At&) {
    if (k == "title") {
      StrOr(&t->title);
    } else if (k == "kind") {
      StrOr(&kind);
    } else if (k == "args") {
      c_.Value(&t->args);
    } else if (k == "terminalId") {
      StrOr(&t->terminal_id);
    } else if (k == "locations" && c_.Peek() == JsonCursor::Kind::kArray) {
      Array(kNowhere, [&](const At&) { Location(t); });
    } else if (k == "diffs" && c_.Peek() == JsonCursor::Kind::kArray) {
      Array(kNowhere, [&](const At&) { Diff(t); });
    } else {
      c_.Skip();
    }
  });
  t->kind = ParseToolKindId(kind);
}

struct LineDecoder::MessageFields {
  std::string role, stop = "stop";
  bool has_role = false, has_custom_type = false, has_call_id = false, has_tool_name = false;
  std::optional<bool> display_flag;
  bool display_object = false;
  ToolDisplay display;
  Json::Value details;
};

void LineDecoder::MessageMember(std::string_view k, const At& f, lousho::agent::Message* m,
                                MessageFields* x) {
  if (k == "role") {
    x->has_role = Str(f, &x->role);
  } else if (k == "content") {
    Content(f, &m->content);
  } else if (k == "timestamp") {
    Int(f, &m->timestamp_ms);
  } else if (k == "customType") {
    x->has_custom_type = Str(f, &m->custom_type);
  } else if (k == "display") {
    // A custom message's flag, a tool result's display: which one is decided by the role.
    x->display_object = c_.Peek() == JsonCursor::Kind::kObject;
    bool flag = true;
    if (x->display_object)
      Display(&x->display);
    else if (Bool(f, &flag))
      x->display_flag = flag;
  } else if (k == "provider") {
    Str(f, &m->assistant.Edit().provider);
  } else if (k == "model") {
    Str(f, &m->assistant.Edit().model);
  } else if (k == "usage") {
    if (c_.Peek() == JsonCursor::Kind::kObject)
      Usage(&m->assistant.Edit().usage);
    else if (!c_.Null())
      Fail(f, "expected object");
  } else if (k == "stopReason") {
    Str(f, &x->stop);
  } else if (k == "errorMessage") {
    Str(f, &m->assistant.Edit().error_message);
  } else if (k == "toolCallId") {
    x->has_call_id = Str(f, &m->tool_call_id);
  } else if (k == "toolName") {
    x->has_tool_name = Str(f, &m->tool_name);
  } else if (k == "isError") {
    Bool(f, &m->is_error);
  } else if (k == "details") {
    c_.Value(&x->details);
  } else {
    c_.Skip();
  }
}

bool LineDecoder::AssembleMessage(const At& at, const MessageFields& x, lousho::agent::Message* m) {
  if (!x.has_role) return Fail(at.Member("role"), "required");
  if (x.role == "user") {
    m->role = Role::kUser;
  } else if (x.role == "custom") {
    m->role = Role::kUser;
    if (!x.has_custom_type) return Fail(at.Member("customType"), "required");
    if (x.display_object) return Fail(at.Member("display"), "expected boolean");
    m->display = x.display_flag.value_or(true);
  } else if (x.role == "assistant") {
    m->role = Role::kAssistant;
    m->stop_reason = ParseStopReasonId(x.stop).value_or(StopReason::kEndTurn);
  } else if (x.role == "toolResult") {
    m->role = Role::kToolResult;
    if (!x.has_call_id) return Fail(at.Member("toolCallId"), "required");
    if (!x.has_tool_name) return Fail(at.Member("toolName"), "required");
    if (x.display_flag) return Fail(at.Member("display"), "expected object");
  } else {
    return Fail(at.Member("role"), ("unknown role '" + x.role + "'").c_str());
  }
  return true;
}

bool LineDecoder::Message(const At& at, lousho::agent::Message* m) {
  MessageFields x;
  if (!Object(at, [&](std::string_view k, const At& f) { MessageMember(k, f, m, &x); }))
    return false;
  if (!AssembleMessage(at, x, m)) return false;
  if (m->role == Role::kToolResult) {
    m->tool.Set(std::move(x.display));
    m->tool.Edit().details = std::move(x.details);
  }
  // Fields of the other roles stay out of this one.
  if (m->role != Role::kAssistant) {
    m->assistant.Reset();
  }
  if (x.role != "custom") m->custom_type.clear();
  if (m->role != Role::kToolResult) {
    m->tool_call_id.clear();
    m->tool_name.clear();
    m->is_error = false;
  }
  return true;
}

}  // namespace lousho::agent::history_decode
