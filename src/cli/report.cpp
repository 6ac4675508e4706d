// sparkguard report RUN_DIR [--json] [--svg FILE]: the picture of a night's run.
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "report/run_dir_reader.hpp"
#include "report/run_summary.hpp"
#include "report/summary_text.hpp"
#include "report/timeline.hpp"
#include "report/timeline_svg.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/options.hpp"

namespace sg::cli {
namespace {

const std::vector<OptionSpec> kOptions = {
    {"json", "", "print the summary as one JSON object instead of text"},
    {"svg", "FILE", "also draw the run as an SVG timeline into FILE ('-' for standard output)"},
};

constexpr std::string_view kUsage = "sparkguard report RUN_DIR [--json] [--svg FILE]";
constexpr std::string_view kSummary =
    "Summarises a run directory that `sparkguard run` left: the outcome, each attempt with its\n"
    "rung and why it ended, the final configuration and the command that reproduces it, peak\n"
    "memory against the pre-launch estimate, and GPU temperature, power and throttling when\n"
    "thermal.csv has them. --svg draws the night as a timeline: temperature, power, pool memory\n"
    "and step rate over time, attempts shaded, each OOM, rung change, stall and throttle marked.";
constexpr std::string_view kEpilog =
    "Reads report.json (required), events.jsonl, thermal.csv, train.log and stall-N.txt; what is\n"
    "absent is said, not fatal. A torn last line (the run was killed while writing it) is a\n"
    "warning. Exit status: 0; 2 for a missing or unreadable run directory or a malformed file\n"
    "(the message names the file, the line and the field).";

}  // namespace

int report_main(Args args) {
    const ParsedArgs parsed = parse_args(kOptions, args);
    if (parsed.has("help")) {
        std::cout << format_help(kUsage, kSummary, kOptions, kEpilog);
        return kExitOk;
    }
    if (parsed.positionals().size() != 1) throw UsageError("report", "needs exactly one RUN_DIR; see --help");
    const auto svg_path = parsed.get("svg");
    if (svg_path && svg_path->empty()) throw UsageError("--svg", "needs a file name");
    if (svg_path && *svg_path == "-" && parsed.has("json")) throw UsageError("--svg -", "and --json both want standard output");

    const RunInputs inputs = read_run_dir(parsed.positionals().front());
    for (const auto& warning : inputs.warnings) spdlog::warn("{}", warning);
    const RunSummary summary = summarize(inputs);
    if (svg_path) {
        const std::string svg = render_timeline_svg(build_timeline(inputs, summary));
        if (*svg_path == "-") {
            std::cout << svg;
            return kExitOk;
        }
        if (auto written = write_file_atomic(*svg_path, svg); !written) throw Failure("--svg", written.error().message, kExitUsage);
        spdlog::info("timeline written to {}", *svg_path);
    }
    if (parsed.has("json"))
        std::cout << to_json(summary).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else
        std::cout << format_summary_text(summary);
    return kExitOk;
}

}  // namespace sg::cli
