#pragma once
// sparkguard node: one node's share of a job that `sparkguard run -- srun ...` fans out
// (DESIGN.md section 9). Under srun, on every node, it runs the rank's command with that node's
// memory guard, kernel evidence and telemetry; the trainer's output and its exit status pass
// through unchanged. On a death with memory evidence it writes one line on stderr that the
// top-level classifier reads (oom::parse_node_report):
//
//   sparkguard-node: node2: memory-guard: MemAvailable 1.2 GB under the floor 6.4 GB ...
//
// Its files go to RUN_DIR/nodes/<host>/ (thermal.csv, events.jsonl, attempts.jsonl) when the
// run directory is on this node (a shared filesystem), else to a node-local directory it names.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oom/memory_guard.hpp"
#include "util/result.hpp"

namespace sg {

struct NodeOptions {
    std::vector<std::string> command;
    std::optional<std::filesystem::path> run_dir;    // the top-level run's directory
    std::optional<oom::FloorSpec> memory_floor;      // else the platform's default
    double thermal_interval = 30;
    double grace_seconds = 30;
};

// Runs the command to its end; returns its exit code, or re-raises the signal that killed it
// (so srun reports the task as the trainer ended). Throws Failure (127/126) when the command
// cannot be run.
int run_node(const NodeOptions& options);

// `sparkguard node --probe`: one line on stdout with this node's memory budget, for the
// top-level run's smallest-node check:
//   sparkguard-node: node2: probe: {"platform": ..., "budget_gb": ..., "mem_total_gb": ..., ...}
int probe_node();

// One node's answer to the probe.
struct NodeBudget {
    std::string host;
    std::string platform;
    double budget_gb = 0;
    std::string source;  // how the node computed it
};
// A probe line (srun's --label may precede it); nullopt for any other line.
std::optional<NodeBudget> parse_node_probe(std::string_view line);

// Runs the command's srun with one task a node (srun_probe_command) and `sparkguard node --probe`
// on each: every node's budget, or why they could not be had (srun failed, timed out, a node
// answered nothing).
Result<std::vector<NodeBudget>> probe_node_budgets(const std::vector<std::string>& command, double timeout_seconds);

// This sparkguard's own path (what `run` puts before "node" on every node), else "sparkguard".
std::string own_path();

// This machine's name as Slurm knows it (the UTS hostname, up to the first dot).
std::string node_name();

// Where a node's files go for a run directory (RUN_DIR/nodes/<host>).
std::filesystem::path node_dir(const std::filesystem::path& run_dir, const std::string& host);

}  // namespace sg
