// How large a request body will be, roughly, so a body writer can reserve its string once.
#pragma once

#include <cstddef>

#include "core/provider.h"

namespace lousho::agent {

// The system prompt, every block's text and data, and room for the members around them.
inline size_t RequestBodySizeHint(const ModelRequest& request) {
  size_t bytes = request.system.size() + 256;
  for (const Message& m : request.messages)
    for (const auto& b : m.content) bytes += b.text.size() + b.data().size() + 64;
  return bytes;
}

}  // namespace lousho::agent
