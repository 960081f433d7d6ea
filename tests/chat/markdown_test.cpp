// `lousho chat`'s Markdown to terminal rows (cli/chat/markdown): the plain form (no escapes at
// all), xterm-256color's styles read from terminfo, wrapping at 80 columns, and the streamed form
// giving the same rows as the whole.
#include "cli/chat/markdown.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/chat/input.h"
#include "cli/chat/term.h"

namespace lousho::cli::chat {
namespace {

using Rows = std::vector<std::string>;

const char kDoc[] =
    "# Title\n\nSome *emphasis* and **bold** with `code`.\n\n- one\n- two\n  - nested\n\n"
    "3. three\n4. four\n\n> quoted\n\n```\nint x  = 1;\n```\n";

TEST(ChatMarkdownTest, PlainRowsHaveNoEscapes) {
  const Terminal t = Terminal::Plain(80);
  EXPECT_EQ(RenderMarkdown(kDoc, t),
            (Rows{"Title", "", "Some emphasis and bold with code.", "", "- one", "- two",
                  "  - nested", "", "3. three", "4. four", "", "> quoted", "", "    int x  = 1;"}));
}

TEST(ChatMarkdownTest, StylesComeFromTerminfo) {
  const Terminal t = Terminal::Named("xterm-256color", 80);
  ASSERT_TRUE(t.styled());
  // xterm-256color's entry: bold \E[1m, sitm \E[3m, sgr0 \E(B\E[m, setaf 3 \E[33m.
  EXPECT_EQ(t.bold(), "\x1b[1m");
  EXPECT_EQ(t.italic(), "\x1b[3m");
  EXPECT_EQ(t.reset(), "\x1b(B\x1b[m");
  EXPECT_EQ(t.color(Color::kYellow), "\x1b[33m");
  const Rows rows = RenderMarkdown("a *b* **c** `d`", t);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], "a \x1b[3mb\x1b(B\x1b[m \x1b[1mc\x1b(B\x1b[m \x1b[33md\x1b(B\x1b[m");
  EXPECT_EQ(DisplayWidth(rows[0]), 7);
  EXPECT_TRUE(Terminal::Named("no-such-terminal-anywhere", 80).bold().empty());
}

TEST(ChatMarkdownTest, WrapsAtTheWidth) {
  std::string para;
  for (int i = 0; i < 60; ++i) para += "word" + std::to_string(i) + " ";
  for (const Terminal& t : {Terminal::Plain(80), Terminal::Named("xterm-256color", 80)}) {
    const Rows rows = RenderMarkdown("- **" + para + "**", t);
    ASSERT_GT(rows.size(), 4u);
    std::string joined;
    for (const auto& r : rows) {
      EXPECT_LE(DisplayWidth(r), 79) << r;
      joined += r + " ";
    }
    // Every word is there, in order, and the item's rows after the first are indented.
    size_t at = 0;
    for (int i = 0; i < 60; ++i) {
      at = joined.find("word" + std::to_string(i), at);
      ASSERT_NE(at, std::string::npos) << i;
    }
    EXPECT_EQ(rows[1].substr(0, 2), "  ");
  }
}

TEST(ChatMarkdownTest, LongCodeLinesAreCutNotReflowed) {
  const std::string line(100, 'x');
  const Rows rows = RenderMarkdown("```\n" + line + "\n  y\n```\n", Terminal::Plain(80));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], "    " + std::string(75, 'x'));
  EXPECT_EQ(rows[1], "    " + std::string(25, 'x'));
  EXPECT_EQ(rows[2], "      y");
}

TEST(ChatMarkdownTest, StreamedRowsEqualTheWhole) {
  for (const Terminal& t : {Terminal::Plain(80), Terminal::Named("xterm-256color", 80)}) {
    MarkdownStream stream(t);
    Rows streamed;
    const std::string doc = kDoc;
    size_t completed_before_end = 0;
    for (size_t i = 0; i < doc.size(); i += 3) {
      stream.Append(doc.substr(i, 3));
      for (auto& r : stream.TakeCompleted()) streamed.push_back(std::move(r));
      // The growing block renders on its own, never empty once text arrived.
      EXPECT_FALSE(stream.Tail().empty() && streamed.empty());
    }
    completed_before_end = streamed.size();
    for (auto& r : stream.Finish()) streamed.push_back(std::move(r));
    EXPECT_EQ(streamed, RenderMarkdown(doc, t));
    EXPECT_GT(completed_before_end, 5u);  // most blocks were handed out while streaming
  }
}

TEST(ChatMarkdownTest, CompletesSlashCommands) {
  const std::vector<std::string> names{"compact", "help", "resume", "review", "model"};
  EXPECT_EQ(CompleteCommand("/re", names), (std::vector<std::string>{"resume", "review"}));
  EXPECT_EQ(CompleteCommand("/c", names), (std::vector<std::string>{"compact"}));
  EXPECT_TRUE(CompleteCommand("/re x", names).empty());
  EXPECT_TRUE(CompleteCommand("re", names).empty());
}

}  // namespace
}  // namespace lousho::cli::chat
