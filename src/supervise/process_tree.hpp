#pragma once
// The trainer's process tree as /proc sees it: who belongs to it, what it holds, how to stop it.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace sg {

struct ProcStat {
    pid_t pid = 0;
    pid_t ppid = 0;
    pid_t pgid = 0;
    char state = '?';            // R, S, D, Z, T...
    std::string comm;
    double cpu_seconds = 0;      // utime + stime
};

std::optional<ProcStat> read_proc_stat(pid_t pid);
std::vector<ProcStat> list_processes();

// Every process below `root` by parent links (not `root` itself, nor the subtrees of `excluded`),
// plus the members of process group `pgid`. With sparkguard as root and child subreaper, that is
// the trainer's whole tree: orphans are re-parented to us, and a process that left the group
// stays a descendant. `excluded` holds sparkguard's own helpers (the nvidia-smi sampler).
std::vector<pid_t> descendants(pid_t root, pid_t pgid, const std::vector<pid_t>& excluded = {});
std::vector<pid_t> descendants(const std::vector<ProcStat>& table, pid_t root, pid_t pgid,
                               const std::vector<pid_t>& excluded = {});

// Resident memory (VmRSS) in bytes, 0 when the process is gone.
double rss_bytes(pid_t pid);

// Sends `sig` to the group and to each pid; ESRCH is not an error.
void signal_processes(pid_t pgid, const std::vector<pid_t>& pids, int sig);

// Reaps children that became ours as their parents died (we are a child subreaper), except those
// in `keep` (children whose exit status someone else waits for).
void reap_adopted_children(const std::vector<pid_t>& keep);

}  // namespace sg
