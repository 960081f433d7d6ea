// Shell command lines read statically: words, quoting, lists, substitutions, wrappers, sh -c.
#include "support/shell_words.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <optional>
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
  // Its text may carry code the reader takes as data: a quoted or escaped `$` or backquote,
  // or a character only known when the shell runs ($'\u...').
  bool carrier = false;
  bool code = false;  // read as code here (sh -c's string, a trap action): not data

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

constexpr const char* kUnreadable = "part of it cannot be read before it runs";

// What the whole line does that no single command shows; shared by the readers of one line.
struct LineFacts {
  // Bash evaluates a value the line does not show as arithmetic, a name or a prompt
  // (`$((x))`, `${!x}`, `${x@P}`, `declare -i`, `printf -v "$n"`), where a subscript such as
  // `a[$(cmd)]` runs cmd...
  bool evaluates = false;
  // ...and the line may have put such text in a value: a quoted `$` or backquote, the output
  // of a command, input (`read`, `mapfile`), or a transformation (`${x@E}`, `printf -v`).
  bool carries = false;
  std::vector<std::string> written;  // base names of the files the line writes
  bool written_unknown = false;      // and some it writes are named only when it runs
  std::vector<std::string> run;      // base names of the files it runs or reads as code
};

void AddOpaque(ShellScript* out, const char* why) {
  if (out->opaque) return;
  out->opaque = true;
  ShellCommand cmd;
  cmd.written.pieces = {"", ""};
  cmd.unreadable = why;
  out->commands.push_back(std::move(cmd));
}

// An arithmetic text bash evaluates reads variables (`i+1`, `$x`, `a[n]`): their values are
// evaluated in turn. Digits of numbers in a base (`0x1f`, `16#ff`) are not names.
bool ReadsVariables(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '$' || c == '`') return true;
    if (!IsNameStart(c)) continue;
    char before = i > 0 ? text[i - 1] : ' ';
    if (!IsNameChar(before) && before != '#') return true;
  }
  return false;
}

// Variables whose values bash runs or evaluates as code.
enum class CodeVar { kNone, kPrompt, kCommand, kStartupFile, kOptions, kFunction };

CodeVar ClassifyVariable(std::string_view name) {
  if (name.size() == 3 && name.substr(0, 2) == "PS" && name[2] >= '0' && name[2] <= '4')
    return CodeVar::kPrompt;
  if (name == "PROMPT_COMMAND") return CodeVar::kCommand;
  if (name == "BASH_ENV" || name == "ENV") return CodeVar::kStartupFile;
  if (name == "BASHOPTS" || name == "SHELLOPTS") return CodeVar::kOptions;
  if (name.substr(0, 10) == "BASH_FUNC_") return CodeVar::kFunction;
  return CodeVar::kNone;
}

bool IsShell(const std::string& base) {
  for (const char* s :
       {"sh", "bash", "rbash", "zsh", "rzsh", "dash", "ksh", "rksh", "ksh93", "mksh", "pdksh",
        "oksh", "loksh", "ash", "yash", "posh", "fish", "csh", "tcsh"})
    if (base == s) return true;
  return false;
}

// A command that runs its operands as another command, found after its options and `skip`
// operands (taskset's mask, chrt's priority, chroot's new root). `with_arg`: short options
// taking a value; `long_with_arg`: long ones, separated by spaces. `shell_if_none`: without a
// command it starts a shell that reads commands from its input.
struct WrapperSpec {
  std::string_view name;
  std::string_view with_arg;
  std::string_view long_with_arg;
  int skip;
  bool shell_if_none;
};

constexpr std::string_view kSudoLongOptions =
    "user group close-from chdir host prompt role type command-timeout other-user chroot";

constexpr WrapperSpec kWrappers[] = {
    {"taskset", "", "", 1, false},
    {"chrt", "TPD", "sched-runtime sched-period sched-deadline", 1, false},
    {"prlimit", "po", "pid output", 0, false},
    {"strace", "abeEIoOpPsSuUX", "output trace signal status user env attach string-limit", 0,
     false},
    {"ltrace", "aADeFlnopsuwx", "output library align indent", 0, false},
    {"fakeroot", "lisb", "lib faked", 0, true},
    {"unshare", "SGRw", "setuid setgid root wd propagation setgroups", 0, true},
    {"nsenter", "tSG", "target setuid setgid", 0, true},
    {"chroot", "", "userspec groups", 1, true},
    {"systemd-run", "upEMH",
     "unit property setenv machine host description slice uid gid nice working-directory "
     "service-type on-active on-boot on-startup on-unit-active on-unit-inactive on-calendar",
     0, false},
    {"caffeinate", "tw", "", 0, false},
    {"setpriv", "", "reuid regid groups inh-caps ambient-caps bounding-set securebits pdeathsig", 0,
     false},
    {"numactl", "CNmip", "physcpubind cpunodebind membind interleave preferred", 0, false},
    {"pkexec", "", "user", 0, false},
    {"eatmydata", "", "", 0, false},
    {"faketime", "", "", 1, false},
    {"cpulimit", "lpe", "limit pid exe", 0, false},
    {"command", "", "", 0, false},
    {"builtin", "", "", 0, false},
    {"nohup", "", "", 0, false},
    {"setsid", "", "", 0, false},
    {"chronic", "", "", 0, false},
    {"unbuffer", "", "", 0, false},
    {"busybox", "", "", 0, false},
    {"exec", "a", "", 0, false},
    {"time", "fo", "format output", 0, false},
    {"nice", "n", "adjustment", 0, false},
    {"ionice", "cnp", "class classdata pid", 0, false},
    {"stdbuf", "ioe", "input output error", 0, false},
    // VAR=value operands after sudo's options are peeled as assignments next.
    {"sudo", "ugCDhprtTUR", kSudoLongOptions, 0, false},
    {"doas", "ugCDhprtTUR", kSudoLongOptions, 0, false},
    {"timeout", "sk", "signal kill-after", 1, false},  // the duration
};

const WrapperSpec* FindWrapper(const std::string& base) {
  for (const auto& w : kWrappers)
    if (w.name == base) return &w;
  return nullptr;
}

bool InList(std::string_view list, std::string_view word) {
  while (!list.empty()) {
    size_t sp = list.find(' ');
    if (list.substr(0, sp) == word) return true;
    if (sp == std::string_view::npos) break;
    list.remove_prefix(sp + 1);
  }
  return false;
}

