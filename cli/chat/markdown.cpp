#include "cli/chat/markdown.h"

#include <cmark.h>

#include <algorithm>
#include <memory>
#include <utility>

namespace lousho::cli::chat {
namespace {

struct NodeDeleter {
  void operator()(cmark_node* n) const { cmark_node_free(n); }
};
using Document = std::unique_ptr<cmark_node, NodeDeleter>;

Document Parse(std::string_view text) {
  return Document(cmark_parse_document(text.data(), text.size(), CMARK_OPT_DEFAULT));
}

std::string Literal(cmark_node* n) {
  const char* s = cmark_node_get_literal(n);
  return s != nullptr ? s : "";
}

// The byte length of the UTF-8 sequence starting with `c`.
size_t CharLength(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  return (c & 0xF8) == 0xF0 ? 4 : 1;
}

// A run of text in one style.
struct Piece {
  std::string style;  // escape sequences; empty: plain
  std::string text;
};

// Fills rows of at most `width` columns from words, each row starting with a prefix.
class Wrapper {
 public:
  Wrapper(const Terminal& term, std::vector<std::string>* out, std::string first, std::string rest)
      : term_(term), out_(out), first_(std::move(first)), rest_(std::move(rest)) {}

  // Text in `style`: spaces separate words, '\n' breaks the row.
  void Add(const std::string& style, std::string_view text) {
    for (size_t i = 0; i < text.size();) {
      const char c = text[i];
      if (c == ' ' || c == '\n' || c == '\t') {
        FlushWord();
        if (c == '\n') Break();
        ++i;
        continue;
      }
      const size_t n = std::min(CharLength(static_cast<unsigned char>(c)), text.size() - i);
      if (word_.empty() || word_.back().style != style) word_.push_back({style, {}});
      word_.back().text.append(text.substr(i, n));
      ++word_width_;
      i += n;
    }
  }
  void Break() {
    FlushWord();
    EndRow();
  }
  void Finish() {
    FlushWord();
    if (!row_.empty() || !wrote_) EndRow();
  }

 private:
  int Avail() const {
    const std::string& prefix = wrote_ ? rest_ : first_;
    return std::max(8, term_.width() - 1 - DisplayWidth(prefix));
  }
  void FlushWord() {
    if (word_.empty()) return;
    if (col_ > 0 && col_ + 1 + word_width_ > Avail()) EndRow();
    if (col_ > 0) {
      row_ += ' ';
      ++col_;
    }
    for (auto& piece : word_) PutPiece(piece);
    word_.clear();
    word_width_ = 0;
  }
  // A piece of a word, cut where the row is full (a word longer than a row).
  void PutPiece(const Piece& piece) {
    size_t i = 0;
    while (i < piece.text.size()) {
      if (col_ >= Avail()) EndRow();
      size_t j = i;
      int cols = 0;
      while (j < piece.text.size() && col_ + cols < Avail()) {
        j += CharLength(static_cast<unsigned char>(piece.text[j]));
        ++cols;
      }
      j = std::min(j, piece.text.size());
      row_ += piece.style.empty() ? piece.text.substr(i, j - i)
                                  : piece.style + piece.text.substr(i, j - i) + term_.reset();
      col_ += cols;
      i = j;
    }
  }
  void EndRow() {
    out_->push_back((wrote_ ? rest_ : first_) + row_);
    wrote_ = true;
    row_.clear();
    col_ = 0;
  }

  const Terminal& term_;
  std::vector<std::string>* out_;
  std::string first_, rest_;
  std::vector<Piece> word_;
  int word_width_ = 0;
  std::string row_;
  int col_ = 0;
  bool wrote_ = false;
};

// Where a block's rows go and what starts them.
struct Frame {
  std::string first;  // the first row's prefix
  std::string rest;   // the others'
};

class Renderer {
 public:
  Renderer(const Terminal& term, std::vector<std::string>* out) : term_(term), out_(out) {}

