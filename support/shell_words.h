// Static reading of a shell command line: the simple commands it runs, for permission checks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lousho {

// A command's text as words joined by single spaces, after quote removal and backslash
// handling. Where the shell would put text only known when it runs (`$VAR`, `$(...)`, a glob or
// brace expansion in the command name, ...) there is a gap: `pieces` is the known text with an
// unknown run of characters between each two pieces: {"git push"} is known text, and
// {"", " push"} is "<?> push".
struct ShellText {
  std::vector<std::string> pieces;
  bool known() const { return pieces.size() == 1; }
  std::string Display() const;  // gaps shown as "<?>"
};

// One simple command.
struct ShellCommand {
  // As written: leading assignments and wrapper commands kept; an unknown word is one gap
  // between spaces ("echo $X" is {"echo ", ""}). Allow rules see this.
  ShellText written;
  // The written words after quote removal (a word's unknown parts left out).
  std::vector<std::string> words;
  // Deny rules see `written` and every one of these: the command with leading assignments and
  // then each wrapper peeled off in turn (`sudo env A=1 nohup git push` -> "env A=1 nohup git
  // push", "nohup git push", "git push"), and, when the command name has a '/', the same with
  // its base name ("/usr/bin/git push" -> "git push"). In these, and in a loose copy of
  // `written` when it has gaps, the space beside an unquoted unknown word is part of the gap,
  // for the word may expand to nothing or to several words: "$X git push" is
  // {"", "git push"}, which may be "git push".
  std::vector<ShellText> peeled;
  // On the single gap that stands for what could not be read (ShellScript::commands): why, to
  // end "because ..." ("it runs a file that the same line writes"). Empty on other commands.
  std::string unreadable;
};

struct ShellScript {
  // Every simple command the line may run: those of lists, pipelines, subshells, groups,
  // if/while/for/case bodies, $( ) and backticks, <( ) and >( ), `sh -c STRING` (also bash,
  // rbash, zsh, dash, ksh, ...), `eval`, `env -S`, `find -exec`, `xargs CMD` (with a gap for the
  // arguments it reads), `watch`, and the code bash keeps in strings: `trap` actions,
  // `mapfile -C` callbacks, `compgen -C`, aliases, PS0-PS4 and PROMPT_COMMAND values,
  // `BASH_FUNC_*` functions, and the substitutions inside text bash evaluates as arithmetic or
  // as a variable name (`printf -v 'a[$(cmd)]'`, `let`, `[[ x -eq y ]]`, `(( ))`, `test -v`,
  // `read`, `declare`, ...). Where the text of what runs cannot be known (`eval "$X"`,
  // `sh -c "$X"`, a shell reading commands from its input or from `/dev/stdin`, `<( )` or a
  // file the same line writes, `hash -p`, `expand_aliases`, a value bash evaluates as code or
  // arithmetic in a line that may have put code text in it, nesting deeper than kMaxDepth, a
  // syntax the reader does not follow such as an unclosed quote), a command that is a single
  // gap: anything.
  std::vector<ShellCommand> commands;
  // $( ), backticks, <( ) or >( ): output of one command becomes text of another.
  bool substitution = false;
  // A redirection, except duplicating or closing a descriptor (2>&1, >&-) and /dev/null
  // (>/dev/null, 2>/dev/null, &>/dev/null, </dev/null), which are harmless. Here-documents and
  // here-strings count.
  bool redirection = false;
  // Some command is a single gap (see above).
  bool opaque = false;
};

// How deep sh -c / eval / $( ) may nest before the rest is taken as unknown.
inline constexpr int kMaxShellDepth = 8;

// Reads `line` as bash would, without running or expanding anything. Linear in the line's
// length (times the nesting depth, at most kMaxShellDepth). Never fails: what it cannot follow
// becomes unknown text.
ShellScript ParseShell(std::string_view line);

}  // namespace lousho
