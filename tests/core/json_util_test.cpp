// Tests of the JSON helpers on input that jsoncpp would otherwise throw on (or misread).
#include "support/json_util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lousho {
namespace {

TEST(JsonUtilTest, DeepNestingIsAParseErrorNotAnException) {
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  auto parsed = ParseJson(deep);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kJsonParse);
  EXPECT_TRUE(ParseJson(std::string(100, '[') + std::string(100, ']')).ok());
}

TEST(JsonUtilTest, FieldReaderIntRejectsNumbersOutOfRange) {
  struct Case {
    const char* json;
    const char* error;  // empty: accepted
    long long value;
  } cases[] = {
      {R"({"n":5})", "", 5},
      {R"({"n":-9223372036854775808})", "", -9223372036854775807LL - 1},
      {R"({"n":9223372036854775807})", "", 9223372036854775807LL},
      {R"({"n":3.0})", "", 3},
      {R"({"n":9223372036854775808})", "n: integer out of range", 0},
      {R"({"n":18446744073709551615})", "n: integer out of range", 0},
      {R"({"n":99999999999999999999})", "n: integer out of range", 0},
      {R"({"n":1e30})", "n: integer out of range", 0},
      {R"({"n":-1e30})", "n: integer out of range", 0},
      {R"({"n":2.5})", "n: expected integer", 0},
      {R"({"n":"5"})", "n: expected integer", 0},
      {R"({"n":true})", "n: expected integer", 0},
  };
  for (const Case& c : cases) {
    auto v = ParseJson(c.json);
    ASSERT_TRUE(v.ok()) << c.json;
    FieldReader r(*v, "");
    auto n = r.Int("n", true);
    if (std::string(c.error).empty()) {
      ASSERT_TRUE(n.has_value()) << c.json << ": " << r.error();
      EXPECT_EQ(*n, c.value) << c.json;
    } else {
      EXPECT_FALSE(n.has_value()) << c.json;
      EXPECT_EQ(r.error(), c.error) << c.json;
    }
  }
}

// Every accessor on every kind of value, including the ones jsoncpp's own members throw on (find
// and getMemberNames on arrays and strings, asInt64 on 2^64-1, operator[] on a string).
TEST(JsonUtilTest, AccessorsNeverThrowOnAnyKindOfValue) {
  std::vector<Json::Value> values = {
      Json::Value(),       Json::Value(0),
      Json::Value(-7),     Json::Value(Json::UInt64(18446744073709551615ULL)),
      Json::Value(1e300),  Json::Value(2.5),
      Json::Value("text"), Json::Value(true)};
  for (const char* doc : {R"([1,"a",{}])", R"({"k":[1],"s":"x","n":1e30,"b":false})"}) {
    auto parsed = ParseJson(doc);
    ASSERT_TRUE(parsed.ok()) << doc;
    values.push_back(*parsed);
  }
  for (const Json::Value& v : values) {
    const std::string doc = WriteJson(v);
    EXPECT_NO_THROW({
      FindMember(v, "k");
      MemberOrNull(v, "s");
      ElementOrNull(v, 0);
      ElementOrNull(v, 99);
      MemberNames(v);
      StringOrJson(v);
      AsInt64(v);
      AsDouble(v);
      AsString(v);
      AsBool(v);
      StringOr(v, "s");
      IntOr(v, "n", 0);
      DoubleOr(v, "n", 0);
      BoolOr(v, "b", false);
      FieldReader r(v, "v");
      r.String("s", false);
      r.Int("n", false);
      r.Double("k", false);
      r.Bool("b", false);
      r.Object("k", false);
      r.Array("s", false);
      IntReader ints("doc");
      ints.Int(v, "n", 0, 10, 0);
    }) << doc;
  }
}

TEST(JsonUtilTest, ElementAndMemberNamesOnlyForTheirOwnTypes) {
  auto arr = ParseJson(R"(["a", 2])");
  ASSERT_TRUE(arr.ok());
  EXPECT_EQ(StringOr(Json::Value(Json::objectValue), "x", "none"), "none");
  EXPECT_EQ(AsString(ElementOrNull(*arr, 0)), "a");
  EXPECT_EQ(AsInt64(ElementOrNull(*arr, 1)), 2);
  EXPECT_TRUE(ElementOrNull(*arr, 2).isNull());
  EXPECT_TRUE(ElementOrNull(Json::Value("ab"), 0).isNull());
  EXPECT_TRUE(MemberNames(*arr).empty());
  auto obj = ParseJson(R"({"b":1,"a":2})");
  ASSERT_TRUE(obj.ok());
  EXPECT_EQ(MemberNames(*obj), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(ElementOrNull(*obj, 0).isNull());
}

TEST(JsonUtilTest, StringOrJsonKeepsStringsAndWritesTheRest) {
  EXPECT_EQ(StringOrJson(Json::Value("{not json")), "{not json");
  auto obj = ParseJson(R"({"path":"a b","n":[1,2.5]})");
  ASSERT_TRUE(obj.ok());
  EXPECT_EQ(StringOrJson(*obj), R"({"n":[1,2.5],"path":"a b"})");
  EXPECT_EQ(StringOrJson(Json::Value(42)), "42");
}

TEST(JsonUtilTest, IntReaderKeepsTheFirstProblemAndReturnsTheFallback) {
  auto v = ParseJson(R"({"ok":7,"big":1e30,"neg":-1,"text":"12","frac":1.5,"none":null})");
  ASSERT_TRUE(v.ok());
  IntReader ints("test event");
  EXPECT_EQ(ints.Int(*v, "ok", 0, 10, -5), 7);
  EXPECT_EQ(ints.Int(*v, "absent", 0, 10, -5), -5);
  EXPECT_EQ(ints.Int(*v, "none", 0, 10, -5), -5);
  EXPECT_TRUE(ints.ok());
  EXPECT_EQ(ints.Int(*v, "big", 0, 10, -5), -5);
  EXPECT_FALSE(ints.ok());
  EXPECT_EQ(ints.error(),
            "bad number in test event: big is 1e+30, expected an integer from 0 to 10");
  EXPECT_EQ(ints.Int(*v, "neg", 0, 10, -5), -5);
  EXPECT_EQ(ints.Int(*v, "ok", 0, 10, -5), 7);                // later good reads still read
  EXPECT_NE(ints.error().find("big is"), std::string::npos);  // the first problem is kept

  struct Case {
    const char* key;
    const char* shown;
  } cases[] = {{"neg", "-1"}, {"text", "a string"}, {"frac", "1.5"}};
  for (const Case& c : cases) {
    IntReader one("e");
    one.Int(*v, c.key, 0, 10, 0);
    EXPECT_EQ(one.error(), std::string("bad number in e: ") + c.key + " is " + c.shown +
                               ", expected an integer from 0 to 10");
  }
}

}  // namespace
}  // namespace lousho
