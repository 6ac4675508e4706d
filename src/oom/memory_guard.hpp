#pragma once
// The memory guard's decisions (DESIGN.md section 10): system-wide MemAvailable against a floor.
// Under the floor twice in a row, or once with the driver's NV_ERR_NO_MEMORY since the attempt
// began: kill the trainer's tree (an OOM of kind memory-guard). Under the warning band: a
// memory-low event, at most once a second. And how soon to look again: the closer to the floor
// and the faster the pool falls, the sooner. Pure: readings in, a decision out.

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace sg::oom {

// --memory-floor: decimal GB ("6", "6.5") or a share of MemTotal ("5%"); "0" turns the guard off.
struct FloorSpec {
    double value = 0;
    bool percent = false;
    bool off() const { return value <= 0; }
    std::string text() const;  // as given: "6.5" or "5%"
    double bytes(double mem_total) const;
};
Result<FloorSpec> parse_floor(std::string_view text);

// The floor in bytes for a run: as given, else 5% of MemTotal on unified memory (a DGX Spark),
// else none (the guard is off; so is it for a floor of 0).
std::optional<double> resolve_floor(const std::optional<FloorSpec>& given, bool unified, double mem_total);

struct GuardSettings {
    double floor = 0;                  // bytes of MemAvailable the guard defends
    double warning = 0;                // bytes; memory-low events under it (default twice the floor)
    double assumed_fill_rate = 16e9;   // bytes/s a pool can fall at (a Spark: 34 -> 12.7 GiB in 1.5 s)
    double min_interval = 0.005;       // seconds between readings near the floor
    double max_interval = 1.0;         // ... and far from it
    double event_interval = 1.0;       // between memory-low events
};
GuardSettings guard_settings(double floor_bytes);

struct GuardReading {
    double time = 0;       // seconds, monotonic
    double available = 0;  // MemAvailable, bytes
    double total = 0;      // MemTotal, bytes
};

struct GuardDecision {
    bool kill = false;
    bool memory_low = false;        // write a memory-low event now
    double next_reading_in = 1;     // seconds
    double fall_rate = 0;           // bytes/s MemAvailable fell over the last half second or so (0 when rising)
    std::string evidence;           // when kill: what decided, in words
};

class MemoryGuard {
public:
    explicit MemoryGuard(GuardSettings settings) : settings_(settings) {}

    // One reading; `nvrm_no_memory` is the driver's NV_ERR_NO_MEMORY record, when one was seen
    // since the attempt began.
    GuardDecision feed(const GuardReading& reading, const std::optional<std::string>& nvrm_no_memory = std::nullopt);

    const GuardSettings& settings() const { return settings_; }
    std::optional<double> lowest_available() const { return lowest_; }

private:
    double interval(double available, double fall_rate) const;
    double fall_rate(const GuardReading& now) const;

    GuardSettings settings_;
    std::array<GuardReading, 64> recent_{};  // a ring of the latest readings, for the fall rate
    size_t count_ = 0;
    std::optional<double> lowest_;
    int under_ = 0;                       // consecutive readings under the floor
    std::optional<double> last_event_;    // when the last memory-low event was asked for
};

}  // namespace sg::oom
