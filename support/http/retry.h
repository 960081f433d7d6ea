// Retry policy for transient provider failures: backoff with jitter and Retry-After parsing.
#pragma once

#include <string_view>

namespace lousho::agent {

struct RetryPolicy {
  int max_retries = 3;        // retries after the first attempt
  long base_ms = 1000;        // first backoff step
  long max_delay_ms = 60000;  // longest wait we accept (computed or asked for by the server)
};

// Milliseconds to wait before retry number `retry` (1-based): base * 2^(retry-1), capped at
// max_delay_ms, scaled by `jitter` in [0, 1) to 75%..100% so that many clients do not retry in
// lock step.
long BackoffDelayMs(const RetryPolicy& policy, int retry, double jitter);

// Chooses the wait before retry `retry`, or returns -1 when the server asked for a wait longer
// than policy.max_delay_ms (the caller then fails at once rather than hang for minutes).
// `server_delay_ms` is the Retry-After value, -1 when none.
long RetryDelayMs(const RetryPolicy& policy, int retry, long server_delay_ms, double jitter);

// Parses a Retry-After value: delta seconds ("7", "1.5") or an HTTP date
// ("Wed, 21 Oct 2015 07:28:00 GMT"), relative to `now_ms` (Unix epoch ms). -1 when unparsable.
long ParseRetryAfterMs(std::string_view value, long long now_ms);

// Current wall-clock time in Unix epoch milliseconds.
long long NowUnixMs();

}  // namespace lousho::agent
