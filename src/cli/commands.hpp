#pragma once
// The subcommands. Each lives in its own file: parse options, call the core, print.

#include <span>
#include <string>
#include <string_view>

namespace sg::cli {

using Args = std::span<const std::string>;

struct Command {
    std::string_view name;
    std::string_view summary;
    int (*main)(Args args);
};

std::span<const Command> commands();

// Dispatches argv to a subcommand; returns the process exit code. Throws sg::Failure.
int dispatch(int argc, char** argv);

int plan_main(Args args);
int run_main(Args args);
int diagnose_main(Args args);
int preflight_main(Args args);
int thermal_main(Args args);
int report_main(Args args);
int history_main(Args args);
int drop_caches_main(Args args);
int node_main(Args args);

}  // namespace sg::cli
