// Tests of the history's branch view: the running figures it keeps equal a recount after any
// sequence of appends, branch moves, compactions and reloads; a snapshot does not change after
// it is taken; the view and the tree share each message; entries never move.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "agent/compaction.h"
#include "agent/history.h"

namespace lousho::agent {
namespace {

Entry TextEntry(Role role, const std::string& text) {
  Entry e;
  e.message.role = role;
  e.message.content.push_back(ContentBlock::Text(text));
  return e;
}

// The messages a History made afresh from the same entries and leaf shows: the recount.
std::vector<std::string> Recount(const History& h, std::vector<std::string>* ids) {
  if (h.leaf().empty()) return {};  // before the first entry (Seed would take the last)
  History fresh;
  EXPECT_TRUE(fresh.Seed(h.entries().ToVector(), h.leaf()).ok());
  std::vector<std::string> out;
  const MessageView view = fresh.messages();
  for (size_t i = 0; i < view.size(); ++i) {
    out.push_back(view[i].TextContent());
    ids->push_back(fresh.message_id(i));
  }
  EXPECT_EQ(fresh.ContextTokens(), ContextTokens(view, fresh.context_start()));
  return out;
}

void ExpectMatchesRecount(const History& h, int step) {
  SCOPED_TRACE("after step " + std::to_string(step));
  // The running token figure against the full count over the same view.
  EXPECT_EQ(h.ContextTokens(), ContextTokens(h.messages(), h.context_start()));
  std::vector<std::string> ids;
  const std::vector<std::string> texts = Recount(h, &ids);
  const MessageView view = h.messages();
  ASSERT_EQ(view.size(), texts.size());
  for (size_t i = 0; i < view.size(); ++i) {
    EXPECT_EQ(view[i].TextContent(), texts[i]) << "message " << i;
    EXPECT_EQ(h.message_id(i), ids[i]) << "message " << i;
  }
}

// One random step: mostly messages (some with usage, some failed), now and then a branch move
// (with or without a summary), a compaction keeping a random message of the branch, a leaf move
// in memory, or a reload of the whole tree.
class RandomSteps {
 public:
  explicit RandomSteps(unsigned seed) : rng_(seed) {}

