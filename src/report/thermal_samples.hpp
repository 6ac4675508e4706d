#pragma once
// thermal.csv read back for the report (DESIGN.md section 6). Columns are found by the header's
// names, so an older or newer file with other columns still reads; an empty cell (a driver's
// [N/A], no GPU) is an absent value.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/clock.hpp"
#include "util/result.hpp"

namespace sg {

struct ThermalSample {
    Timestamp time;
    std::optional<int> attempt;
    std::optional<long long> step;
    std::optional<double> temp_c;
    std::optional<double> power_w;
    std::optional<double> power_limit_w;
    std::optional<double> mem_total_gb;
    std::optional<double> mem_available_gb;
    std::optional<double> trainer_rss_gb;
    std::string throttle;  // the gpu_throttle cell as written ("none", "sw_power_cap|hw_slowdown", "")

    // Pool memory in use: total minus available, when both were read.
    std::optional<double> pool_used_gb() const;
};

struct ThermalSamples {
    std::vector<ThermalSample> samples;
    std::vector<std::string> warnings;  // torn rows
};

// The error names the file, the line and the column: no header with a `timestamp` column, a row
// with more cells than the header, a value that is not a number or a timestamp. A row with fewer
// cells than the header (the writer closes a torn row before appending) and a torn last line are
// warnings.
Result<ThermalSamples> parse_thermal_samples(std::string_view text, std::string_view file_name = "thermal.csv");

}  // namespace sg
