#pragma once
// What the kernel says about an out-of-memory kill, and the parsers for where it says it:
// /dev/kmsg records, dmesg lines, cgroup v2 memory.events, cgroup v1 memory.oom_control,
// /proc/vmstat, /proc/PID/cgroup and /proc/self/mountinfo. Pure: text in, values out.
// kernel_watch.hpp reads the files.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace sg::oom {

// One "Killed process PID (comm)" record of the kernel's OOM killer.
struct OomKillRecord {
    int pid = 0;
    std::string comm;
    bool memcg = false;  // a cgroup's limit was hit ("Memory cgroup out of memory"), not the machine's
    std::string text;    // the kernel's line, without the kmsg header or dmesg timestamp
};

// Everything the kernel said while the trainer ran, gathered by KernelWatch::collect().
struct KernelEvidence {
    std::vector<OomKillRecord> trainer_kills;   // records naming one of the trainer's processes
    std::vector<OomKillRecord> other_kills;     // OOM kills of processes not known as the trainer's
    bool kernel_log_read = false;               // /dev/kmsg or the syslog buffer was read
    std::optional<long long> cgroup_oom_kills;  // how far the cgroup's oom_kill counter moved
    std::string cgroup_counter;                 // the counter's file, e.g. .../memory.events
    std::optional<long long> system_oom_kills;  // how far /proc/vmstat oom_kill moved
    std::vector<std::string> unavailable;       // why a source could not be read, one line each
    std::vector<std::string> nvrm_records;      // the NVIDIA driver's unified-memory allocation failures

    // True when a source that would have recorded an OOM kill of the trainer was read.
    bool could_have_seen_a_kill() const { return kernel_log_read || cgroup_oom_kills.has_value(); }
};

// Follows kernel log lines (kmsg record texts or dmesg lines, in order) and returns the OOM
// killer's victims. Old kernels name the cgroup on the line before "Killed process", so it keeps
// that context from line to line.
class OomRecordScanner {
public:
    std::optional<OomKillRecord> feed(std::string_view line);

private:
    bool memcg_context_ = false;
};

// The NVIDIA driver's record of a failed allocation of unified memory: "NVRM: ..." naming
// NV_ERR_NO_MEMORY, _memdescAllocInternal or a failed IOVA mapping; on Jetson, the Tegra driver's
// ("nvgpu: ... DMA alloc FAILED") and the contiguous-memory pool's ("cma_alloc: ... alloc failed").
bool is_nvrm_memory_record(std::string_view line);

// A /dev/kmsg record: "PRIORITY,SEQUENCE,MICROSECONDS,FLAGS[,...];MESSAGE" then optional
// continuation lines (" KEY=VALUE"), which are dropped.
struct KmsgRecord {
    int priority = 0;  // facility*8 + level
    unsigned long long sequence = 0;
    unsigned long long microseconds = 0;
    std::string message;
};
Result<KmsgRecord> parse_kmsg_record(std::string_view record);

// The "oom_kill N" field of memory.events (v2), memory.oom_control (v1) or /proc/vmstat.
// `source` names the file in the error.
Result<long long> parse_oom_kill_counter(std::string_view text, std::string_view source);

// A process's cgroups from /proc/PID/cgroup: the v1 memory controller's path and the v2 path.
struct ProcCgroups {
    std::optional<std::string> memory_v1;
    std::optional<std::string> unified;
};
ProcCgroups parse_proc_cgroup(std::string_view text);

// A cgroup filesystem mount from /proc/self/mountinfo (only cgroup2 and v1 with the memory controller).
struct CgroupMount {
    std::string root;         // the mount's root inside the hierarchy ("/" unless namespaced)
    std::filesystem::path mount_point;
    bool unified = false;     // cgroup2
};
std::vector<CgroupMount> parse_cgroup_mounts(std::string_view mountinfo);

// The file holding the oom_kill counter of a process's memory cgroup: v1 memory.oom_control
// when a v1 memory hierarchy is mounted, else v2 memory.events. nullopt for a root cgroup (its
// counter is the whole machine's: /proc/vmstat says that) or when neither applies. Existence is
// not checked.
std::optional<std::filesystem::path> oom_counter_file(const ProcCgroups& cgroups,
                                                      const std::vector<CgroupMount>& mounts);

}  // namespace sg::oom
