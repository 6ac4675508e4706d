#pragma once
// events.jsonl read back: the events sparkguard (and the telemetry sampler) wrote, in order.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/clock.hpp"
#include "util/result.hpp"

namespace sg {

struct RunEvent {
    Timestamp time;
    std::string name;        // "launch", "oom", "rung", "throttle", ...
    nlohmann::json fields;   // the whole object, "time" and "event" included
    size_t line = 0;
};

struct RunEvents {
    std::vector<RunEvent> events;
    std::vector<std::string> warnings;  // torn lines
};

// The error names the file, the line and the field: not JSON, not an object, no "time" or
// "event", a time that is not RFC 3339. Torn lines (see util/record_lines.hpp) are warnings.
Result<RunEvents> parse_run_events(std::string_view text, std::string_view file_name = "events.jsonl");

}  // namespace sg
