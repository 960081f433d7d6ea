// Tests of the history's id index (agent/history_index.h): every id added is found at its
// position through growth, a duplicate is refused, an id not added is not found.
#include "agent/history_index.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace lousho::agent {
namespace {

std::string IndexTestId(size_t i) {
  char id[16];
  std::snprintf(id, sizeof id, "%08zx", i * 2654435761u);
  return id;
}

TEST(IdIndexTest, FindsEveryIdAddedThroughGrowth) {
  std::vector<std::string> ids;
  auto id_of = [&ids](size_t i) -> std::string_view { return ids[i]; };
  IdIndex index;
  EXPECT_EQ(index.Find("none", id_of), IdIndex::kNone) << "an empty index finds nothing";
  for (size_t i = 0; i < 5000; ++i) {
    ids.push_back(IndexTestId(i));
    ASSERT_TRUE(index.Insert(ids.back(), i, id_of)) << i;
  }
  EXPECT_EQ(index.size(), 5000u);
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(index.Find(ids[i], id_of), i) << ids[i];
  EXPECT_EQ(index.Find("zzzzzzzz", id_of), IdIndex::kNone);
  EXPECT_EQ(index.Find("", id_of), IdIndex::kNone);
}

TEST(IdIndexTest, ADuplicateIsRefusedAndTheFirstKept) {
  std::vector<std::string> ids = {"a", "b", "a"};
  auto id_of = [&ids](size_t i) -> std::string_view { return ids[i]; };
  IdIndex index;
  EXPECT_TRUE(index.Insert(ids[0], 0, id_of));
  EXPECT_TRUE(index.Insert(ids[1], 1, id_of));
  EXPECT_FALSE(index.Insert(ids[2], 2, id_of));
  EXPECT_EQ(index.Find("a", id_of), 0u);
  EXPECT_EQ(index.size(), 2u);
}

TEST(IdIndexTest, ReservedRoomAndClear) {
  std::vector<std::string> ids;
  for (size_t i = 0; i < 1000; ++i) ids.push_back(IndexTestId(i));
  auto id_of = [&ids](size_t i) -> std::string_view { return ids[i]; };
  IdIndex index;
  index.Reserve(ids.size(), id_of);
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_TRUE(index.Insert(ids[i], i, id_of));
  // A later Reserve keeps what is there.
  index.Reserve(4000, id_of);
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(index.Find(ids[i], id_of), i);
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Find(ids[0], id_of), IdIndex::kNone);
}

}  // namespace
}  // namespace lousho::agent
