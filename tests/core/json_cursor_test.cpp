// The pull reader (JsonCursor, ReadJsonStringBody) against jsoncpp: whatever it accepts, ParseJson
// accepts with the same value; everything WriteJson writes, it reads back as ParseJson does; its
// pull calls walk objects and arrays in order and stop at the first error.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "support/json_util.h"

namespace lousho {
namespace {

// The cursor's value of `text`, or nullopt when it refuses it (or leaves trailing bytes).
std::optional<Json::Value> CursorValue(std::string_view text) {
  JsonCursor c(text);
  Json::Value v;
  if (!c.Value(&v) || !c.End()) return std::nullopt;
  return v;
}

// The cursor never accepts what ParseJson refuses, and never reads a value differently. Values
// are compared by type and content (jsoncpp's operator== compares types first). ParseJson wants
// an object or an array at the top, so scalars are read inside one.
void ExpectAgreesWithJsoncpp(const std::string& scalar) {
  const std::string text = "[" + scalar + "]";
  auto mine = CursorValue(text);
  auto theirs = ParseJson(text);
  if (mine) {
    ASSERT_TRUE(theirs.ok()) << "the cursor accepted what ParseJson refuses: " << text;
    EXPECT_EQ(*mine, *theirs) << text;
    EXPECT_EQ(WriteJson(*mine), WriteJson(*theirs)) << text;
  }
}

TEST(JsonCursorTest, ReadsEveryScalarAsJsoncppDoes) {
  const std::vector<std::string> cases = {"0",
                                          "-0",
                                          "7",
                                          "-7",
                                          "1.5",
                                          "-1.5e3",
                                          "1E+2",
                                          "2e-3",
                                          "0.1",
                                          "9223372036854775807",   // int64 max: an int
                                          "9223372036854775808",   // past it: a uint
                                          "-9223372036854775808",  // int64 min: an int
                                          "-9223372036854775809",  // a double
                                          "18446744073709551615",  // uint64 max
                                          "18446744073709551616",  // a double
                                          "123456789012345678901234567890",
                                          "1e308",
                                          "-1e308",
                                          "4.9406564584124654e-324",
                                          "true",
                                          "false",
                                          "null",
                                          R"("")",
                                          R"("plain")",
                                          R"("a\"b\\c\/d\b\f\n\r\t")",
                                          R"("\u0041\u00e9\u20ac")",
                                          R"("\ud83d\ude00")",
                                          R"("\udc00 lone low")",
                                          R"("\u0000 nul")",
                                          "\"raw \x01 control\"",
                                          "\"bytes \xc3\xa9 \xff kept\"",
                                          R"("\uD83D\uDE00 upper hex")"};
  for (const auto& text : cases) {
    SCOPED_TRACE(text);
    auto mine = CursorValue(text);
    ASSERT_TRUE(mine.has_value()) << "refused " << text;
    ExpectAgreesWithJsoncpp(text);
  }
  EXPECT_TRUE(CursorValue("9223372036854775807")->isInt64());
  EXPECT_EQ(CursorValue("9223372036854775808")->type(), Json::uintValue);
  EXPECT_EQ(CursorValue("-9223372036854775809")->type(), Json::realValue);
  EXPECT_EQ(CursorValue(R"("\ud83d\ude00")")->asString(), "\xf0\x9f\x98\x80");
}

TEST(JsonCursorTest, RefusesWhatIsNotStrictJson) {
  for (const std::string text : {"",
                                 " ",
                                 "01",
                                 "-",
                                 "1.",
                                 ".5",
                                 "1e",
                                 "+1",
                                 "[1,]",
                                 "[,1]",
                                 "{,}",
                                 R"({"a":1,})",
                                 R"({"a" 1})",
                                 R"({a:1})",
                                 "[1 2]",
                                 "tru",
                                 "nul",
                                 R"("unterminated)",
                                 R"("\x")",
                                 R"("\u12")",
                                 R"("\ud83d")",
                                 R"("\ud83d\n")",
                                 "[1] 2",
                                 "{} x",
                                 "'s'",
                                 "[1]/*c*/",
                                 "NaN",
                                 "Infinity",
                                 "1e400",
                                 "-1e400",
                                 "1e-400"}) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(CursorValue(text).has_value()) << text;
  }
}

