// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: the names of content-
// addressed objects (file checkpoints).
#pragma once

#include <string>
#include <string_view>

namespace lousho {

std::string Sha256Hex(std::string_view data);

}  // namespace lousho
