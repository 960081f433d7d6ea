// Tests of backoff, Retry-After parsing and the HTTP error mapping.
#include "support/http/retry.h"

#include <gtest/gtest.h>

#include "support/http/provider_errors.h"

namespace lousho::agent {
namespace {

TEST(RetryPolicyTest, BackoffDoublesCapsAndJitters) {
  RetryPolicy p{5, 1000, 5000};
  EXPECT_EQ(BackoffDelayMs(p, 1, 1.0), 1000);
  EXPECT_EQ(BackoffDelayMs(p, 2, 1.0), 2000);
  EXPECT_EQ(BackoffDelayMs(p, 3, 1.0), 4000);
  EXPECT_EQ(BackoffDelayMs(p, 4, 1.0), 5000);  // capped
  EXPECT_EQ(BackoffDelayMs(p, 1, 0.0), 750);   // jitter takes off up to a quarter
  EXPECT_EQ(BackoffDelayMs(p, 2, 0.5), 1750);
}

TEST(RetryPolicyTest, ServerDelayWinsUnlessTooLong) {
  RetryPolicy p{3, 1000, 60000};
  EXPECT_EQ(RetryDelayMs(p, 1, 7000, 0.3), 7000);
  EXPECT_EQ(RetryDelayMs(p, 1, 0, 0.3), 0);
  EXPECT_EQ(RetryDelayMs(p, 1, 120000, 0.3), -1);  // longer than we accept: fail now
  EXPECT_EQ(RetryDelayMs(p, 2, -1, 1.0), 2000);
}

TEST(RetryAfterTest, SecondsAndHttpDates) {
  const long long now = 1445412480000LL;  // Wed, 21 Oct 2015 07:28:00 GMT
  EXPECT_EQ(ParseRetryAfterMs("7", now), 7000);
  EXPECT_EQ(ParseRetryAfterMs(" 1.5 ", now), 1500);
  EXPECT_EQ(ParseRetryAfterMs("Wed, 21 Oct 2015 07:28:30 GMT", now), 30000);
  EXPECT_EQ(ParseRetryAfterMs("Wed, 21 Oct 2015 07:27:00 GMT", now), 0);  // past: at once
  EXPECT_EQ(ParseRetryAfterMs("Thu, 01 Jan 1970 00:00:10 GMT", 0), 10000);
  EXPECT_EQ(ParseRetryAfterMs("soon", now), -1);
  EXPECT_EQ(ParseRetryAfterMs("", now), -1);
  EXPECT_EQ(ParseRetryAfterMs("-3", now), -1);
}

// Absurd values from a server are refused or clamped, never cast out of range (undefined).
TEST(RetryAfterTest, AbsurdValuesAreRefusedOrClamped) {
  const long long now = 1445412480000LL;
  EXPECT_EQ(ParseRetryAfterMs("Wed, 21 Oct 99999999999 07:28:30 GMT", now), -1);
  EXPECT_EQ(ParseRetryAfterMs("Wed, 2147483648 Oct 2015 07:28:30 GMT", now), -1);
  EXPECT_EQ(ParseRetryAfterMs("Wed, 21 Oct 2015 99999999999:28:30 GMT", now), -1);
  EXPECT_EQ(ParseRetryAfterMs("Fri, 31 Dec 9999 23:59:59 GMT", now), 253402300799000LL - now);
  EXPECT_EQ(ParseRetryAfterMs("1e300", now), -1);
  for (const char* huge : {"1e300", "inf", "99999999999999999999999"}) {
    HeaderMap h{{"retry-after-ms", huge}};
    Error e = ErrorFromHttp(429, h, "", now);
    EXPECT_EQ(e.retry_after_ms, 86400000) << huge;
    // Too long to wait: the request fails at once instead of retrying.
    EXPECT_EQ(RetryDelayMs(RetryPolicy{}, 1, e.retry_after_ms, 0.5), -1) << huge;
  }
  HeaderMap nan{{"retry-after-ms", "nan"}};
  EXPECT_EQ(ErrorFromHttp(429, nan, "", now).retry_after_ms, -1);
}

TEST(ProviderErrorsTest, HttpStatusMapping) {
  HeaderMap none;
  auto e401 = ErrorFromHttp(401, none,
                            R"({"error":{"message":"Incorrect API key provided: sk-...",)"
                            R"("type":"invalid_request_error","code":"invalid_api_key"}})",
                            0);
  EXPECT_EQ(e401.code, kProviderAuth);
  EXPECT_FALSE(e401.retryable);
  EXPECT_EQ(e401.message, "HTTP 401: Incorrect API key provided: sk-...");
  EXPECT_EQ(ErrorFromHttp(403, none, "", 0).code, kProviderAuth);
  auto e404 = ErrorFromHttp(404, none, R"({"error":"model 'x' not found"})", 0);
  EXPECT_EQ(e404.code, kProviderModelNotFound);
  EXPECT_EQ(e404.message, "HTTP 404: model 'x' not found");
  EXPECT_EQ(ErrorFromHttp(500, none, "", 0).code, kProviderUnavailable);
  EXPECT_TRUE(ErrorFromHttp(503, none, "", 0).retryable);
  auto e529 = ErrorFromHttp(
      529, none, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})",
      0);
  EXPECT_EQ(e529.code, kProviderUnavailable);
  EXPECT_TRUE(e529.retryable);
  EXPECT_EQ(e529.message, "HTTP 529: Overloaded");
  auto e400 = ErrorFromHttp(
      400, none,
      R"({"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}})",
      0);
  EXPECT_EQ(e400.code, kProviderContextOverflow);
  // Anthropic's words for the same, and its request-size limit.
  EXPECT_EQ(
      ErrorFromHttp(
          400, none,
          R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213000 tokens > 200000 maximum"}})",
          0)
          .code,
      kProviderContextOverflow);
  EXPECT_EQ(
      ErrorFromHttp(
          413, none,
          R"({"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}})",
          0)
          .code,
      kProviderContextOverflow);
  EXPECT_EQ(
      ErrorFromStream("invalid_request_error", "prompt is too long: 9 tokens > 8 maximum").code,
      kProviderContextOverflow);
  EXPECT_EQ(ErrorFromStream("invalid_request_error", "bad tool schema").code, kProviderBadRequest);
  EXPECT_EQ(ErrorFromHttp(400, none, R"({"error":{"message":"bad"}})", 0).code,
            kProviderBadRequest);
  auto html = ErrorFromHttp(502, none, "<html>\n<body>Bad gateway</body>\n</html>", 0);
  EXPECT_EQ(html.message, "HTTP 502: <html> <body>Bad gateway</body> </html>");
}

TEST(ProviderErrorsTest, RateLimitRetryAfterAndQuota) {
  HeaderMap h{{"retry-after", "7"}};
  auto e = ErrorFromHttp(429, h,
                         R"({"error":{"message":"Rate limit exceeded","type":"rate_limit_error",)"
                         R"("param":null,"code":"rate_limit_exceeded"}})",
                         0);
  EXPECT_EQ(e.code, kProviderRateLimited);
  EXPECT_TRUE(e.retryable);
  EXPECT_EQ(e.retry_after_ms, 7000);
  HeaderMap ms{{"retry-after-ms", "250"}, {"retry-after", "7"}};
  EXPECT_EQ(ErrorFromHttp(429, ms, "", 0).retry_after_ms, 250);
  auto quota = ErrorFromHttp(429, HeaderMap(),
                             R"({"error":{"message":"quota","code":"insufficient_quota"}})", 0);
  EXPECT_FALSE(quota.retryable);
  HeaderMap no{{"x-should-retry", "false"}};
  EXPECT_FALSE(ErrorFromHttp(500, no, "", 0).retryable);
}

}  // namespace
}  // namespace lousho::agent
