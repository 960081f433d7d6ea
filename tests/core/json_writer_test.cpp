// The one JSON writer (support/json_writer.h) against jsoncpp's own writer with the project's
// settings, byte for byte: strings of every escape class and of valid and invalid UTF-8, numbers
// at their limits, nested objects and arrays, both through Value(Json::Value) and through the
// streaming calls; and its nesting checks (builds with assertions).
#include "support/json_writer.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "support/json_util.h"

namespace lousho {
namespace {

// jsoncpp's writer as the project configured it before the JsonWriter (indentation "", every
// other setting jsoncpp's default): the reference.
std::string Jsoncpp(const Json::Value& v) {
  Json::StreamWriterBuilder b;
  b["indentation"] = "";
  return Json::writeString(b, v);
}

std::string Written(const Json::Value& v) {
  std::string out;
  JsonWriter(&out).Value(v);
  return out;
}

std::string Escaped(std::string_view s) {
  std::string out;
  AppendJsonString(s, &out);
  return out;
}

std::string Reference(const std::string& s) { return Jsoncpp(Json::Value(s)); }

// WriterPieces that exercise every branch of the escaper: escapes with short forms, other control
// characters, DEL, valid 2/3/4-byte UTF-8, surrogates and overlong forms, stray continuation
// bytes, truncated sequences, and lead bytes jsoncpp does not know.
const std::vector<std::string>& WriterPieces() {
  static const std::vector<std::string> pieces = {"a",
                                                  "Z",
                                                  " ",
                                                  "~",
                                                  "/",
                                                  "\"",
                                                  "\\",
                                                  "\b",
                                                  "\f",
                                                  "\n",
                                                  "\r",
                                                  "\t",
                                                  std::string(1, '\0'),
                                                  "\x01",
                                                  "\x1f",
                                                  "\x7f",
                                                  "\xc3\xa9",
                                                  "\xc2\x80",
                                                  "\xdf\xbf",
                                                  "\xe2\x82\xac",
                                                  "\xef\xbf\xbf",
                                                  "\xef\xbb\xbf",
                                                  "\xf0\x9f\x98\x80",
                                                  "\xf4\x8f\xbf\xbf",
                                                  "\xed\xa0\x80",
                                                  "\xed\xbf\xbf",
                                                  "\xc0\x80",
                                                  "\xc1\xbf",
                                                  "\xe0\x80\x80",
                                                  "\xf0\x80\x80\x80",
                                                  "\x80",
                                                  "\xbf",
                                                  "\xa0\x41",
                                                  "\xc3",
                                                  "\xe2\x82",
                                                  "\xf0\x9f\x98",
                                                  "\xf8\x88\x80\x80\x80",
                                                  "\xfe",
                                                  "\xff",
                                                  "\xf5\x80\x80\x80",
                                                  "\xe2\x28\xa1",
                                                  "\xc3\x28",
                                                  "hello",
                                                  "</script>",
                                                  "\\u0041"};
  return pieces;
}

std::string WriterRandomText(std::mt19937& rng, int max_pieces) {
  std::uniform_int_distribution<size_t> pick(0, WriterPieces().size() - 1);
  std::uniform_int_distribution<int> n(0, max_pieces);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> coin(0, 2);
  std::string s;
  for (int k = n(rng); k > 0; --k) {
    if (coin(rng) == 0) {
      s.push_back(static_cast<char>(byte(rng)));
    } else {
      s += WriterPieces()[pick(rng)];
    }
  }
  return s;
}

TEST(JsonWriterString, EveryPieceAloneAndInPairs) {
  for (const auto& a : WriterPieces()) {
    EXPECT_EQ(Escaped(a), Reference(a)) << "piece of " << a.size() << " bytes";
    for (const auto& b : WriterPieces()) EXPECT_EQ(Escaped(a + b), Reference(a + b));
  }
}

TEST(JsonWriterString, EveryOneAndTwoByteString) {
  for (int a = 0; a < 256; ++a) {
    std::string one(1, static_cast<char>(a));
    ASSERT_EQ(Escaped(one), Reference(one)) << "byte " << a;
    for (int b = 0; b < 256; ++b) {
      std::string two = one + static_cast<char>(b);
      ASSERT_EQ(Escaped(two), Reference(two)) << "bytes " << a << " " << b;
    }
  }
}

// Every four-byte sequence led by 0xF0-0xFF with tails from a spread of bytes.
TEST(JsonWriterString, FourByteLeads) {
  const int tails[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0xa5, 0xbf, 0xc0, 0xe0, 0xff};
  for (int lead = 0xf0; lead <= 0xff; ++lead)
    for (int a : tails)
      for (int b : tails)
        for (int c : tails) {
          std::string s = {static_cast<char>(lead), static_cast<char>(a), static_cast<char>(b),
                           static_cast<char>(c)};
          ASSERT_EQ(Escaped(s), Reference(s)) << lead << " " << a << " " << b << " " << c;
        }
}

TEST(JsonWriterString, RandomStringsOfPiecesAndBytes) {
  std::mt19937 rng(20261201);
  for (int i = 0; i < 20000; ++i) {
    const std::string s = WriterRandomText(rng, 40);
    ASSERT_EQ(Escaped(s), Reference(s)) << "case " << i;
  }
}

TEST(JsonWriterString, AppendsAfterWhatIsThere) {
  std::string out = "x=";
  AppendJsonString("a\"b", &out);
  EXPECT_EQ(out, "x=\"a\\\"b\"");
}

// Integers at the limits of every width jsoncpp keeps.
TEST(JsonWriterNumbers, IntegersAtTheirLimits) {
  const long long ints[] = {0,
                            1,
                            -1,
                            9,
                            10,
                            -10,
                            std::numeric_limits<int>::min(),
                            std::numeric_limits<int>::max(),
                            std::numeric_limits<long long>::min(),
                            std::numeric_limits<long long>::min() + 1,
                            std::numeric_limits<long long>::max()};
  for (long long n : ints) {
    const Json::Value v(static_cast<Json::Int64>(n));
    EXPECT_EQ(Written(v), Jsoncpp(v)) << n;
    std::string streamed;
    JsonWriter(&streamed).Value(n);
    EXPECT_EQ(streamed, Jsoncpp(v)) << n;
  }
  const unsigned long long uints[] = {0, 1, 1ULL << 63, std::numeric_limits<uint64_t>::max()};
  for (unsigned long long n : uints) {
    const Json::Value v(static_cast<Json::UInt64>(n));
    EXPECT_EQ(Written(v), Jsoncpp(v)) << n;
    std::string streamed;
    JsonWriter(&streamed).Value(n);
    EXPECT_EQ(streamed, Jsoncpp(v)) << n;
  }
  std::string small;
  JsonWriter(&small).Value(-7);  // an int, as a door writes a content index
  EXPECT_EQ(small, "-7");
}

std::vector<double> EdgeDoubles() {
  return {0.0,
          -0.0,
          1.0,
          -1.0,
          0.5,
          0.1,
          0.1 + 0.2,
          1.0 / 3.0,
          123.456,
          1e-7,
          3e21,
          1e21,
          1e20,
          1e15,
          1e16,
          1e17,
          9007199254740993.0,
          -9223372036854775808.0,
          18446744073709551616.0,
          DBL_MAX,
          -DBL_MAX,
          DBL_MIN,
          DBL_TRUE_MIN,
          DBL_EPSILON,
          std::nextafter(1.0, 2.0),
          std::numeric_limits<double>::infinity(),
          -std::numeric_limits<double>::infinity(),
          std::numeric_limits<double>::quiet_NaN()};
}

TEST(JsonWriterNumbers, DoublesAtTheirLimitsAndRandomBits) {
  std::vector<double> all = EdgeDoubles();
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) all.push_back(std::bit_cast<double>(rng()));
  for (double d : all) {
    const Json::Value v(d);
    ASSERT_EQ(Written(v), Jsoncpp(v)) << std::bit_cast<uint64_t>(d);
    std::string streamed;
    JsonWriter(&streamed).Value(d);
    ASSERT_EQ(streamed, Jsoncpp(v)) << std::bit_cast<uint64_t>(d);
  }
  // Twice the same value, then another: the kept text of the last double must not leak.
  for (double d : {0.5, 0.5, -0.0, 0.0, -0.0}) {
    std::string out;
    JsonWriter(&out).Value(d);
    EXPECT_EQ(out, Jsoncpp(Json::Value(d)));
  }
}

// A random DOM: objects with keys of every escape class (some sharing prefixes, as jsoncpp's
// order must be kept), arrays, empty ones, every scalar type.
Json::Value WriterRandomValue(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> die(0, 9);
  const int kind = depth <= 0 ? die(rng) % 6 : die(rng);
  switch (kind) {
    case 0:
      return Json::Value();
    case 1:
      return Json::Value(die(rng) < 5);
    case 2: {
      std::uniform_int_distribution<long long> any(std::numeric_limits<long long>::min(),
                                                   std::numeric_limits<long long>::max());
      return Json::Value(static_cast<Json::Int64>(die(rng) < 5 ? die(rng) - 5 : any(rng)));
    }
    case 3: {
      std::uniform_int_distribution<size_t> pick(0, EdgeDoubles().size() - 1);
      return Json::Value(EdgeDoubles()[pick(rng)] * (die(rng) < 5 ? 1.0 : 0.731));
    }
    case 4:
      return Json::Value(static_cast<Json::UInt64>(std::numeric_limits<uint64_t>::max() -
                                                   static_cast<uint64_t>(die(rng))));
    case 5:
      return Json::Value(WriterRandomText(rng, 6));
    case 6:
    case 7: {
      Json::Value a(Json::arrayValue);
      for (int n = die(rng) % 5; n > 0; --n) a.append(WriterRandomValue(rng, depth - 1));
      return a;
    }
    default: {
      Json::Value o(Json::objectValue);
      static const char* kKeys[] = {"a", "ab", "b", "", "A", "a\"", "\xc3\xa9", "k\n", "\x7f"};
      std::uniform_int_distribution<size_t> key(0, std::size(kKeys) - 1);
      for (int n = die(rng) % 6; n > 0; --n) {
        const std::string k = die(rng) < 7 ? kKeys[key(rng)] : WriterRandomText(rng, 3);
        o[k] = WriterRandomValue(rng, depth - 1);
      }
      return o;
    }
  }
}

// The same value through the streaming calls (members in the DOM's order, as a hot path gives
// them), not through Value(Json::Value).
void Stream(const Json::Value& v, JsonWriter* w) {
  switch (v.type()) {
    case Json::nullValue:
      return w->Value(nullptr);
    case Json::booleanValue:
      return w->Value(v.asBool());
    case Json::intValue:
      return w->Value(static_cast<long long>(v.asInt64()));
    case Json::uintValue:
      return w->Value(static_cast<unsigned long long>(v.asUInt64()));
    case Json::realValue:
      return w->Value(v.asDouble());
    case Json::stringValue:
      return w->Value(v.asString());
    case Json::arrayValue:
      w->ArrayBegin();
      for (const auto& item : v) Stream(item, w);
      return w->ArrayEnd();
    case Json::objectValue:
      w->ObjectBegin();
      for (const auto& key : v.getMemberNames()) {
        w->AttributeBegin(key);
        Stream(v[key], w);
        w->AttributeEnd();
      }
      return w->ObjectEnd();
  }
}

TEST(JsonWriterDom, RandomValuesAsJsoncppWritesThem) {
  std::mt19937 rng(20261202);
  for (int i = 0; i < 5000; ++i) {
    const Json::Value v = WriterRandomValue(rng, 4);
    const std::string want = Jsoncpp(v);
    ASSERT_EQ(Written(v), want) << "case " << i;
    ASSERT_EQ(WriteJson(v), want) << "case " << i;
    std::string streamed;
    {
      JsonWriter w(&streamed);
      Stream(v, &w);
    }
    ASSERT_EQ(streamed, want) << "case " << i;
  }
}

TEST(JsonWriterDom, ParsedTextWrittenBack) {
  // What a peer sent, parsed and written again, as a door forwards a tool's arguments.
  const char* texts[] = {R"({"b":[1,2.5,-0.0,"x\/y",{"":null}],"a":{"z":true,"y":false}})",
                         R"([[],{},[[]],"\u00e9\ud83d\ude00",12345678901234567890,-1e400])"};
  for (const char* t : texts) {
    Json::Value v;
    Json::CharReaderBuilder b;
    std::string errs;
    std::unique_ptr<Json::CharReader> r(b.newCharReader());
    const std::string s(t);
    if (!r->parse(s.data(), s.data() + s.size(), &v, &errs))
      continue;  // -1e400: jsoncpp may refuse
    EXPECT_EQ(Written(v), Jsoncpp(v)) << t;
  }
}

TEST(JsonWriterStream, CommasColonsAndRawValues) {
  std::string out = "prefix ";
  {
    JsonWriter w(&out);
    w.ObjectBegin();
    w.Attribute("a", 1);
    w.AttributeBegin("b");
    w.ArrayBegin();
    w.Value("x");
    w.RawValue(R"({"pre":"written"})");
    w.ArrayBegin();
    w.ArrayEnd();
    w.ObjectBegin();
    w.ObjectEnd();
    w.Value(nullptr);
    w.Value(false);
    w.ArrayEnd();
    w.AttributeEnd();
    w.Attribute("c", std::string("d"));
    w.Attribute("e", 2.0);
    w.ObjectEnd();
  }
  EXPECT_EQ(out, R"(prefix {"a":1,"b":["x",{"pre":"written"},[],{},null,false],"c":"d","e":2.0})");
}

// A string value jsoncpp holds no storage for is written as "" (jsoncpp writes nothing, which
// leaves the line invalid).
TEST(JsonWriterDom, StringWithoutStorageIsEmpty) {
  const Json::Value v(Json::stringValue);
  EXPECT_EQ(Written(v), "\"\"");
}

#ifndef NDEBUG
using JsonWriterDeathTest = ::testing::Test;

TEST_F(JsonWriterDeathTest, WrongNestingAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string out;
  EXPECT_DEATH(
      {
        JsonWriter w(&out);
        w.ObjectBegin();
        w.Value(1);  // a value where a key is due
      },
      "key is due");
  EXPECT_DEATH(
      {
        JsonWriter w(&out);
        w.ArrayBegin();
        w.AttributeBegin("k");
      },
      "outside an object");
  EXPECT_DEATH(
      {
        JsonWriter w(&out);
        w.ArrayBegin();
        w.ObjectEnd();
      },
      "ObjectEnd outside an object");
  EXPECT_DEATH(
      {
        JsonWriter w(&out);
        w.Value(1);
        w.Value(2);
      },
      "second value");
  EXPECT_DEATH(
      {
        JsonWriter w(&out);
        w.ObjectBegin();
        w.AttributeBegin("k");
        w.AttributeEnd();
      },
      "member without a value");
  EXPECT_DEATH(
      {
        JsonWriter w(&out);
        w.ObjectBegin();
        w.AttributeBegin("k");
        w.Value(1);
        w.Value(2);
      },
      "second value");
  EXPECT_DEATH(
      {
        JsonWriter w(&out);
        w.ArrayBegin();
      },
      "left open");
}
#else
TEST(JsonWriterDeathTest, WrongNestingAborts) {
  GTEST_SKIP() << "the nesting checks are in builds with assertions (scripts/test's)";
}
#endif

}  // namespace
}  // namespace lousho