  void Block(cmark_node* n, const Frame& f) {
    switch (cmark_node_get_type(n)) {
      case CMARK_NODE_PARAGRAPH:
        return Paragraph(n, f, {});
      case CMARK_NODE_HEADING:
        return Paragraph(
            n, f,
            term_.bold() + (cmark_node_get_heading_level(n) == 1 ? term_.underline()
                                                                 : term_.color(Color::kCyan)));
      case CMARK_NODE_CODE_BLOCK:
        return Code(Literal(n), f);
      case CMARK_NODE_HTML_BLOCK:
        return Code(Literal(n), f);
      case CMARK_NODE_BLOCK_QUOTE: {
        const std::string bar = term_.styled() ? term_.dim() + "│" + term_.reset() + " " : "> ";
        return Children(n, {f.first + bar, f.rest + bar}, true);
      }
      case CMARK_NODE_LIST:
        return List(n, f);
      case CMARK_NODE_THEMATIC_BREAK:
        out_->push_back(f.first + term_.dim() +
                        Repeat(term_.styled() ? "─" : "-", std::min(40, term_.width() - 1)) +
                        term_.reset());
        return;
      default:
        return Children(n, f, true);
    }
  }

 private:
  static std::string Repeat(const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  }

  // Child blocks, a blank row between them when `loose`.
  void Children(cmark_node* n, const Frame& f, bool loose) {
    bool first = true;
    for (cmark_node* c = cmark_node_first_child(n); c != nullptr; c = cmark_node_next(c)) {
      if (!first && loose) out_->push_back(TrimRight(f.rest));
      Block(c, first ? f : Frame{f.rest, f.rest});
      first = false;
    }
  }

  static std::string TrimRight(std::string s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  }

  void List(cmark_node* n, const Frame& f) {
    const bool ordered = cmark_node_get_list_type(n) == CMARK_ORDERED_LIST;
    const bool tight = cmark_node_get_list_tight(n) != 0;
    int number = ordered ? cmark_node_get_list_start(n) : 0;
    bool first = true;
    for (cmark_node* item = cmark_node_first_child(n); item != nullptr;
         item = cmark_node_next(item)) {
      if (!first && !tight) out_->push_back(TrimRight(f.rest));
      const std::string marker =
          ordered ? std::to_string(number++) + ". " : (term_.styled() ? "• " : "- ");
      const std::string pad(static_cast<size_t>(DisplayWidth(marker)), ' ');
      Children(item, {(first ? f.first : f.rest) + marker, f.rest + pad}, !tight);
      first = false;
    }
  }

  void Code(const std::string& text, const Frame& f) {
    const std::string gutter = term_.styled() ? term_.dim() + "│" + term_.reset() + " " : "    ";
    const std::string style = term_.color(Color::kYellow);
    size_t start = 0;
    bool first = true;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      Wrapper w(term_, out_, (first ? f.first : f.rest) + gutter, f.rest + gutter);
      AddVerbatim(w, style, std::string_view(text).substr(start, end - start));
      w.Finish();
      first = false;
      start = end + 1;
    }
  }

  // A code line as written: its blanks go in as \x01 (a column that is no word break), written
  // back as spaces once the rows are made (RestoreSpaces).
  static void AddVerbatim(Wrapper& w, const std::string& style, std::string_view line) {
    std::string glued(line);
    std::replace_if(
        glued.begin(), glued.end(), [](char c) { return c == ' ' || c == '\t'; }, '\x01');
    w.Add(style, glued);
  }

  void Paragraph(cmark_node* n, const Frame& f, const std::string& style) {
    Wrapper w(term_, out_, f.first, f.rest);
    Inlines(n, style, w);
    w.Finish();
  }

  void Inlines(cmark_node* n, const std::string& style, Wrapper& w) {
    for (cmark_node* c = cmark_node_first_child(n); c != nullptr; c = cmark_node_next(c))
      Inline(c, style, w);
  }