  void Step(History* h) {
    const int pick = Pick(100);
    if (pick < 60) {
      AppendMessage(h);
    } else if (pick < 72) {
      ASSERT_TRUE(h->BranchTo(AnyId(*h), Pick(2) ? "a path left behind" : "").ok());
    } else if (pick < 80) {
      ASSERT_TRUE(h->SetLeaf(AnyId(*h)).ok());
    } else if (pick < 92) {
      Entry c;
      c.kind = EntryKind::kCompaction;
      c.more.Edit().summary = "summary " + std::to_string(Pick(1000));
      const MessageView view = h->messages();
      c.more.Edit().first_kept_id =
          view.empty() ? ""
                       : h->message_id(static_cast<size_t>(Pick(static_cast<int>(view.size()))));
      h->Append(std::move(c));
    } else {
      const std::vector<Entry> all = h->entries().ToVector();
      ASSERT_TRUE(h->Seed(all, h->leaf()).ok());
    }
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::string AnyId(const History& h) {
    const EntryList all = h.entries();
    if (all.empty() || Pick(10) == 0) return "";
    return all[static_cast<size_t>(Pick(static_cast<int>(all.size())))].id;
  }

  void AppendMessage(History* h) {
    const Role roles[] = {Role::kUser, Role::kAssistant, Role::kToolResult};
    Entry e = TextEntry(roles[Pick(3)], std::string(static_cast<size_t>(Pick(400)), 'x'));
    Message& m = e.message;
    if (m.role == Role::kAssistant) {
      if (Pick(2)) m.assistant.Edit().usage.input = Pick(5000);
      if (Pick(8) == 0) m.stop_reason = StopReason::kError;
      if (Pick(4) == 0) {
        Json::Value args(Json::objectValue);
        args["path"] = std::string(static_cast<size_t>(Pick(50)), 'p');
        m.content.push_back(ContentBlock::ToolCall("c", "read", args));
      }
    } else if (m.role == Role::kToolResult) {
      m.tool_call_id = "c";
      m.tool_name = "read";
    } else if (Pick(5) == 0) {
      m.custom_type = "note";
    }
    h->Append(std::move(e));
  }

  std::mt19937 rng_;
};

TEST(HistoryViewTest, RunningFiguresEqualARecountAfterRandomSteps) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    History h;
    RandomSteps steps(seed);
    for (int i = 0; i < 150; ++i) {
      steps.Step(&h);
      ExpectMatchesRecount(h, i);
      if (HasFatalFailure() || HasFailure()) return;
    }
  }
}

TEST(HistoryViewTest, ContextTokensCountFromTheLastReportAfterTheLastCompaction) {
  History h;
  h.Append(TextEntry(Role::kUser, std::string(400, 'u')));  // 100 tokens
  Entry a = TextEntry(Role::kAssistant, "ok");
  a.message.assistant.Edit().usage.input = 5000;
  const std::string first = h.Append(TextEntry(Role::kUser, "q")).id;
  h.Append(std::move(a));
  h.Append(TextEntry(Role::kUser, std::string(40, 'v')));  // 10 tokens
  EXPECT_EQ(h.ContextTokens(), 5000 + 10);
  Entry c;
  c.kind = EntryKind::kCompaction;
  c.more.Edit().summary = "s";
  c.more.Edit().first_kept_id = first;
  h.Append(std::move(c));
  // The report came before the compaction: estimates only.
  EXPECT_EQ(h.ContextTokens(), ContextTokens(h.messages(), h.context_start()));
  EXPECT_LT(h.ContextTokens(), 5000);
}

// Appends more than a block of the view's table, moves the branch and compacts.
void GrowMoveAndCompact(History* h) {
  for (int i = 0; i < 3 * static_cast<int>(MessageTable::kBlockSize); ++i)
    h->Append(TextEntry(Role::kAssistant, "n" + std::to_string(i)));
  ASSERT_TRUE(h->BranchTo(h->entries()[10].id, "left").ok());
  Entry c;
  c.kind = EntryKind::kCompaction;
  c.more.Edit().summary = "s";
  h->Append(std::move(c));
}

TEST(HistoryViewTest, ASnapshotStaysAsItWasTaken) {
  History h;
  for (int i = 0; i < 100; ++i) h.Append(TextEntry(Role::kUser, "m" + std::to_string(i)));
  const MessageView snapshot = h.messages();
  std::vector<const Message*> before;
  for (const Message& m : snapshot) before.push_back(&m);
  GrowMoveAndCompact(&h);
  ASSERT_EQ(snapshot.size(), 100u);
  for (size_t i = 0; i < snapshot.size(); ++i) {
    EXPECT_EQ(&snapshot[i], before[i]);
    EXPECT_EQ(snapshot[i].TextContent(), "m" + std::to_string(i));
  }
  EXPECT_NE(h.messages().size(), snapshot.size());
}

// Whether every message of `h`'s view is its entry's own message (by address), in `ids` order.
void ExpectViewIsTheEntries(const History& h, const std::vector<std::string>& ids) {
  const MessageView view = h.messages();
  ASSERT_EQ(view.size(), ids.size());
  for (size_t i = 0; i < view.size(); ++i) ASSERT_EQ(&view[i], &h.Find(ids[i])->message) << i;
}

TEST(HistoryViewTest, TheViewAndTheTreeShareEachMessage) {
  History h;
  const Entry* first = &h.Append(TextEntry(Role::kUser, "t"));
  std::vector<std::string> ids{first->id};
  ids.reserve(2500);
  for (int i = 1; i < 2500; ++i)
    ids.push_back(h.Append(TextEntry(i % 2 ? Role::kAssistant : Role::kUser, "t")).id);
  // Entries never move: the first one is where it was after thousands of appends.
  EXPECT_EQ(h.Find(ids[0]), first);
  ExpectViewIsTheEntries(h, ids);
  // Also after a reload: the seeded entries are the view's messages, not copies of them.
  History reloaded;
  ASSERT_TRUE(reloaded.Seed(h.entries().ToVector()).ok());
  ExpectViewIsTheEntries(reloaded, ids);
}

}  // namespace
}  // namespace lousho::agent
