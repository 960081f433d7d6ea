// Shell command lines read statically: words, quoting, lists, substitutions, wrappers, sh -c.
#include "support/shell_words.h"

#include <cctype>
#include <initializer_list>
#include <utility>

namespace lousho {
namespace {

constexpr size_t npos = std::string_view::npos;
// Nesting of quotes and substitutions one scan follows before giving up on the line.
constexpr int kMaxScanNesting = 128;
// Wrappers peeled off one command: `env env env ... git push` stops here.
constexpr int kMaxPeel = 32;

struct Piece {
  std::string text;
  bool gap = false;
};

struct Word {
  std::vector<Piece> pieces;
  bool quoted = false;      // some quoting or backslash
  bool glob = false;        // an unquoted * ? or [
  bool assignment = false;  // NAME=..., NAME+=..., NAME[i]=... (unquoted name)

  void Add(std::string_view s) {
    if (pieces.empty() || pieces.back().gap) pieces.push_back({});
    pieces.back().text.append(s);
  }
  void Add(char c) { Add(std::string_view(&c, 1)); }
  void AddGap() {
    if (!pieces.empty() && pieces.back().gap) return;
    pieces.push_back({"", true});
  }
  bool Known() const {
    for (const auto& p : pieces)
      if (p.gap) return false;
    return true;
  }
  std::string Literal() const {
    std::string s;
    for (const auto& p : pieces) s += p.text;
    return s;
  }
  bool Is(std::string_view keyword) const { return !quoted && Known() && Literal() == keyword; }
  static Word Gap() {
    Word w;
    w.AddGap();
    return w;
  }
};

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool IsMeta(char c) {
  return IsBlank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' ||
         c == '<' || c == '>';
}
bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `*`, `?`, or a closed `[...]`: pathname expansion may turn the word into any file name
// (`/usr/bin/g?t`). A lone `[` or `[[` is the test command.
bool LooksLikePattern(const std::string& w) {
  if (w.find_first_of("*?") != std::string::npos) return true;
  size_t open = w.find('[');
  return open != std::string::npos && w.find(']', open + 1) != std::string::npos;
}

std::string BaseName(const std::string& name) {
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

// Words from words[from] on (words[from] read as `head` when given) joined by single spaces.
// `loose`: an unknown run may be empty or several words, so the space beside it is taken as part
// of it ("$X git" may be "git"). Else the spaces stay ("echo $X" is "echo <?>").
ShellText Join(const std::vector<Word>& words, size_t from, bool loose,
               const std::string* head = nullptr) {
  ShellText t;
  t.pieces.emplace_back();
  bool prev_gap = true;  // no space before the first word
  for (size_t i = from; i < words.size(); ++i) {
    const Word& w = words[i];
    std::vector<Piece> own;
    const std::vector<Piece>* pieces = &w.pieces;
    if (i == from && head) {
      own.push_back({*head, false});
      pieces = &own;
    }
    bool starts_gap = !pieces->empty() && pieces->front().gap;
    if (i > from && (!loose || (!prev_gap && !starts_gap))) t.pieces.back() += ' ';
    for (const auto& p : *pieces) {
      if (p.gap) {
        // Two unknown runs in a row are one.
        if (t.pieces.size() == 1 || !t.pieces.back().empty()) t.pieces.emplace_back();
      } else {
        t.pieces.back() += p.text;
      }
    }
    prev_gap = !pieces->empty() && pieces->back().gap;
  }
  return t;
}

class Reader {
 public:
  Reader(std::string_view s, int depth, ShellScript* out) : s_(s), depth_(depth), out_(out) {}

  void Run() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (IsBlank(c)) {
        ++i_;
      } else if (c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
        i_ += 2;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '\n') {
        EndCommand();
        ++i_;
        ReadHeredocs();
      } else if (c == ';') {
        EndCommand();
        ++i_;
        // ;; ;& ;;& end a case branch: patterns follow.
        bool branch_end = false;
        if (i_ < s_.size() && (s_[i_] == ';' || s_[i_] == '&')) {
          branch_end = true;
          if (s_[i_++] == ';' && i_ < s_.size() && s_[i_] == '&') ++i_;
        }
        if (branch_end && !case_patterns_.empty()) case_patterns_.back() = true;
      } else if (c == '&' && i_ + 1 < s_.size() && s_[i_ + 1] == '>') {
        Redirect();
      } else if (c == '&' || c == '|') {
        if (InCasePatterns()) {
          ++i_;  // `a|b)` alternatives
          continue;
        }
        EndCommand();
        ++i_;
        if (i_ < s_.size() && (s_[i_] == c || (c == '|' && s_[i_] == '&'))) ++i_;
      } else if (c == '(') {
        EndCommand();  // a subshell, `((`, or the `()` of a function definition
        ++i_;
      } else if (c == ')') {
        if (InCasePatterns()) {
          words_.clear();
          case_patterns_.back() = false;
        } else {
          EndCommand();
        }
        ++i_;
      } else if ((c == '<' || c == '>') && !(i_ + 1 < s_.size() && s_[i_ + 1] == '(')) {
        Redirect();
      } else {
        Word w = LexWord();
        bool digits = !w.quoted && w.Known() && !w.Literal().empty();
        for (char d : w.Literal()) digits = digits && std::isdigit(static_cast<unsigned char>(d));
        if (digits && i_ < s_.size() && (s_[i_] == '<' || s_[i_] == '>') &&
            !(i_ + 1 < s_.size() && s_[i_ + 1] == '(')) {
          Redirect();  // `2>x`: the digits name the descriptor
          continue;
        }
        AddWord(std::move(w));
      }
    }
    EndCommand();
  }