TEST(JsonCursorTest, NestingStopsShortOfParseJsonsLimit) {
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_TRUE(CursorValue(nested(kMaxJsonDepth - 1)).has_value());
  EXPECT_TRUE(ParseJson(nested(kMaxJsonDepth - 1)).ok());
  EXPECT_FALSE(CursorValue(nested(kMaxJsonDepth)).has_value());
  EXPECT_FALSE(CursorValue(nested(100000)).has_value());  // no stack overflow either
}

// Random documents of every shape, written by WriteJson (the form session files hold), read back
// by the cursor as ParseJson reads them.
Json::Value RandomValue(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  static const std::vector<std::string> pieces = {"a",
                                                  "Z",
                                                  " ",
                                                  "\"",
                                                  "\\",
                                                  "/",
                                                  "\n",
                                                  "\t",
                                                  std::string(1, '\0'),
                                                  "\x01",
                                                  "\x7f",
                                                  "\xc3\xa9",
                                                  "\xe2\x82\xac",
                                                  "\xf0\x9f\x98\x80",
                                                  "\xed\xa0\x80",
                                                  "\xff",
                                                  "\xc3"};
  switch (depth > 3 ? pick(5) : pick(7)) {
    case 0:
      return Json::Value();
    case 1:
      return Json::Value(pick(2) == 0);
    case 2: {
      const int kind = pick(4);
      if (kind == 0) return Json::Value(static_cast<Json::Int64>(rng() - (1U << 31)));
      if (kind == 1)
        return Json::Value(
            static_cast<Json::UInt64>(static_cast<Json::UInt64>(rng()) << 33 | 1ULL << 63));
      if (kind == 2)
        return Json::Value(static_cast<Json::Int64>(static_cast<Json::UInt64>(rng()) << 32));
      return Json::Value(std::ldexp(static_cast<double>(rng()) - 2e9, pick(200) - 100));
    }
    case 3:
    case 4: {
      std::string s;
      for (int i = pick(12); i > 0; --i) s += pieces[static_cast<size_t>(pick(pieces.size()))];
      return Json::Value(s);
    }
    case 5: {
      Json::Value a(Json::arrayValue);
      for (int i = pick(5); i > 0; --i) a.append(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      Json::Value o(Json::objectValue);
      for (int i = pick(5); i > 0; --i)
        o[std::string(1, static_cast<char>('a' + pick(26))) + pieces[pick(pieces.size())]] =
            RandomValue(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonCursorTest, ReadsBackEverythingWriteJsonWrites) {
  std::mt19937 rng(20261201);
  for (int i = 0; i < 3000; ++i) {
    Json::Value top(Json::arrayValue);  // ParseJson wants an object or an array at the top
    top.append(RandomValue(rng, 0));
    const std::string text = WriteJson(top);
    auto theirs = ParseJson(text);
    ASSERT_TRUE(theirs.ok()) << text;
    auto mine = CursorValue(text);
    ASSERT_TRUE(mine.has_value()) << text;
    EXPECT_EQ(*mine, *theirs) << text;
    // (Not `text` itself: keys that differ only in invalid UTF-8 are written alike, so reading
    // merges them and the order of keys changes.)
    EXPECT_EQ(WriteJson(*mine), WriteJson(*theirs));
  }
}

// Skip reads what Value reads, building nothing: the same verdict, the same bytes consumed and
// the same error, for refused text, nesting at and past the limit, and random documents cut at
// every length.
void ExpectSkipAgreesWithValue(std::string_view text) {
  JsonCursor built(text);
  JsonCursor skipped(text);
  Json::Value v;
  const bool a = built.Value(&v) && built.End();
  const bool b = skipped.Skip() && skipped.End();
  EXPECT_EQ(a, b) << text;
  EXPECT_EQ(built.offset(), skipped.offset()) << text;
  EXPECT_EQ(built.error(), skipped.error()) << text;
}

// SkipJsonScalar's length of a scalar: what a cursor reads of it (0 for anything else).
size_t CursorScalarLength(std::string_view text) {
  JsonCursor c(text);
  switch (c.Peek()) {
    case JsonCursor::Kind::kString:
    case JsonCursor::Kind::kNumber:
    case JsonCursor::Kind::kBool:
    case JsonCursor::Kind::kNull:
      return c.Skip() ? c.offset() : 0;
    default:
      return 0;
  }
}

TEST(JsonCursorTest, SkipJsonScalarReadsWhatTheCursorReads) {
  std::vector<std::string> texts = {"",
                                    " ",
                                    "\"a\"",
                                    " \t\"a\\\"b\",",
                                    "\"\\u12\"",
                                    "\"open",
                                    "0",
                                    "-0",
                                    "01",
                                    "1.5e3}",
                                    "1e400",
                                    "-",
                                    "9223372036854775808",
                                    "-9223372036854775809",
                                    "18446744073709551616",
                                    "true",
                                    "tru",
                                    "false,",
                                    "null}",
                                    "nul",
                                    "[1]",
                                    "{}",
                                    "x"};
  std::mt19937 rng(20261203);
  for (int i = 0; i < 400; ++i) {
    const std::string text = WriteJson(RandomValue(rng, 4));  // scalars mostly
    for (size_t cut = 0; cut <= text.size(); ++cut) texts.push_back(text.substr(0, cut) + ",");
  }
  for (const std::string& text : texts)
    EXPECT_EQ(SkipJsonScalar(text), CursorScalarLength(text)) << text;
}

TEST(JsonCursorTest, SkipReadsWhatValueReads) {
  for (const std::string text :
       {"", "01", "1.", "[1,]", R"({"a":1,})", R"({"a" 1})", "tru", R"("\ud83d")", "[1] 2", "1e400",
        R"({"a":[1,{"b":"c"}]})", R"({"a":"x","a":"y"})", "null", "true", "-0.5e3", R"("é")"})
    ExpectSkipAgreesWithValue(text);
  for (const int depth : {kMaxJsonDepth - 1, kMaxJsonDepth, 100000})
    ExpectSkipAgreesWithValue(std::string(depth, '[') + std::string(depth, ']'));
  std::mt19937 rng(20261202);
  for (int i = 0; i < 300; ++i) {
    const std::string text = WriteJson(RandomValue(rng, 0));
    for (size_t cut = 0; cut <= text.size(); ++cut)
      ExpectSkipAgreesWithValue(std::string_view(text).substr(0, cut));
  }
}

TEST(JsonCursorTest, PullsMembersAndElementsInOrder) {
  JsonCursor c(R"( {"a": [1, "two", {"x": null}], "b\u00e9": true, "c": {}} )");
  ASSERT_TRUE(c.BeginObject());
  std::string key;
  ASSERT_TRUE(c.NextMember(&key));
  EXPECT_EQ(key, "a");
  ASSERT_EQ(c.Peek(), JsonCursor::Kind::kArray);
  ASSERT_TRUE(c.BeginArray());
  std::vector<Json::Value> items;
  while (c.NextElement()) {
    Json::Value v;
    ASSERT_TRUE(c.Value(&v));
    items.push_back(v);
  }
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[1], Json::Value("two"));
  ASSERT_TRUE(c.NextMember(&key));
  EXPECT_EQ(key, "b\xc3\xa9");
  EXPECT_EQ(c.Peek(), JsonCursor::Kind::kBool);
  EXPECT_TRUE(c.Skip());
  ASSERT_TRUE(c.NextMember(&key));
  EXPECT_EQ(key, "c");
  EXPECT_FALSE(c.Null());  // not a null: nothing consumed, no error
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c.Skip());
  EXPECT_FALSE(c.NextMember(&key));
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c.End());
}

TEST(JsonCursorTest, TheFirstErrorStopsEveryLaterCall) {
  JsonCursor c(R"({"a": 1 "b": 2})");
  ASSERT_TRUE(c.BeginObject());
  std::string key;
  ASSERT_TRUE(c.NextMember(&key));
  EXPECT_TRUE(c.Skip());
  EXPECT_FALSE(c.NextMember(&key));
  EXPECT_FALSE(c.ok());
  EXPECT_NE(c.error().find("expected ',' or '}'"), std::string::npos) << c.error();
  EXPECT_NE(c.error().find("byte 8"), std::string::npos) << c.error();
  Json::Value v;
  EXPECT_FALSE(c.Value(&v));
  EXPECT_EQ(c.Peek(), JsonCursor::Kind::kNone);
  EXPECT_FALSE(c.End());
}

TEST(JsonCursorTest, StringBodiesReportWhatTheyConsumed) {
  std::string out;
  EXPECT_EQ(ReadJsonStringBody(R"(ab\nc" rest)", &out), 6u);
  EXPECT_EQ(out, "ab\nc");
  out.clear();
  EXPECT_EQ(ReadJsonStringBody(R"(no end)", &out), 0u);
  out.clear();
  EXPECT_EQ(ReadJsonStringBody(R"(bad \q")", &out), 0u);
  out.clear();
  EXPECT_EQ(ReadJsonStringBody("\\", &out), 0u);
}

}  // namespace
}  // namespace lousho
