#pragma once
// The death judgement's last rule (DESIGN.md section 5): a SIGKILL that neither the trainer's
// output nor the kernel explains is probably the OOM killer when the memory pool was nearly dry
// just before. Pure: the classifier's verdict, the exit status and memory readings in, a verdict out.

#include <vector>

#include "oom/classifier.hpp"

namespace sg::oom {

struct MemoryReading {
    double total = 0;      // MemTotal, bytes (0: unknown)
    double available = 0;  // MemAvailable, bytes
};

constexpr double kPressureFraction = 0.05;  // MemAvailable under 5% of MemTotal is memory pressure

// Whether any of the last readings had MemAvailable under kPressureFraction of MemTotal.
bool under_memory_pressure(const std::vector<MemoryReading>& recent);

// The verdict from the output and the kernel, made sigkill-probable (confidence probable) when it
// found no OOM, the trainer died of SIGKILL and memory was under pressure; otherwise unchanged. A
// SIGKILL the classifier put down to a competing cause (a stop from outside, an error just before it)
// stays so: a pool that was low as well does not make that kill the OOM killer's.
Verdict judge_death(Verdict verdict, const ExitStatus& status, const std::vector<MemoryReading>& recent,
                    bool training_started);

}  // namespace sg::oom
