#pragma once
// What srun says about a step's tasks (DESIGN.md section 9). With --kill-on-bad-exit, srun reports
// the first task to fail, then tears the others down; it returns the status of the last one it
// saw (143 for a peer it terminated), so the first task's end is the cause and decides. Pure.

#include <optional>
#include <string>
#include <string_view>

#include "oom/classifier.hpp"

namespace sg::oom {

// "srun: error: node2: task 1: Exited with exit code 3", "... tasks 0-1: Killed", "... task 1: Out Of Memory".
struct SrunTaskEnd {
    std::string node;
    std::string tasks;  // "1", "0-1"
    ExitStatus status;  // unknown for "Out Of Memory"
    bool out_of_memory = false;
    std::string line;
    int exit_code() const;  // as a shell gives it: the code, or 128 + the signal (137 for Out Of Memory)
};
std::optional<SrunTaskEnd> parse_srun_task_end(std::string_view line);

// sparkguard node's line on a rank's death with memory evidence (src/supervise/node.hpp):
// "sparkguard-node: node2: memory-guard: MemAvailable 1.2 GB under the floor ... (task 1)", the kind
// one of kind_name's OOM kinds. srun may have put its --label before it.
struct NodeReport {
    std::string node;
    std::optional<std::string> task;  // srun's task number, from a trailing "(task N)"
    Kind kind = Kind::none;
    std::string evidence;
    std::string line;
};
std::optional<NodeReport> parse_node_report(std::string_view line);

// The first task end srun reported, and the first node's report of a memory death, once the step
// is over.
class SrunCause {
public:
    void feed(std::string_view line);
    const std::optional<SrunTaskEnd>& cause() const { return cause_; }
    const std::optional<NodeReport>& node_report() const { return node_report_; }

private:
    std::optional<SrunTaskEnd> cause_;
    std::optional<NodeReport> node_report_;
};

}  // namespace sg::oom
