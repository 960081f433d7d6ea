// The JSON Schema checker MCP structured output goes through.
#include "agent/tools/json_schema.h"

#include <gtest/gtest.h>

#include "support/json_util.h"

namespace lousho::agent::tools {
namespace {

Json::Value J(const std::string& text) {
  auto v = ParseJson(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? *v : Json::Value();
}

// Scalars are read inside an array (ParseJson takes documents).
std::vector<std::string> Check(const std::string& schema, const std::string& value) {
  return SchemaMismatches(J("[" + schema + "]")[0], J("[" + value + "]")[0]);
}

using Lines = std::vector<std::string>;

TEST(JsonSchemaTest, Types) {
  EXPECT_TRUE(Check(R"({"type": "integer"})", "3").empty());
  EXPECT_TRUE(Check(R"({"type": "integer"})", "3.0").empty());
  EXPECT_EQ(Check(R"({"type": "integer"})", "3.5"), Lines{"$: expected integer, got a number"});
  EXPECT_TRUE(Check(R"({"type": "number"})", "3.5").empty());
  EXPECT_EQ(Check(R"({"type": "number"})", "true"), Lines{"$: expected number, got a boolean"});
  EXPECT_TRUE(Check(R"({"type": ["string", "null"]})", "null").empty());
  EXPECT_EQ(Check(R"({"type": ["string", "null"]})", "1"),
            Lines{"$: expected string or null, got a number"});
  EXPECT_TRUE(Check("true", R"({"any": 1})").empty());
  EXPECT_EQ(Check("false", "1"), Lines{"$: no value is allowed here"});
  EXPECT_TRUE(Check(R"({"type": "whatever"})", "1").empty());
}

TEST(JsonSchemaTest, ObjectsAndArrays) {
  const std::string schema = R"({"type": "object", "required": ["a", "b"],
    "properties": {"a": {"type": "array", "items": {"type": "string"}, "maxItems": 2}},
    "additionalProperties": false})";
  EXPECT_EQ(Check(schema, R"({"a": ["x", 2, "z"]})"),
            (Lines{"$: missing required property \"b\"", "$.a: expected at most 2 items",
                   "$.a[1]: expected string, got a number"}));
  EXPECT_EQ(Check(schema, R"({"a": [], "b": 1})"), Lines{"$.b: property not allowed"});
  EXPECT_EQ(Check(R"({"additionalProperties": {"type": "number"}})", R"({"x": "1"})"),
            Lines{"$.x: expected number, got a string"});
}

TEST(JsonSchemaTest, ValuesAndBounds) {
  EXPECT_EQ(Check(R"({"enum": ["a", "b"]})", R"("c")"), Lines{R"($: "c" is not one of ["a","b"])"});
  EXPECT_EQ(Check(R"({"const": 1})", "2"), Lines{"$: expected 1"});
  EXPECT_EQ(Check(R"({"minimum": 0, "maximum": 10})", "11"), Lines{"$: greater than 10"});
  EXPECT_EQ(Check(R"({"exclusiveMinimum": 0})", "0"), Lines{"$: not greater than 0"});
  EXPECT_EQ(Check(R"({"maxLength": 2})", R"("héé")"), Lines{"$: longer than 2 characters"});
  EXPECT_TRUE(Check(R"({"maxLength": 3})", R"("héé")").empty());
}

TEST(JsonSchemaTest, CombinationsAndReferences) {
  const std::string schema = R"({"$defs": {"n": {"type": "number"}},
    "properties": {"x": {"$ref": "#/$defs/n"}, "y": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/n"}]},
                   "z": {"oneOf": [{"type": "number"}, {"type": "integer"}]}}})";
  EXPECT_TRUE(Check(schema, R"({"x": 1, "y": "s", "z": 1.5})").empty());
  EXPECT_EQ(Check(schema, R"({"x": "1"})"), Lines{"$.x: expected number, got a string"});
  EXPECT_EQ(Check(schema, R"({"y": true})"), Lines{"$.y: fits none of the anyOf schemas"});
  EXPECT_EQ(Check(schema, R"({"z": 2})"), Lines{"$.z: fits 2 of the oneOf schemas, not one"});
  // A reference to itself ends at the depth limit.
  EXPECT_TRUE(Check(R"({"$ref": "#"})", "1").empty());
}

TEST(JsonSchemaTest, AtMostMaxLines) {
  EXPECT_EQ(SchemaMismatches(J(R"({"items": {"type": "string"}})"), J("[1, 2, 3, 4]"), 2).size(),
            2u);
}

}  // namespace
}  // namespace lousho::agent::tools
