#pragma once
// Reading what a stalled trainer's tree is doing, before it is stopped: each process's state,
// wait channel, CPU time and memory from /proc; memory pressure; its memory cgroup; py-spy.

#include <sys/types.h>

#include <string>
#include <vector>

#include "oom/stall.hpp"

namespace sg {

oom::StallReadings read_stall(const std::vector<pid_t>& tree, pid_t leader);

// `py-spy dump` of each Python process, when py-spy is on PATH; empty otherwise.
std::string py_spy_dumps(const std::vector<oom::StalledProcess>& processes);

}  // namespace sg