  void Inline(cmark_node* c, const std::string& style, Wrapper& w) {
    switch (cmark_node_get_type(c)) {
      case CMARK_NODE_TEXT:
      case CMARK_NODE_HTML_INLINE:
        return w.Add(style, Literal(c));
      case CMARK_NODE_CODE:
        return w.Add(style + term_.color(Color::kYellow), Literal(c));
      case CMARK_NODE_EMPH:
        return Inlines(c, style + (term_.italic().empty() ? term_.underline() : term_.italic()), w);
      case CMARK_NODE_STRONG:
        return Inlines(c, style + term_.bold(), w);
      case CMARK_NODE_SOFTBREAK:
        return w.Add(style, " ");
      case CMARK_NODE_LINEBREAK:
        return w.Break();
      case CMARK_NODE_LINK:
      case CMARK_NODE_IMAGE:
        return Link(c, style, w);
      default:
        return Inlines(c, style, w);
    }
  }

  void Link(cmark_node* c, const std::string& style, Wrapper& w) {
    const bool image = cmark_node_get_type(c) == CMARK_NODE_IMAGE;
    if (image) w.Add(style, "[image: ");
    Inlines(c, style + term_.underline() + term_.color(Color::kBlue), w);
    if (image) w.Add(style, "]");
    const char* url = cmark_node_get_url(c);
    std::string shown;
    for (cmark_node* t = cmark_node_first_child(c); t != nullptr; t = cmark_node_next(t))
      shown += Literal(t);
    if (url != nullptr && *url != '\0' && shown != url)
      w.Add(style + term_.dim(), std::string(" (") + url + ")");
  }

  const Terminal& term_;
  std::vector<std::string>* out_;
};

// Rows with the code lines' \x01 (a kept space) written back as spaces.
void RestoreSpaces(std::vector<std::string>& rows, size_t from) {
  for (size_t i = from; i < rows.size(); ++i)
    std::replace(rows[i].begin(), rows[i].end(), '\x01', ' ');
}

// The top-level blocks of `doc` from `first` on, rendered, blank rows between them (and before
// the first when `gap`).
void RenderBlocks(cmark_node* first, cmark_node* stop, const Terminal& term, bool gap,
                  std::vector<std::string>* out) {
  Renderer r(term, out);
  for (cmark_node* n = first; n != stop; n = cmark_node_next(n)) {
    if (gap) out->emplace_back();
    const size_t from = out->size();
    r.Block(n, {});
    RestoreSpaces(*out, from);
    gap = true;
  }
}

}  // namespace

std::vector<std::string> RenderMarkdown(std::string_view markdown, const Terminal& term) {
  std::vector<std::string> out;
  Document doc = Parse(markdown);
  RenderBlocks(cmark_node_first_child(doc.get()), nullptr, term, false, &out);
  return out;
}

void MarkdownStream::Append(std::string_view text) { source_.append(text); }

std::vector<std::string> MarkdownStream::TakeCompleted() {
  std::vector<std::string> out;
  Document doc = Parse(source_);
  cmark_node* last = cmark_node_last_child(doc.get());
  cmark_node* first = cmark_node_first_child(doc.get());
  if (last == nullptr || first == last) return out;
  RenderBlocks(first, last, term_, emitted_any_, &out);
  emitted_any_ = true;
  // Keep the source from the last block's first line on.
  const int line = cmark_node_get_start_line(last);
  size_t at = 0;
  for (int l = 1; l < line && at != std::string::npos; ++l) {
    at = source_.find('\n', at);
    if (at != std::string::npos) ++at;
  }
  if (at != std::string::npos) source_.erase(0, at);
  return out;
}

std::vector<std::string> MarkdownStream::Tail() const {
  std::vector<std::string> out;
  Document doc = Parse(source_);
  RenderBlocks(cmark_node_first_child(doc.get()), nullptr, term_, emitted_any_, &out);
  return out;
}

std::vector<std::string> MarkdownStream::Finish() {
  std::vector<std::string> out = Tail();
  if (!out.empty()) emitted_any_ = true;
  source_.clear();
  return out;
}

}  // namespace lousho::cli::chat
