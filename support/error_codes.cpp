// Stream output of ErrorCode by its wire name.
#include "support/error_codes.h"

#include <ostream>

namespace lousho {

std::ostream& operator<<(std::ostream& os, ErrorCode code) { return os << ErrorCodeName(code); }

}  // namespace lousho
