// sparkguard node: what `sparkguard run -- srun ...` runs on every node, after srun's options.
#include <iostream>

#include "cli/commands.hpp"
#include "supervise/node.hpp"
#include "util/errors.hpp"
#include "util/log.hpp"
#include "util/options.hpp"
#include "util/parse.hpp"

namespace sg::cli {
namespace {

const std::vector<OptionSpec> kNodeOptions = {
    {"run-dir", "DIR", "the top-level run's directory: files go to DIR/nodes/<host>/ when DIR is on this node"},
    {"memory-floor", "GB|N%", "kill the command when MemAvailable falls under this (default 5% of MemTotal on unified memory, else off; 0: off)"},
    {"thermal-interval", "SECONDS", "seconds between thermal.csv rows (default 30; 1 at least)"},
    {"grace", "SECONDS", "after SIGTERM, how long the command's tree has before SIGKILL (default 30)"},
    {"probe", "", "print this node's memory budget as one line and exit (the run's smallest-node check)"},
};

constexpr const char* kEpilog =
    "sparkguard run inserts `sparkguard node --run-dir DIR --` after srun's options (unless the command\n"
    "already has it), so every rank runs under its node's memory guard and telemetry. The command's\n"
    "output passes through unchanged. On a death with memory evidence (the guard's kill, the kernel's\n"
    "OOM kill of one of its processes, the NVIDIA driver's NV_ERR_NO_MEMORY) it writes one line on\n"
    "stderr: \"sparkguard-node: HOST: KIND: EVIDENCE\", which the top-level run reads. Files:\n"
    "DIR/nodes/HOST/thermal.csv, events.jsonl and attempts.jsonl (a line per attempt that ended).\n\n"
    "exit status: the command's; when a signal killed it, sparkguard node ends by the same signal.\n";

}  // namespace

int node_main(Args args) {
    const ParsedArgs parsed = parse_args(kNodeOptions, args, /*stop_at_first_positional=*/true);
    if (parsed.has("help")) {
        std::cout << format_help("sparkguard node [OPTIONS] -- COMMAND [ARGS...]\n       sparkguard node --probe",
                                 "One node's share of a job under srun: memory guard, kernel evidence, telemetry.",
                                 kNodeOptions, kEpilog);
        return kExitOk;
    }
    init_logging(Verbosity::quiet);  // the rank's output is the user's: sparkguard adds only warnings
    if (parsed.has("probe")) {
        if (!parsed.rest().empty()) throw UsageError("--probe", "takes no COMMAND");
        return probe_node();
    }
    NodeOptions options;
    options.command = parsed.rest();
    if (auto dir = parsed.get("run-dir")) options.run_dir = *dir;
    if (auto floor = parsed.get("memory-floor")) {
        auto spec = oom::parse_floor(*floor);
        if (!spec) throw UsageError("--memory-floor", spec.error().message);
        options.memory_floor = *spec;
    }
    if (auto text = parsed.get("thermal-interval")) {
        auto seconds = parse_duration(*text);
        if (!seconds || *seconds < 1) throw UsageError("--thermal-interval", "expected at least 1 second, got '" + *text + "'");
        options.thermal_interval = *seconds;
    }
    if (auto grace = parsed.get("grace")) {
        auto seconds = parse_duration(*grace);
        if (!seconds) throw UsageError("--grace", seconds.error().message);
        options.grace_seconds = *seconds;
    }
    return run_node(options);
}

}  // namespace sg::cli
