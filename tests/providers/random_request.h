// Random model requests for the request-body writers' tests: every role, every block kind (empty
// text, signed, unsigned and redacted thinking, tool calls with object and other arguments,
// images), error results, strings with escapes, control characters and (in)valid UTF-8.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "core/provider.h"

namespace lousho::agent::testing {

inline std::string RandomString(std::mt19937& rng, int max_pieces) {
  static const std::vector<std::string> pieces = {
      "a",    "hello world", "\"",       "\\",   "\n",           "\t", std::string(1, '\0'),
      "\x01", "\x1f",        "\x7f",     "é",    "\xe2\x82\xac", "😀",  "\xed\xa0\x80",
      "\xff", "\xc3",        "\xa0\x41", "</x>", "{\"k\":[1]}",  ""};
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> n(0, max_pieces);
  std::string s;
  for (int k = n(rng); k > 0; --k) s += pieces[pick(rng)];
  return s;
}

inline ContentBlock RandomBlock(std::mt19937& rng) {
  std::uniform_int_distribution<int> die(0, 9);
  switch (die(rng)) {
    case 0:
    case 1:
    case 2:
      return ContentBlock::Text(RandomString(rng, 6));
    case 3:
      return ContentBlock::Text("");
    case 4: {
      ContentBlock b = ContentBlock::Thinking(RandomString(rng, 4),
                                              die(rng) < 5 ? "" : RandomString(rng, 3) + "sig");
      b.more.Edit().redacted = die(rng) == 0;
      return b;
    }
    case 5:
    case 6: {
      Json::Value args(Json::objectValue);
      if (die(rng) < 7) {
        args["path"] = RandomString(rng, 3);
        args["lines"].append(die(rng));
        args["deep"]["x"] = 0.5;
      } else if (die(rng) < 5) {
        args = Json::Value(RandomString(rng, 2));  // not an object: sent as {}
      }
      return ContentBlock::ToolCall("call_" + RandomString(rng, 2), RandomString(rng, 2), args);
    }
    case 7:
      return ContentBlock::Image("image/png", "iVBORw0KGgo" + RandomString(rng, 1));
    default:
      return ContentBlock::Text(RandomString(rng, 20));
  }
}

// A conversation of up to `max_messages` messages in `*history`, and a request over it.
inline ModelRequest RandomRequest(std::mt19937& rng, std::vector<Message>* history,
                                  int max_messages) {
  std::uniform_int_distribution<int> die(0, 9);
  std::uniform_int_distribution<int> count(0, max_messages);
  history->clear();
  for (int i = count(rng); i > 0; --i) {
    Message m;
    const int r = die(rng);
    m.role = r < 4 ? Role::kUser : r < 7 ? Role::kAssistant : Role::kToolResult;
    for (int k = die(rng) % 4; k > 0; --k) m.content.push_back(RandomBlock(rng));
    if (m.role == Role::kToolResult) {
      m.tool_call_id = "call_" + RandomString(rng, 2);
      m.tool_name = "read";
      m.is_error = die(rng) < 3;
    }
    history->push_back(std::move(m));
  }
  ModelRequest req;
  req.model = die(rng) == 0 ? RandomString(rng, 2) : "model-x";
  req.system = die(rng) < 3 ? "" : RandomString(rng, 5);
  req.messages = *history;
  for (int k = die(rng) % 3; k > 0; --k) {
    ToolSchema t;
    t.name = RandomString(rng, 2);
    t.description = RandomString(rng, 4);
    if (die(rng) < 7) {
      t.parameters["type"] = "object";
      t.parameters["properties"]["path"]["type"] = "string";
    }
    req.tools.push_back(t);
  }
  req.thinking = static_cast<ThinkingLevel>(die(rng) % 6);
  req.max_output_tokens = die(rng) < 5 ? 0 : die(rng) * 1000;
  return req;
}

}  // namespace lousho::agent::testing
