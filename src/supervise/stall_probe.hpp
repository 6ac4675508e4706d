#pragma once
// Reading what a stalled trainer's tree is doing, before it is stopped: each process's state,
// wait channel, CPU time and memory from /proc; memory pressure; its memory cgroup; py-spy.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "oom/stall.hpp"

namespace sg {

oom::StallReadings read_stall(const std::vector<pid_t>& tree, pid_t leader);

// The usage and limit of the memory cgroup whose oom_kill counter is `counter` (oom_counter_file):
// memory.current and memory.max beside a v2 memory.events, memory.usage_in_bytes and
// memory.limit_in_bytes beside a v1 memory.oom_control. No limit when unlimited.
void read_cgroup_memory(const std::filesystem::path& counter, oom::StallReadings& readings);

// `py-spy dump` of each Python process, when py-spy is on PATH; empty otherwise.
std::string py_spy_dumps(const std::vector<oom::StalledProcess>& processes);

// RUN_DIR/stall-N.txt: the judgement, each process's state, wait channel, CPU time and memory,
// the memory readings, the last output lines and the py-spy dumps.
std::string format_stall_report(int attempt, const oom::StallJudgement& judgement, const oom::StallReadings& readings,
                                const std::vector<std::string>& last_lines, const std::string& py_spy);

}  // namespace sg
