#include "oom/death.hpp"

#include <algorithm>

namespace sg::oom {

bool under_memory_pressure(const std::vector<MemoryReading>& recent) {
    return std::any_of(recent.begin(), recent.end(), [](const MemoryReading& r) {
        return r.total > 0 && r.available < kPressureFraction * r.total;
    });
}

Verdict judge_death(Verdict verdict, const ExitStatus& status, const std::vector<MemoryReading>& recent,
                    bool training_started) {
    if (verdict.oom || verdict.competing_cause || !status.sigkill() || !under_memory_pressure(recent)) return verdict;
    verdict.oom = true;
    verdict.kind = Kind::sigkill_probable;
    verdict.confidence = Confidence::probable;
    verdict.phase = training_started ? Phase::train : Phase::load;
    verdict.reason = "killed by SIGKILL while the memory pool was nearly exhausted";
    return verdict;
}

}  // namespace sg::oom
