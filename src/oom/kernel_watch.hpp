#pragma once
// The thin reader behind KernelEvidence. Started when the trainer is launched, it remembers where
// the kernel log and the OOM-kill counters stood; collect() reads what came after, once the
// trainer is dead. Nothing here throws: a source that cannot be read becomes a line in
// KernelEvidence::unavailable, and the classifier weighs the rest.
//
//   auto watch = KernelWatch::start(child_pid);     // right after spawning the trainer
//   ... every few seconds while it runs: watch.poll();
//   KernelEvidence kernel = watch.collect(pids);    // after waitpid; pids: every process of its tree seen

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "oom/kernel_evidence.hpp"

namespace sg::oom {

class KernelWatch {
public:
    // Where the kernel's files are; tests point these at fakes.
    struct Sources {
        std::filesystem::path kmsg = "/dev/kmsg";
        std::filesystem::path proc = "/proc";
        bool syslog_fallback = true;  // read the ring buffer with syslog(2) when kmsg cannot be opened
    };

    static KernelWatch start(int trainer_pid) { return start(trainer_pid, Sources{}); }
    static KernelWatch start(int trainer_pid, const Sources& sources);

    KernelWatch(KernelWatch&& other) noexcept;
    KernelWatch& operator=(KernelWatch&&) = delete;
    KernelWatch(const KernelWatch&) = delete;
    ~KernelWatch();

    // Reads the kernel log records that arrived since the last call and keeps the OOM-kill ones.
    // Non-blocking and cheap: call it now and then in a long run, so that a busy ring buffer
    // cannot overwrite a record before collect().
    void poll();

    // Everything the kernel said since start() about OOM kills, sorted by whether the victim is
    // one of `trainer_pids`.
    KernelEvidence collect(const std::set<int>& trainer_pids);

    // The driver's first NV_ERR_NO_MEMORY record since start(), read so far (poll() reads more).
    std::optional<std::string> nvrm_no_memory() const;

    // The cgroup counter file being watched, if any (for messages and tests).
    const std::optional<std::filesystem::path>& cgroup_counter() const { return cgroup_counter_; }

private:
    KernelWatch() = default;
    void open_kernel_log(const Sources& sources);
    void watch_cgroup(int trainer_pid, const Sources& sources);
    void scan(std::string_view line);
    std::vector<std::string> syslog_lines_after_mark();

    int kmsg_fd_ = -1;
    bool syslog_ = false;
    std::string syslog_mark_;  // the syslog buffer's last line at start()
    OomRecordScanner scanner_;
    std::vector<OomKillRecord> kills_;
    std::vector<std::string> nvrm_;  // the driver's unified-memory allocation failures, the first few
    std::optional<std::filesystem::path> cgroup_counter_;
    std::optional<long long> cgroup_start_;
    std::filesystem::path vmstat_;
    std::optional<long long> vmstat_start_;
    std::vector<std::string> unavailable_;
};

}  // namespace sg::oom
