// sparkguard history: the runs measured on this machine, which correct plan's estimate.
#include <iostream>

#include "accounting/history_store.hpp"
#include "cli/commands.hpp"
#include "util/errors.hpp"
#include "util/options.hpp"
#include "util/strings.hpp"

namespace sg::cli {
namespace {

using namespace sg::accounting;

const std::vector<OptionSpec>& history_options() {
    static const std::vector<OptionSpec> specs = {{"json", "", "print the kept records as one JSON array"}};
    return specs;
}

std::string row(const HistoryRun& r) {
    const std::string measured = r.measured_peak_gb > 0 ? fixed(r.measured_peak_gb, 2) : "-";
    return r.time.substr(0, 19) + "  " + r.model + " (" + r.family + ") " + r.method + " batch " + std::to_string(r.batch) +
           " x seq " + std::to_string(r.seq) + " on " + r.platform + ": estimated " + fixed(r.estimated_peak_gb, 2) +
           " GB, measured " + measured + " GB" + (r.oom ? ", out of memory" : "");
}

}  // namespace

int history_main(Args args) {
    const ParsedArgs parsed = parse_args(history_options(), args);
    if (parsed.has("help")) {
        std::cout << format_help("sparkguard history [--json]",
                                 "Lists what each supervised attempt with a plan estimated and measured on this machine.",
                                 history_options(), "file: $XDG_STATE_HOME/sparkguard/history.jsonl "
                                                    "(default ~/.local/state/sparkguard/history.jsonl)\n");
        return kExitOk;
    }
    if (!parsed.positionals().empty()) throw UsageError(parsed.positionals()[0], "unexpected argument (see --help)");
    const auto file = history_path();
    const HistoryFile history = read_history(file);
    for (const auto& warning : history.warnings) std::cerr << "sparkguard: warning: " << warning << "\n";
    if (parsed.has("json")) {
        std::cout << nlohmann::json(history.entries).dump(2) << "\n";
        return kExitOk;
    }
    std::cout << file.string() << ": " << history.runs.size() << (history.runs.size() == 1 ? " run" : " runs") << "\n";
    for (const auto& r : history.runs) std::cout << "  " << row(r) << "\n";
    return kExitOk;
}

}  // namespace sg::cli
