// Tests of ErrorCode's name table and of Error's text form.
#include "support/status.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

namespace lousho {
namespace {

TEST(ErrorCodeTest, EveryCodeHasOneDistinctWireNameThatParsesBack) {
  std::set<std::string> names;
  for (const ErrorCodeEntry& e : kErrorCodeNames) {
    std::string name = ErrorCodeName(e.code);
    EXPECT_EQ(name.rfind("LOUSHO_", 0), 0u) << name;
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
    EXPECT_EQ(ParseErrorCode(name), e.code) << name;
  }
}

TEST(ErrorCodeTest, WireNamesAreTheOnesClientsAlreadySee) {
  EXPECT_STREQ(ErrorCodeName(ErrorCode::kConfigInvalid), "LOUSHO_CONFIG_INVALID");
  EXPECT_STREQ(ErrorCodeName(ErrorCode::kProviderAuth), "LOUSHO_PROVIDER_AUTH");
  EXPECT_STREQ(ErrorCodeName(ErrorCode::kSessionBusy), "LOUSHO_SESSION_BUSY");
  EXPECT_STREQ(ErrorCodeName(ErrorCode::kToolIo), "LOUSHO_TOOL_IO");
  EXPECT_STREQ(ErrorCodeName(ErrorCode::kUsage), "LOUSHO_USAGE");
}

TEST(ErrorCodeTest, UnknownNamesDoNotParse) {
  EXPECT_EQ(ParseErrorCode(""), std::nullopt);
  EXPECT_EQ(ParseErrorCode("LOUSHO_"), std::nullopt);
  EXPECT_EQ(ParseErrorCode("lousho_config_invalid"), std::nullopt);
  EXPECT_EQ(ParseErrorCode("LOUSHO_CONFIG_INVALID "), std::nullopt);
}

TEST(ErrorCodeTest, ErrorTextUsesTheWireName) {
  Error e = MakeError(ErrorCode::kSessionBusy, "a prompt is already running");
  EXPECT_EQ(e.ToString(), "LOUSHO_SESSION_BUSY: a prompt is already running");
  std::ostringstream os;
  os << e.code;
  EXPECT_EQ(os.str(), "LOUSHO_SESSION_BUSY");
}

}  // namespace
}  // namespace lousho
