#include "oom/host_loss.hpp"

#include <algorithm>

#include "util/strings.hpp"

namespace sg::oom {

namespace {

std::optional<PoolRecord> lowest_in_band(const HostLossFacts& facts, double end) {
    std::optional<PoolRecord> lowest;
    for (const auto& r : facts.records) {
        if (r.time < end - kHostLossWindow || r.available_gb >= facts.warning_gb) continue;
        if (!lowest || r.available_gb < lowest->available_gb) lowest = r;
    }
    return lowest;
}

}  // namespace

HostLossJudgement judge_host_loss(const HostLossFacts& facts) {
    HostLossJudgement j;
    double end = facts.last_seen.value_or(0);
    for (const auto& r : facts.records) end = std::max(end, r.time);
    if (facts.warning_gb > 0)
        if (auto low = lowest_in_band(facts, end)) {
            j.oom = j.memory = true;
            j.evidence = "the host was lost with the pool in the memory guard's warning band: MemAvailable " +
                         fixed(low->available_gb, 2) + " GB (" + low->source + ", " + fixed(end - low->time, 1) +
                         " s before the last record) under " + fixed(facts.warning_gb, 2) + " GB";
            return j;
        }
    if (facts.earlier_losses > 0) {
        j.oom = true;
        j.evidence = "the host was lost again on the same configuration (" + std::to_string(facts.earlier_losses + 1) +
                     " times), without memory records in its last " + fixed(kHostLossWindow, 0) + " s";
        return j;
    }
    j.evidence = "the host was lost (a new boot) without memory records in its last " + fixed(kHostLossWindow, 0) +
                 " s: relaunching the same configuration, resumed, once";
    return j;
}

}  // namespace sg::oom
