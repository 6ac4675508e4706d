#include "cli/commands.hpp"

#include <algorithm>
#include <iostream>
#include <vector>

#include "util/errors.hpp"
#include "util/log.hpp"

namespace sg::cli {
namespace {

const std::vector<Command> kCommands = {
    {"run", "supervise a training command: budget check, OOM ladder, telemetry, report", run_main},
    {"plan", "estimate a workload's memory against the budget; --fit finds what fits", plan_main},
    {"history", "list the runs measured on this machine that correct plan's estimate", history_main},
    {"preflight", "check this machine and the workload before a run; writes env-report.json", preflight_main},
    {"thermal", "sample GPU temperature, power and the memory pool into a CSV until stopped", thermal_main},
    {"diagnose", "classify a finished run's log: out of memory, of which kind, or not", diagnose_main},
    {"report", "summarise a run directory; --svg draws the night as a timeline", report_main},
    {"drop-caches", "sync, then drop the page cache (as root; run uses it through sudo -n)", drop_caches_main},
    {"node", "one node's share of a job under srun (inserted by run): guard, kernel evidence, telemetry", node_main},
};

void print_usage(std::ostream& out) {
    out << "usage: sparkguard COMMAND [OPTIONS]\n\n"
           "Supervises LLM fine-tuning runs: checks the memory budget before the trainer starts,\n"
           "relaunches it down an OOM ladder when it runs out of memory, and records telemetry.\n\n"
           "commands:\n";
    for (const auto& command : kCommands)
        out << "  " << command.name << std::string(13 - command.name.size(), ' ') << command.summary << "\n";
    out << "\nRun 'sparkguard COMMAND --help' for a command's options; 'man sparkguard' for the whole story.\n";
}

}  // namespace

std::span<const Command> commands() { return kCommands; }

int dispatch(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    init_logging();
    if (args.empty()) {
        print_usage(std::cerr);
        return kExitUsage;
    }
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        print_usage(std::cout);
        return kExitOk;
    }
    if (args[0] == "--version") {
        std::cout << "sparkguard " << SPARKGUARD_VERSION << "\n";
        return kExitOk;
    }
    auto it = std::find_if(kCommands.begin(), kCommands.end(),
                           [&](const Command& c) { return c.name == args[0]; });
    if (it == kCommands.end()) throw UsageError(args[0], "unknown command (see sparkguard --help)");
    return it->main(Args(args).subspan(1));
}

}  // namespace sg::cli
