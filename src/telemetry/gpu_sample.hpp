#pragma once
// One reading of one GPU, whichever source took it (NVML or nvidia-smi), and how the readings of
// several GPUs fold into the one row of thermal.csv. An absent value ([N/A], NOT_SUPPORTED) is an
// empty optional, never a zero.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sg::telemetry {

struct GpuSample {
    int index = 0;
    std::optional<double> temp_c;
    std::optional<double> power_w;
    std::optional<double> power_limit_w;  // the enforced limit; GB10 reports none
    std::optional<double> sm_clock_mhz;
    std::optional<double> util_pct;
    std::optional<std::uint64_t> throttle;  // NVML clocks event (throttle) reasons, active bits
};

// What a thermal.csv row says about all GPUs together:
//   temperature   the hottest GPU's (the one that throttles first)
//   power         the sum of the draws that were reported
//   power limit   the sum of the limits, only when every GPU that reports a draw reports its limit
//                 (a partial sum next to a full sum of draws would read as a false cap)
//   SM clock      the slowest GPU's (a synchronous job runs at its slowest GPU's pace)
//   utilisation   the mean over the GPUs that report it
//   throttle      the union of every GPU's active reasons
struct GpuAggregate {
    std::optional<double> temp_c;
    std::optional<double> power_w;
    std::optional<double> power_limit_w;
    std::optional<double> sm_clock_mhz;
    std::optional<double> util_pct;
    std::optional<std::uint64_t> throttle;
};

GpuAggregate aggregate(const std::vector<GpuSample>& gpus);

// NVML's reason bits by name: "gpu_idle", "sw_power_cap", "hw_thermal_slowdown", ...
// "" when absent, "none" for an empty mask, names joined by '|' (unknown bits as 0x...).
std::string throttle_text(std::optional<std::uint64_t> mask);
// The inverse of throttle_text; nullopt for "" and for a name it does not know.
std::optional<std::uint64_t> parse_throttle_text(std::string_view text);

// Bits that mean the clocks are held down by power or heat (not idle, not a user setting).
constexpr std::uint64_t kThrottlePowerBits = 0x4 | 0x80;       // sw_power_cap, hw_power_brake_slowdown
constexpr std::uint64_t kThrottleThermalBits = 0x20 | 0x40;    // sw/hw thermal slowdown
constexpr std::uint64_t kThrottleHwSlowdown = 0x8;

}  // namespace sg::telemetry
