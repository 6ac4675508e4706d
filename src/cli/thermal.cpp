// sparkguard thermal: the telemetry sampler alone, writing thermal.csv until stopped.
#include <iostream>

#include "accounting/platform.hpp"
#include "cli/commands.hpp"
#include "supervise/session.hpp"
#include "supervise/telemetry_recorder.hpp"
#include "util/clock.hpp"
#include "util/errors.hpp"
#include "util/log.hpp"
#include "util/options.hpp"
#include "util/parse.hpp"

namespace sg::cli {
namespace {

const std::vector<OptionSpec> kOptions = {
    {"interval", "SECONDS", "seconds between rows (default 30; 1 at least)"},
    {"output", "FILE", "the CSV to append to (default thermal.csv)", 'o'},
    {"platform", "NAME", "platform profile for the power-cap rules (dgx-spark, ...); detected when absent"},
    {"quiet", "", "only warnings and errors", 'q'},
};

constexpr const char* kEpilog =
    "Columns: timestamp,elapsed_s,attempt,rung,step,gpu_temp_c,gpu_power_w,gpu_power_limit_w,\n"
    "gpu_sm_clock_mhz,gpu_util_pct,gpu_throttle,mem_total_gb,mem_available_gb,mem_free_gb,\n"
    "mem_cached_gb,trainer_rss_gb (attempt, rung, step and trainer_rss_gb stay empty here: they belong\n"
    "to sparkguard run). GPU readings come from NVML, else from one nvidia-smi child; an [N/A] field is\n"
    "an empty cell. Each row is on disk as soon as it is written. Power-cap and throttle findings go\n"
    "to stderr. Stop it with Ctrl-C or SIGTERM: exit 0; 2 for usage errors.\n";

}  // namespace

int thermal_main(Args args) {
    const ParsedArgs parsed = parse_args(kOptions, args);
    if (parsed.has("help")) {
        std::cout << format_help("sparkguard thermal [--interval SECONDS] [-o FILE]",
                                 "Samples GPU temperature, power and clocks plus the memory pool into a CSV until stopped.",
                                 kOptions, kEpilog);
        return kExitOk;
    }
    if (!parsed.positionals().empty()) throw UsageError(parsed.positionals()[0], "unexpected argument (see --help)");
    init_logging(parsed.has("quiet") ? Verbosity::quiet : Verbosity::normal);
    double interval = 30;
    if (auto text = parsed.get("interval")) {
        auto seconds = parse_duration(*text);
        if (!seconds || *seconds < 1) throw UsageError("--interval", "expected at least 1 second, got '" + *text + "'");
        interval = *seconds;
    }
    const std::string output = parsed.get("output").value_or("thermal.csv");
    Session session;  // from here on Ctrl-C ends the loop instead of the process
    const std::string platform =
        parsed.get("platform").value_or(accounting::detect_platform(accounting::load_platforms(), accounting::read_machine()).name);

    TelemetryRecorder recorder(session, output, interval, platform, epoch_seconds());  // elapsed_s from this start
    spdlog::info("sampling every {} s into {} (platform {}); Ctrl-C stops", interval, output, platform);
    while (!session.received_signal()) {
        auto meminfo = read_meminfo();
        for (const auto& event : recorder.tick({}, meminfo ? std::optional(*meminfo) : std::nullopt))
            spdlog::warn("{}: {}", event.name, event.fields.value("message", event.fields.dump()));
        session.sleep(std::min(interval, 1.0));
    }
    spdlog::info("stopped; {}", recorder.summary().dump());
    return kExitOk;
}

}  // namespace sg::cli
