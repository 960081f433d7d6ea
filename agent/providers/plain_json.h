// Pieces of the plain readers that read the commonest stream events (text deltas) in their
// servers' exact form without building a Json::Value; anything unusual is left to jsoncpp.
#pragma once

#include <string>
#include <string_view>

namespace lousho::agent {

// Reads a JSON string body starting just after its opening quote: bytes other than '"', '\\'
// and controls as they are, and the short escapes \" \\ \/ \b \f \n \r \t. Returns the length
// consumed including the closing quote, or 0 when the body has anything else (a \u escape, a
// control character, no closing quote): the caller then takes the general path, which reads
// such strings exactly (jsoncpp).
size_t ReadPlainJsonString(std::string_view from, std::string* out);

// Skips one member value of an envelope the plain readers ignore: a string ReadPlainJsonString
// accepts, an integer without sign tricks or leading zeros (at most 18 digits), null, true or
// false. Returns its length, or 0 for anything else (objects, arrays, fractions...).
size_t SkipPlainJsonScalar(std::string_view from);

}  // namespace lousho::agent
