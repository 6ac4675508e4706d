#pragma once
// A trainer that stops writing and stops stepping has stalled. Whether the stall was memory
// (an OOM of kind memory-stall: a wedged pool, a library spinning on a failed mmap) or a plain
// hang is decided here from readings taken at the moment. Pure: values in, a judgement out.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sg::oom {

struct StalledProcess {
    int pid = 0;
    std::string comm;
    char state = '?';                    // R running (spinning?), S sleeping, D in the kernel...
    std::string wchan;                   // where in the kernel it waits ("0" or empty when running)
    double cpu_seconds = 0;
    double vm_size = 0;                  // bytes of address space
    double rss = 0;                      // bytes resident
    std::optional<double> as_limit;      // RLIMIT_AS in bytes, when limited
};

struct StallReadings {
    double quiet_seconds = 0;                    // how long without output or a new step
    std::vector<StalledProcess> processes;
    std::optional<double> min_available_fraction;  // lowest MemAvailable/MemTotal in the last samples
    std::optional<double> psi_full_avg10;          // /proc/pressure/memory "full avg10" (percent)
    std::optional<double> cgroup_usage;            // bytes, the trainer's memory cgroup
    std::optional<double> cgroup_limit;            // bytes, when the cgroup has a limit
};

struct StallThresholds {
    double available_fraction = 0.03;  // MemAvailable under 3% of the pool
    double psi_full = 10;              // some task stalled on memory 10% of the last 10 s
    double near_limit = 0.97;          // address space or cgroup usage at 97% of its limit
};

struct StallJudgement {
    bool memory = false;   // an OOM of kind memory-stall; otherwise a hang
    std::string evidence;  // the reading that decided, in words
};

StallJudgement judge_stall(const StallReadings& readings, const StallThresholds& thresholds = {});

// "Max address space  1000000000  1000000000  bytes" from /proc/PID/limits; nullopt when unlimited.
std::optional<double> parse_address_space_limit(std::string_view limits);
// "full avg10=12.50 ..." from /proc/pressure/memory.
std::optional<double> parse_psi_full_avg10(std::string_view pressure);
// A "Key:  N kB" field of /proc/PID/status, in bytes.
std::optional<double> parse_status_bytes(std::string_view status, std::string_view key);

nlohmann::json to_json(const StallReadings& readings);

}  // namespace sg::oom
