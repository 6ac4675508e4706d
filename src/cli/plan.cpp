// sparkguard plan: the memory worksheet for one workload against one budget.
#include <iostream>

#include "accounting/alternatives.hpp"
#include "accounting/plan.hpp"
#include "cli/commands.hpp"
#include "cli/workload_options.hpp"
#include "util/errors.hpp"

namespace sg::cli {
namespace {

using namespace sg::accounting;

std::vector<OptionSpec> plan_options() {
    std::vector<OptionSpec> specs = workload_options();
    specs.push_back({"fit", "", "search the largest packing length, then batch (with gradient accumulation), that fits"});
    specs.push_back({"json", "", "print one JSON object instead of the table"});
    return specs;
}

constexpr const char* kEpilog =
    "--model takes a directory with config.json (and *.safetensors or model.safetensors.index.json:\n"
    "exact counts from their headers), a config.json file, ORG/NAME from the local Hugging Face cache,\n"
    "or a catalog name (profiles/models.toml: Llama 2/3.x, Qwen 2.5/3, Mistral/Mixtral, Gemma 2/3,\n"
    "Phi-3/4, gpt-oss). GB means 10^9 bytes.\n\n"
    "exit status: 0 fits or tight, 3 does not fit (with --fit: nothing fits), 2 bad input.\n";

int exit_code(Verdict verdict) { return verdict == Verdict::does_not_fit ? kExitBlocked : kExitOk; }

}  // namespace

int plan_main(Args args) {
    const auto specs = plan_options();
    const ParsedArgs parsed = parse_args(specs, args);
    if (parsed.has("help")) {
        std::cout << format_help("sparkguard plan [--model PATH|NAME | --params N] [OPTIONS]",
                                 "Estimates a fine-tuning run's memory, term by term, against the budget.", specs, kEpilog);
        return kExitOk;
    }
    if (!parsed.positionals().empty()) throw UsageError(parsed.positionals()[0], "unexpected argument (see --help)");
    const PlanRequest request = plan_request_from_args(parsed);
    const Plan plan = make_plan(request);
    const bool json = parsed.has("json");
    if (!parsed.has("fit")) {
        const auto alternatives = what_would_fit(plan);
        if (json) {
            nlohmann::json out = to_json(plan);
            out["would_fit"] = to_json(alternatives);
            std::cout << out.dump(2) << "\n";
        } else {
            std::cout << format_plan(plan) << (alternatives.empty() ? "" : "\n" + format_alternatives(alternatives));
        }
        return exit_code(plan.verdict);
    }
    const FitResult fit = fit_search(plan, default_fit_ceiling(plan, request.workload.seq.has_value()));
    const auto alternatives = fit.found ? std::vector<Alternative>{} : what_would_fit(plan);
    if (json) {
        nlohmann::json out = to_json(plan);
        out["fit"] = to_json(fit);
        out["fit"]["would_fit"] = to_json(alternatives);
        std::cout << out.dump(2) << "\n";
    } else {
        std::cout << format_plan(fit.found ? fit.plan : plan) << "\n" << format_fit(fit)
                  << (alternatives.empty() ? "" : "\n" + format_alternatives(alternatives));
    }
    return fit.found ? kExitOk : kExitBlocked;
}

}  // namespace sg::cli
