#pragma once
// One clock and one timestamp format for train.log, thermal.csv and events.jsonl, so they join.

#include <chrono>
#include <string>

namespace sg {

using WallTime = std::chrono::system_clock::time_point;

// RFC 3339 with milliseconds and the local UTC offset: "2026-11-29T08:41:07.123+00:00".
std::string rfc3339(WallTime t);
inline std::string rfc3339_now() { return rfc3339(std::chrono::system_clock::now()); }

// Seconds on the monotonic clock, for durations and timeouts.
double monotonic_seconds();

}  // namespace sg
