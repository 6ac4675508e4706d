// sparkguard preflight: environment checks plus the workload's headroom, into env-report.json.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/workload_options.hpp"
#include "preflight/preflight.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"

namespace sg::cli {
namespace {

std::vector<OptionSpec> preflight_options() {
    std::vector<OptionSpec> specs = workload_options();
    specs.push_back({"output", "PATH", "where to write env-report.json (default ./env-report.json)", 'o'});
    specs.push_back({"json", "", "print the report as JSON instead of the table"});
    return specs;
}

constexpr const char* kEpilog =
    "Checks: hardware identity and the platform it implies; G1 the trainer's PyTorch against the\n"
    "driver's CUDA; G3 memory from /proc/meminfo (page cache, huge pages); G4 GPU temperature and\n"
    "power now; G6 other GPU tenants (vLLM, Ollama, other trainers); G9 container or bare metal;\n"
    "G10 multi-machine settings (tensor parallelism across machines fails); disk space where\n"
    "checkpoints go; whether caches can be dropped; and, with --model or --params, whether the\n"
    "workload fits. COMMAND (after --) is the trainer's: its Python is asked about PyTorch, its\n"
    "flags and config files about parallelism, its output directory about disk space.\n\n"
    "exit status: 0 ready or ready-with-warnings, 3 blocked, 2 bad input.\n";

}  // namespace

int preflight_main(Args args) {
    const auto specs = preflight_options();
    const ParsedArgs parsed = parse_args(specs, args);
    if (parsed.has("help")) {
        std::cout << format_help("sparkguard preflight [WORKLOAD OPTIONS] [-o PATH] [--json] [-- COMMAND...]",
                                 "Checks this machine and the workload before a run; writes env-report.json.", specs, kEpilog);
        return kExitOk;
    }
    if (!parsed.positionals().empty()) throw UsageError(parsed.positionals()[0], "unexpected argument (COMMAND goes after --)");
    const preflight::PreflightRequest request{plan_request_from_args(parsed), parsed.rest()};
    const nlohmann::json report = preflight::run_preflight(request);
    const std::string output = parsed.get("output").value_or("env-report.json");
    if (auto written = write_file_atomic(output, report.dump(2) + "\n"); !written)
        throw UsageError("--output", written.error().message);
    if (parsed.has("json")) std::cout << report.dump(2) << "\n";
    else std::cout << preflight::format_env_report(report) << "report: " << output << "\n";
    return preflight::preflight_exit_code(report);
}

}  // namespace sg::cli
