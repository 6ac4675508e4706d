#pragma once
// After the host died with the trainer (a unified pool run dry can wedge a DGX Spark until a
// power cycle): what the lost attempt's last records say (DESIGN.md section 10). The pool within
// the memory guard's warning band in the host's last 10 s: an OOM (kind host-lost-memory), the
// ladder goes on. Otherwise the same configuration is relaunched once; a second loss on it counts
// as OOM too. Pure: records in, a judgement out.

#include <optional>
#include <string>
#include <vector>

namespace sg::oom {

struct PoolRecord {
    double time = 0;          // seconds since the epoch
    double available_gb = 0;  // MemAvailable
    std::string source;       // "memory-low event", "thermal.csv"
};

struct HostLossFacts {
    std::vector<PoolRecord> records;   // the lost attempt's memory-low events and thermal rows
    std::optional<double> last_seen;   // the newest time anything of the run was written
    double warning_gb = 0;             // the memory guard's warning band (twice the floor); 0: unknown
    int earlier_losses = 0;            // attempts lost with the host before, on the same configuration
};

struct HostLossJudgement {
    bool oom = false;
    bool memory = false;   // the pool was in the warning band at the end (else: a second loss)
    std::string evidence;  // in words
};

constexpr double kHostLossWindow = 10;  // seconds before the host's last record that count

HostLossJudgement judge_host_loss(const HostLossFacts& facts);

}  // namespace sg::oom
