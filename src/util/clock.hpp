#pragma once
// One clock and one timestamp format for train.log, thermal.csv and events.jsonl, so they join.

#include <chrono>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace sg {

using WallTime = std::chrono::system_clock::time_point;

// RFC 3339 with milliseconds and the local UTC offset: "2026-11-29T08:41:07.123+00:00".
std::string rfc3339(WallTime t);
inline std::string rfc3339_now() { return rfc3339(std::chrono::system_clock::now()); }

// A timestamp read back from a file: the instant, and the offset of the clock that wrote it (so a
// report can speak the run's local time wherever it is read).
struct Timestamp {
    double epoch_s = 0;          // seconds since 1970-01-01T00:00:00Z
    int utc_offset_minutes = 0;  // +60 for "+01:00"
};

// The inverse of rfc3339(), also accepting "Z", any number of fraction digits, or none.
Result<Timestamp> parse_rfc3339(std::string_view text);

// Seconds on the monotonic clock, for durations and timeouts.
double monotonic_seconds();
// Seconds since 1970-01-01T00:00:00Z on the wall clock: durations that span a restart.
double epoch_seconds();

}  // namespace sg
