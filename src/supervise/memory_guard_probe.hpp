#pragma once
// The memory guard on the event loop (DESIGN.md section 10): reads MemAvailable as often as
// oom::MemoryGuard asks, woken sooner by a PSI trigger on /proc/pressure/memory where the kernel
// has one; writes fsync'd memory-low events; when the guard decides, kills the trainer's tree at
// once. Its hot path allocates nothing: /proc/meminfo is read into a fixed buffer.

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <memory>

#include "oom/kernel_watch.hpp"
#include "oom/memory_guard.hpp"
#include "report/event_log.hpp"
#include "supervise/session.hpp"

namespace sg {

class MemoryGuardProbe {
public:
    struct Hooks {
        std::function<void(const std::string& reason)> kill;          // SIGKILL the trainer's tree now
        std::function<std::optional<std::string>()> nvrm_no_memory;   // the driver's record since the attempt began
    };

    MemoryGuardProbe(const oom::GuardSettings& settings, const EventLog& events, int attempt, Hooks hooks);
    ~MemoryGuardProbe();
    MemoryGuardProbe(const MemoryGuardProbe&) = delete;
    MemoryGuardProbe& operator=(const MemoryGuardProbe&) = delete;

    // One reading and its consequences; the seconds until the next (AttemptSpec::sampler).
    double sample();
    // The PSI trigger's descriptor, -1 when the kernel has none (AttemptSpec::sampler_wake_fd).
    int wake_fd() const { return psi_fd_; }

    bool fired() const { return fired_.has_value(); }
    const std::string& evidence() const { return evidence_; }
    // What it saw: the readings at the kill (when it fired), the lowest MemAvailable, how often.
    nlohmann::json measured() const;

private:
    void open_psi_trigger();

    oom::MemoryGuard guard_;
    const EventLog& events_;
    int attempt_;
    Hooks hooks_;
    int meminfo_fd_ = -1;
    int psi_fd_ = -1;
    long readings_ = 0;
    std::optional<nlohmann::json> fired_;
    std::string evidence_;
};

// The guard for one attempt on `session`, installed as `spec`'s sampler: it kills the attempt's
// whole tree at once, and asks `watch` (the attempt's kernel log, once started) for the driver's
// NV_ERR_NO_MEMORY record.
std::unique_ptr<MemoryGuardProbe> arm_memory_guard(double floor_bytes, const EventLog& events, int attempt, Session& session,
                                                   std::optional<oom::KernelWatch>& watch, AttemptSpec& spec);

// Keeps sparkguard's own pages in memory (mlockall), best effort: root locks what it maps later
// too; anyone else what is mapped now, as it is touched (RLIMIT_MEMLOCK would fail later maps).
// Returns what was done, in words.
std::string lock_own_memory();

// MemTotal and MemAvailable in bytes from /proc/meminfo text; nullopt when either is missing.
struct PoolReading {
    double total = 0;
    double available = 0;
};
std::optional<PoolReading> parse_pool(std::string_view meminfo);

}  // namespace sg