// The base name of the file a word names (from `offset` on, past a `NAME=`), or nothing when
// it is only known when the shell runs.
std::optional<std::string> KnownBaseName(const Word& w, size_t offset = 0) {
  if (w.pieces.empty()) return std::string();
  const Piece& last = w.pieces.back();
  if (last.gap) return std::nullopt;
  if (w.pieces.size() == 1) return BaseName(last.text.substr(std::min(offset, last.text.size())));
  size_t slash = last.text.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  return last.text.substr(slash + 1);
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
  Reader(std::string_view s, int depth, ShellScript* out, LineFacts* facts)
      : s_(s), depth_(depth), out_(out), facts_(facts) {}

  void Run() {
    while (i_ < s_.size()) ReadNext();
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

  // --- The line, one token at a time.

  bool OpensParenAt(size_t j) const { return j < s_.size() && s_[j] == '('; }

  // Reads what starts at i_: a blank, a comment, a separator, a parenthesis, a redirection or
  // a word.
  void ReadNext() {
    const char c = s_[i_];
    if (IsBlank(c)) {
      ++i_;
      return;
    }
    if (c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
      i_ += 2;
      return;
    }
    switch (c) {
      case '#':
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
        return;
      case '\n':
        EndCommand();
        ++i_;
        ReadHeredocs();
        return;
      case ';':
        ReadSemicolon();
        return;
      case '&':
        if (i_ + 1 < s_.size() && s_[i_ + 1] == '>') return Redirect();
        return ReadListOperator(c);
      case '|':
        return ReadListOperator(c);
      case '(':
        return OpenParen();
      case ')':
        return CloseParen();
      case '<':
      case '>':
        if (!OpensParenAt(i_ + 1)) return Redirect();
        break;
      default:
        break;
    }
    ReadWordOrDescriptor();
  }

  // `;` at i_ ends a command; `;;`, `;&` and `;;&` end a case branch: patterns follow.
  void ReadSemicolon() {
    EndCommand();
    ++i_;
    if (i_ >= s_.size() || (s_[i_] != ';' && s_[i_] != '&')) return;
    if (s_[i_++] == ';' && i_ < s_.size() && s_[i_] == '&') ++i_;
    if (!case_patterns_.empty()) case_patterns_.back() = true;
  }

  // `&`, `|`, `&&`, `||` or `|&` at i_ ends a command, except between case patterns (`a|b)`).
  void ReadListOperator(char c) {
    if (InCasePatterns()) {
      ++i_;
      return;
    }
    EndCommand();
    ++i_;
    if (i_ < s_.size() && (s_[i_] == c || (c == '|' && s_[i_] == '&'))) ++i_;
  }

  // `)` at i_: the end of a case pattern list, or of a subshell.
  void CloseParen() {
    if (InCasePatterns()) {
      words_.clear();
      case_patterns_.back() = false;
    } else {
      EndCommand();
    }
    ++i_;
  }

  // A word at i_, or the digits that name a redirection's descriptor (`2>x`).
  void ReadWordOrDescriptor() {
    Word w = LexWord();
    if (IsDigits(w) && i_ < s_.size() && (s_[i_] == '<' || s_[i_] == '>') && !OpensParenAt(i_ + 1))
      return Redirect();
    AddWord(std::move(w));
  }

  static bool IsDigits(const Word& w) {
    if (w.quoted || !w.Known()) return false;
    const std::string text = w.Literal();
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char d) {
      return std::isdigit(static_cast<unsigned char>(d)) != 0;
    });
  }

  void Opaque(const char* why = kUnreadable) { AddOpaque(out_, why); }

  void Nested(std::string_view text) {
    if (depth_ + 1 > kMaxShellDepth) return Opaque();
    Reader(text, depth_ + 1, out_, facts_).Run();
  }

  // Text bash expands when it evaluates it (a subscript, an arithmetic expression, a prompt):
  // its substitutions run, quoted or not.
  void ScanText(std::string_view text) {
    if (depth_ + 1 > kMaxShellDepth) return Opaque();
    Reader(text, depth_ + 1, out_, facts_).ScanExpansions(false);
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
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        if (--depth == 0) return j;
      } else {
        j = SkipInBrace(j, nesting);
        if (j == npos) return npos;
      }
    }
    return npos;
  }

  // Inside `${ }`, a quoted string, a backquoted command or a `$( )` starting at s_[j]: the
  // index of its last character (npos when it is not closed); j when none starts there.
  size_t SkipInBrace(size_t j, int nesting) const {
    switch (s_[j]) {
      case '\'':
        return s_.find('\'', j + 1);
      case '"':
        return SkipDouble(j, nesting + 1);
      case '`':
        return FindBacktick(j);
      case '$':
        return OpensParenAt(j + 1) ? FindClose(j + 1, nesting + 1) : j;
      default:
        return j;
    }
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

  // What a word's unquoted braces show: `{a,b}` or `{1..3}` is brace expansion.
  struct BraceScan {
    int open = 0;
    bool list = false;
  };

  Word LexWord() {
    Word w;
    w.assignment = AssignmentAt(i_);
    BraceScan braces;
    while (i_ < s_.size() && LexWordPart(&w, &braces)) {
    }
    if (w.pieces.empty()) w.Add("");
    NoteCarrier(&w);
    if (braces.list) {
      // Brace expansion makes several words of one: what they are is left unknown.
      bool assignment = w.assignment;
      bool carrier = w.carrier;
      w = Word::Gap();
      w.assignment = assignment;
      w.carrier = carrier;
    }
    return w;
  }

  // Reads the part of a word at i_ (a character, an escape, a quoted string, a substitution)
  // into w; false when the word ends there.
  bool LexWordPart(Word* w, BraceScan* braces) {
    const char c = s_[i_];
    if (c == '<' || c == '>') {
      if (!OpensParenAt(i_ + 1)) return false;
      ProcessSubstitution(w);
      return true;
    }
    if (IsMeta(c)) return false;
    switch (c) {
      case '\\':
        LexBackslash(w);
        return true;
      case '\'':
        return LexSingleQuoted(w);
      case '"':
        LexDouble(w);
        return true;
      case '$':
        LexDollar(w, false);
        return true;
      case '`':
        LexBacktick(w);
        return true;
      default:
        LexPlain(w, braces);
        return true;
    }
  }

  // `\c` at i_ outside quotes: c itself (a line continuation: nothing).
  void LexBackslash(Word* w) {
    if (i_ + 1 >= s_.size()) {
      w->Add('\\');
      ++i_;
      return;
    }
    if (s_[i_ + 1] != '\n') w->Add(s_[i_ + 1]);
    w->quoted = true;
    i_ += 2;
  }

  // '...' at i_; false when it is not closed (the rest of the line is unknown).
  bool LexSingleQuoted(Word* w) {
    size_t j = s_.find('\'', i_ + 1);
    w->quoted = true;
    if (j == npos) {
      Opaque();
      w->AddGap();
      i_ = s_.size();
      return false;
    }
    w->Add(s_.substr(i_ + 1, j - i_ - 1));
    i_ = j + 1;
    return true;
  }

  // An unquoted character with no special meaning here, noting globs and brace expansion.
  void LexPlain(Word* w, BraceScan* braces) {
    const char c = s_[i_];
    if (c == '*' || c == '?' || c == '[') w->glob = true;
    if (c == '{') ++braces->open;
    if (braces->open > 0 && (c == ',' || (c == '.' && i_ + 1 < s_.size() && s_[i_ + 1] == '.')))
      braces->list = true;
    if (c == '}' && braces->open > 0) --braces->open;
    w->Add(c);
    ++i_;
  }

  static void NoteCarrier(Word* w) {
    for (const auto& p : w->pieces)
      if (p.text.find_first_of("$`") != std::string::npos) w->carrier = true;
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
        // $(( )): arithmetic; only substitutions inside it run anything, and the values of the
        // variables it reads are evaluated in turn.
        ScanSub(i_ + 3, close - 1, false);
        if (ReadsVariables(s_.substr(i_ + 3, close - 1 - (i_ + 3)))) facts_->evaluates = true;
      } else {
        out_->substitution = true;
        facts_->carries = true;  // its output is data that may hold code text
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
      // Single quotes do not quote in "${x:-'$(cmd)'}", nor in a subscript bash evaluates.
      ScanSub(i_ + 2, close, false);
      ParameterFacts(s_.substr(i_ + 2, close - i_ - 2));
      w->AddGap();
      i_ = close + 1;
      return;
    }
    if (n == '[') return LexOldArithmetic(w);
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
      LexAnsiCEscape(w, e);
    }
    Opaque();
    w->AddGap();
  }

  // The escape `\e` of $'...', its letter e already read (i_ past it).
  void LexAnsiCEscape(Word* w, char e) {
    if (const char simple = AnsiCControl(e)) return w->Add(simple);
    if (e == 'x') return LexAnsiCHex(w);
    if (e == 'u' || e == 'U' || e == 'c') {
      w->AddGap();
      w->carrier = true;
      return;
    }
    if (e >= '0' && e <= '7') {
      int v = e - '0';
      for (int k = 0; k < 2 && i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '7'; ++k)
        v = v * 8 + (s_[i_++] - '0');
      return w->Add(static_cast<char>(v & 0xff));
    }
    if (e == '\\' || e == '\'' || e == '"' || e == '?') return w->Add(e);
    w->Add('\\');
    w->Add(e);
  }

  // The control character of $'\a', '\b', '\e', ...; 0 for other letters.
  static char AnsiCControl(char e) {
    switch (e) {
      case 'a':
        return '\a';
      case 'b':
        return '\b';
      case 'e':
      case 'E':
        return '\x1b';
      case 'f':
        return '\f';
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'v':
        return '\v';
      default:
        return 0;
    }
  }

  // $'\xHH' (one or two hex digits) after the `x`; `\x` itself without digits.
  void LexAnsiCHex(Word* w) {
    int v = 0;
    int digits = 0;
    while (digits < 2 && i_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[i_]))) {
      char h = static_cast<char>(std::tolower(static_cast<unsigned char>(s_[i_++])));
      v = v * 16 + (h <= '9' ? h - '0' : h - 'a' + 10);
      ++digits;
    }
    if (digits == 0) {
      w->Add("\\x");
    } else {
      w->Add(static_cast<char>(v));
    }
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
    facts_->carries = true;
    Nested(inner);
    w->AddGap();
    i_ = close + 1;
  }

  // <( ) or >( ) at i_.
  void ProcessSubstitution(Word* w) {
    size_t close = FindClose(i_ + 1, 0);
    out_->substitution = true;
    facts_->carries = true;
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
    Reader(s_.substr(from, to - from), depth_ + 1, out_, facts_).ScanExpansions(single_quotes);
  }

  // --- Redirections and here-documents.

  void Redirect() {
    enum { kFile, kDup, kHeredoc, kHereString } kind = kFile;
    bool strip_tabs = false;
    bool writes = true;  // else reads (`<`, `<&`)
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
      writes = s_[i_] == '>';
      i_ += 2;
      kind = kDup;
    } else if (at(">>") || at(">|") || at("<>")) {
      i_ += 2;
    } else {
      writes = s_[i_] == '>';
      ++i_;
    }
    while (i_ < s_.size() && IsBlank(s_[i_])) ++i_;
    if (i_ >= s_.size() || (IsMeta(s_[i_]) && !(s_[i_] == '<' || s_[i_] == '>'))) {
      out_->redirection = true;  // no target: a syntax error; not harmless either way
      return;
    }
    Word target = LexWord();
    const std::string text = target.Literal();
    facts_->carries |= target.carrier;
    switch (kind) {
      case kHeredoc:
        out_->redirection = true;
        heredocs_.push_back({text, !target.quoted, strip_tabs});
        return;
      case kHereString:
        out_->redirection = true;
        return;
      case kDup:
      case kFile:
        return FileTarget(target, kind == kDup, writes);
    }
  }

  // The target of a redirection to or from a file (`> f`, `>&f`): a descriptor (`>&2`, `>&-`)
  // and /dev/null are harmless; a file written is noted.
  void FileTarget(const Word& target, bool dup, bool writes) {
    const std::string text = target.Literal();
    bool fd = dup && target.Known() && !text.empty();
    for (size_t k = 0; k < text.size(); ++k)
      fd = fd && (std::isdigit(static_cast<unsigned char>(text[k])) ||
                  (text[k] == '-' && k + 1 == text.size()));
    if (fd || (target.Known() && text == "/dev/null")) return;
    out_->redirection = true;
    if (writes) WriteFile(target);
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
    if (skip_to_separator_) return SkippedWord(&w);
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
        loop_name_ = true;
        return;
      }
      if (w.Is("function")) {
        skip_words_ = 1;
        return;
      }
    }
    NoteTest(w);
    words_.push_back(std::move(w));
  }

  // A word of `for NAME in WORDS` (or select's): the name is assigned the words, which are data.
  void SkippedWord(Word* w) {
    if (w->carrier) facts_->carries = true;  // `for x in 'a[$(cmd)]'`
    if (loop_name_) ReadName(w, 0, NameUse::kAssigned);
    loop_name_ = false;
  }

  // Tracks `[[ ... ]]`, whose parts && and || make separate commands.
  void NoteTest(const Word& w) {
    if (words_.empty()) {
      if (w.Is("[[")) in_test_ = true;
      command_in_test_ = in_test_;
    }
    if (w.Is("]]")) in_test_ = false;
  }

  void EndCommand() {
    skip_to_separator_ = false;
    loop_name_ = false;
    skip_words_ = 0;
    if (InCasePatterns()) {
      words_.clear();
      return;
    }
    const bool test = command_in_test_;
    command_in_test_ = false;
    if (words_.empty()) return;
    std::vector<Word> words = std::move(words_);
    words_.clear();
    if (test) ReadTestWords(words);
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
      while (k < words.size() && words[k].assignment) ReadAssignment(&words[k++]);
      if (k >= words.size()) break;
      if (k != start) cmd.peeled.push_back(Join(words, k, true));
      Word& head = words[k];
      if (!head.Known() || (head.glob && LooksLikePattern(head.Literal()))) {
        UnknownName(&cmd, &words, k);
        break;
      }
      const std::string name = head.Literal();
      const std::string base = BaseName(name);
      if (base != name) {
        cmd.peeled.push_back(Join(words, k, true, &base));
        RunFile(head);
      }
      ReadOperands(base, &words, k);
      if (base == "find") {
        EmitFindExec(words, k);
        break;
      }
      size_t next = Peel(base, &words, k);
      if (next == npos) break;
      k = next;
      if (k < words.size()) cmd.peeled.push_back(Join(words, k, true));
    }
    NoteCarriers(words);
    out_->commands.push_back(std::move(cmd));
  }

  // The command name words[k] is only known when the shell runs.
  void UnknownName(ShellCommand* cmd, std::vector<Word>* words, size_t k) {
    Word& head = (*words)[k];
    if (head.Known()) {  // a glob
      head = Word::Gap();
      cmd->peeled.push_back(Join(*words, k, true));
    } else if (head.Literal().find('/') != std::string::npos) {
      RunFile(head);  // ./$X
    }
  }

  // Words that keep code text as data (not read here as code): a value may carry it.
  void NoteCarriers(const std::vector<Word>& words) {
    for (const auto& w : words)
      if (w.carrier && !w.code) facts_->carries = true;
  }

  // Skips a wrapper's options from words[j]: returns the index of its first operand. `with_arg`
  // are the short options that take a value (`-u root`, `-uroot`), `long_with_arg` the long
  // ones (`--user root`; `--user=root` needs no listing).
  static size_t SkipOptions(const std::vector<Word>& words, size_t j, std::string_view with_arg,
                            std::initializer_list<std::string_view> long_with_arg = {}) {
    std::string list;
    for (auto l : long_with_arg) list.append(l).append(" ");
    return SkipListedOptions(words, j, with_arg, list);
  }

  // The same, with the long options as one list separated by spaces.
  static size_t SkipListedOptions(const std::vector<Word>& words, size_t j,
                                  std::string_view with_arg, std::string_view long_with_arg) {
    while (j < words.size()) {
      if (!words[j].Known()) return j;
      const std::string t = words[j].Literal();
      if (t == "--") return j + 1;
      if (t.size() < 2 || t[0] != '-') return j;
      if (t[1] == '-') {
        j += InList(long_with_arg, std::string_view(t).substr(2)) ? 2 : 1;
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
    if (const WrapperSpec* spec = FindWrapper(base)) return PeelListed(*spec, words, k);
    if (base == "runuser") return PeelRunuser(words, k);
    if (base == "script") return PeelScript(words, k);
    if (base == "parallel") return PeelParallel(words, k);
    if (IsShell(base)) return PeelShell(words, k);
    if (base == "env") return PeelEnv(words, k);
    if (base == "xargs") return PeelXargs(words, k);
    if (base == "watch") return PeelWatch(words, k);
    if (base == "flock") return PeelFlock(words, k);
    if (base == "eval") return JoinNested("", words, k + 1);
    if (base == "su") return PeelSu(words, k);
    return npos;
  }

  // --- Shells and wrappers.

  // sh, bash, rbash, zsh, ...: `-c STRING` is read; commands from standard input, /dev/stdin, a
  // process substitution or a file the same line writes cannot be seen; another script file is
  // an ordinary program.
  struct ShellOptions {
    size_t operand;  // index of the first operand
    bool c_mode = false;
    bool stdin_mode = false;
  };

  size_t PeelShell(std::vector<Word>& words, size_t k) {
    const size_t n = words.size();
    const ShellOptions o = ReadShellOptions(words, k + 1);
    const size_t j = o.operand;
    const bool c_mode = o.c_mode;
    const bool stdin_mode = o.stdin_mode;
    if (c_mode) {
      if (j < n) CodeWord(&words[j]);
      return npos;
    }
    if (stdin_mode || j >= n) {
      Opaque("the shell reads its commands from its input");
    } else {
      RunFile(words[j]);
    }
    return npos;
  }

  // A shell's options from words[j]: -c, -s and -i, -o/-O NAME, --rcfile FILE.
  ShellOptions ReadShellOptions(const std::vector<Word>& words, size_t j) {
    ShellOptions o;
    for (; j < words.size() && words[j].Known(); ++j) {
      const std::string t = words[j].Literal();
      if (t == "--" || t == "-") {
        ++j;
        break;
      }
      if (t.size() < 2 || (t[0] != '-' && t[0] != '+')) break;
      if (t == "--rcfile" || t == "--init-file") {
        if (j + 1 < words.size()) RunFile(words[++j]);
        continue;
      }
      if (t[1] == '-') continue;
      o.c_mode = o.c_mode || t.find('c') != npos;
      o.stdin_mode = o.stdin_mode || t.find_first_of("si") != npos;
      if (t.back() != 'o' && t.back() != 'O') continue;
      if (++j < words.size() && words[j].Literal() == "expand_aliases")
        Opaque("with expand_aliases, an alias can change what a later line runs");
    }
    o.operand = j;
    return o;
  }

  // env [options] [NAME=VALUE]... CMD; `-S STRING` splits the string into a command line.
  size_t PeelEnv(std::vector<Word>& words, size_t k) {
    size_t j = k + 1;
    while (j < words.size()) {
      if (!words[j].Known()) return j;
      const std::string t = words[j].Literal();
      if (t == "--") return j + 1;
      if (t.rfind("-S", 0) == 0 || t.rfind("--split-string", 0) == 0)
        return PeelEnvSplitString(words, j);
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

  // env's -S STRING at words[j] (also -SSTRING, --split-string=STRING): the string is split
  // into words, like a shell would, and read with the words after it.
  size_t PeelEnvSplitString(std::vector<Word>& words, size_t j) {
    const std::string t = words[j].Literal();
    std::string rest;
    size_t from = j + 1;
    if (t.size() > 2 && t[1] == 'S') {
      rest = t.substr(2);
    } else if (t.find('=') != std::string::npos) {
      rest = t.substr(t.find('=') + 1);
    } else if (from < words.size()) {
      if (!words[from].Known()) return from;
      words[from].code = true;
      rest = words[from++].Literal();
    }
    words[j].code = true;
    return JoinNested(rest, words, from);
  }

  // xargs [options] CMD...: the command, with the arguments xargs reads (unknown) as a gap at
  // the end, or where -I puts them; replaces `words`. Without a command, echo.
  size_t PeelXargs(std::vector<Word>& words, size_t k) {
    const size_t n = words.size();
    size_t j = SkipOptions(words, k + 1, "adEILlnPsS",
                           {"arg-file", "delimiter", "eof", "max-lines", "max-args", "max-procs",
                            "max-chars", "process-slot-var"});
    const std::string replace = XargsReplaceString(words, k, j);
    std::vector<Word> run(words.begin() + static_cast<std::ptrdiff_t>(std::min(j, n)), words.end());
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

  // The string xargs replaces with what it reads (-I STR, -ISTR, -i, --replace), among its
  // options words[k+1..options_end); empty without one.
  static std::string XargsReplaceString(const std::vector<Word>& words, size_t k,
                                        size_t options_end) {
    std::string replace;
    for (size_t o = k + 1; o < options_end && o < words.size(); ++o) {
      const std::string t = words[o].Literal();
      if (t == "-I" && o + 1 < options_end) replace = words[o + 1].Literal();
      if (t.rfind("-I", 0) == 0 && t.size() > 2) replace = t.substr(2);
      if (t.rfind("-i", 0) == 0 || t.rfind("--replace", 0) == 0) replace = "{}";
    }
    return replace;
  }

  // watch [options] CMD...: the words are joined into a command line run by a shell, unless
  // -x (--exec) runs them as they are.
  size_t PeelWatch(std::vector<Word>& words, size_t k) {
    size_t j = SkipOptions(words, k + 1, "nq", {"interval"});
    for (size_t o = k + 1; o < j; ++o) {
      const std::string t = words[o].Literal();
      if (t == "-x" || t == "--exec") return j;
    }
    return JoinNested("", words, j);
  }

  // flock [options] LOCKFILE CMD..., or -c STRING anywhere (`flock -c CMD lockfile`).
  size_t PeelFlock(std::vector<Word>& words, size_t k) {
    if (NestedCommandOption(words, k)) return npos;
    size_t j = SkipOptions(words, k + 1, "wE", {"timeout", "conflict-exit-code"});
    if (j < words.size()) ++j;  // the lock file
    return j;
  }

  // su [options] [-c STRING | --command STRING | --command=STRING] [USER]: the string is read;
  // without one, a login shell (not followed).
  size_t PeelSu(std::vector<Word>& words, size_t k) {
    for (size_t j = k + 1; j < words.size(); ++j) {
      const std::string t = words[j].Literal();
      if (t == "-c" || t == "--command") {
        if (j + 1 < words.size()) CodeWord(&words[j + 1]);
        return npos;
      }
      if (t.rfind("--command=", 0) == 0) {
        CodeWord(&words[j], 10);
        return npos;
      }
    }
    return npos;
  }

  size_t PeelListed(const WrapperSpec& spec, std::vector<Word>& words, size_t k) {
    size_t j = SkipListedOptions(words, k + 1, spec.with_arg, spec.long_with_arg);
    for (int skip = 0; skip < spec.skip && j < words.size(); ++skip) ++j;
    if (j < words.size()) return j;
    if (spec.shell_if_none) Opaque("it starts a shell that reads its commands from its input");
    return npos;
  }

  // runuser -u USER CMD..., or su's form: runuser USER -c STRING (else a login shell).
  size_t PeelRunuser(std::vector<Word>& words, size_t k) {
    if (NestedCommandOption(words, k)) return npos;
    size_t j = SkipListedOptions(words, k + 1, "ugGsw",
                                 "user group supp-group shell whitelist-environment");
    bool user = false;
    for (size_t o = k + 1; o < j && o < words.size(); ++o) {
      const std::string t = words[o].Literal();
      user = user || t.rfind("-u", 0) == 0 || t.rfind("--user", 0) == 0;
    }
    if (user && j < words.size()) return j;
    Opaque("it starts a shell that reads its commands from its input");
    return npos;
  }

  // script -c STRING [file]; without -c, an interactive shell.
  size_t PeelScript(std::vector<Word>& words, size_t k) {
    if (!NestedCommandOption(words, k))
      Opaque("it starts a shell that reads its commands from its input");
    return npos;
  }

  // parallel [options] COMMAND ::: ARGS: the command runs through a shell; without one, the
  // arguments (or input lines) are the commands.
  size_t PeelParallel(std::vector<Word>& words, size_t k) {
    size_t j = SkipListedOptions(words, k + 1, "jSadEIPLnsC",
                                 "jobs sshlogin arg-file delimiter eof replace max-procs "
                                 "max-lines max-args max-chars colsep");
    std::vector<Word> run;
    for (; j < words.size(); ++j) {
      const std::string t = words[j].Literal();
      if (words[j].Known() && t.rfind(":::", 0) == 0) break;
      words[j].code = true;
      run.push_back(words[j]);
    }
    if (run.empty()) {
      Opaque("its commands come from its arguments or input");
      return npos;
    }
    return JoinNested("", run, 0);
  }

  // A `-c STRING` (also `-qc STRING`, `--command STRING`, `--command=STRING`) among the words
  // after words[k], up to `--`: the string is read as a command line. Returns whether one was.
  bool NestedCommandOption(std::vector<Word>& words, size_t k) {
    for (size_t j = k + 1; j < words.size(); ++j) {
      if (!words[j].Known()) continue;
      const std::string t = words[j].Literal();
      if (t == "--") return false;
      for (const char* prefix : {"--command=", "--session-command="}) {
        if (t.rfind(prefix, 0) != 0) continue;
        CodeWord(&words[j], std::string_view(prefix).size());
        return true;
      }
      bool takes = t == "--command" || t == "--session-command" ||
                   (t.size() >= 2 && t[0] == '-' && t[1] != '-' && t.back() == 'c');
      if (!takes) continue;
      if (j + 1 < words.size()) CodeWord(&words[j + 1]);
      return true;
    }
    return false;
  }

  // A word bash runs as a command line (from `offset` on).
  void CodeWord(Word* w, size_t offset = 0) {
    w->code = true;
    if (!w->Known()) return Opaque("it runs a command line that is only known when it runs");
    Nested(w->Literal().substr(offset));
  }

  // A file bash reads commands from, or a program run by its path.
  void RunFile(const Word& w, size_t offset = 0) {
    std::optional<std::string> base = KnownBaseName(w, offset);
    if (!base) return Opaque("it runs a file that is only named when it runs");
    if (w.Known()) {
      const std::string path = w.Literal().substr(std::min(offset, w.Literal().size()));
      if (path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0)
        return Opaque("it reads commands from a device or process file");
    }
    facts_->run.push_back(*base);
  }

  void WriteFile(const Word& w, size_t offset = 0) {
    std::optional<std::string> base = KnownBaseName(w, offset);
    if (!base) {
      facts_->written_unknown = true;
    } else {
      facts_->written.push_back(*base);
    }
  }

  // --- Text bash evaluates: arithmetic, variable names with subscripts, assignments.

  // Arithmetic: its substitutions run, and the variables it reads are evaluated in turn.
  void ArithText(std::string_view text) {
    ScanText(text);
    if (ReadsVariables(text)) facts_->evaluates = true;
  }

  void ReadArith(Word* w) {
    w->code = true;
    if (!w->Known()) {
      facts_->evaluates = true;
      return;
    }
    ArithText(w->Literal());
  }

  // A variable name bash reads (printf -v, read, unset, test -v, declare): a subscript in it
  // is arithmetic. kAssigned: bash gives the variable a value (a loop's); kInput: one made of
  // data (input, formatted text).
  enum class NameUse { kRead, kAssigned, kInput };

  void ReadName(Word* w, size_t offset, NameUse use) {
    w->code = true;
    const bool assigns = use != NameUse::kRead;
    if (use == NameUse::kInput) facts_->carries = true;
    if (!w->Known()) {
      facts_->evaluates = true;
      return;
    }
    const std::string text = w->Literal().substr(std::min(offset, w->Literal().size()));
    size_t open = text.find('[');
    if (assigns && ClassifyVariable(text.substr(0, open)) != CodeVar::kNone)
      return Opaque("it puts data in a variable whose value bash runs as code");
    if (open != std::string::npos) ArithText(std::string_view(text).substr(open));
  }

  // NAME=VALUE, NAME+=VALUE, NAME[SUB]=VALUE (an assignment word, or an operand of declare or
  // env): the subscript is arithmetic, and some variables hold code (PS4, BASH_ENV, ...).
  void ReadAssignment(Word* w) {
    const std::string text = w->Literal();
    size_t eq = text.find('=');
    if (eq == std::string::npos) return;
    // A part only known when the shell runs in the name: bash evaluates what it turns out to be.
    bool seen_eq = false;
    bool value_known = true;
    for (const auto& p : w->pieces) {
      if (p.gap && seen_eq) value_known = false;
      if (p.gap && !seen_eq) facts_->evaluates = true;
      seen_eq = seen_eq || p.text.find('=') != std::string::npos;
    }
    std::string name = text.substr(0, eq);
    if (!name.empty() && name.back() == '+') name.pop_back();
    size_t open = name.find('[');
    if (open != std::string::npos) {
      ArithText(std::string_view(name).substr(open));
      name.resize(open);
    }
    ReadCodeVariable(w, name, eq + 1, value_known);
  }

  void ReadCodeVariable(Word* w, const std::string& name, size_t value_at, bool known) {
    const CodeVar kind = ClassifyVariable(name);
    if (kind == CodeVar::kNone) return;
    w->code = true;
    const std::string value = w->Literal().substr(value_at);
    if (kind == CodeVar::kStartupFile) return RunFile(*w, value_at);
    if (!known) return Opaque("it sets a variable bash runs as code to a value known only then");
    switch (kind) {
      case CodeVar::kPrompt:
        // Prompt strings are expanded like double-quoted text, after their backslash escapes
        // are decoded: `\044(cmd)` is a command substitution.
        if (value.find('\\') != std::string::npos)
          return Opaque("a prompt string's backslash escapes can write a command substitution");
        return ScanText(value);
      case CodeVar::kCommand:
        return Nested(value);
      case CodeVar::kFunction:
        return Nested("f" + value);  // "() { body; }"
      case CodeVar::kOptions:
        if (value.find("expand_aliases") != std::string::npos)
          Opaque("with expand_aliases, an alias can change what a later line runs");
        return;
      case CodeVar::kStartupFile:
      case CodeVar::kNone:
        return;
    }
  }

  // What `${c}` does beyond substituting: indirection (`${!x}`), prompt expansion (`${x@P}`),
  // a subscript or offset bash evaluates as arithmetic, a transformation that makes new text
  // (`${x@E}`), or a default assigned to a variable that holds code (`${PS4:=...}`).
  void ParameterFacts(std::string_view c) {
    size_t p = 0;
    if (!c.empty() && c[0] == '!') {
      facts_->evaluates = true;
      ++p;
    } else if (c.size() > 1 && c[0] == '#') {
      ++p;
    }
    size_t name_start = p;
    while (p < c.size() && IsNameChar(c[p])) ++p;
    const std::string name(c.substr(name_start, p - name_start));
    if (p == name_start && p < c.size()) ++p;  // $@, $*, $#, ...
    std::string_view rest = c.substr(p);
    if (ClassifyVariable(name) != CodeVar::kNone && rest.find('=') != npos)
      Opaque("it sets a variable bash runs as code to a value known only then");
    if (!rest.empty() && rest[0] == '[') {
      if (rest.substr(0, 3) != "[@]" && rest.substr(0, 3) != "[*]") facts_->evaluates = true;
      size_t close = rest.find(']');
      rest = close == npos ? std::string_view() : rest.substr(close + 1);
    }
    if (rest.size() >= 2 && rest[0] == ':' && std::string_view("-=?+").find(rest[1]) == npos)
      facts_->evaluates = true;
    if (rest.size() >= 2 && rest[0] == '@') {
      if (rest[1] == 'P') facts_->evaluates = true;
      if (std::string_view("PEQAKka").find(rest[1]) != npos) facts_->carries = true;
    }
  }

  // `$[ expr ]`, the old arithmetic expansion, at i_.
  void LexOldArithmetic(Word* w) {
    int depth = 0;
    size_t close = npos;
    for (size_t j = i_ + 1; j < s_.size() && close == npos; ++j) {
      if (s_[j] == '[') ++depth;
      if (s_[j] == ']' && --depth == 0) close = j;
    }
    if (close == npos) {
      Opaque();
      w->AddGap();
      i_ = s_.size();
      return;
    }
    ScanSub(i_ + 2, close, false);
    if (ReadsVariables(s_.substr(i_ + 2, close - i_ - 2))) facts_->evaluates = true;
    w->AddGap();
    i_ = close + 1;
  }

  // `(` at i_: a subshell, the `()` of a function definition, or `((`.
  void OpenParen() {
    if (ArithmeticCommand()) return;
    EndCommand();
    ++i_;
  }

  // `(( expr ))`, also `for (( ;; ))`, at i_: arithmetic, not a subshell in a subshell.
  bool ArithmeticCommand() {
    if (!words_.empty() || i_ + 1 >= s_.size() || s_[i_ + 1] != '(' || out_->opaque) return false;
    size_t close = FindClose(i_, 0);
    // Each try scans to the matching `)`: bounded in all, so that `((a) ((a) ...))` stays linear.
    paren_scan_ += 2 * ((close == npos ? s_.size() : close) - i_);
    if (close == npos || paren_scan_ > 4 * s_.size()) {
      Opaque();  // an unmatched `((`
      return false;
    }
    if (close < i_ + 3 || FindClose(i_ + 1, 0) != close - 1) return false;
    EndCommand();
    ScanSub(i_ + 2, close - 1, false);
    if (ReadsVariables(s_.substr(i_ + 2, close - 1 - (i_ + 2)))) facts_->evaluates = true;
    i_ = close + 1;
    return true;
  }

  // The operands of `[[ ]]` (also when && or || split it): those of -eq, -ne, -lt, -le, -gt,
  // -ge are arithmetic, that of -v or -R a name.
  void ReadTestWords(std::vector<Word>& words) {
    for (size_t j = 0; j < words.size(); ++j) {
      if (words[j].quoted || !words[j].Known()) continue;
      const std::string t = words[j].Literal();
      if (t == "-v" || t == "-R") {
        if (j + 1 < words.size()) ReadName(&words[j + 1], 0, NameUse::kRead);
        continue;
      }
      if (t != "-eq" && t != "-ne" && t != "-lt" && t != "-le" && t != "-gt" && t != "-ge")
        continue;
      if (j > 0) ReadArith(&words[j - 1]);
      if (j + 1 < words.size()) ReadArith(&words[j + 1]);
    }
  }

  // --- Builtins whose operands bash evaluates, and commands that write files.

  using OperandReader = void (Reader::*)(std::vector<Word>&, size_t);
  struct OperandRule {
    std::string_view name;
    OperandReader read;
  };

  void ReadOperands(const std::string& base, std::vector<Word>* words, size_t k) {
    static constexpr OperandRule kRules[] = {
        {"let", &Reader::ReadLet},
        {"printf", &Reader::ReadPrintf},
        {"read", &Reader::ReadRead},
        {"mapfile", &Reader::ReadMapfile},
        {"readarray", &Reader::ReadMapfile},
        {"declare", &Reader::ReadDeclare},
        {"typeset", &Reader::ReadDeclare},
        {"local", &Reader::ReadDeclare},
        {"export", &Reader::ReadDeclare},
        {"readonly", &Reader::ReadDeclare},
        {"unset", &Reader::ReadUnset},
        {"test", &Reader::ReadTest},
        {"[", &Reader::ReadTest},
        {"trap", &Reader::ReadTrap},
        {"wait", &Reader::ReadWait},
        {"compgen", &Reader::ReadCompgen},
        {"complete", &Reader::ReadCompgen},
        {"hash", &Reader::ReadHash},
        {"alias", &Reader::ReadAlias},
        {"shopt", &Reader::ReadShopt},
        {"source", &Reader::ReadSource},
        {".", &Reader::ReadSource},
        {"env", &Reader::ReadEnv},
        {"tee", &Reader::WritesOperands},
        {"cp", &Reader::WritesOperands},
        {"mv", &Reader::WritesOperands},
        {"ln", &Reader::WritesOperands},
        {"install", &Reader::WritesOperands},
        {"rsync", &Reader::WritesOperands},
        {"sponge", &Reader::WritesOperands},
        {"sed", &Reader::WritesInPlace},
        {"perl", &Reader::WritesInPlace},
        {"dd", &Reader::ReadDd},
        {"curl", &Reader::ReadCurl},
        {"wget", &Reader::ReadWget},
        {"patch", &Reader::WritesUnknown},
    };
    for (const auto& rule : kRules)
      if (rule.name == base) return (this->*rule.read)(*words, k);
  }

  // Walks a builtin's options from words[j] (`-v name`, `-vname`, `-ab`, `+i`), calling
  // on_option(letter, index of the word holding its value or npos, offset of the value in it);
  // returns the index of the first operand.
  template <typename F>
  static size_t WalkOptions(const std::vector<Word>& words, size_t j, std::string_view with_arg,
                            F on_option) {
    for (; j < words.size(); ++j) {
      if (!words[j].Known()) return j;
      const std::string t = words[j].Literal();
      if (t == "--") return j + 1;
      if (t.size() < 2 || (t[0] != '-' && t[0] != '+')) return j;
      size_t last = j;
      for (size_t c = 1; c < t.size(); ++c) {
        if (with_arg.find(t[c]) == npos) {
          on_option(t[c], npos, 0);
          continue;
        }
        if (c + 1 < t.size()) {
          on_option(t[c], j, c + 1);
        } else {
          last = j + 1;
          on_option(t[c], last < words.size() ? last : npos, 0);
        }
        break;
      }
      j = last;
    }
    return j;
  }

  void ReadLet(std::vector<Word>& words, size_t k) {
    for (size_t j = k + 1; j < words.size(); ++j) ReadArith(&words[j]);
  }

  void ReadPrintf(std::vector<Word>& words, size_t k) {
    WalkOptions(words, k + 1, "v", [&](char c, size_t at, size_t offset) {
      if (c == 'v' && at != npos) ReadName(&words[at], offset, NameUse::kInput);
    });
  }

  void ReadRead(std::vector<Word>& words, size_t k) {
    facts_->carries = true;  // input
    size_t j = WalkOptions(words, k + 1, "adinNptu", [&](char c, size_t at, size_t offset) {
      if (c == 'a' && at != npos) ReadName(&words[at], offset, NameUse::kInput);
    });
    for (; j < words.size(); ++j) ReadName(&words[j], 0, NameUse::kInput);
  }

  void ReadMapfile(std::vector<Word>& words, size_t k) {
    facts_->carries = true;  // input
    size_t j = WalkOptions(words, k + 1, "dnOsuCc", [&](char c, size_t at, size_t offset) {
      if (c == 'C' && at != npos) CodeWord(&words[at], offset);  // the callback
    });
    if (j < words.size()) ReadName(&words[j], 0, NameUse::kInput);
  }

  // declare, typeset, local, export, readonly: NAME[=VALUE] operands. With -i the values are
  // arithmetic, with -n names; a compound value `(...)` holds subscripts.
  void ReadDeclare(std::vector<Word>& words, size_t k) {
    bool evaluated = false;
    size_t j = WalkOptions(words, k + 1, "", [&](char c, size_t, size_t) {
      if (c == 'i' || c == 'n') evaluated = true;
    });
    if (evaluated) facts_->evaluates = true;
    for (; j < words.size(); ++j) {
      Word& w = words[j];
      const std::string text = w.Literal();
      size_t eq = text.find('=');
      if (eq == std::string::npos) {
        ReadName(&w, 0, NameUse::kRead);
        continue;
      }
      ReadAssignment(&w);
      if (evaluated || text.compare(eq + 1, 1, "(") == 0) {
        if (!w.Known()) facts_->evaluates = true;
        ArithText(std::string_view(text).substr(eq + 1));
      }
    }
  }

  void ReadUnset(std::vector<Word>& words, size_t k) {
    for (size_t j = WalkOptions(words, k + 1, "", [](char, size_t, size_t) {}); j < words.size();
         ++j)
      ReadName(&words[j], 0, NameUse::kRead);
  }

  void ReadTest(std::vector<Word>& words, size_t k) {
    for (size_t j = k + 1; j + 1 < words.size(); ++j) {
      const std::string t = words[j].Literal();
      if (!words[j].quoted && (t == "-v" || t == "-R")) ReadName(&words[j + 1], 0, NameUse::kRead);
    }
  }

  // trap ACTION SIGNAL...: the action is a command line.
  void ReadTrap(std::vector<Word>& words, size_t k) {
    size_t j = WalkOptions(words, k + 1, "", [](char, size_t, size_t) {});
    if (j + 1 >= words.size()) return;
    if (words[j].Known() && words[j].Literal() == "-") return;
    CodeWord(&words[j]);
  }

  void ReadWait(std::vector<Word>& words, size_t k) {
    WalkOptions(words, k + 1, "p", [&](char c, size_t at, size_t offset) {
      if (c == 'p' && at != npos) ReadName(&words[at], offset, NameUse::kRead);
    });
  }

  // compgen/complete -C COMMAND runs a command line; -W WORDLIST is expanded.
  void ReadCompgen(std::vector<Word>& words, size_t k) {
    WalkOptions(words, k + 1, "oAGWFCXPS", [&](char c, size_t at, size_t offset) {
      if (at == npos) return;
      if (c == 'C') CodeWord(&words[at], offset);
      if (c != 'W') return;
      words[at].code = true;
      if (!words[at].Known()) return Opaque("it expands a word list that is only known then");
      ScanText(words[at].Literal().substr(offset));
    });
  }

  void ReadHash(std::vector<Word>& words, size_t k) {
    WalkOptions(words, k + 1, "pt", [&](char c, size_t, size_t) {
      if (c == 'p') Opaque("`hash -p` makes a command name run another program");
    });
  }

  // alias NAME=VALUE: the value is a command line (bash runs it where NAME is a command).
  void ReadAlias(std::vector<Word>& words, size_t k) {
    for (size_t j = k + 1; j < words.size(); ++j) {
      size_t eq = words[j].Literal().find('=');
      if (eq != std::string::npos) CodeWord(&words[j], eq + 1);
    }
  }

  void ReadShopt(std::vector<Word>& words, size_t k) {
    bool set = false;
    size_t j = WalkOptions(words, k + 1, "", [&](char c, size_t, size_t) { set |= c == 's'; });
    for (; set && j < words.size(); ++j)
      if (!words[j].Known() || words[j].Literal() == "expand_aliases")
        return Opaque("with expand_aliases, an alias can change what a later line runs");
  }

  void ReadSource(std::vector<Word>& words, size_t k) {
    if (k + 1 < words.size()) RunFile(words[k + 1]);
  }

  // env NAME=VALUE...: the same variables as assignments (BASH_ENV, BASH_FUNC_f%%, PS4, ...).
  void ReadEnv(std::vector<Word>& words, size_t k) {
    for (size_t j = k + 1; j < words.size(); ++j) {
      const std::string t = words[j].Literal();
      if (!t.empty() && t[0] != '-' && t.find('=') != std::string::npos) ReadAssignment(&words[j]);
    }
  }

  // tee, cp, mv, ln, install, rsync, sponge: every operand may be a file written.
  void WritesOperands(std::vector<Word>& words, size_t k) {
    for (size_t j = k + 1; j < words.size(); ++j) {
      if (words[j].Known() && words[j].Literal().rfind('-', 0) == 0) continue;
      WriteFile(words[j]);
    }
  }

  // sed -i, perl -i: the operands are rewritten.
  void WritesInPlace(std::vector<Word>& words, size_t k) {
    for (size_t j = k + 1; j < words.size(); ++j) {
      const std::string t = words[j].Literal();
      bool in_place = t.rfind("--in-place", 0) == 0 ||
                      (t.size() > 1 && t[0] == '-' && t[1] != '-' && t.find('i') != npos);
      if (in_place) return WritesOperands(words, k);
    }
  }

  void WritesUnknown(std::vector<Word>&, size_t) { facts_->written_unknown = true; }

  void ReadDd(std::vector<Word>& words, size_t k) {
    for (size_t j = k + 1; j < words.size(); ++j)
      if (words[j].Literal().rfind("of=", 0) == 0) WriteFile(words[j], 3);
  }

  // curl -o FILE, --output FILE, --output=FILE; -O and --remote-name name it from the URL.
  void ReadCurl(std::vector<Word>& words, size_t k) {
    for (size_t j = k + 1; j < words.size(); ++j) {
      const std::string t = words[j].Literal();
      if (t.rfind("--output=", 0) == 0) WriteFile(words[j], 9);
      if (t.rfind("--remote-name", 0) == 0) facts_->written_unknown = true;
      bool cluster = t.size() > 1 && t[0] == '-' && t[1] != '-';
      if (cluster && (t.find('O') != npos || t.find('J') != npos)) facts_->written_unknown = true;
      bool next = t == "--output" || (cluster && t.back() == 'o');
      if (next && j + 1 < words.size()) WriteFile(words[j + 1]);
      if (cluster && t.find('o') != npos && t.back() != 'o') facts_->written_unknown = true;
    }
  }

  // wget -O FILE (--output-document); without it, a name from the URL.
  void ReadWget(std::vector<Word>& words, size_t k) {
    for (size_t j = k + 1; j < words.size(); ++j) {
      const std::string t = words[j].Literal();
      if (t.rfind("--output-document=", 0) == 0) return WriteFile(words[j], 18);
      if ((t == "-O" || t == "--output-document") && j + 1 < words.size())
        return WriteFile(words[j + 1]);
      if (t.rfind("-O", 0) == 0 && t.size() > 2) return WriteFile(words[j], 2);
    }
    facts_->written_unknown = true;
  }

  // Reads `prefix` followed by words[from..] joined with spaces as a command line (eval,
  // env -S, watch). Returns npos: what runs was read.
  size_t JoinNested(std::string prefix, std::vector<Word>& words, size_t from) {
    std::string text = std::move(prefix);
    for (size_t j = from; j < words.size(); ++j) {
      if (!words[j].Known()) {
        Opaque();
        return npos;
      }
      words[j].code = true;
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
  LineFacts* facts_;
  std::vector<Word> words_;  // the simple command being read
  std::vector<Heredoc> heredocs_;
  CaseHeader case_header_ = CaseHeader::kNone;
  std::vector<bool> case_patterns_;  // per open `case`: reading patterns (not commands)
  bool skip_to_separator_ = false;
  bool loop_name_ = false;        // the next skipped word is a for/select loop's variable
  bool in_test_ = false;          // between `[[` and `]]`
  bool command_in_test_ = false;  // the command being read is (part of) a `[[ ]]`
  int skip_words_ = 0;
  int emit_depth_ = 0;
  size_t paren_scan_ = 0;  // characters scanned looking for the end of `((`
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
  LineFacts facts;
  Reader(line, 0, &script, &facts).Run();
  if (facts.evaluates && facts.carries)
    AddOpaque(&script,
              "bash evaluates a value as arithmetic, a variable name or a prompt, and the line "
              "may have put code in it");
  std::sort(facts.written.begin(), facts.written.end());
  for (const auto& r : facts.run) {
    if (facts.written_unknown || std::binary_search(facts.written.begin(), facts.written.end(), r))
      AddOpaque(&script, "it runs a file that the same line writes");
  }
  return script;
}

}  // namespace lousho
