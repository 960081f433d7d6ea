// Tests of the JSON helpers on input that jsoncpp would otherwise throw on (or misread).
#include "support/json_util.h"

#include <gtest/gtest.h>

#include <string>

namespace lousho {
namespace {

TEST(JsonUtilTest, DeepNestingIsAParseErrorNotAnException) {
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  auto parsed = ParseJson(deep);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, "LOUSHO_JSON_PARSE");
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

}  // namespace
}  // namespace lousho
