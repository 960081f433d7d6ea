// Retry policy: backoff with jitter and Retry-After parsing.
#include "support/http/retry.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace lousho::agent {

long BackoffDelayMs(const RetryPolicy& policy, int retry, double jitter) {
  double base = static_cast<double>(std::max(0L, policy.base_ms));
  double raw = base * std::pow(2.0, std::max(0, retry - 1));
  double capped = std::min(raw, static_cast<double>(std::max(0L, policy.max_delay_ms)));
  jitter = std::clamp(jitter, 0.0, 1.0);
  return static_cast<long>(capped * (0.75 + 0.25 * jitter));
}

long RetryDelayMs(const RetryPolicy& policy, int retry, long server_delay_ms, double jitter) {
  if (server_delay_ms >= 0) {
    if (server_delay_ms > policy.max_delay_ms) return -1;
    return server_delay_ms;
  }
  return BackoffDelayMs(policy, retry, jitter);
}

namespace {

// Days from 1970-01-01 to the given civil date (proleptic Gregorian), as in H. Hinnant's
// algorithms; avoids timegm(), which is not standard C++.
long long DaysFromCivil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

long ParseHttpDateMs(std::string_view value, long long now_ms) {
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" (the only form servers send today).
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  size_t comma = value.find(',');
  if (comma == std::string_view::npos) return -1;
  std::string rest(value.substr(comma + 1));
  int day = 0, year = 0, hh = 0, mm = 0, ss = 0;
  char mon[4] = {0};
  // Field widths keep sscanf from overflowing an int (undefined) on a long run of digits.
  if (std::sscanf(rest.c_str(), " %2d %3s %4d %2d:%2d:%2d", &day, mon, &year, &hh, &mm, &ss) != 6) {
    return -1;
  }
  int month = -1;
  for (int i = 0; i < 12; ++i) {
    if (std::string_view(mon) == kMonths[i]) month = i + 1;
  }
  if (month < 0 || day < 1 || day > 31 || year < 1970 || hh < 0 || hh > 23 || mm < 0 || mm > 59 ||
      ss < 0 || ss > 60) {
    return -1;
  }
  long long secs =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
      hh * 3600LL + mm * 60LL + ss;
  long long delta = secs * 1000 - now_ms;
  return static_cast<long>(std::max(0LL, delta));
}

}  // namespace

long ParseRetryAfterMs(std::string_view value, long long now_ms) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  if (value.empty()) return -1;
  if (value.find_first_not_of("0123456789.") == std::string_view::npos) {
    std::string s(value);
    char* end = nullptr;
    double secs = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || secs < 0 || secs > 1e7) return -1;
    return static_cast<long>(secs * 1000.0);
  }
  return ParseHttpDateMs(value, now_ms);
}

long long NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace lousho::agent
