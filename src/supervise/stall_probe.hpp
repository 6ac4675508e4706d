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

// RUN_DIR/stall-N.txt: the judgement, each process's state, wait channel, CPU time and memory,
// the memory readings, the last output lines and the py-spy dumps.
std::string format_stall_report(int attempt, const oom::StallJudgement& judgement, const oom::StallReadings& readings,
                                const std::vector<std::string>& last_lines, const std::string& py_spy);

}  // namespace sg