  // For the text of ${ }, $(( )) and here-documents: only the substitutions inside matter.
  void ScanExpansions(bool single_quotes) {
    Word scratch;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\\') {
        i_ += 2;
      } else if (c == '\'' && single_quotes) {
        size_t j = s_.find('\'', i_ + 1);
        i_ = j == npos ? s_.size() : j + 1;
      } else if (c == '$') {
        LexDollar(&scratch, true);
      } else if (c == '`') {
        LexBacktick(&scratch);
      } else if ((c == '<' || c == '>') && i_ + 1 < s_.size() && s_[i_ + 1] == '(' &&
                 single_quotes) {
        ProcessSubstitution(&scratch);
      } else {
        ++i_;
      }
    }
  }

 private:
  bool InCasePatterns() const { return !case_patterns_.empty() && case_patterns_.back(); }

  void Opaque() {
    if (out_->opaque) return;
    out_->opaque = true;
    ShellCommand cmd;
    cmd.written.pieces = {"", ""};
    out_->commands.push_back(std::move(cmd));
  }

  void Nested(std::string_view text) {
    if (depth_ + 1 > kMaxShellDepth) return Opaque();
    Reader(text, depth_ + 1, out_).Run();
  }

  // --- Scanning for the end of a construct, without reading it (that happens later, nested).

  // s_[open] == '('; returns the matching ')' or npos.
  size_t FindClose(size_t open, int nesting) const {
    if (nesting > kMaxScanNesting) return npos;
    int depth = 1;
    for (size_t j = open + 1; j < s_.size(); ++j) {
      char c = s_[j];
      if (c == '\\') {
        ++j;
      } else if (c == '\'') {
        j = s_.find('\'', j + 1);
        if (j == npos) return npos;
      } else if (c == '"') {
        j = SkipDouble(j, nesting + 1);
        if (j == npos) return npos;
      } else if (c == '`') {
        j = FindBacktick(j);
        if (j == npos) return npos;
      } else if (c == '(') {
        ++depth;
      } else if (c == ')') {
        if (--depth == 0) return j;
      }
    }
    return npos;
  }

  // s_[open] == '"'; returns the closing '"' or npos.
  size_t SkipDouble(size_t open, int nesting) const {
    if (nesting > kMaxScanNesting) return npos;
    for (size_t j = open + 1; j < s_.size(); ++j) {
      char c = s_[j];
      if (c == '\\') {
        ++j;
      } else if (c == '"') {
        return j;
      } else if (c == '`') {
        j = FindBacktick(j);
        if (j == npos) return npos;
      } else if (c == '$' && j + 1 < s_.size() && (s_[j + 1] == '(' || s_[j + 1] == '{')) {
        j = s_[j + 1] == '(' ? FindClose(j + 1, nesting + 1) : FindBrace(j + 1, nesting + 1);
        if (j == npos) return npos;
      }
    }
    return npos;
  }

  // s_[open] == '{' of `${`; returns the matching '}' or npos.
  size_t FindBrace(size_t open, int nesting) const {
    if (nesting > kMaxScanNesting) return npos;
    int depth = 1;
    for (size_t j = open + 1; j < s_.size(); ++j) {
      char c = s_[j];
      if (c == '\\') {
        ++j;
      } else if (c == '\'') {
        j = s_.find('\'', j + 1);
        if (j == npos) return npos;
      } else if (c == '"') {
        j = SkipDouble(j, nesting + 1);
        if (j == npos) return npos;
      } else if (c == '`') {
        j = FindBacktick(j);
        if (j == npos) return npos;
      } else if (c == '$' && j + 1 < s_.size() && s_[j + 1] == '(') {
        j = FindClose(j + 1, nesting + 1);
        if (j == npos) return npos;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        if (--depth == 0) return j;
      }
    }
    return npos;
  }

  size_t FindBacktick(size_t open) const {
    for (size_t j = open + 1; j < s_.size(); ++j) {
      if (s_[j] == '\\') {
        ++j;
      } else if (s_[j] == '`') {
        return j;
      }
    }
    return npos;
  }

  // --- Words.

  bool AssignmentAt(size_t j) const {
    if (j >= s_.size() || !IsNameStart(s_[j])) return false;
    while (j < s_.size() && IsNameChar(s_[j])) ++j;
    if (j < s_.size() && s_[j] == '[') {
      while (j < s_.size() && s_[j] != ']' && !IsMeta(s_[j])) ++j;
      if (j >= s_.size() || s_[j] != ']') return false;
      ++j;
    }
    if (j < s_.size() && s_[j] == '+') ++j;
    return j < s_.size() && s_[j] == '=';
  }

  Word LexWord() {
    Word w;
    w.assignment = AssignmentAt(i_);
    int braces = 0;
    bool brace_list = false;  // `{a,b}` or `{1..3}`: brace expansion
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '<' || c == '>') {
        if (i_ + 1 < s_.size() && s_[i_ + 1] == '(') {
          ProcessSubstitution(&w);
          continue;
        }
        break;
      }
      if (IsMeta(c)) break;
      if (c == '\\') {
        if (i_ + 1 >= s_.size()) {
          w.Add('\\');
          ++i_;
        } else {
          if (s_[i_ + 1] != '\n') w.Add(s_[i_ + 1]);
          w.quoted = true;
          i_ += 2;
        }
      } else if (c == '\'') {
        size_t j = s_.find('\'', i_ + 1);
        w.quoted = true;
        if (j == npos) {
          Opaque();
          w.AddGap();
          i_ = s_.size();
          break;
        }
        w.Add(s_.substr(i_ + 1, j - i_ - 1));
        i_ = j + 1;
      } else if (c == '"') {
        LexDouble(&w);
      } else if (c == '$') {
        LexDollar(&w, false);
      } else if (c == '`') {
        LexBacktick(&w);
      } else {
        if (c == '*' || c == '?' || c == '[') w.glob = true;
        if (c == '{') ++braces;
        if (braces > 0 && (c == ',' || (c == '.' && i_ + 1 < s_.size() && s_[i_ + 1] == '.')))
          brace_list = true;
        if (c == '}' && braces > 0) --braces;
        w.Add(c);
        ++i_;
      }
    }
    if (w.pieces.empty()) w.Add("");
    if (brace_list) {
      // Brace expansion makes several words of one: what they are is left unknown.
      bool assignment = w.assignment;
      w = Word::Gap();
      w.assignment = assignment;
    }
    return w;
  }

  void LexDouble(Word* w) {
    w->quoted = true;
    ++i_;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '"') {
        ++i_;
        return;
      }
      if (c == '\\' && i_ + 1 < s_.size()) {
        char n = s_[i_ + 1];
        if (n == '$' || n == '`' || n == '"' || n == '\\') {
          w->Add(n);
        } else if (n != '\n') {
          w->Add('\\');
          w->Add(n);
        }
        i_ += 2;
      } else if (c == '$') {
        LexDollar(w, true);
      } else if (c == '`') {
        LexBacktick(w);
      } else {
        w->Add(c);
        ++i_;
      }
    }
    Opaque();  // unclosed quote
    w->AddGap();
  }

  void LexDollar(Word* w, bool in_double) {
    if (i_ + 1 >= s_.size()) {
      w->Add('$');
      ++i_;
      return;
    }
    char n = s_[i_ + 1];
    if (n == '(') {
      size_t close = FindClose(i_ + 1, 0);
      if (close == npos) {
        Opaque();
        w->AddGap();
        i_ = s_.size();
        return;
      }
      if (i_ + 2 < s_.size() && s_[i_ + 2] == '(' && FindClose(i_ + 2, 0) + 1 == close) {
        // $(( )): arithmetic; only substitutions inside it run anything.
        ScanSub(i_ + 3, close - 1, false);
      } else {
        out_->substitution = true;
        Nested(s_.substr(i_ + 2, close - i_ - 2));
      }
      w->AddGap();
      i_ = close + 1;
      return;
    }
    if (n == '{') {
      size_t close = FindBrace(i_ + 1, 0);
      if (close == npos) {
        Opaque();
        w->AddGap();
        i_ = s_.size();
        return;
      }
      ScanSub(i_ + 2, close, true);
      w->AddGap();
      i_ = close + 1;
      return;
    }
    if (n == '\'' && !in_double) return LexAnsiC(w);
    if (n == '"' && !in_double) {
      ++i_;
      return LexDouble(w);
    }
    if (IsNameStart(n)) {
      i_ += 2;
      while (i_ < s_.size() && IsNameChar(s_[i_])) ++i_;
      w->AddGap();
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(n)) || n == '@' || n == '*' || n == '#' ||
        n == '?' || n == '-' || n == '$' || n == '!') {
      i_ += 2;
      w->AddGap();
      return;
    }
    w->Add('$');
    ++i_;
  }

  // $'...': C escapes decoded; the rarer ones (\u, \U, \c) leave the text unknown.
  void LexAnsiC(Word* w) {
    w->quoted = true;
    i_ += 2;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\'') {
        ++i_;
        return;
      }
      if (c != '\\' || i_ + 1 >= s_.size()) {
        w->Add(c);
        ++i_;
        continue;
      }
      char e = s_[i_ + 1];
      i_ += 2;
      switch (e) {
        case 'a':
          w->Add('\a');
          break;
        case 'b':
          w->Add('\b');
          break;
        case 'e':
        case 'E':
          w->Add('\x1b');
          break;
        case 'f':
          w->Add('\f');
          break;
        case 'n':
          w->Add('\n');
          break;
        case 'r':
          w->Add('\r');
          break;
        case 't':
          w->Add('\t');
          break;
        case 'v':
          w->Add('\v');
          break;
        case 'x': {
          int v = 0;
          int digits = 0;
          while (digits < 2 && i_ < s_.size() &&
                 std::isxdigit(static_cast<unsigned char>(s_[i_]))) {
            char h = static_cast<char>(std::tolower(static_cast<unsigned char>(s_[i_++])));
            v = v * 16 + (h <= '9' ? h - '0' : h - 'a' + 10);
            ++digits;
          }
          if (digits == 0) {
            w->Add("\\x");
          } else {
            w->Add(static_cast<char>(v));
          }
          break;
        }
        case 'u':
        case 'U':
        case 'c':
          w->AddGap();
          break;
        default:
          if (e >= '0' && e <= '7') {
            int v = e - '0';
            for (int k = 0; k < 2 && i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '7'; ++k)
              v = v * 8 + (s_[i_++] - '0');
            w->Add(static_cast<char>(v & 0xff));
          } else if (e == '\\' || e == '\'' || e == '"' || e == '?') {
            w->Add(e);
          } else {
            w->Add('\\');
            w->Add(e);
          }
      }
    }
    Opaque();
    w->AddGap();
  }

  void LexBacktick(Word* w) {
    size_t close = FindBacktick(i_);
    if (close == npos) {
      Opaque();
      w->AddGap();
      i_ = s_.size();
      return;
    }
    std::string inner;
    for (size_t j = i_ + 1; j < close; ++j) {
      if (s_[j] == '\\' && j + 1 < close &&
          (s_[j + 1] == '\\' || s_[j + 1] == '`' || s_[j + 1] == '$'))
        ++j;
      inner += s_[j];
    }
    out_->substitution = true;
    Nested(inner);
    w->AddGap();
    i_ = close + 1;
  }

  // <( ) or >( ) at i_.
  void ProcessSubstitution(Word* w) {
    size_t close = FindClose(i_ + 1, 0);
    out_->substitution = true;
    if (close == npos) {
      Opaque();
      w->AddGap();
      i_ = s_.size();
      return;
    }
    Nested(s_.substr(i_ + 2, close - i_ - 2));
    w->AddGap();
    i_ = close + 1;
  }

  // The substitutions inside s_[from, to) (${ }, $(( )), a here-document), one level deeper.
  void ScanSub(size_t from, size_t to, bool single_quotes) {
    if (depth_ + 1 > kMaxShellDepth) return Opaque();
    Reader(s_.substr(from, to - from), depth_ + 1, out_).ScanExpansions(single_quotes);
  }

  // --- Redirections and here-documents.

  void Redirect() {
    enum { kFile, kDup, kHeredoc, kHereString } kind = kFile;
    bool strip_tabs = false;
    auto at = [&](std::string_view op) { return s_.substr(i_, op.size()) == op; };
    if (at("&>>")) {
      i_ += 3;
    } else if (at("&>")) {
      i_ += 2;
    } else if (at("<<<")) {
      i_ += 3;
      kind = kHereString;
    } else if (at("<<-")) {
      i_ += 3;
      kind = kHeredoc;
      strip_tabs = true;
    } else if (at("<<")) {
      i_ += 2;
      kind = kHeredoc;
    } else if (at("<&") || at(">&")) {
      i_ += 2;
      kind = kDup;
    } else if (at(">>") || at(">|") || at("<>")) {
      i_ += 2;
    } else {
      ++i_;
    }
    while (i_ < s_.size() && IsBlank(s_[i_])) ++i_;
    if (i_ >= s_.size() || (IsMeta(s_[i_]) && !(s_[i_] == '<' || s_[i_] == '>'))) {
      out_->redirection = true;  // no target: a syntax error; not harmless either way
      return;
    }
    Word target = LexWord();
    const std::string text = target.Literal();
    switch (kind) {
      case kHeredoc:
        out_->redirection = true;
        heredocs_.push_back({text, !target.quoted, strip_tabs});
        return;
      case kHereString:
        out_->redirection = true;
        return;
      case kDup: {
        bool fd = target.Known() && !text.empty();
        for (size_t k = 0; k < text.size(); ++k)
          fd = fd && (std::isdigit(static_cast<unsigned char>(text[k])) ||
                      (text[k] == '-' && k + 1 == text.size()));
        if (!fd && !(target.Known() && text == "/dev/null")) out_->redirection = true;
        return;
      }
      case kFile:
        if (!(target.Known() && text == "/dev/null")) out_->redirection = true;
        return;
    }
  }

  void ReadHeredocs() {
    for (const auto& h : heredocs_) {
      size_t body = i_;
      size_t end = s_.size();
      while (i_ < s_.size()) {
        size_t eol = s_.find('\n', i_);
        if (eol == npos) eol = s_.size();
        std::string_view line = s_.substr(i_, eol - i_);
        if (h.strip_tabs)
          while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
        size_t line_start = i_;
        i_ = eol < s_.size() ? eol + 1 : eol;
        if (line == h.delimiter) {
          end = line_start;
          break;
        }
      }
      if (h.expand) ScanSub(body, end, false);
    }
    heredocs_.clear();
  }

  // --- Commands.

  void AddWord(Word w) {
    if (InCasePatterns()) {
      if (w.Is("esac")) case_patterns_.pop_back();
      return;
    }
    if (case_header_ == CaseHeader::kSubject) {
      case_header_ = CaseHeader::kIn;
      return;
    }
    if (case_header_ == CaseHeader::kIn) {
      case_header_ = CaseHeader::kNone;
      case_patterns_.push_back(true);
      return;
    }
    if (skip_to_separator_) return;
    if (skip_words_ > 0) {
      --skip_words_;
      return;
    }
    if (words_.empty()) {
      for (const char* k : {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}",
                            "fi", "done", "coproc"})
        if (w.Is(k)) return;
      if (w.Is("esac")) {
        if (!case_patterns_.empty()) case_patterns_.pop_back();
        return;
      }
      if (w.Is("case")) {
        case_header_ = CaseHeader::kSubject;
        return;
      }
      if (w.Is("for") || w.Is("select")) {
        skip_to_separator_ = true;  // `for NAME in WORDS`: no command until `;` or newline
        return;
      }
      if (w.Is("function")) {
        skip_words_ = 1;
        return;
      }
    }
    words_.push_back(std::move(w));
  }

  void EndCommand() {
    skip_to_separator_ = false;
    skip_words_ = 0;
    if (InCasePatterns()) {
      words_.clear();
      return;
    }
    if (words_.empty()) return;
    std::vector<Word> words = std::move(words_);
    words_.clear();
    Emit(std::move(words));
  }

  void Emit(std::vector<Word> words) {
    if (emit_depth_ >= kMaxPeel) return Opaque();  // find -exec find -exec ...
    ++emit_depth_;
    EmitCommand(std::move(words));
    --emit_depth_;
  }

  void EmitCommand(std::vector<Word> words) {
    ShellCommand cmd;
    cmd.written = Join(words, 0, false);
    ShellText loose = Join(words, 0, true);
    if (loose.pieces != cmd.written.pieces) cmd.peeled.push_back(std::move(loose));
    for (const auto& w : words) cmd.words.push_back(w.Literal());
    size_t k = 0;
    for (int round = 0; round < kMaxPeel; ++round) {
      size_t start = k;
      while (k < words.size() && words[k].assignment) ++k;
      if (k >= words.size()) break;
      if (k != start) cmd.peeled.push_back(Join(words, k, true));
      Word& head = words[k];
      if (!head.Known() || (head.glob && LooksLikePattern(head.Literal()))) {
        // The command name is only known when the shell runs.
        if (head.Known()) {
          head = Word::Gap();
          cmd.peeled.push_back(Join(words, k, true));
        }
        break;
      }
      const std::string name = head.Literal();
      const std::string base = BaseName(name);
      if (base != name) cmd.peeled.push_back(Join(words, k, true, &base));
      if (base == "find") {
        EmitFindExec(words, k);
        break;
      }
      size_t next = Peel(base, &words, k);
      if (next == npos) break;
      k = next;
      if (k < words.size()) cmd.peeled.push_back(Join(words, k, true));
    }
    out_->commands.push_back(std::move(cmd));
  }

  // Skips a wrapper's options from words[j]: returns the index of its first operand. `with_arg`
  // are the short options that take a value (`-u root`, `-uroot`), `long_with_arg` the long
  // ones (`--user root`; `--user=root` needs no listing).
  static size_t SkipOptions(const std::vector<Word>& words, size_t j, std::string_view with_arg,
                            std::initializer_list<std::string_view> long_with_arg = {}) {
    while (j < words.size()) {
      if (!words[j].Known()) return j;
      const std::string t = words[j].Literal();
      if (t == "--") return j + 1;
      if (t.size() < 2 || t[0] != '-') return j;
      if (t[1] == '-') {
        bool takes = false;
        for (auto l : long_with_arg) takes = takes || t.substr(2) == l;
        j += takes ? 2 : 1;
        continue;
      }
      size_t step = 1;
      for (size_t c = 1; c < t.size(); ++c) {
        if (with_arg.find(t[c]) != npos) {
          if (c + 1 == t.size()) step = 2;
          break;
        }
      }
      j += step;
    }
    return j;
  }

  // When words[k] (named `base`) runs another command from its arguments: the index of that
  // command's first word. npos when it is not a wrapper, or when what it runs was read here
  // already (sh -c, eval) or cannot be known.
  size_t Peel(const std::string& base, std::vector<Word>* words_in, size_t k) {
    std::vector<Word>& words = *words_in;
    const size_t n = words.size();
    if (base == "command" || base == "builtin" || base == "nohup" || base == "setsid" ||
        base == "chronic" || base == "unbuffer" || base == "busybox")
      return SkipOptions(words, k + 1, "");
    if (base == "exec") return SkipOptions(words, k + 1, "a");
    if (base == "time") return SkipOptions(words, k + 1, "fo", {"format", "output"});
    if (base == "nice") return SkipOptions(words, k + 1, "n", {"adjustment"});
    if (base == "ionice") return SkipOptions(words, k + 1, "cnp", {"class", "classdata", "pid"});
    if (base == "stdbuf") return SkipOptions(words, k + 1, "ioe", {"input", "output", "error"});
    if (base == "sudo" || base == "doas") {
      size_t j = SkipOptions(words, k + 1, "ugCDhprtTUR",
                             {"user", "group", "close-from", "chdir", "host", "prompt", "role",
                              "type", "command-timeout", "other-user", "chroot"});
      return j;  // VAR=value operands are peeled as assignments next
    }
    if (base == "timeout") {
      size_t j = SkipOptions(words, k + 1, "sk", {"signal", "kill-after"});
      return j < n ? j + 1 : j;  // the duration
    }
    if (base == "env") {
      size_t j = k + 1;
      while (j < n) {
        if (!words[j].Known()) return j;
        const std::string t = words[j].Literal();
        if (t == "--") return j + 1;
        if (t.rfind("-S", 0) == 0 || t.rfind("--split-string", 0) == 0) {
          // -S STRING: the string is split into words, like a shell would.
          std::string rest;
          size_t from = j + 1;
          if (t.size() > 2 && t[1] == 'S') {
            rest = t.substr(2);
          } else if (t.find('=') != std::string::npos) {
            rest = t.substr(t.find('=') + 1);
          } else if (from < n) {
            if (!words[from].Known()) return from;
            rest = words[from++].Literal();
          }
          return JoinNested(rest, words, from);
        }
        if (t == "-u" || t == "-C" || t == "--unset" || t == "--chdir") {
          j += 2;
        } else if (t[0] == '-' || t.find('=') != std::string::npos) {
          ++j;
        } else {
          return j;
        }
      }
      return j;
    }
    if (base == "xargs") {
      size_t j = SkipOptions(words, k + 1, "adEILlnPsS",
                             {"arg-file", "delimiter", "eof", "max-lines", "max-args", "max-procs",
                              "max-chars", "process-slot-var"});
      std::string replace;
      for (size_t o = k + 1; o < j && o < n; ++o) {
        const std::string t = words[o].Literal();
        if (t == "-I" && o + 1 < j) replace = words[o + 1].Literal();
        if (t.rfind("-I", 0) == 0 && t.size() > 2) replace = t.substr(2);
        if (t.rfind("-i", 0) == 0 || t.rfind("--replace", 0) == 0) replace = "{}";
      }
      // The arguments xargs reads are unknown: a gap at the end, or where -I puts them.
      std::vector<Word> run(words.begin() + static_cast<std::ptrdiff_t>(std::min(j, n)),
                            words.end());
      if (run.empty()) {
        Word echo;
        echo.Add("echo");
        run.push_back(echo);
      }
      for (auto& w : run)
        if (!replace.empty() && w.Literal().find(replace) != std::string::npos) w = Word::Gap();
      run.push_back(Word::Gap());
      words = std::move(run);
      return 0;
    }
    if (base == "watch") {
      size_t j = SkipOptions(words, k + 1, "nq", {"interval"});
      for (size_t o = k + 1; o < j; ++o) {
        const std::string t = words[o].Literal();
        if (t == "-x" || t == "--exec") return j;
      }
      return JoinNested("", words, j);
    }
    if (base == "flock") {
      size_t j = SkipOptions(words, k + 1, "wE", {"timeout", "conflict-exit-code"});
      if (j < n) ++j;  // the lock file
      if (j < n && words[j].Known() &&
          (words[j].Literal() == "-c" || words[j].Literal() == "--command")) {
        if (j + 1 >= n) return npos;
        if (!words[j + 1].Known()) {
          Opaque();
          return npos;
        }
        Nested(words[j + 1].Literal());
        return npos;
      }
      return j;
    }
    if (base == "eval") return JoinNested("", words, k + 1);
    if (base == "su") {
      for (size_t j = k + 1; j < n; ++j) {
        const std::string t = words[j].Literal();
        if (t == "-c" || t == "--command") {
          if (j + 1 >= n) return npos;
          if (!words[j + 1].Known()) {
            Opaque();
          } else {
            Nested(words[j + 1].Literal());
          }
          return npos;
        }
        if (t.rfind("--command=", 0) == 0) {
          Nested(t.substr(10));
          return npos;
        }
      }
      return npos;
    }
    if (base == "sh" || base == "bash" || base == "zsh" || base == "dash" || base == "ksh" ||
        base == "mksh" || base == "ash" || base == "yash") {
      bool c_mode = false;
      bool stdin_mode = false;
      size_t j = k + 1;
      while (j < n) {
        if (!words[j].Known()) break;
        const std::string t = words[j].Literal();
        if (t == "--" || t == "-") {
          ++j;
          break;
        }
        if (t.size() < 2 || (t[0] != '-' && t[0] != '+')) break;
        if (t[1] == '-') {
          j += (t == "--rcfile" || t == "--init-file") ? 2 : 1;
          continue;
        }
        size_t step = 1;
        for (size_t c = 1; c < t.size(); ++c) {
          if (t[c] == 'c') c_mode = true;
          if (t[c] == 's' || t[c] == 'i') stdin_mode = true;
          if ((t[c] == 'o' || t[c] == 'O') && c + 1 == t.size()) step = 2;
        }
        j += step;
      }
      if (c_mode) {
        if (j >= n) return npos;
        if (!words[j].Known()) {
          Opaque();
        } else {
          Nested(words[j].Literal());
        }
        return npos;
      }
      // Commands from standard input cannot be seen; a script file is an ordinary program.
      if (stdin_mode || j >= n) Opaque();
      return npos;
    }
    return npos;
  }

  // Reads `prefix` followed by words[from..] joined with spaces as a command line (eval,
  // env -S, watch). Returns npos: what runs was read.
  size_t JoinNested(std::string prefix, const std::vector<Word>& words, size_t from) {
    std::string text = std::move(prefix);
    for (size_t j = from; j < words.size(); ++j) {
      if (!words[j].Known()) {
        Opaque();
        return npos;
      }
      if (!text.empty()) text += ' ';
      text += words[j].Literal();
    }
    Nested(text);
    return npos;
  }

  // find ... -exec CMD ... ; (also -execdir, -ok, -okdir): CMD runs once per file, the file
  // name where `{}` is.
  void EmitFindExec(const std::vector<Word>& words, size_t k) {
    for (size_t j = k + 1; j < words.size(); ++j) {
      const std::string t = words[j].Literal();
      if (t != "-exec" && t != "-execdir" && t != "-ok" && t != "-okdir") continue;
      std::vector<Word> run;
      for (++j; j < words.size(); ++j) {
        const std::string a = words[j].Literal();
        if (words[j].Known() && (a == ";" || a == "+")) break;
        run.push_back(a.find("{}") != std::string::npos ? Word::Gap() : words[j]);
      }
      if (!run.empty()) Emit(std::move(run));
    }
  }

  struct Heredoc {
    std::string delimiter;
    bool expand;  // unquoted delimiter: the body's substitutions run
    bool strip_tabs;
  };
  enum class CaseHeader { kNone, kSubject, kIn };

  std::string_view s_;
  size_t i_ = 0;
  int depth_;
  ShellScript* out_;
  std::vector<Word> words_;  // the simple command being read
  std::vector<Heredoc> heredocs_;
  CaseHeader case_header_ = CaseHeader::kNone;
  std::vector<bool> case_patterns_;  // per open `case`: reading patterns (not commands)
  bool skip_to_separator_ = false;
  int skip_words_ = 0;
  int emit_depth_ = 0;
};

}  // namespace

std::string ShellText::Display() const {
  std::string s;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) s += "<?>";
    s += pieces[i];
  }
  return s;
}

ShellScript ParseShell(std::string_view line) {
  ShellScript script;
  Reader(line, 0, &script).Run();
  return script;
}

}  // namespace lousho
