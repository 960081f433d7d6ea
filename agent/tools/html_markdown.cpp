// HTML to Markdown through gumbo (html_markdown.h).
#include "agent/tools/html_markdown.h"

#include <gumbo.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace lousho::agent::tools {
namespace {

enum class Kind {
  kInline,  // the children, in the flow
  kSkip,    // nothing of it
  kBlock,   // the children, as a paragraph
  kHeading,
  kBreak,
  kRule,
  kLink,
  kImage,
  kStrong,
  kEmphasis,
  kCode,
  kPre,
  kList,
  kItem,
  kQuote,
  kRow,
  kCell,
  kTable,
};

Kind KindOf(std::string_view tag) {
  static const std::unordered_map<std::string_view, Kind> kKinds = {
      {"script", Kind::kSkip},      {"style", Kind::kSkip},    {"noscript", Kind::kSkip},
      {"template", Kind::kSkip},    {"title", Kind::kSkip},    {"svg", Kind::kSkip},
      {"iframe", Kind::kSkip},      {"form", Kind::kSkip},     {"button", Kind::kSkip},
      {"select", Kind::kSkip},      {"input", Kind::kSkip},    {"textarea", Kind::kSkip},
      {"canvas", Kind::kSkip},      {"p", Kind::kBlock},       {"div", Kind::kBlock},
      {"section", Kind::kBlock},    {"article", Kind::kBlock}, {"main", Kind::kBlock},
      {"header", Kind::kBlock},     {"footer", Kind::kBlock},  {"nav", Kind::kBlock},
      {"aside", Kind::kBlock},      {"figure", Kind::kBlock},  {"figcaption", Kind::kBlock},
      {"dl", Kind::kBlock},         {"dt", Kind::kBlock},      {"dd", Kind::kBlock},
      {"details", Kind::kBlock},    {"summary", Kind::kBlock}, {"address", Kind::kBlock},
      {"h1", Kind::kHeading},       {"h2", Kind::kHeading},    {"h3", Kind::kHeading},
      {"h4", Kind::kHeading},       {"h5", Kind::kHeading},    {"h6", Kind::kHeading},
      {"br", Kind::kBreak},         {"hr", Kind::kRule},       {"a", Kind::kLink},
      {"img", Kind::kImage},        {"strong", Kind::kStrong}, {"b", Kind::kStrong},
      {"em", Kind::kEmphasis},      {"i", Kind::kEmphasis},    {"code", Kind::kCode},
      {"kbd", Kind::kCode},         {"samp", Kind::kCode},     {"pre", Kind::kPre},
      {"ul", Kind::kList},          {"ol", Kind::kList},       {"li", Kind::kItem},
      {"blockquote", Kind::kQuote}, {"tr", Kind::kRow},        {"td", Kind::kCell},
      {"th", Kind::kCell},          {"table", Kind::kTable},
  };
  auto it = kKinds.find(tag);
  return it == kKinds.end() ? Kind::kInline : it->second;
}

std::string TagName(const GumboNode* node) {
  const GumboElement& e = node->v.element;
  if (e.tag != GUMBO_TAG_UNKNOWN) return gumbo_normalized_tagname(e.tag);
  GumboStringPiece piece = e.original_tag;
  gumbo_tag_from_original_text(&piece);
  return std::string(piece.data, piece.length);
}

std::string Attribute(const GumboNode* node, const char* name) {
  const GumboAttribute* a = gumbo_get_attribute(&node->v.element.attributes, name);
  return a ? a->value : "";
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Writes Markdown: text with collapsed blanks, blocks separated by one blank line, and the
// prefixes of quotes and list items at each line's start.
class Writer {
 public:
  explicit Writer(std::string base, bool markdown) : base_(std::move(base)), markdown_(markdown) {}

  void Walk(const GumboNode* node) {
    if (node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_CDATA ||
        node->type == GUMBO_NODE_WHITESPACE) {
      Text(node->v.text.text);
      return;
    }
    if (node->type == GUMBO_NODE_DOCUMENT) {
      Children(node);
      return;
    }
    if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE) return;
    const std::string tag = TagName(node);
    if (tag == "title" && title_.empty()) title_ = Plain(node);
    if (tag == "head") return Children(node);  // only its title is kept
    Element(node, tag, KindOf(tag));
  }

  std::string Take() {
    std::string out = std::move(out_);
    while (!out.empty() && IsSpace(out.back())) out.pop_back();
    if (markdown_ && !title_.empty() && out.find(title_) == std::string::npos)
      out = "# " + title_ + "\n\n" + out;
    return out;
  }

 private:
  void Element(const GumboNode* node, const std::string& tag, Kind kind) {
    switch (kind) {
      case Kind::kSkip:
        return;
      case Kind::kBlock:
        return Block(node);
      case Kind::kHeading:
        return Heading(node, tag);
      case Kind::kBreak:
        return Line();
      case Kind::kRule:
        return Rule();
      case Kind::kLink:
        return Link(node);
      case Kind::kImage:
        return Image(node);
      case Kind::kStrong:
        return Wrap(node, "**");
      case Kind::kEmphasis:
        return Wrap(node, "*");
      case Kind::kCode:
        return Code(node);
      case Kind::kPre:
        return Pre(node);
      case Kind::kList:
        return List(node, tag == "ol");
      case Kind::kItem:
        return Item(node);
      case Kind::kQuote:
        return Quote(node);
      case Kind::kRow:
        return Row(node);
      case Kind::kCell:
        return Cell(node);
      case Kind::kTable:
        return Table(node);
      case Kind::kInline:
        return Children(node);
    }
  }

  void Children(const GumboNode* node) {
    const GumboVector& kids =
        node->type == GUMBO_NODE_DOCUMENT ? node->v.document.children : node->v.element.children;
    for (unsigned i = 0; i < kids.length; ++i) Walk(static_cast<const GumboNode*>(kids.data[i]));
  }

  // The text of a node, its own way (for titles, code and link texts).
  std::string Plain(const GumboNode* node) {
    Writer inner("", false);
    inner.Children(node);
    return inner.Take();
  }

  void Text(std::string_view text) {
    for (char c : text) {
      if (pre_) {
        Put(c);
        continue;
      }
      if (IsSpace(c)) {
        space_ = true;
        continue;
      }
      if (space_ && !AtLineStart()) out_ += ' ';
      space_ = false;
      Put(c);
    }
  }

  void Put(char c) {
    if (AtLineStart()) out_ += Prefix();
    out_ += c;
  }
  void Raw(const std::string& s) {
    if (space_ && !AtLineStart()) out_ += ' ';
    space_ = false;
    if (AtLineStart()) out_ += Prefix();
    out_ += s;
  }
  bool AtLineStart() {
    if (out_.empty() || out_.back() == '\n') return true;
    return false;
  }
  std::string Prefix() const {
    std::string p;
    for (const std::string& s : prefixes_) p += s;
    return p;
  }
  void Line() {
    space_ = false;
    if (!out_.empty() && out_.back() != '\n') out_ += '\n';
  }
  void Blank() {
    Line();
    if (out_.size() >= 2 && out_.compare(out_.size() - 2, 2, "\n\n") != 0) {
      out_ += Prefix();
      while (!out_.empty() && out_.back() == ' ') out_.pop_back();
      out_ += '\n';
    }
  }

  void Block(const GumboNode* node) {
    Blank();
    Children(node);
    Blank();
  }
  void Heading(const GumboNode* node, const std::string& tag) {
    Blank();
    if (markdown_) Raw(std::string(static_cast<size_t>(tag[1] - '0'), '#') + " ");
    Children(node);
    Blank();
  }
  void Rule() {
    Blank();
    if (markdown_) Raw("---");
    Blank();
  }
  void Link(const GumboNode* node) {
    std::string href = Absolute(Attribute(node, "href"));
    std::string text = Plain(node);
    if (!markdown_ || href.empty() || href.rfind("javascript:", 0) == 0 || href[0] == '#') {
      Raw(text);
      return;
    }
    Raw("[" + (text.empty() ? href : text) + "](" + href + ")");
  }
  void Image(const GumboNode* node) {
    const std::string alt = Attribute(node, "alt");
    if (!markdown_) {
      if (!alt.empty()) Raw(alt);
      return;
    }
    const std::string src = Absolute(Attribute(node, "src"));
    if (!src.empty() && src.rfind("data:", 0) != 0) Raw("![" + alt + "](" + src + ")");
  }
  void Wrap(const GumboNode* node, const std::string& mark) {
    std::string text = Plain(node);
    if (text.empty()) return;
    Raw(markdown_ ? mark + text + mark : text);
  }
  void Code(const GumboNode* node) {
    if (pre_) return Children(node);
    std::string text = Plain(node);
    if (!text.empty()) Raw(markdown_ ? "`" + text + "`" : text);
  }
  void Pre(const GumboNode* node) {
    Blank();
    if (markdown_) Raw("```\n");
    const bool was = pre_;
    pre_ = true;
    Children(node);
    pre_ = was;
    Line();
    if (markdown_) Raw("```");
    Blank();
  }
  void List(const GumboNode* node, bool ordered) {
    if (lists_.empty())
      Blank();
    else
      Line();
    lists_.push_back(ordered ? 1 : 0);
    Children(node);
    lists_.pop_back();
    if (lists_.empty())
      Blank();
    else
      Line();
  }
  void Item(const GumboNode* node) {
    Line();
    int& n = lists_.empty() ? loose_ : lists_.back();
    const std::string mark = n > 0 ? std::to_string(n++) + ". " : "- ";
    Raw(mark);
    prefixes_.push_back(std::string(mark.size(), ' '));
    Children(node);
    prefixes_.pop_back();
    Line();
  }
  void Quote(const GumboNode* node) {
    Blank();
    prefixes_.push_back(markdown_ ? "> " : "  ");
    Children(node);
    Line();
    prefixes_.pop_back();
    Blank();
  }
  void Table(const GumboNode* node) {
    Blank();
    const int rows = rows_;
    rows_ = 0;
    Children(node);
    rows_ = rows;
    Blank();
  }
  void Row(const GumboNode* node) {
    Line();
    cells_ = 0;
    if (markdown_) Raw("|");
    Children(node);
    Line();
    if (markdown_ && rows_ == 0 && cells_ > 0) {
      std::string sep = "|";
      for (int i = 0; i < cells_; ++i) sep += " --- |";
      Raw(sep);
      Line();
    }
    ++rows_;
  }
  void Cell(const GumboNode* node) {
    std::string text = Plain(node);
    for (char& c : text)
      if (c == '\n' || c == '|') c = ' ';
    Raw(markdown_ ? " " + text + " |" : text + "\t");
    ++cells_;
  }

  std::string Absolute(const std::string& url) const {
    if (url.size() >= 2 && url[0] == '/' && url[1] == '/') return "https:" + url;
    if (!url.empty() && url[0] == '/' && !base_.empty()) return base_ + url;
    return url;
  }

  std::string base_;
  bool markdown_;
  std::string out_;
  std::string title_;
  bool space_ = false;
  bool pre_ = false;
  std::vector<std::string> prefixes_;
  std::vector<int> lists_;  // 0: bullets; else the next number
  int loose_ = 0;
  int rows_ = 0;
  int cells_ = 0;
};

std::string Convert(std::string_view html, const std::string& base, bool markdown) {
  GumboOutput* doc = gumbo_parse_with_options(&kGumboDefaultOptions, html.data(), html.size());
  Writer w(base, markdown);
  w.Walk(doc->document);
  gumbo_destroy_output(&kGumboDefaultOptions, doc);
  return w.Take();
}

}  // namespace

std::string HtmlToMarkdown(std::string_view html, const std::string& base) {
  return Convert(html, base, true);
}

std::string HtmlToText(std::string_view html) { return Convert(html, "", false); }

}  // namespace lousho::agent::tools
